"""Every command of README.md and docs/*.md that boots a kernel, run once in
a short form (issue 33).

The commands are docs_commands' listing (its blocks, kinds and the exit
each comment promises); nothing here parses a document. A command boots a
kernel when it is `make` of a target that runs the runner on a kernel
(BOOT_TARGETS) or `runner/gupnm-run run|compare|survey` on a kernel other
than the host. Its short form is what it runs with fewer repeats and
smaller sizes: a make line is expanded with `make -n` (REPEAT=1), then in
every runner call `--repeat N` becomes 1, a `--command`'s sizes at most 32
MiB and its repeats at most 2, a `--test-args`' samples at most 5 and its
thread list its first two, and `survey` takes the newest 6.1 only. Lines of
the same block that set up for it (mkdir, cp, assignments, loops) run
before it in the same bash, as a reader pasting the block would.

A short form passes when it exits as the document says (docs_commands.judge):
a figure (compare, the benchmarks, the reproductions) is exit 0, a verdict
0 or 1, never the exit 2 of input refused; each runs under its own timeout,
which kills its whole process group.

`make check` runs the amd64 short forms, last, when its own runs have
built the kernels they share, but those that boot packages their block
unpacks (docs/own-kernel.md's image: and debs:, paths its own-image rows
boot); `make check-arm64` the arm64 ones, which boot under
qemu-system-aarch64 and may cross-build a 64K-page kernel; `make
check-docs-short` all of them: placement(). The selftests variant
(--config selftests, --command) shares its kernel's default build
(kconfig.options_key), where before it built every kernel a second time.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import testargs
from ..host import spawn, stop
from . import docs_commands
from .docs_commands import Command
from .tally import Tally

ROOT = docs_commands.ROOT
# make targets that boot kernels through the runner (the Makefile's).
BOOT_TARGETS = {"run", "compare", "bench-fix", "bench-debian", "bench-64k",
                "bench-knobs", "repro-longterm", "repro-ksm", "repro-gup-fast",
                "survey"}
RUNNER_BOOTS = {"run", "compare", "survey"}
# A block's lines that only prepare for the command after them.
SETUP_WORDS = {"mkdir", "for", "cp", "rm", "sed", "cd"}
MAX_MIB = 32
MAX_COMMAND_REPEATS = 2
MAX_SAMPLES = 5
SURVEY_SHORT = "--series 6.1 --newest"
# Kernel specs of packages a document's block unpacks (docs/own-kernel.md).
UNPACKED = ("image:", "debs:")
# Seconds per short form: make check has built its kernels by then; an
# arm64 one may cross-build one.
TIMEOUT = {"check": 900, "docs": 900, "arm64": 3600}


@dataclasses.dataclass
class Short:
    cmd: Command                # the document's command
    text: str                   # what runs: the short form
    setup: list[Command]        # the block's lines before it that it needs
    where: str                  # "check", "arm64" or "docs": placement()
    why: str                    # why it runs where it does


def one_line(text: str) -> str:
    """@text on one line (continuations joined, blanks squeezed)."""
    return " ".join(text.replace("\\\n", " ").split())


def boots(cmd: Command) -> bool:
    """Does @cmd boot a kernel (docs/checks.md: the short forms)?"""
    words = cmd.text.removeprefix("/usr/bin/time ").split()
    if cmd.kind not in ("run", "long", "repeat") or not words:
        return False
    if words[0] == "make":
        target = next((w for w in words[1:] if "=" not in w and not w.startswith("-")), "")
        return target in BOOT_TARGETS
    if words[0] == "runner/gupnm-run" and len(words) > 1 and words[1] in RUNNER_BOOTS:
        return "host" not in _specs(cmd.text)
    return False


def expand(text: str, root: Path = ROOT) -> str:
    """A make line's recipe as make would run it (make -n, REPEAT=1); any
    other line as it is."""
    words = shlex.split(text.removeprefix("/usr/bin/time "))
    if words[0] != "make":
        return text
    proc = subprocess.run(["make", "-n", "-s", "--no-print-directory", *words[1:],
                           "REPEAT=1"], cwd=root, capture_output=True, text=True,
                          env=_env())
    if proc.returncode != 0:
        raise ValueError(f"make -n {' '.join(words[1:])}: {proc.stderr.strip()}")
    # make runs each logical line of a recipe in a shell of its own and
    # stops at the first that fails: so does the short form.
    lines = re.split(r"(?<!\\)\n", proc.stdout.strip())   # continuations kept
    lines = [re.sub(r"\\\s*$", "", line).rstrip() for line in lines]
    return "\n".join(f"( {line} ) || exit $?" for line in lines if line.strip())


def _clamp(value: str, most: int) -> str:
    return str(min(int(value), most)) if value.isdigit() else value


def short_command(text: str) -> str:
    """A --command's program with sizes of at most MAX_MIB MiB (gup_test
    -m, ksm_tests -s) and at most MAX_COMMAND_REPEATS repeats (gup_test -r)."""
    words = text.split()
    limits = {"gup_test": {"-m": MAX_MIB, "-r": MAX_COMMAND_REPEATS},
              "ksm_tests": {"-s": MAX_MIB}}.get(words[0].removeprefix("./"), {})
    for i in range(1, len(words) - 1):
        if words[i] in limits:
            words[i + 1] = _clamp(words[i + 1], limits[words[i]])
    return " ".join(words)


def short_test_args(text: str) -> str:
    """The benchmark's arguments with at most MAX_SAMPLES samples per cell
    (-r) and its first two thread counts (the operands; getopt() string
    of bench/gup_fast_bench.c, testargs.getopt_string)."""
    takes = set(re.findall(r"(\w):", testargs.getopt_string()))
    words, out, operands = text.split(), [], 0
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-") and len(w) == 2 and w[1] in takes and i + 1 < len(words):
            value = words[i + 1]
            out += [w, _clamp(value, MAX_SAMPLES) if w == "-r" else value]
            i += 2
            continue
        if not w.startswith("-"):
            operands += 1
            if operands > 2:
                i += 1
                continue
        out.append(w)
        i += 1
    return " ".join(out)


def _requote(option: str, fn, text: str) -> str:
    """Every `OPTION 'VALUE'` (or "VALUE") of @text with VALUE = fn(VALUE)."""
    return re.sub(rf"""({option}\s+)(['"])(.*?)\2""",
                  lambda m: f"{m.group(1)}{m.group(2)}{fn(m.group(3))}{m.group(2)}",
                  text)


def shorten(text: str) -> str:
    """The short form of an expanded command (see the module's docstring)."""
    text = re.sub(r"--repeat(\s+)\d+", r"--repeat\g<1>1", text)
    text = _requote("--command", short_command, text)
    text = _requote("--test-args", short_test_args, text)
    if re.search(r"\bgupnm-run survey\b", text) and "--series" not in text:
        text = re.sub(r"(\bgupnm-run survey\b)", rf"\1 {SURVEY_SHORT}", text)
    return text


def _specs(text: str) -> list[str]:
    return re.findall(r"--(?:kernel|a|b)\s+(\S+)", text)


def placement(short: str) -> tuple[str, str]:
    """Where a short form runs, and why: "arm64" (make check-arm64) for one
    on arm64, which boots under qemu-system-aarch64 and may cross-build a
    64K-page kernel (10 min cold, docs/arm64.md); "docs" (make
    check-docs-short alone) for one that boots packages its document's
    block unpacked (image:, debs:: docs/own-kernel.md), a path make check's
    own-image rows boot from the same packages; "check" (make check) for
    the rest. make check-docs-short runs all three."""
    if "--arch arm64" in short:
        return "arm64", "an arm64 kernel: make check-arm64 runs it"
    if any(s.startswith(UNPACKED) for s in _specs(short)):
        return "docs", ("packages its block unpacks: make check's own-image rows "
                        "boot that path, make check-docs-short this block")
    return "check", "make check runs it"


def short_forms(plan: list[list[Command]], root: Path = ROOT) -> list[Short]:
    """The short form of every command of @plan that boots a kernel, one per
    distinct short form (the first document line that has it)."""
    out, seen = [], {}
    for block in plan:
        for i, c in enumerate(block):
            if not boots(c):
                continue
            text = shorten(expand(c.text, root))
            if text in seen:
                continue
            seen[text] = c.where
            setup = [s for s in block[:i] if not boots(s) and _is_setup(s)]
            where, why = placement(text)
            out.append(Short(c, text, setup, where, why))
    return out


def _is_setup(c: Command) -> bool:
    return c.kind == "run" and (c.text.split()[0] in SETUP_WORDS
                                or bool(docs_commands.ASSIGNMENT.match(c.text)))


def _env() -> dict:
    """A reader's shell: not the make that called us."""
    return {k: v for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def run_one(s: Short, log: Path, timeout: int) -> tuple[int | None, str, float]:
    """Run @s's setup lines and its short form in one bash, in its own
    process group (host.spawn: it dies with the check), stopped as a whole
    after @timeout s, SIGTERM first (None: timed out); (exit, output,
    seconds)."""
    lines = ["set -a"] + [docs_commands._fill(c.text)[0] for c in s.setup] \
        + [docs_commands._fill(s.text)[0]]
    started = time.monotonic()
    with open(log, "w") as f:
        proc = spawn(["bash", "-c", "\n".join(lines)], term=signal.SIGTERM, cwd=ROOT,
                     env=_env(), stdout=f, stderr=subprocess.STDOUT,
                     stdin=subprocess.DEVNULL)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop(proc, grace=30)   # SIGTERM: the runner stops QEMU on it
            rc = None
    return rc, log.read_text(errors="replace"), time.monotonic() - started


def verdict(s: Short, rc: int | None, output: str, timeout: int) -> str | None:
    """None when the short form did what its document says, else why not."""
    if rc is None:
        return f"timed out after {timeout} s (its process group killed)"
    return docs_commands.judge(s.cmd, rc, output)


def run(t: Tally, forms: list[Short], out: Path) -> None:
    """Each short form of @forms as one counted check."""
    out.mkdir(parents=True, exist_ok=True)
    for n, s in enumerate(forms):
        log = out / f"short-{n:02}.log"
        timeout = TIMEOUT[s.where]
        rc, output, seconds = run_one(s, log, timeout)
        why = verdict(s, rc, output, timeout)
        print(f"# {s.cmd.where}: {one_line(s.text)}", flush=True)
        t.record(f"docs short form of {s.cmd.text.splitlines()[0][:70]} ({s.cmd.where}, "
                 f"{seconds:.0f} s)", why is None,
                 f"{why}; log {log}\n" + "\n".join(output.splitlines()[-15:]))


def check(t: Tally, where: str = "check", out: Path | None = None) -> None:
    """The short forms placed at @where (placement(): "check" for make
    check, "arm64" for make check-arm64)."""
    forms = [s for s in short_forms(docs_commands.collect(ROOT)) if s.where == where]
    run(t, forms, out or Path(tempfile.mkdtemp(prefix="gupnm-docs-short-")))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gupnm-check-docs-short", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true", help="list the short forms, run none")
    p.add_argument("--in-check", action="store_true",
                   help="only those make check runs (placement())")
    p.add_argument("--only", metavar="REGEX", help="only short forms matching REGEX")
    p.add_argument("--out", type=Path, default=None, help="logs folder")
    args = p.parse_args(argv)
    forms = [s for s in short_forms(docs_commands.collect(ROOT))
             if (not args.in_check or s.where == "check")
             and (not args.only or re.search(args.only, s.text))]
    if args.list:
        for s in forms:
            print(f"{s.where:5} {s.cmd.where:22} {one_line(s.text)}\n      ({s.why})")
        return 0
    t = Tally()
    out = args.out or Path(tempfile.mkdtemp(prefix="gupnm-docs-short-"))
    print(f"# {len(forms)} short forms, logs in {out}", flush=True)
    run(t, forms, out)
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
