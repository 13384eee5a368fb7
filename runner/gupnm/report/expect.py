"""Expectations as data: which cells fail on which kernel (docs/expectations.md).

An expectations file holds one rule a line,

    KERNEL  CELL  EXPECT  [# why]

KERNEL is a version match on the release's leading numbers (uname -r):
``6.12`` (a series), ``6.12.118`` (one version), ``6.10..7.2`` (a range,
both ends included at the precision written: ``..7.2`` takes every 7.2.N),
``7.3..`` or ``..6.4`` (open), or ``*`` (any kernel); or a whole release
or a glob of it (``6.12.118+deb12-amd64``, ``*+deb13-*``: anything else
holding a letter, ``+``, ``~`` or a glob character). CELL is a case name of the test or a glob of them
(``verdict_driver_read``, ``verdict_driver_*``). EXPECT is pass, fail or
skip. The last rule that matches a cell wins; a cell no rule matches is
expected to pass. A bad line is a UsageError naming FILE:LINE (exit 2,
before anything runs).

judge() compares a run's summary with the rules: every case gets its
expectation and a kind (as expected, known failure, new failure, unexpected
pass, unexpected skip), summary["expected"] and summary["as_expected"] are
filled, and, when the expectations gate the run (--expect given), the exit
code becomes 0 when everything is as expected and 1 on any difference; a
run that could not be judged (2, 3, 4, 130, 143) keeps its code.
"""
from __future__ import annotations

import argparse
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..host import REPO, UsageError
from ..parse import tap

DEFAULT = REPO / "runner" / "expectations" / "debian.txt"
EXPECTS = ("pass", "fail", "skip")
# The test's own statuses as an expectation sees them: an xfail (before 6.5,
# the test's own known failure) and a timeout or error are failures.
AS_EXPECT = {"pass": "pass", "skip": "skip", "fail": "fail", "xfail": "fail",
             "timeout": "fail", "error": "fail"}
KINDS = ("as expected", "known failure", "new failure", "unexpected pass",
         "unexpected skip")
GATED = (0, 1)              # the exit codes an expectation may change
TEST = "gup_null_mapping"
_VERSION = r"\d+(?:\.\d+){1,2}"
_RANGE = re.compile(rf"^({_VERSION})?\.\.({_VERSION})?$")
_CELL = re.compile(r"^[A-Za-z0-9_.*?\[\]!-]+$")
_RELEASE = re.compile(r"^[A-Za-z0-9.+~_*?\[\]!-]+$")
_RELEASE_MARK = re.compile(r"[A-Za-z*?\[+~]")


@dataclass(frozen=True)
class Rule:
    kernel: str
    cell: str
    expect: str
    reason: str
    where: str              # FILE:LINE


@dataclass(frozen=True)
class Expectations:
    path: str               # as given (the default: relative to the repository)
    rules: tuple[Rule, ...]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def release_version(release: str | None) -> tuple[int, ...] | None:
    """The leading numbers of a release: 6.12.118+deb12-amd64 -> (6, 12, 118),
    6.1.0-57-amd64 -> (6, 1, 0); None without them."""
    m = re.match(rf"({_VERSION})", release or "")
    return _version(m.group(1)) if m else None


def _kernel_problem(kernel: str) -> str | None:
    """What is wrong with a KERNEL field (None: nothing)."""
    if kernel == "*" or re.fullmatch(_VERSION, kernel):
        return None
    m = _RANGE.match(kernel)
    if m:
        lo, hi = m.groups()
        if lo is None and hi is None:
            return "'..' needs a version on at least one side (or write '*')"
        if lo and hi and _version(lo)[:len(_version(hi))] > _version(hi):
            return f"range '{kernel}' is empty: {lo} comes after {hi}"
        return None
    if _RELEASE.match(kernel) and _RELEASE_MARK.search(kernel):
        return None
    return (f"kernel '{kernel}' is neither a version (6.12, 6.12.118), a range "
            "(6.10..7.2, 7.3.., ..6.4), '*', nor a release or its glob "
            "(6.12.118+deb12-amd64, *+deb13-*)")


