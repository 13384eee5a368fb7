"""Flatten nested kselftest TAP into one name per result, as CI systems do.

run_kselftest.sh (and `make run_tests`) print one result per test program,
`ok 1 selftests: mm: ksft_gup_fast.sh`, with the program's own output
indented by `# `; run_vmtests.sh nests once more (`# ok 1 gup_null_mapping`)
and the test itself once more (`# # ok 3 verdict_driver_read`). A subtest's
results come before its parent's result line.

LKFT's kselftest parser and KernelCI report every level as one flat name:
the parent's name and the child's joined with `_`, each part slugified to
[A-Za-z0-9_-] (`selftests: mm: ksft_gup_fast.sh` -> `mm_ksft_gup_fast_sh`),
and they fall back to `_dupN` suffixes when two results share a name. This
module makes the same flat names and reports duplicates instead of renaming
them, so a check can insist there are none.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

RESULT = re.compile(r"^(ok|not ok) +\d+ *-? *([^#]*?)\s*(?:#\s*(.*))?$")
SELFTESTS_PREFIX = re.compile(r"^selftests: *")


@dataclass(frozen=True)
class Flat:
    name: str
    result: str          # pass, fail, skip (as LAVA and LKFT record them)
    depth: int           # 0: the runner's own result


def slug(text: str) -> str:
    """One name part: `selftests: ` dropped, runs of other characters -> `_`."""
    text = SELFTESTS_PREFIX.sub("", text.strip())
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_")


def _depth(line: str) -> tuple[int, str]:
    depth = 0
    while line.startswith("# ") or line == "#":
        line = line[2:]
        depth += 1
    return depth, line


def _result(status: str, directive: str | None) -> str:
    if directive and re.match(r"(?i)skip\b", directive):
        return "skip"
    if directive and re.match(r"(?i)(xfail|todo)\b", directive):
        return "pass" if status == "not ok" else "fail"
    return "pass" if status == "ok" else "fail"


def flatten(text: str) -> list[Flat]:
    """Every result of every level, named by its parents (in output order)."""
    # pending[d]: results seen at depth d whose parent (a result at d - 1)
    # has not been printed yet, with their own already-flattened children.
    pending: dict[int, list[tuple[str, str, list[Flat]]]] = {}
    for raw in text.splitlines():
        depth, line = _depth(raw.rstrip("\r"))
        m = RESULT.match(line)
        if not m:
            continue
        status, desc, directive = m.groups()
        children = []
        for d in sorted(k for k in pending if k > depth):
            children.extend(_named(pending.pop(d), depth + 1))
        pending.setdefault(depth, []).append(
            (slug(desc), _result(status, directive), children))
    out: list[Flat] = []
    for d in sorted(pending):
        out.extend(_named(pending[d], d))
    return out


def _named(items, depth: int) -> list[Flat]:
    """Children first relative to their parent; then prefixed with it."""
    flat = []
    for name, result, children in items:
        flat.append(Flat(name, result, depth))
        flat.extend(Flat(f"{name}_{c.name}", c.result, c.depth) for c in children)
    return flat


def duplicates(items: list[Flat]) -> list[str]:
    seen, dups = set(), []
    for i in items:
        if i.name in seen and i.name not in dups:
            dups.append(i.name)
        seen.add(i.name)
    return dups
