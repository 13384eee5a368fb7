"""--command: run a program of a kernel tree's selftests/mm in the guest.

  gupnm-run run --kernel source:debian-6.12 --command "gup_test -HL -m 256 -n 512"

The program comes from tools/testing/selftests/mm of a kernel tree, built by
that tree's own Makefile (kselftest_build): a source: kernel's patched tree,
or for a Debian binary kernel the linux-source tree named by --selftests
(default debian-6.12; the same binary then runs on every Debian kernel
compared). It is copied into the guest with the libraries it links.

What the command needs of the kernel is derived from it and checked on the
host before anything boots: config options (CONFIG_HUGETLBFS for gup_test
-H, CONFIG_KSM for ksm_tests), hugepages= on the kernel command line for
hugetlb memory, and guest memory for the size asked. A kernel without them
is an error that says which, never a wrong number. Source kernels run a
command with the "selftests" config variant (configs/selftests.config plus
those lines of the tree's fragment).

/sys/kernel/debug/gup_test, which gup_test drives (and cow, gup_longterm
use when present), is served by whichever of these the kernel has first
(gup_test_server): its own gup_test built in (CONFIG_GUP_TEST=y; a source
kernel whose tree has the series' GUP_FAST_VERDICT builds it in), else the
runner's module, the series' gup_test built out of tree (oot/) for every
kernel as the default path builds it. Only a kernel neither can serve is
an error, naming both.
"""
from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..host import UsageError
from . import kconfig, kernels

SELFTESTS_MM = "tools/testing/selftests/mm"
# What the guest needs besides the command's memory: kernel, init, test.
BASE_MEMORY_MB = 384
HUGEPAGE_MB = 2                 # x86-64's default hugetlb size
_SAFE_WORD = re.compile(r"[A-Za-z0-9_.,=:/+%@-]+")
# Options (of the programs below) that take an argument.
_ARG_LETTERS = {"gup_test": "mrnFfj", "ksm_tests": "aplzmst"}


@dataclass
class Command:
    program: str                # basename in selftests/mm
    args: list[str]

    @property
    def guest(self) -> str:
        """The command line the guest runs from the programs' directory."""
        return " ".join([f"./{self.program}", *self.args])


@dataclass
class Needs:
    config: list[tuple[str, str]] = field(default_factory=list)  # (option, why)
    append: list[str] = field(default_factory=list)              # kernel cmdline
    memory_mb: int = BASE_MEMORY_MB
    gup_test: bool = False      # the program cannot run without gup_test


@dataclass(frozen=True)
class Server:
    """Who serves /sys/kernel/debug/gup_test in the guest."""
    kind: str                   # BUILTIN or RUNNERS
    module: Path | None         # what the guest loads; None: nothing
    why: str                    # one line for the report

    def as_dict(self) -> dict:
        return {"kind": self.kind, "module": str(self.module) if self.module else None,
                "why": self.why}


BUILTIN = kernels.GUP_TEST_BUILTIN              # "built in"
RUNNERS = kernels.GUP_TEST_RUNNERS              # "the runner's module (out of tree)"


def parse(text: str) -> Command:
    """A command line: a program name, then plain words (the guest splits
    on blanks, no shell quoting survives); UsageError otherwise."""
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise UsageError(f"--command '{text}': {err}") from None
    if not words:
        raise UsageError("--command is empty: name a program of "
                         f"{SELFTESTS_MM}, e.g. --command 'gup_test -a'")
    program = words[0].removeprefix("./")
    if "/" in program or not _SAFE_WORD.fullmatch(program):
        raise UsageError(f"--command: '{words[0]}' is not a program name of "
                         f"{SELFTESTS_MM} (a plain name such as gup_test)")
    for word in words[1:]:
        if not _SAFE_WORD.fullmatch(word):
            raise UsageError(f"--command: argument '{word}' has characters the "
                             "guest's plain word splitting cannot pass "
                             "(blanks, quotes, shell syntax)")
    return Command(program, words[1:])


def options(cmd: Command) -> dict[str, str]:
    """getopt-style options of @cmd: letter -> argument ('' for a flag).
    Letters not known to take an argument are taken as flags."""
    takes = _ARG_LETTERS.get(cmd.program, "")
    opts: dict[str, str] = {}
    words = list(cmd.args)
    while words:
        w = words.pop(0)
        if w == "--" or not w.startswith("-") or w == "-":
            break
        i = 1
        while i < len(w):
            letter = w[i]
            if letter in takes:
                opts[letter] = w[i + 1:] or (words.pop(0) if words else "")
                break
            opts[letter] = ""
            i += 1
    return opts


def _size_mb(value: str, what: str) -> int:
    if not value.isdigit() or int(value) <= 0:
        raise UsageError(f"--command: {what} '{value}' is not a positive size in MiB")
    return int(value)


