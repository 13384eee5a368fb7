"""Kernel config fragments: merge onto tinyconfig and check what survived.

Like kunit.py, every option a fragment asks for must still be set after
olddefconfig; an option that silently disappears (a dependency missing)
is an error naming it, not a kernel that quietly lacks the test.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .host import REPO, RunnerError

CONFIGS = REPO / "runner" / "configs"
VARIANTS = ("default", "debug")
_LINE = re.compile(r"^(CONFIG_\w+)=(.*)$|^# (CONFIG_\w+) is not set$")


def parse(text: str) -> dict[str, str]:
    """Options of a .config or fragment: name -> value ('n' when unset)."""
    opts = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        if m.group(1):
            opts[m.group(1)] = m.group(2)
        else:
            opts[m.group(3)] = "n"
    return opts


def fragments(variant: str, tree: Path | None, with_module: bool) -> list[tuple[str, str]]:
    """(name, text) of every fragment for a variant ('default' or 'debug')."""
    if variant not in VARIANTS:
        raise RunnerError(f"unknown config variant '{variant}': use "
                          + " or ".join(VARIANTS))
    names = ["base.config"] + (["debug.config"] if variant == "debug" else [])
    frags = []
    for name in names:
        path = CONFIGS / name
        if not path.exists():
            raise RunnerError(f"unknown config variant '{variant}' ({path} missing)")
        frags.append((name, path.read_text()))
    if with_module:
        # The tree's own selftest config names the module; take that line so
        # the wiring patch is what enables it.
        mm = (tree / "tools/testing/selftests/mm/config") if tree else None
        line = ""
        if mm and mm.exists():
            line = "".join(l + "\n" for l in mm.read_text().splitlines()
                           if l.startswith("CONFIG_TEST_GUP_FAST="))
        if not line:
            raise RunnerError(f"{mm} does not enable CONFIG_TEST_GUP_FAST: is "
                              "the selftests patch applied?")
        frags.append(("selftests/mm/config (CONFIG_TEST_GUP_FAST)", line))
    return frags


def digest(frags: list[tuple[str, str]]) -> str:
    h = hashlib.sha256()
    for name, text in frags:
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()[:16]


def defined_in(tree: Path, option: str) -> bool:
    """True when a Kconfig file of @tree defines @option (CONFIG_X)."""
    sym = re.escape(option[len("CONFIG_"):])
    pattern = re.compile(rf"^\s*(?:menu)?config\s+{sym}\s*$", re.M)
    return any(pattern.search(p.read_text(errors="replace"))
               for p in tree.rglob("Kconfig*") if p.is_file())


def missing(frags: list[tuple[str, str]], config_text: str,
            tree: Path | None = None) -> list[str]:
    """Requested options the final .config does not have as requested.

    With @tree, an option that tree's Kconfig does not define at all (e.g.
    PROC_SYSCTL, gone by 7.3) is not an error: one fragment serves 6.12 and
    7.x alike.
    """
    have = parse(config_text)
    bad = []
    for name, text in frags:
        for opt, want in parse(text).items():
            got = have.get(opt, "n")
            if got != want and not (tree and opt not in have and want != "n"
                                    and not defined_in(tree, opt)):
                bad.append(f"{opt}={want} (from {name}) ended up {opt}={got}")
    return bad
