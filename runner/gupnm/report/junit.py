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

Names (issue 48): a case's name and classname are the same on every path
and every kernel, so Jenkins' per-test history and GitLab's base/head
comparison follow a verdict across uploads of a kernel, and across the
ways it ran. The name is the test's own result name with today's row name
(tap.case_id): ``verdict_driver_read`` from ``run``, from ``parse`` of a
saved log, and from ``kselftest`` and ``lava``, whose labs record the
flattened ``mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read`` (that
name is kept in the case's <system-out>). classname is ``selftests.mm.<test>``
(Jenkins cuts it at its last dot: package selftests.mm, the kselftest
collection, class the test program; the probe's is ``gupnm.gupnm_probe``),
the runner case's ``gupnm``. Which kernel, how it was obtained and where
it ran are properties of the testsuite (spec, release, booted release,
suite, package version, packages and their sha256, the boot image's
sha256, arch), and the suite's name says the spec and arch: runs of
several kernels in one CI build are told apart by their suites, as
GitLab does by job.

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
Properties carry the kernel (above), accel, outcome, exit code, the
measured steps and the benchmark's figures (``bench.threads=N.BACKING.median_ns``
and min, p90, max; ``bench.threads=N.ratio``): the benchmark is not a
testcase that cannot fail. Its TAP result ("bench") is a testcase only
when it was given a threshold (-t MAX_RATIO) and so can fail; otherwise a
failed benchmark (an error of its own) is the runner case's error.

A run that died after the test started keeps the cases it has; the runner
case's error then ends with the console's last lines (console.log beside
junit.xml, CONSOLE_TAIL lines).
"""
from __future__ import annotations

import getopt
import os
import re
import xml.etree.ElementTree as ET
from typing import Any, Mapping, Optional

from ..parse import tap
from . import expect, ktap, results

TEST = "gup_null_mapping"
RUNNER_CLASS = "gupnm"
# The package of a program's classname: the kselftest collection, but for
# the runner's own probe.
PACKAGE = "selftests.mm"
PACKAGES = {"gupnm_probe": "gupnm"}
FAILED = ("fail", "timeout", "error")
# Commands that run the test rather than being the program: a shell
# (run_vmtests.sh), the kselftest runners, lava-run.
LAUNCHERS = ("bash", "sh", "cd", "run_kselftest.sh", "kselftest.sh", "lava-run")
# The benchmark's TAP result, and its options (bench/gup_fast_bench.c's
# getopt string; the unit tests compare them): -t MAX_RATIO lets it fail.
BENCH_CASE = "bench"
BENCH_OPTS = "p:r:i:c:t:V:LBh"
# Lines of the console a run that went wrong ends its runner case with.
CONSOLE_TAIL = 30
# Characters XML 1.0 cannot carry (a console may hold them): shown as \xNN.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def arch(summary: Mapping[str, Any]) -> str:
    """The guest's arch: kernels.prepare records it in kernel.source for
    every guest that is not amd64 (the default)."""
    source = (summary.get("kernel") or {}).get("source") or {}
    return source.get("arch") or "amd64"


def kernel_id(summary: Mapping[str, Any]) -> str:
    """The kernel in one word (a property, kernel.id): spec made a name,
    the release the guest booted (else the one expected) unless the spec
    names it already, then the arch."""
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
    if not words or words[0] in LAUNCHERS or os.path.basename(words[0]) in LAUNCHERS:
        return TEST
    return re.sub(r"[^A-Za-z0-9_+-]+", "_", os.path.basename(words[0])) or TEST


def classname(summary: Mapping[str, Any]) -> str:
    """The cases' classname: the program under its package, the same for
    every kernel and every path (no release, spec or arch in it)."""
    test = test_name(summary)
    return f"{PACKAGES.get(test, PACKAGE)}.{test}"


def case_name(case: Mapping[str, Any]) -> str:
    """A case's testcase name: the test's own name for the result, the same
    from every path (tap.case_id)."""
    return tap.case_id(case.get("name") or "") or f"case_{case['number']}"


def bench_can_fail(summary: Mapping[str, Any]) -> bool:
    """Whether the benchmark was given a threshold (-t MAX_RATIO): the one
    way its result judges the kernel."""
    command = ((summary.get("bench_run") or {}).get("command") or "").split()
    try:
        opts, _ = getopt.gnu_getopt(command[1:], BENCH_OPTS)
    except getopt.GetoptError:
        return False
    return any(opt == "-t" for opt, _ in opts)


def _is_bench(case: Mapping[str, Any]) -> bool:
    return tap.case_id(case.get("name") or "") == BENCH_CASE


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


def _runner_failure(summary: Mapping[str, Any], bench: list,
                    console_tail: Optional[str]) -> str | None:
    """The runner case's error text, None when the run itself went right:
    its problems and splats, a failed benchmark that is no testcase
    (@bench), and the console's last lines (@console_tail) when any."""
    lines = list(summary.get("problems") or [])
    lines += [f"splat ({s['kind']}) at console line {s['line']}:\n{s['excerpt']}"
              for s in summary.get("splats") or []]
    lines += [f"the benchmark failed: {failure_message(c)}" for c in bench
              if c["status"] in FAILED]
    code = summary.get("exit_code")
    if not lines and code not in (0, 1, 4, None):
        lines.append(f"exit {code}: {summary.get('verdict') or 'the test did not run'}")
    if lines and console_tail:
        lines.append(f"the console's last lines (console.log):\n{console_tail}")
    return "\n".join(lines) or None


def _kernel_pairs(summary: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Which kernel, how obtained: what classname no longer says."""
    kernel = summary.get("kernel") or {}
    source = kernel.get("source") or {}
    pairs = [("spec", summary.get("spec")),
             ("kernel.id", kernel_id(summary)),
             ("kernel.arch", arch(summary)),
             ("kernel.release", kernel.get("release")),
             ("kernel.booted_release", kernel.get("booted_release"))]
    more = [("kernel.kind", source.get("kind")),
             ("kernel.suite", " ".join(source.get("suites") or []) or None),
             ("kernel.package_version", source.get("version")),
             ("kernel.packages", " ".join(source.get("packages") or []) or None),
             ("kernel.boot_image_sha256", source.get("boot_image_sha256"))]
    more += [(f"kernel.sha256.{name}", sha)
             for name, sha in sorted((source.get("package_sha256") or {}).items())]
    more += [(f"kernel.{key}", source.get(key))
             for key in ("tree", "base_commit", "selection", "config", "lava_job", "via")]
    return pairs + [(k, v) for k, v in more if v is not None]


def _bench_pairs(summary: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The benchmark's figures, ns/page per thread count and backing, and
    the per-thread ratio."""
    pairs: list[tuple[str, Any]] = []
    if summary.get("bench_title"):
        pairs.append(("bench.title", summary["bench_title"]))
    for row in summary.get("bench") or []:
        base = f"bench.threads={row['threads']}.{row['backing']}"
        pairs += [(f"{base}.{k}_ns", row[k]) for k in ("min", "median", "p90", "max")
                  if row.get(k) is not None]
        if row.get("cv") is not None:
            pairs.append((f"{base}.cv_percent", row["cv"]))
    for ratio in summary.get("bench_ratio") or []:
        value = ratio.get("shadow_anon_ratio") if isinstance(ratio, Mapping) else None
        if value is not None:
            pairs.append((f"bench.threads={ratio['threads']}.ratio", value))
    return pairs


def _properties(suite: ET.Element, summary: Mapping[str, Any]) -> None:
    pairs = _kernel_pairs(summary)
    pairs += [("accel", (summary.get("vm") or {}).get("accel")),
              ("outcome", summary.get("outcome")),
              ("exit_code", summary.get("exit_code")),
              ("verdict", summary.get("verdict")),
              ("as_expected", {True: "true", False: "false"}.get(summary.get("as_expected"))),
              ("expectations", (summary.get("expected") or {}).get("file")),
              ("tool_version", summary.get("tool_version"))]
    pairs += [(f"duration.{step}", _seconds(v))
              for step, v in sorted((summary.get("durations") or {}).items())]
    pairs += _bench_pairs(summary)
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


def _add_case(suite: ET.Element, c: Mapping[str, Any], cls: str,
              seen: Optional[Mapping[str, Any]] = None) -> str:
    """One TAP result as a testcase; its status as counted (@seen, the
    case's comparison with the expectations when they gate the run: a
    known failure is skipped saying so, an unexpected pass or skip fails)."""
    name = case_name(c)
    tc = _case(suite, name, cls)
    if seen and seen["kind"] == "known failure":
        ET.SubElement(tc, "skipped").text = f"known failure ({expect.why(seen)})"
        return "skip"
    if seen and seen["kind"] in ("unexpected pass", "unexpected skip"):
        ET.SubElement(tc, "failure", message=f"{seen['kind'].upper()} ({expect.why(seen)})",
                      type=seen["kind"]).text = tap_block(c)
        return "fail"
    if c["status"] in FAILED:
        ET.SubElement(tc, "failure", message=failure_message(c),
                      type=c["status"]).text = tap_block(c)
    elif c["status"] == "skip":
        ET.SubElement(tc, "skipped").text = c.get("reason") or ""
    out = [tap_block(c)] if c["status"] == "xfail" else []
    if name != c.get("name"):
        out.append(f"recorded as: {c.get('name')}")
    if out:
        ET.SubElement(tc, "system-out").text = "\n".join(out)
    return c["status"]


def build(summary: Mapping[str, Any], console_tail: Optional[str] = None) -> ET.Element:
    """The <testsuite> of @summary; @console_tail: the console's last lines,
    shown in the runner case's error when the run went wrong."""
    all_cases = summary.get("cases") or []
    bench_judges = bench_can_fail(summary)
    bench = [c for c in all_cases if _is_bench(c) and not bench_judges]
    cases = [c for c in all_cases if not (_is_bench(c) and not bench_judges)]
    test = test_name(summary)
    cls = classname(summary)
    suite = ET.Element("testsuite",
                       name=f"{test} on {summary.get('spec') or kernel_id(summary)} "
                       f"({arch(summary)})")
    _properties(suite, summary)
    failures = errors = skipped = 0
    whole_skip = summary.get("skip_reason") is not None and not all_cases
    if whole_skip:
        ET.SubElement(_case(suite, test, cls), "skipped").text = summary["skip_reason"]
        skipped += 1
    gate = _gate(summary)
    for c in cases:
        status = _add_case(suite, c, cls, gate.get(c.get("name")))
        failures += status in FAILED
        skipped += status == "skip"
    durations = summary.get("durations") or {}
    tc = _case(suite, "runner", RUNNER_CLASS, _seconds(durations.get("boot_and_test")))
    problem = _runner_failure(summary, bench, console_tail)
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


def from_parsed(parsed: tap.TapResult, *, release: Optional[str], exit_code: int,
                outcome: str, verdict: str, problems: list[str],
                splats: list) -> dict[str, Any]:
    """What build() reads, for a saved log (gupnm-run parse --junit): its
    results, the kernel it names, the verdict by run's rules; nothing
    else is known (no spec, no run facts)."""
    return {"spec": None, "command": None, "durations": {},
            "kernel": {"release": release, "booted_release": release, "source": {}},
            "exit_code": exit_code, "outcome": outcome, "verdict": verdict,
            "problems": list(problems) + list(parsed.errors),
            "splats": [{"kind": s.kind, "line": s.line_no, "excerpt": s.excerpt}
                       for s in splats],
            "skip_reason": parsed.skip_reason,
            "cases": [{"number": r.number, "name": r.name, "status": r.status,
                       "reason": r.directive_reason, "diagnostics": list(r.diagnostics)}
                      for r in parsed.results]}


def _xml_safe(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def to_string(summary: Mapping[str, Any], console_tail: Optional[str] = None) -> str:
    root = ET.Element("testsuites")
    root.append(build(summary, console_tail))
    for el in root.iter():
        if el.text:
            el.text = _xml_safe(el.text)
        for key, value in el.attrib.items():
            el.set(key, _xml_safe(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def tail(path: str | os.PathLike, lines: int = CONSOLE_TAIL) -> Optional[str]:
    """The last @lines lines of a console log, None when there is none."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 64 * 1024))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    kept = [ln.rstrip("\r") for ln in text.splitlines()][-lines:]
    return "\n".join(kept) or None


def write(path: str | os.PathLike, summary: Mapping[str, Any],
          console: str | os.PathLike | None = None) -> None:
    """junit.xml at @path; @console (default: console.log beside it) gives
    the runner case's console tail."""
    if console is None:
        console = os.path.join(os.path.dirname(os.path.abspath(path)), "console.log")
    results.write_atomic(path, to_string(summary, tail(console)), ".junit-")
