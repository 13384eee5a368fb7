"""Kernel config fragments: merge onto tinyconfig and check what survived.

Like kunit.py, every option a fragment asks for must still be set after
olddefconfig; an option that silently disappears (a dependency missing)
is an error naming it, not a kernel that quietly lacks the test.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..host import REPO, RunnerError

CONFIGS = REPO / "runner" / "configs"
VARIANTS = ("default", "debug", "selftests", "kselftest", "thp-always", "oot", "notrace")
# Lines of a tree's tools/testing/selftests/mm/config the selftests variant
# takes: what gup_test needs (the rest, userfaultfd, HMM, ftrace, ..., serves
# programs the runner does not run and would double the build).
SELFTEST_LINES = ("CONFIG_GUP_TEST=", "CONFIG_TRANSPARENT_HUGEPAGE=")
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


def config_files(variant: str, arch: str = "amd64") -> list[tuple[str, str]]:
    """(name, text) of the runner/configs files of @variant (VARIANTS) for
    @arch: base.config (an arm64 guest: arm64-64k.config, 64K pages), then
    the variant's own."""
    if variant not in VARIANTS:
        raise RunnerError(f"unknown config variant '{variant}': use "
                          + " or ".join(VARIANTS))
    names = ["arm64-64k.config" if arch == "arm64" else "base.config"]
    names += [f"{variant}.config"] if variant != "default" else []
    frags = []
    for name in names:
        path = CONFIGS / name
        if not path.exists():
            raise RunnerError(f"unknown config variant '{variant}' ({path} missing)")
        frags.append((name, path.read_text()))
    return frags


def fragments(variant: str, tree: Path | None, builtin: bool,
              arch: str = "amd64") -> list[tuple[str, str]]:
    """(name, text) of every fragment for a variant (VARIANTS) and @arch."""
    frags = config_files(variant, arch)
    # The tree's own selftest config names the module (the wiring patch is
    # what enables it) and, for the selftests variant, gup_test's options.
    mm = (tree / "tools/testing/selftests/mm/config") if tree else None
    if variant == "kselftest":      # gup_test as the tree has it, built in
        frags.append(("selftests/mm/config (gup_test built in)",
                      _lines_of(mm, SELFTEST_LINES)))
        return frags
    if variant == "selftests":
        lines = _lines_of(mm, SELFTEST_LINES)
        if "CONFIG_GUP_TEST=" not in lines:
            raise RunnerError(f"{mm} does not name CONFIG_GUP_TEST: not a "
                              "kernel tree the selftests variant knows")
        # Its CONFIG_GUP_TEST=y is replaced by where the series' gup_test
        # comes from (below): the tree's bool gup_test would be a second one.
        lines = "".join(line + "\n" for line in lines.splitlines()
                        if not line.startswith("CONFIG_GUP_TEST="))
        frags.append(("selftests/mm/config (gup_test's options)", lines))
    # The test needs the series' gup_test: built in where the tree has it
    # (series_gup_test), else out of tree (kernels.build_module), so the
    # tree's own (older) gup_test must stay out. Every variant says so, so
    # that default and selftests ask the same options and share a build
    # (options_key).
    if builtin:
        frags.append(("the series' gup_test, built in", "CONFIG_GUP_TEST=y\n"))
    else:
        frags.append(("gup_test out of tree: not built in",
                      "# CONFIG_GUP_TEST is not set\n"))
    return frags


def options_key(frags: list[tuple[str, str]], arch: str = "amd64") -> str:
    """A short digest of the options @frags ask for, merged (requested()),
    and @arch: source.build_dir names a build directory by it, and a build
    configured from it is not configured again. A comment or a fragment's
    name changes no key, so variants that ask the same options (default and
    selftests) share one build; another arch never does."""
    options = "".join(f"{opt}={value}\n" for opt, (value, _) in sorted(requested(frags).items()))
    return "cfg" + digest([(arch, options)])[:8]


def files_key(variant: str, arch: str = "amd64") -> str:
    """options_key() of the runner/configs files of @variant alone."""
    return options_key(config_files(variant, arch), arch)


def series_gup_test(tree: Path) -> bool:
    """True when @tree's gup_test has GUP_FAST_VERDICT (the series applied
    up to its command): the test can use it built in."""
    h = tree / "mm" / "gup_test.h"
    return h.exists() and re.search(r"^#define GUP_FAST_VERDICT\b",
                                    h.read_text(errors="replace"), re.M) is not None


def _lines_of(fragment: Path | None, prefixes: tuple[str, ...]) -> str:
    """The lines of @fragment starting with one of @prefixes."""
    if not fragment or not fragment.exists():
        return ""
    return "".join(line + "\n" for line in fragment.read_text().splitlines()
                   if line.startswith(prefixes))


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


def requested(frags: list[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """option -> (value, fragment name) that @frags ask for, merged in order
    as merge_config.sh does: a later fragment overrides an earlier one (the
    thp-always variant unsets base.config's CONFIG_ADVISE_SYSCALLS)."""
    want: dict[str, tuple[str, str]] = {}
    for name, text in frags:
        for opt, value in parse(text).items():
            want[opt] = (value, name)
    return want


def missing(frags: list[tuple[str, str]], config_text: str,
            tree: Path | None = None) -> list[str]:
    """Requested options the final .config does not have as requested (the
    last fragment that names an option is the one asking, see requested()).

    With @tree, an option that tree's Kconfig does not define at all (e.g.
    PROC_SYSCTL, gone by 7.3) is not an error: one fragment serves 6.12 and
    7.x alike.
    """
    have = parse(config_text)
    bad = []
    for opt, (want, name) in requested(frags).items():
        got = have.get(opt, "n")
        if got != want and not (tree and opt not in have and want != "n"
                                and not defined_in(tree, opt)):
            bad.append(f"{opt}={want} (from {name}) ended up {opt}={got}")
    return bad
