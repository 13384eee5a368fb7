"""Figures in the documents that cannot drift (issue 48 item 8).

A figure in README.md or docs/*.md that describes what the code does today
(how many cells the test judges, how many flat result names it gives, how
many mutants the mutation check flips, how many of the documents' short
forms make check runs) is compared with facts(): each one computed from the
repository (the test's own tables, the mutants' folder, the documents'
commands), never copied. CLAIMS say where the documents state them, in
digits or in words: a claim with a path must be found there (a sentence
rewritten without its figure fails until CLAIMS follows); one without a
path (GENERIC) is a wording that must agree wherever it stands, records
included: a record of an older test names what it counted without it.

Figures that only a run can give (a result count, a line count of a lab's
result file, a "N passed, N failed") are records: they belong to the dated
log docs/measured.md, or to a block (a paragraph, a table row, a code block
with the paragraph before it) that links it. RECORDS are those wordings;
found elsewhere, they fail the check, with what to do.

Times and sizes are measurements as well: on every page each one is dated
or links the log, unless it is a limit ("under 1 MiB", "timeout (900 s)").

docs/measured.md is the log itself and is not read. Text inside HTML
comments is not read either.

  cd runner && python3 -m gupnm.check.doc_facts    # the check alone
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..ci import kselftest_paths
from ..host import REPO
from . import docs_commands, docs_short

TEST = Path("tools/testing/selftests/mm/gup_null_mapping.c")
STRESS = Path("hardening/gupnm_stress.c")
MUTANTS = Path("runner/gupnm/check/mutants")
KERNEL_PATCHES = Path("patches/upstream")
LAYOUT = Path("runner/tests/test_layout.py")
LOG = "measured.md"
WORDS = ("zero one two three four five six seven eight nine ten eleven twelve "
         "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
N = rf"(?P<n>\d+|{'|'.join(WORDS)})"    # a figure in digits or words


def _c_array(text: str, name: str, where: Path) -> str:
    """The initialiser of the C array @name[] in @text (between its braces)."""
    m = re.search(rf"\b{name}\[\]\s*=\s*\{{", text)
    if not m:
        raise ValueError(f"no array {name}[] in {where}")
    depth, i = 1, m.end()
    while depth:
        if i >= len(text):
            raise ValueError(f"array {name}[] in {where} does not end")
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


def cell_table(text: str) -> tuple[list[str], list[str]]:
    """The test's rows (backings[]: their names) and pins (pin_names[])."""
    rows = re.findall(r'^\s*\[\w+\]\s*=\s*\{\s*"(\w+)"',
                      _c_array(text, "backings", TEST), re.M)
    pins = re.findall(r'"(\w+)"', _c_array(text, "pin_names", TEST))
    if not rows or not pins:
        raise ValueError(f"{TEST}: no rows or no pins in backings[] / pin_names[]")
    return rows, pins


def stress_cases(text: str) -> dict[str, int]:
    """The hardening program's cases by kind: abi_cases[] (each run as
    abi_<name>), and the race_ and leak_ entries of cases[]."""
    abi = re.findall(r'^\s*[A-Z_]+\("\w+"', _c_array(text, "abi_cases", STRESS), re.M)
    named = re.findall(r'\{\s*"(race|leak)_\w+"', _c_array(text, "cases", STRESS))
    out = {"stress_abi": len(abi), "stress_race": named.count("race"),
           "stress_leak": named.count("leak")}
    if not all(out.values()):
        raise ValueError(f"{STRESS}: a kind of case missing: {out}")
    out["stress_cases"] = sum(out.values())
    return out


def insertions(patch: str) -> int:
    """The insertions of a patch's diffstat (`N insertions(+)`), 0 without."""
    m = re.search(r"^ \d+ files? changed, (\d+) insertions?\(\+\)", patch, re.M)
    return int(m.group(1)) if m else 0


def facts(repo: Path = REPO) -> dict[str, int]:
    """Every figure the documents may state, from the repository."""
    rows, pins = cell_table((repo / TEST).read_text())
    cells = len(rows) * len(pins)
    kernel = sorted((repo / KERNEL_PATCHES).glob("000[1-9]-mm-*.patch"))
    layout = re.search(r"^MAX_LINES = (\d+)$", (repo / LAYOUT).read_text(), re.M)
    if not kernel or not layout:
        raise ValueError(f"no kernel patches in {KERNEL_PATCHES}/ or no MAX_LINES "
                         f"in {LAYOUT}")
    stress = (repo / STRESS).read_text()
    return {"rows": len(rows), "pins": len(pins), "cells": cells,
            # run_kselftest.sh flattened: one name per cell, one for the test
            "own_results": cells + 1,
            "mutants": len(list((repo / MUTANTS).glob("*.diff"))),
            **stress_cases(stress),
            "test_lines": (repo / TEST).read_text().count("\n"),
            "stress_lines": stress.count("\n"),
            "kernel_lines": sum(insertions(p.read_text()) for p in kernel),
            "max_function_lines": int(layout.group(1)),
            "kselftest_paths": len(kselftest_paths.PATHS),
            **short_forms(repo)}


