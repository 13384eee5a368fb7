"""A JUnit XML report of one run, from its summary (for CI test views).

One <testsuite> named after the kernel spec, one <testcase> per TAP result
(classname gup_null_mapping), plus a "runner" testcase that fails when the
run itself went wrong (a splat, the guest died or timed out, the test did
not run, the kernel was not the one expected) -- so a run whose test never
started is never an empty green suite. A whole-test skip is one skipped
testcase with the reason. Properties carry the kernel release, accel,
outcome and exit code.
"""
from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from typing import Any, Mapping

CLASSNAME = "gup_null_mapping"


def _case(suite: ET.Element, name: str, *, classname: str = CLASSNAME) -> ET.Element:
    return ET.SubElement(suite, "testcase", name=name, classname=classname, time="0")


def _runner_failure(summary: Mapping[str, Any]) -> str | None:
    lines = list(summary.get("problems") or [])
    lines += [f"splat ({s['kind']}) at console line {s['line']}:\n{s['excerpt']}"
              for s in summary.get("splats") or []]
    code = summary.get("exit_code")
    if not lines and code not in (0, 1, 4, None):
        lines.append(f"exit {code}: {summary.get('verdict') or 'the test did not run'}")
    return "\n".join(lines) or None


def build(summary: Mapping[str, Any]) -> ET.Element:
    cases = summary.get("cases") or []
    kernel = summary.get("kernel") or {}
    name = f"gup_null_mapping on {summary.get('spec') or kernel.get('release') or '?'}"
    suite = ET.Element("testsuite", name=name)
    props = ET.SubElement(suite, "properties")
    for key, value in (("kernel.release", kernel.get("release")),
                       ("kernel.booted_release", kernel.get("booted_release")),
                       ("accel", (summary.get("vm") or {}).get("accel")),
                       ("outcome", summary.get("outcome")),
                       ("exit_code", summary.get("exit_code")),
                       ("verdict", summary.get("verdict")),
                       ("tool_version", summary.get("tool_version"))):
        ET.SubElement(props, "property", name=key,
                      value="" if value is None else str(value))
    failures = errors = skipped = 0
    if summary.get("skip_reason") is not None and not cases:
        tc = _case(suite, "gup_null_mapping")
        ET.SubElement(tc, "skipped", message=summary["skip_reason"])
        skipped += 1
    for c in cases:
        tc = _case(suite, c["name"] or f"case_{c['number']}")
        if c["status"] in ("fail", "timeout", "error"):
            failures += 1
            ET.SubElement(tc, "failure", message=f"{c['status']}: {c['name']}",
                          type=c["status"]).text = c.get("reason") or ""
        elif c["status"] == "skip":
            skipped += 1
            ET.SubElement(tc, "skipped", message=c.get("reason") or "")
    tc = _case(suite, "runner", classname="gupnm")
    problem = _runner_failure(summary)
    if problem:
        errors += 1
        first = problem.splitlines()[0]
        ET.SubElement(tc, "error", message=first).text = problem
    total = len(cases) + 1 + (1 if summary.get("skip_reason") is not None and not cases else 0)
    seconds = sum(v for v in (summary.get("durations") or {}).values()
                  if isinstance(v, (int, float)))
    suite.set("tests", str(total))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    suite.set("time", f"{(summary.get('durations') or {}).get('total', seconds):.3f}")
    if summary.get("started"):
        suite.set("timestamp", summary["started"])
    return suite


def to_string(summary: Mapping[str, Any]) -> str:
    root = ET.Element("testsuites")
    root.append(build(summary))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path: str | os.PathLike, summary: Mapping[str, Any]) -> None:
    _write_atomic(path, to_string(summary))


def _write_atomic(path: str | os.PathLike, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".junit-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