def kernel_matches(kernel: str, release: str | None) -> bool:
    """Whether the KERNEL field @kernel takes the release @release."""
    if kernel == "*":
        return True
    v = release_version(release)
    if re.fullmatch(_VERSION, kernel):
        want = _version(kernel)
        return v is not None and v[:len(want)] == want
    m = _RANGE.match(kernel)
    if m:
        lo, hi = (_version(x) if x else None for x in m.groups())
        return v is not None and (lo is None or v[:len(lo)] >= lo) \
            and (hi is None or v[:len(hi)] <= hi)
    return release is not None and fnmatch.fnmatchcase(release, kernel)


def parse(text: str, name: str) -> tuple[Rule, ...]:
    """The rules of a file's @text (@name: what errors call it)."""
    rules = []
    for n, line in enumerate(text.splitlines(), 1):
        body, _, reason = line.partition("#")
        words = body.split()
        if not words:
            continue
        where = f"{name}:{n}"
        if len(words) != 3:
            raise UsageError(f"{where}: expected 'KERNEL CELL EXPECT [# why]', "
                             f"got {len(words)} field(s): {line.strip()}")
        kernel, cell, want = words
        problem = _kernel_problem(kernel)
        if problem:
            raise UsageError(f"{where}: {problem}")
        if not _CELL.match(cell):
            raise UsageError(f"{where}: cell '{cell}' is not a case name or glob "
                             "(letters, digits, _ . - and * ? [ ])")
        if want not in EXPECTS:
            raise UsageError(f"{where}: expectation '{want}' is not one of "
                             f"{', '.join(EXPECTS)}")
        rules.append(Rule(kernel, cell, want, reason.strip(), where))
    return tuple(rules)


def load(path: str | Path, shown: str | None = None) -> Expectations:
    """An expectations file read and checked; UsageError (exit 2) naming
    FILE:LINE (@shown, else @path) for a bad line, or the file when it
    cannot be read."""
    shown = shown or str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        why = getattr(err, "strerror", None) or str(err)
        raise UsageError(f"{shown}: cannot read it ({why}): name an "
                         f"expectations file, e.g. {_shown(DEFAULT)}") from None
    return Expectations(shown, parse(text, shown))


def default() -> Expectations:
    """The project's expectations for Debian's kernels."""
    return load(DEFAULT, _shown(DEFAULT))


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def expectation(exp: Expectations, release: str | None, cell: str) -> tuple[str, Rule | None]:
    """What @cell is expected to do on @release, and the rule that said it
    (None: no rule matched, so pass). The last matching rule wins."""
    found = None
    for rule in exp.rules:
        if kernel_matches(rule.kernel, release) and fnmatch.fnmatchcase(cell, rule.cell):
            found = rule
    return (found.expect, found) if found else ("pass", None)


def expects_bug(exp: Expectations, release: str | None) -> tuple[bool, str | None]:
    """Whether @release is expected to carry the bug -- the driver row's
    read or write cell expected to fail (the survey's expectation) -- and
    the FILE:LINE that says so (None: no rule matched those cells)."""
    found = [expectation(exp, release, f"verdict_{tap.DRIVER}_{a}")
             for a in ("read", "write")]
    bug = any(want == "fail" for want, _ in found)
    where = next((r.where for want, r in found if r and (want == "fail") == bug), None)
    return bug, where


def cell_name(case: str) -> str | None:
    """The cell a case name is: itself, or for a flattened name
    (mm_ksft_gup_test_sh_gup_null_mapping_verdict_driver_read) what follows
    the test's name; None for the test's own line, which fails when a cell
    does and is not compared itself. Old row names read as today's."""
    name = tap.canonical_case(case)
    if name == TEST or name.endswith("_" + TEST):
        return None
    head, sep, tail = name.rpartition(TEST + "_")
    return tail if sep and (not head or head.endswith("_")) else name


def kind(expected: str, got: str) -> str:
    """One of KINDS for a cell expected to @expected that gave @got."""
    if got == expected:
        return "known failure" if got == "fail" else "as expected"
    return {"fail": "new failure", "pass": "unexpected pass",
            "skip": "unexpected skip"}[got]


def _case(exp: Expectations, release: str | None, case: dict) -> dict[str, Any]:
    cell = cell_name(case["name"]) or case["name"]
    want, rule = expectation(exp, release, cell)
    got = AS_EXPECT.get(case["status"], "fail")
    return {"name": case["name"], "expected": want, "got": got, "kind": kind(want, got),
            "rule": rule.where if rule else None, "reason": (rule.reason or None) if rule else None}