def short_forms(repo: Path) -> dict[str, int]:
    """The documents' commands that boot a kernel, as docs_short runs them:
    how many, and how many each check runs (docs_short.placement())."""
    where = [s.where for s in docs_short.short_forms(docs_commands.collect(repo), repo)]
    return {"short_forms": len(where), "short_forms_in_check": where.count("check"),
            "short_forms_arm64": where.count("arm64"),
            "short_forms_docs": where.count("docs")}


def number(text: str) -> int:
    """A figure as the documents write it: digits, or a word up to twenty."""
    return int(text) if text.isdigit() else WORDS.index(text.lower())


@dataclass(frozen=True)
class Claim:
    pattern: str      # a regex; its group "n" is the figure
    fact: str         # the key of facts()
    path: str = ""    # the document that must say it; "" any, where found
    within: float = 0  # a round figure: how far from the fact, relative


CLAIMS = (
    # Wordings that always mean today's test, wherever they stand.
    Claim(r"(?<!of )(?<![.\w])(?P<n>\d+)[-\s]+cells?\b", "cells"),
    Claim(r"\b(?P<n>\d+)\s+(?:of its\s+)?verdicts\b", "cells"),
    Claim(r"\bof the (?P<n>\d+)\s+verdict cases\b", "cells"),
    Claim(r"\b(?P<n>\d+)\s+results\s+`verdict_", "cells"),
    Claim(r"\b(?P<n>\d+)\s+flat result names\b", "own_results"),
    Claim(r"\bgup_null_mapping's\s+(?P<n>\d+)\s+(?:are\s+)?unique\b", "own_results"),
    Claim(r"\b(?P<n>\d+)\s+of\s+\d+\s+mutants\b", "mutants"),
    Claim(r"\b\d+\s+of\s+(?P<n>\d+)\s+mutants\b", "mutants"),
    Claim(rf"(?i:\b{N}\s+mutants)\b", "mutants"),
    Claim(rf"(?i:\b{N}\s+backings)\b", "rows"),
    Claim(rf"(?i:\b{N}\s+pins)\b", "pins"),
    Claim(rf"(?i:\bthe\s+{N}\s+paths)\b", "kselftest_paths"),
    Claim(r"\b(?P<n>\d+)\s+`abi_\*`", "stress_abi"),
    Claim(r"\b(?P<n>\d+)\s+`race_\*`", "stress_race"),
    Claim(r"\b(?P<n>\d+)\s+`leak_\*`", "stress_leak"),
    # Sentences that must stay, with their figure.
    Claim(r"on 7\.3\.4 all (?P<n>\d+) pass", "cells", "README.md"),
    Claim(r"\b(?P<n>\d+) cells told fast from slow", "cells", "README.md"),
    Claim(r"its own line and its (?P<n>\d+) verdicts", "cells", "docs/ci.md"),
    Claim(r"gup_null_mapping's (?P<n>\d+) are unique", "own_results", "docs/ci.md"),
    Claim(r"FAIL: 2 of (?P<n>\d+) failed", "cells", "docs/lab-commands.md"),
    Claim(r"`?Cells`? are the case names.*?\n\s*(?P<n>\d+) of them", "cells",
          "docs/expectations.md"),
    Claim(r"Today's program has (?P<n>\d+) cases", "stress_cases", "docs/test.md"),
    Claim(r"and all (?P<n>\d+) pass on Debian", "stress_cases", "docs/test.md"),
    Claim(r"no options, about (?P<n>\d+) lines", "test_lines", "docs/test.md", 0.05),
    Claim(r"gupnm_stress\.c` \(about (?P<n>\d+) lines\)", "stress_lines",
          "docs/test.md", 0.05),
    Claim(r"gup_null_mapping\.c`, about (?P<n>\d+) lines", "test_lines",
          "docs/series.md", 0.05),
    Claim(r"kernel side adds (?P<n>\d+) lines", "kernel_lines", "docs/series.md"),
    Claim(r"function grows past (?P<n>\d+) lines", "max_function_lines",
          "docs/architecture.md"),
    Claim(r"`make check` runs (?P<n>\d+) of the \d+", "short_forms_in_check",
          "docs/checks.md"),
    Claim(r"`make check` runs \d+ of the (?P<n>\d+)", "short_forms", "docs/checks.md"),
    Claim(rf"check-arm64` runs\s+the {N}\s+on arm64", "short_forms_arm64",
          "docs/checks.md"),
    Claim(rf"check-docs-short` alone runs\s+the {N}\s+that boot", "short_forms_docs",
          "docs/checks.md"),
)

GENERIC = tuple(c for c in CLAIMS if not c.path)

# Figures of a run: records for docs/measured.md (or a block linking it).
RECORDS = (
    r"\b\d+\s+of\s+\d+\s+(?:pass|passed|fail|failed)\b",
    r"\(\d+\s+lines\)",
    r"\b\d+\s+results?\s+of\s+(?:gup_null_mapping|ours)\b",
    r"\b\d+\s+names\s+per\s+path\b",
    r"\b\d+\s+passed,\s+\d+\s+failed\b",
)


