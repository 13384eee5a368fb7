"""A KTAP v1 report of one run, from its summary.

The top level has one result, the run (named gup_null_mapping): ok when the
runner exits 0, ok # SKIP for a whole-test skip, not ok for a failure, and
not ok # ERROR when the guest died, timed out, the test did not run or the
run was interrupted. The test's own cases are its subtest, indented two
spaces, each with its status and directive. Diagnostics carry the kernel,
the verdict, problems and splats, so the file stands alone.
"""
from __future__ import annotations

import os
from typing import Any, Mapping

from . import results

_CASE = {"pass": ("ok", ""), "fail": ("not ok", ""), "skip": ("ok", "SKIP"),
         "xfail": ("ok", "XFAIL"), "timeout": ("not ok", "TIMEOUT"),
         "error": ("not ok", "ERROR")}


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _directive(word: str, reason: Any) -> str:
    if not word:
        return ""
    return f" # {word}" + (f" {_one_line(reason)}" if reason else "")


def case_line(number: int, name: str, status: str, reason: Any) -> str:
    """A case's TAP result line (unindented), e.g. ``ok 3 x # SKIP why``."""
    ok, word = _CASE.get(status, ("not ok", "ERROR"))
    return f"{ok} {number} {name}" + _directive(word, reason)


def to_string(summary: Mapping[str, Any]) -> str:
    kernel = summary.get("kernel") or {}
    cases = summary.get("cases") or []
    out = ["KTAP version 1", "1..1", "  KTAP version 1",
           f"  # kernel {kernel.get('release')} ({summary.get('spec')})",
           f"  # verdict: {_one_line(summary.get('verdict'))}"]
    if summary.get("skip_reason") is not None and not cases:
        out.append(f"  1..0 # SKIP {_one_line(summary['skip_reason'])}")
    else:
        out.append(f"  1..{len(cases)}")
        for i, c in enumerate(cases, 1):
            out.append("  " + case_line(i, c["name"] or f"case_{i}", c["status"],
                                        c.get("reason")))
    for problem in summary.get("problems") or []:
        out.append(f"# problem: {_one_line(problem)}")
    for s in summary.get("splats") or []:
        out.append(f"# splat ({s['kind']}) at console line {s['line']}: "
                   + _one_line(((s.get("excerpt") or "").splitlines() or [""])[0]))
    code = summary.get("exit_code")
    if code == 0:
        line = "ok 1 gup_null_mapping"
    elif code == 4:
        line = "ok 1 gup_null_mapping" + _directive("SKIP", summary.get("skip_reason"))
    elif code == 1:
        line = "not ok 1 gup_null_mapping"
    else:
        why = "interrupted" if summary.get("outcome") == "interrupted" else \
            (summary.get("problems") or [f"exit {code}"])[0]
        line = "not ok 1 gup_null_mapping" + _directive("ERROR", why)
    out.append(line)
    return "\n".join(out) + "\n"


def write(path: str | os.PathLike, summary: Mapping[str, Any]) -> None:
    results.write_atomic(path, to_string(summary), ".ktap-")