def why(c: dict[str, Any]) -> str:
    """A case's expectation and where it comes from, for people."""
    where = f"{c['rule']}" + (f": {c['reason']}" if c.get("reason") else "") \
        if c.get("rule") else "no rule matched"
    return f"expected: {c['expected']}, {where}"


def _unexpected(cells: list[dict], summary: dict[str, Any]) -> list[str]:
    """Every difference from the expectations, one line each: the cells,
    a kernel complaint (never expected), a failure no cell explains."""
    out = [f"{c['kind'].upper()}: {c['name']} ({why(c)}; got {c['got']})"
           for c in cells if c["kind"] not in ("as expected", "known failure")]
    splats = summary.get("splats") or []
    out += [f"NEW FAILURE: the kernel complained ({s['kind']} at console line "
            f"{s['line']}); no expectation covers a kernel complaint" for s in splats]
    if summary.get("exit_code") == 1 and not splats \
            and not any(c["got"] == "fail" for c in cells):
        out.append(f"NEW FAILURE: the run failed without a failing cell: "
                   f"{summary.get('verdict')}")
    return out


def judge(summary: dict[str, Any], exp: Expectations, *, gating: bool) -> int:
    """Fill summary["expected"] and summary["as_expected"] from @exp; the
    exit code. With @gating (--expect) a run the test judged (exit 0 or 1)
    exits 0 when every case is as expected, 1 otherwise, and its summary's
    exit_code says so (the test's own in expected.test_exit_code); without,
    or for a run not judged (2, 3, 4, 130, 143: as_expected null), the code
    stays."""
    # Judged before (a second file): from the test's own code again.
    code = (summary.get("expected") or {}).get("test_exit_code", summary.get("exit_code"))
    summary["exit_code"] = code
    kernel = summary.get("kernel") or {}
    release = kernel.get("booted_release") or kernel.get("release")
    cells = [_case(exp, release, c) for c in summary.get("cases") or []
             if cell_name(c["name"]) is not None]
    unexpected = _unexpected(cells, summary)
    as_expected = not unexpected if code in GATED else None
    summary["expected"] = {"file": exp.path, "gating": gating, "release": release,
                           "cases": cells, "unexpected": unexpected,
                           "test_exit_code": code}
    summary["as_expected"] = as_expected
    if gating and as_expected is not None:
        summary["exit_code"] = 0 if as_expected else 1
    return summary["exit_code"]


def report_lines(summary: dict[str, Any]) -> list[str]:
    """The human report's lines on expectations (none without them)."""
    e = summary.get("expected")
    if not e or "cases" not in e:
        return []
    if summary.get("as_expected") is None:
        head = (f"not compared with {e['file']}: the run was not judged "
                f"(exit {e['test_exit_code']})")
    else:
        head = ("as expected" if summary["as_expected"] else
                f"NOT as expected: {len(e['unexpected'])} difference(s)") + f" ({e['file']})"
    if not e["gating"]:
        head += ("; informational, the exit code stays the test's: "
                 "--expect FILE gates on it")
    lines = [f"expect:  {head}"]
    lines += [f"known failure: {c['name']} ({why(c)})"
              for c in e["cases"] if c["kind"] == "known failure"]
    return lines + list(e["unexpected"])


def arg(text: str) -> Expectations:
    """argparse type of --expect FILE: the file loaded, or exit 2 naming
    FILE:LINE before anything runs."""
    try:
        return load(text)
    except UsageError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def chosen(given: Expectations | None, spec: str | None) -> tuple[Expectations | None, bool]:
    """The expectations a run is compared with, and whether they gate its
    exit code: --expect FILE (@given) gates; without it a debian: kernel
    is compared with the default file for information only; any other
    kernel is not compared (its summary's expected stays null)."""
    if given is not None:
        return given, True
    if (spec or "").startswith("debian:"):
        return default(), False
    return None, False


def apply(summary: dict[str, Any], given: Expectations | None) -> int:
    """judge() with the chosen() expectations of the summary's spec; the
    exit code (summary["exit_code"], unchanged without expectations)."""
    exp, gating = chosen(given, summary.get("spec"))
    if exp is None:
        return summary["exit_code"]
    return judge(summary, exp, gating=gating)
