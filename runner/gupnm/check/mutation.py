"""The mutation check (issue 28): the test catches every decision of
gup_fast_folio_allowed().

On linux-source-7.3 with the upstream series (the fix in it), each mutant
in mutants/ flips one decision of the function: a small edit of mm/gup.c,
whose header names the decision and the cells of the test that must catch
it. The test must fail on every mutant, in those cells, and pass on the
tree unmutated (the matrix's own source:debian-7.3:all run where make
check has one). The mutants share one worktree and build directory
(source.mutant_of), so each rebuilds mm/gup.o and relinks.

Not mutated: the function's WARN_ON_ONCE(folio_test_slab()) (no slab folio
can be mapped to user space to ask about) and the non-anonymous mapping
flags of movable_ops pages (no such page can be mapped either).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..host import REPO
from ..parse import tap
from ..prepare.source import MUTANTS
from . import matrix

SPEC = "source:debian-7.3"
# The benchmark the runner runs after the test, as short as it goes; no
# stress program: the check is about the test's verdicts.
TEST_ARGS = "-r 5 -i 1 1"


@dataclass
class Mutant:
    name: str
    decision: str
    caught_by: list[str]


def mutants(folder: Path = MUTANTS) -> list[Mutant]:
    """Every mutant of @folder, by name; ValueError for one whose header
    lacks its decision or its cells."""
    out = []
    for edit in sorted(folder.glob("*.diff")):
        text = edit.read_text()
        decision = re.search(r"^Decision: (.+)$", text, re.M)
        caught = re.search(r"^Caught by: (.+)$", text, re.M)
        if not decision or not caught:
            raise ValueError(f"{edit}: no 'Decision:' or 'Caught by:' line")
        out.append(Mutant(edit.stem, decision.group(1).rstrip("."),
                          [tap.canonical_case(c) for c in caught.group(1).split()]))
    return out


def _failed(summary: dict) -> set[str]:
    """The failed cases, by today's names (the driver row was "shadow"
    before v4 of the test)."""
    return {tap.canonical_case(c["name"]) for c in summary.get("cases", [])
            if c["status"] == "fail"}


def judge(summary: dict, mutant: Mutant | None) -> tuple[bool, str]:
    """Did the test catch @mutant (exit 1, its cells among the failures),
    or, for None, pass the unmutated tree (exit 0, nothing failed)?"""
    failed = _failed(summary)
    detail = (f"exit {summary.get('exit_status')}, failed: "
              + (", ".join(sorted(failed)) or "none"))
    if mutant is None:
        return summary.get("exit_status") == 0 and not failed, detail
    missed = [c for c in mutant.caught_by if c not in failed]
    if missed:
        detail += "; not failed: " + ", ".join(missed)
    return summary.get("exit_status") == 1 and not missed, detail


def check(t, unmutated: dict | None = None, config: str = "default") -> None:
    """Run the unmutated tree (unless @unmutated, its summary, is given)
    and every mutant, built with the @config variant (notrace: no
    tracing); one check each, then the score."""
    from ..cli import run_one                    # cli imports checks' peers
    base = REPO / "results" / f"check-mutants-{config}-{datetime.now():%Y%m%d-%H%M%S}"
    args = matrix._args("default", TEST_ARGS)
    args.config = config
    args.stress = None
    where = "" if config == "default" else f" (--config {config})"
    if unmutated is None:
        out = matrix.boot(t, f"mutation: unmutated{where}", f"{SPEC}:all", args,
                          base / "all", run_one)
        unmutated = out.summary if out else None
    if unmutated is not None:
        ok, detail = judge(unmutated, None)
        t.record(f"mutation: the test passes on {SPEC}:all{where}, unmutated", ok, detail)
    every = mutants()
    caught = 0
    for m in every:
        out = matrix.boot(t, f"mutation {m.name}{where}", f"{SPEC}:mutant-{m.name}", args,
                          base / m.name, run_one)
        if out is None:
            continue
        ok, detail = judge(out.summary, m)
        caught += ok
        t.record(f"mutation {m.name}{where} ({m.decision}): the test fails, in "
                 + ", ".join(m.caught_by), ok, detail)
    print(f"# mutation score{where}: {caught} of {len(every)} mutants of "
          "gup_fast_folio_allowed() caught", flush=True)
