"""A JUnit XML report of one run, from its summary (for CI test views).

The one JUnit producer of the runner (vmrun writes junit.xml with it). The
document is checked against the JUnit schema of Jenkins' junit plugin
(runner/tests/data/junit/jenkins-junit.xsd, through gupnm.report.junit_xsd);
GitLab has no schema, its parser (lib/gitlab/ci/parsers/test/junit.rb)
reads the same things: classname, name, time, and the text of <failure>,
<error> or <skipped>.

Layout: one <testsuite> per run, one <testcase> per TAP result, plus a
"runner" testcase that is an <error> when the run itself went wrong (a
splat, the guest died or timed out, the test did not run, the kernel was
not the one expected) -- so a run whose test never started is never an
empty green suite. A whole-test skip is one skipped testcase.

classname is ``<kernel>.<test>``: <kernel> is the kernel spec made a name
(``debian:6.12`` -> ``debian-6.12``, ``source:debian-6.12:nofix`` ->
``source-debian-6.12-nofix``; path parts keep their last component; an
``image:`` spec, named by file paths, gives ``image-<release>``; a --config
variant other than default is appended), then the kernel release the guest
booted (the one expected when it never said) unless the spec names it
already, then the guest's arch, e.g.
``debian-bookworm-security-6.12.118+deb12-amd64.amd64.gup_null_mapping``.
The spec keeps apart the source kernels built from one tree (fix, nofix,
wrongfix have one release string) when several runs land in one CI build;
the release says which kernel a spec such as debian:bookworm-security (the
newest of a suite) named that day. The kernel goes first because Jenkins
cuts classname at its last dot: package = the kernel, class = the test
program, so each kernel is its own package and the tests read the same
under each. The runner case's class is ``gupnm``.

Messages and bodies (what Jenkins shows as "Error Message" and "Stacktrace",
GitLab as the case's output):
- a failed case (not ok: fail, timeout, error): <failure type=status>; its
  message is the TAP directive's reason if any, else the test's last
  diagnostic line before the result (kselftest prints why a case failed just
  before its ``not ok``), else ``not ok N name``; its body is the case's
  ``# ...`` diagnostic lines as TAP gave them (those since the previous
  result: the first case's include the test's header lines), then its
  result line.
- a skipped case: <skipped> with the skip reason as its text -- the schema
  makes <skipped> a plain string (no message attribute); Jenkins reads the
  text when there is no attribute, GitLab reads the text.
- an xfail case passes, its lines in <system-out>.

Times: only measured ones. The testsuite's time is the run's host
wall-clock total (durations.total, else the sum of the measured steps); the
runner case's is durations.boot_and_test (boot and test in the guest, its
last boot when an early-boot death was retried). The
TAP cases' own times are not known (the selftest prints none, its lines
carry no time stamp): they have no time attribute, which the schema allows,
rather than a made-up 0.
Properties carry the kernel release, arch, accel, outcome, exit code and the
measured steps.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from typing import Any, Mapping, Optional

from . import expect, ktap, results

TEST = "gup_null_mapping"
RUNNER_CLASS = "gupnm"
FAILED = ("fail", "timeout", "error")
# Characters XML 1.0 cannot carry (a console may hold them): shown as \xNN.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def arch(summary: Mapping[str, Any]) -> str:
    """The guest's arch: kernels.prepare records it in kernel.source for
    every guest that is not amd64 (the default)."""
    source = (summary.get("kernel") or {}).get("source") or {}
    return source.get("arch") or "amd64"


def kernel_id(summary: Mapping[str, Any]) -> str:
    """The kernel part of classname: spec made a name, the release the
    guest booted (else the one expected) unless the spec names it already,
    then the arch."""
    kernel = summary.get("kernel") or {}
    source = kernel.get("source") or {}
    release = kernel.get("booted_release") or kernel.get("release")
    parts = [p for p in (summary.get("spec") or "").split(":") if p]
    if parts and parts[0] == "image":
        parts = ["image", release or "unknown"]
    else:
        parts = [p.rstrip("/").rsplit("/", 1)[-1] for p in parts]
    if not parts:
        parts = [release or "unknown-kernel"]
    if source.get("config") not in (None, "default"):
        parts.append(source["config"])
    if release and release not in "-".join(parts):
        parts.append(release)
    name = re.sub(r"[^A-Za-z0-9_.+-]+", "-", "-".join(parts)).strip("-.")
    return f"{name or 'unknown-kernel'}.{arch(summary)}"


def test_name(summary: Mapping[str, Any]) -> str:
    """The program whose TAP the cases are: the test (run directly or
    through run_vmtests.sh), or a --command program."""
    words = (summary.get("command") or "").split()
    if not words or words[0] in ("bash", "sh"):
        return TEST
    return re.sub(r"[^A-Za-z0-9_+-]+", "_", os.path.basename(words[0])) or TEST


def result_line(case: Mapping[str, Any]) -> str:
    return ktap.case_line(case["number"], case["name"], case["status"],
                          case.get("reason")).rstrip()


def tap_block(case: Mapping[str, Any]) -> str:
    """The case as TAP gave it: its ``#`` diagnostic lines, then its result
    (summaries written before diagnostics were kept have the result only)."""
    lines = [f"# {d}" if d else "#" for d in case.get("diagnostics") or []]
    return "\n".join(lines + [result_line(case)])


def failure_message(case: Mapping[str, Any]) -> str:
    if case.get("reason"):
        return case["reason"]
    for line in reversed(case.get("diagnostics") or []):
        if line.strip():
            return line.strip()
    return result_line(case)


def _seconds(value: Any) -> Optional[str]:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return f"{value:.3f}"
    return None


def _suite_time(summary: Mapping[str, Any]) -> Optional[str]:
    durations = summary.get("durations") or {}
    if "total" in durations:
        return _seconds(durations["total"])
    steps = [v for v in durations.values() if _seconds(v) is not None]
    return _seconds(sum(steps)) if steps else None


def _case(suite: ET.Element, name: str, classname: str,
          time: Optional[str] = None) -> ET.Element:
    tc = ET.SubElement(suite, "testcase", name=name, classname=classname)
    if time is not None:
        tc.set("time", time)
    return tc


def _runner_failure(summary: Mapping[str, Any]) -> str | None:
    lines = list(summary.get("problems") or [])
    lines += [f"splat ({s['kind']}) at console line {s['line']}:\n{s['excerpt']}"
              for s in summary.get("splats") or []]
    code = summary.get("exit_code")
    if not lines and code not in (0, 1, 4, None):
        lines.append(f"exit {code}: {summary.get('verdict') or 'the test did not run'}")
    return "\n".join(lines) or None


def _properties(suite: ET.Element, summary: Mapping[str, Any]) -> None:
    kernel = summary.get("kernel") or {}
    pairs = [("spec", summary.get("spec")),
             ("kernel.id", kernel_id(summary)),
             ("kernel.arch", arch(summary)),
             ("kernel.release", kernel.get("release")),
             ("kernel.booted_release", kernel.get("booted_release")),
             ("accel", (summary.get("vm") or {}).get("accel")),
             ("outcome", summary.get("outcome")),
             ("exit_code", summary.get("exit_code")),
             ("verdict", summary.get("verdict")),
             ("as_expected", {True: "true", False: "false"}.get(summary.get("as_expected"))),
             ("expectations", (summary.get("expected") or {}).get("file")),
             ("tool_version", summary.get("tool_version"))]
    pairs += [(f"duration.{step}", _seconds(v))
              for step, v in sorted((summary.get("durations") or {}).items())]
    props = ET.SubElement(suite, "properties")
    for key, value in pairs:
        ET.SubElement(props, "property", name=key,
                      value="" if value is None else str(value))


def _gate(summary: Mapping[str, Any]) -> dict[str, dict]:
    """Case name -> its comparison, when expectations gate the run
    (--expect): a known failure is then a skipped case saying so, an
    unexpected pass or skip a failure; without --expect, nothing changes."""
    e = summary.get("expected") or {}
    if not e.get("gating") or summary.get("as_expected") is None:
        return {}
    return {c["name"]: c for c in e.get("cases") or []}


def build(summary: Mapping[str, Any]) -> ET.Element:
    cases = summary.get("cases") or []
    kid = kernel_id(summary)
    test = test_name(summary)
    classname = f"{kid}.{test}"
    suite = ET.Element("testsuite",
                       name=f"{test} on {summary.get('spec') or kid} ({arch(summary)})")
    _properties(suite, summary)
    failures = errors = skipped = 0
    whole_skip = summary.get("skip_reason") is not None and not cases
    if whole_skip:
        ET.SubElement(_case(suite, test, classname), "skipped").text = summary["skip_reason"]
        skipped += 1
    gate = _gate(summary)
    for c in cases:
        tc = _case(suite, c["name"] or f"case_{c['number']}", classname)
        seen = gate.get(c["name"])
        if seen and seen["kind"] == "known failure":
            skipped += 1
            ET.SubElement(tc, "skipped").text = f"known failure ({expect.why(seen)})"
        elif seen and seen["kind"] in ("unexpected pass", "unexpected skip"):
            failures += 1
            ET.SubElement(tc, "failure", message=f"{seen['kind'].upper()} ({expect.why(seen)})",
                          type=seen["kind"]).text = tap_block(c)
        elif c["status"] in FAILED:
            failures += 1
            ET.SubElement(tc, "failure", message=failure_message(c),
                          type=c["status"]).text = tap_block(c)
        elif c["status"] == "skip":
            skipped += 1
            ET.SubElement(tc, "skipped").text = c.get("reason") or ""
        elif c["status"] == "xfail":
            ET.SubElement(tc, "system-out").text = tap_block(c)
    durations = summary.get("durations") or {}
    tc = _case(suite, "runner", f"{kid}.{RUNNER_CLASS}",
               _seconds(durations.get("boot_and_test")))
    problem = _runner_failure(summary)
    if problem:
        errors += 1
        ET.SubElement(tc, "error", message=problem.splitlines()[0]).text = problem
    suite.set("tests", str(len(cases) + 1 + int(whole_skip)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    time = _suite_time(summary)
    if time is not None:
        suite.set("time", time)
    if summary.get("started"):
        suite.set("timestamp", summary["started"])
    host = (summary.get("host") or {}).get("name")
    if host:
        suite.set("hostname", host)
    return suite


def _xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def to_string(summary: Mapping[str, Any]) -> str:
    root = ET.Element("testsuites")
    root.append(build(summary))
    for el in root.iter():
        if el.text:
            el.text = _xml_safe(el.text)
        for key, value in el.attrib.items():
            el.set(key, _xml_safe(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path: str | os.PathLike, summary: Mapping[str, Any]) -> None:
    results.write_atomic(path, to_string(summary), ".junit-")