def needs(cmd: Command) -> Needs:
    """What @cmd needs of the kernel and the guest."""
    n = Needs()
    opts = options(cmd)
    if cmd.program == "gup_test":
        n.gup_test = True           # gup_test_server: who serves it
        size = _size_mb(opts.get("m", "128"), "gup_test -m")
        n.memory_mb += size
        if "H" in opts:
            n.config.append(("CONFIG_HUGETLBFS", "gup_test -H maps MAP_HUGETLB memory"))
            # gup_test rounds nothing: the whole size in 2 MiB pages.
            n.append.append(f"hugepages={math.ceil(size / HUGEPAGE_MB)}")
        if "t" in opts:
            n.config.append(("CONFIG_TRANSPARENT_HUGEPAGE",
                             "gup_test -t asks for THP (MADV_HUGEPAGE)"))
    elif cmd.program == "ksm_tests":
        n.config.append(("CONFIG_KSM", "ksm_tests drives /sys/kernel/mm/ksm"))
        if "s" in opts:
            n.memory_mb += _size_mb(opts["s"], "ksm_tests -s")
    return n


def check_kernel(n: Needs, config: Path | None, release: str, spec: str) -> None:
    """UsageError naming every option @n needs that the kernel's @config
    does not have."""
    if not n.config:
        return
    if config is None or not config.exists():
        raise UsageError(f"cannot tell whether {release} has "
                         + ", ".join(o for o, _ in n.config)
                         + ": its .config is not available")
    have = kconfig.parse(config.read_text(errors="replace"))
    missing = [(o, why) for o, why in n.config if have.get(o, "n") not in ("y", "m")]
    if missing:
        hint = ("use a kernel built from source (source:debian-6.12 or "
                "source:debian-7.3), which a command builds with the "
                "selftests config" if not spec.startswith("source:") else
                "its config (configs/selftests.config) should have set it: "
                "is the option gone from this tree?")
        raise UsageError(f"{release} ({spec}) lacks "
                         + "; ".join(f"{o}, which {why}" for o, why in missing)
                         + f" ({config}): {hint}")


def gup_test_server(config: Path | None, module: Path | None,
                    release: str, spec: str, program: str = "gup_test",
                    required: bool = True) -> Server | None:
    """Who serves /sys/kernel/debug/gup_test for @program on the kernel
    whose .config is @config (None: not known, e.g. an image: module tree):
    its own gup_test built in (CONFIG_GUP_TEST=y; nothing is loaded), else
    the runner's out-of-tree @module, which needs CONFIG_MODULES and
    CONFIG_DEBUG_FS. Neither: UsageError naming both when @required, else
    None (the program runs without it)."""
    have = kconfig.parse(config.read_text(errors="replace")) \
        if config is not None and config.exists() else None
    own = have.get("CONFIG_GUP_TEST", "n") if have is not None else None
    if own == "y":
        return Server(BUILTIN, None, f"{release}'s own gup_test "
                      "(CONFIG_GUP_TEST=y); no module loaded")
    lacks = [o for o in ("CONFIG_MODULES", "CONFIG_DEBUG_FS")
             if have is not None and have.get(o, "n") != "y"]
    own_said = {None: "its .config is not available",
                "m": "CONFIG_GUP_TEST=m, but its module is not at hand"}.get(
                    own, f"CONFIG_GUP_TEST is not set in {config}")
    if module is not None and not lacks:
        return Server(RUNNERS, module, f"{module.name}, built against {release} "
                      f"(the kernel's own: {own_said})")
    if not required:
        return None
    runners = ("none was built for it" if module is None else
               f"it needs {' and '.join(lacks)}, which {release} lacks")
    raise UsageError(
        f"{program} drives /sys/kernel/debug/gup_test, and nothing can serve it "
        f"on {release} ({spec}): not the kernel's own gup_test ({own_said}), "
        f"not the runner's module ({runners}); use a kernel with "
        "CONFIG_GUP_TEST, or with CONFIG_MODULES and CONFIG_DEBUG_FS for the "
        "runner's module (source:debian-6.12 has both)")


def check_memory(n: Needs, memory_mb: int) -> None:
    if memory_mb < n.memory_mb:
        raise UsageError(f"the command needs about {n.memory_mb} MiB of guest "
                         f"memory ({BASE_MEMORY_MB} for the guest itself plus "
                         f"the size it asks for): pass --memory {n.memory_mb} "
                         "or more, or ask for less")


def binary(mm_dir: Path, cmd: Command) -> Path:
    """The built program; UsageError listing what the tree built if absent."""
    path = mm_dir / cmd.program
    if path.is_file() and path.stat().st_mode & 0o111:
        return path
    built = sorted(p.name for p in mm_dir.iterdir()
                   if p.is_file() and p.stat().st_mode & 0o111 and "." not in p.name)
    raise UsageError(f"{cmd.program} is not a program of {mm_dir} (built: "
                     + ", ".join(built[:40]) + (", ..." if len(built) > 40 else "")
                     + ")")