# Times and sizes are measurements: on every page each one stands in a
# block that is dated or links the log, unless it is a limit ("under 1
# MiB", "timeout (900 s)").
TIMED = r"\b\d+(?:\.\d+)?\s?(?:ms|s|min|h|KiB|MiB|GiB|kB|MB|GB)\b"
LIMIT = re.compile(r"(?:under|at most|within|timeout|budget|limit|killed at|default|--\w+)"
                   r"\W+(?:\w+\W+)?$")
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b\d{1,2} (?:January|February|March|April|"
                   r"May|June|July|August|September|October|November|December) 20\d\d\b")


def timing_problems(rel: str, text: str) -> list[str]:
    """The times and sizes of @text (page @rel) that are neither dated, nor
    linked to the log, nor a limit."""
    out = []
    for m in re.finditer(TIMED, text):
        block = _block(text, m.start())
        if LOG in block or DATED.search(block) or LIMIT.search(text[max(0, m.start() - 30):m.start()]):
            continue
        out.append(f"{rel}:{_line(text, m.start())}: {m.group(0)!r} is a measurement "
                   f"without a date: link its row of docs/{LOG} (add one, dated, "
                   "with its command) or say it without the figure")
    return out


def documents(repo: Path = REPO) -> list[Path]:
    return [repo / "README.md",
            *sorted(p for p in (repo / "docs").glob("*.md") if p.name != LOG)]


def _blank_comments(text: str) -> str:
    """@text with HTML comments blanked, line numbers kept."""
    return re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group()), text,
                  flags=re.S)


def _block(text: str, pos: int) -> str:
    """The paragraph at @pos; a table row (a line starting with |) or an
    indented code block with the paragraph that introduces it."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start:len(text) if end < 0 else end]
    if line.lstrip().startswith("|"):
        top = start
        while top > 0 and text[text.rfind("\n", 0, top - 1) + 1:].lstrip().startswith("|"):
            top = text.rfind("\n", 0, top - 1) + 1
        before = text.rfind("\n\n", 0, max(0, top - 2))    # the intro's start
        return text[before + 2 if before >= 0 else 0:top] + line
    start = text.rfind("\n\n", 0, pos)
    end = text.find("\n\n", pos)
    block = text[start + 2 if start >= 0 else 0:len(text) if end < 0 else end]
    if block.startswith("    ") and start > 0:
        return _block(text, start) + "\n\n" + block
    return block


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def problems(repo: Path = REPO, known: dict[str, int] | None = None,
             claims: tuple[Claim, ...] = CLAIMS) -> list[str]:
    """What the documents say against facts(), and records outside the log."""
    known = facts(repo) if known is None else known
    out = []
    for doc in documents(repo):
        rel = str(doc.relative_to(repo))
        text = _blank_comments(doc.read_text())
        checked: list[tuple[int, int]] = []
        for claim in claims:
            if claim.path and claim.path != rel:
                continue
            found = list(re.finditer(claim.pattern, text))
            if claim.path and not found:
                out.append(f"{rel}: no longer says /{claim.pattern}/: write the "
                           f"{claim.fact} ({known[claim.fact]}) there again, or "
                           "change CLAIMS in runner/gupnm/check/doc_facts.py")
            for m in found:
                if "n" not in m.re.groupindex:
                    continue
                checked.append(m.span())
                if abs(number(m.group("n")) - known[claim.fact]) > \
                        claim.within * known[claim.fact]:
                    out.append(f"{rel}:{_line(text, m.start())}: says "
                               f"{m.group(0)!r}, the code gives {claim.fact} = "
                               f"{known[claim.fact]}")
        for pattern in RECORDS:
            for m in re.finditer(pattern, text):
                inside = any(a <= m.start() and m.end() <= b for a, b in checked)
                if not inside and LOG not in _block(text, m.start()):
                    out.append(f"{rel}:{_line(text, m.start())}: {m.group(0)!r} is "
                               f"a run's figure: move it to docs/{LOG} (dated, with "
                               "its command), link that from its paragraph, or "
                               "say it without the number")
        out += timing_problems(rel, text)
    return list(dict.fromkeys(out))    # a figure two claims match: once


def summary(known: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in known.items())


def check(t, repo: Path = REPO, claims: tuple[Claim, ...] = CLAIMS) -> None:
    """make check's row: every figure of the documents against the code."""
    def run():
        try:
            bad = problems(repo, claims=claims)
        except (OSError, ValueError) as err:
            return False, (f"{err}: the check reads {TEST}, {STRESS}, {MUTANTS}/, "
                           f"{KERNEL_PATCHES}/ and {LAYOUT}")
        return not bad, "\n".join(bad)
    try:
        label = summary(facts(repo))
    except (OSError, ValueError) as err:
        label = f"the code's figures unreadable: {err}"
    t.guard(f"docs: figures of README.md and docs/ agree with the code ({label}); "
            f"a run's figures only as records linking docs/{LOG}; their times and sizes "
            "dated", run)


def main() -> int:
    from .tally import Tally
    t = Tally()
    check(t)
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
