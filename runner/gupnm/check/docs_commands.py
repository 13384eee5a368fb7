"""Every command of README.md and docs/*.md, run as written from a fresh clone.

`make check-docs` (quick: everything but the long targets) and `make
check-docs DOCS=all`. The commands are the documents' code blocks (indented
by four spaces or fenced); a block's commands run in order in one bash in a
fresh `git clone` of HEAD, so a variable or folder one line makes is there
for the next, as for a reader pasting the block. What a line expects comes
from its comment: `exit N`, else PASS (0) or FAIL (1); `make` exits 2 when a
recipe fails, so for make the runner's own code it prints counts. A line
with no expectation must exit 0, or 0/1 for a verdict (`make run`,
`gupnm-run run`): both mean the test ran.

Lines that cannot run as written are named, never run and never counted
as passed: usage lines with placeholders (SPEC, JOB, DIR ...; their flags
are checked against --help by runner/tests/test_docs.py), output shown after
a command, and steps for the machine under test as root with a module
(`insmod`), which every guest's init performs. Placeholders in a block a
reader fills from its own machine are filled from PLACEHOLDERS and said so.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOCS = ("README.md", "docs")

# First words of a command line; any other line in a block is output.
COMMAND_WORDS = {"make", "runner/gupnm-run", "runner/gupnm-check", "git", "mkdir",
                 "for", "dpkg-deb", "gcc", "oot/build-module.sh", "mount", "insmod",
                 "/usr/bin/time", "bash", "base=$(runner/linux-source-base.sh",
                 "./gup_null_mapping", "cd", "cp", "rm", "sed", "rmmod", "mountpoint",
                 "tar", "depmod"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S")
# Words that stand for the reader's own values: the line is a usage line.
PLACEHOLDER = re.compile(r"\b(SPEC|JOB|VMLINUZ|KERNEL:DIR|FILE|DIR|N)\b(?!=)|\[--|\.\.\.\"")
# Steps for the machine under test, as root, with a module: the guest's init.
GUEST_WORDS = {"mount", "mountpoint", "insmod", "./gup_null_mapping", "rmmod"}
# make targets that take more than a few minutes, run by DOCS=all only.
LONG_TARGETS = {"check", "check-arm64", "survey", "bench-fix", "bench-debian",
                "bench-64k", "bench-knobs", "check-full", "check-debug",
                "repro-longterm", "repro-gup-fast", "repro-ksm", "check-docs-short"}
# A reader's own values, filled in for the run (said in the report).
PLACEHOLDERS = {
    "/lib/modules/$(uname -r)/build":
        "$(dirname \"$(ls -t ~/.cache/gupnm/kernels/linux-source-6.12-*/"
        "build-nofix-cfg*/Makefile | grep -v -- -arm64/ | head -n1)\")",
    "<linux>": "$(runner/linux-source-base.sh 7.3)",
}
VERDICT_CODES = (0, 1)


@dataclasses.dataclass
class Command:
    doc: str
    line: int
    text: str
    comment: str = ""
    kind: str = "run"           # run, long, usage, output, guest
    expect: int | None = None

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each code block: fenced, or indented by
    four spaces after a blank line (list items and tables are not blocks)."""
    out, cur, start, fenced, prev_blank = [], [], 0, False, True
    for no, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            if fenced:
                out.append((start, cur))
                cur = []
            fenced, start = not fenced, no + 1
            continue
        if fenced:
            cur.append(line)
        elif line.startswith("    ") and (cur or prev_blank):
            start = start if cur else no
            cur.append(line[4:])
        elif cur and not line.strip():
            cur.append("")
        elif cur:
            out.append((start, cur))
            cur = []
        prev_blank = not line.strip()
    if cur and not fenced:
        out.append((start, cur))
    return [(s, b) for s, b in out if any(x.strip() for x in b)]


def _split_comment(line: str) -> tuple[str, str]:
    m = re.search(r"\s+#\s(.*)$", line)
    return (line[:m.start()], m.group(1)) if m else (line, "")


def _first_word(text: str) -> str:
    return text.split()[0] if text.split() else ""


def _kind(text: str) -> str:
    word = _first_word(text)
    if word not in COMMAND_WORDS and not ASSIGNMENT.match(text):
        return "output"
    if word in GUEST_WORDS:
        return "guest"
    if PLACEHOLDER.search(text):
        return "usage"
    words = text.split()
    after = words[words.index("make") + 1:] if "make" in words[:2] else []
    target = next((w for w in after if "=" not in w and not w.startswith("-")), "")
    if target in LONG_TARGETS:
        return "long"
    return "run"


def expectation(comment: str) -> int | None:
    """The exit code a comment promises: `exit N`, else PASS 0 / FAIL 1."""
    m = re.search(r"\bexit (\d+)\b", comment)
    if m:
        return int(m.group(1))
    m = re.search(r"\b(PASS|FAIL)\b", comment)
    return None if not m else (0 if m.group(1) == "PASS" else 1)


def commands(doc: str, start: int, lines: list[str]) -> list[Command]:
    """The commands of one block: continuation lines joined, a for loop up to
    its done, comment lines right after a command added to its comment."""
    out: list[Command] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        if not raw.strip():
            i += 1
            continue
        if raw.lstrip().startswith("#"):
            if out and i > 0 and lines[i - 1].strip() and out[-1].kind != "output":
                out[-1].comment += " " + raw.lstrip("# ").strip()
            i += 1
            continue
        first, j = i, i
        while lines[j].rstrip().endswith("\\") or (
                _first_word(lines[first]) == "for" and lines[j].strip() != "done"):
            j += 1
        text, comment = _split_comment(" ".join(
            x.rstrip().rstrip("\\").strip() for x in lines[first:j + 1]))
        if _first_word(lines[first]) == "for":
            text = "\n".join(x.rstrip() for x in lines[first:j + 1])
        out.append(Command(doc, start + first, text.strip(), comment, _kind(text)))
        i = j + 1
    for c in out:
        c.expect = expectation(c.comment)
    return out


def collect(root: Path = ROOT) -> list[list[Command]]:
    """Every block with at least one command, README first, then docs/."""
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    out = []
    for f in files:
        for start, lines in blocks(f.read_text()):
            cmds = commands(str(f.relative_to(root)), start, lines)
            if any(c.kind != "output" for c in cmds):
                out.append([c for c in cmds if c.kind != "output"])
    return out


def judge(cmd: Command, rc: int, output: str) -> str | None:
    """None when @cmd did what its document says, else why not."""
    code = rc
    if cmd.text.startswith("make") or cmd.text.startswith("/usr/bin/time make"):
        m = re.findall(r"runner/gupnm-run(?: \S+)* exited (\d+)", output)
        code = int(m[-1]) if m and rc == 2 else rc
    if cmd.expect is not None:
        return None if code == cmd.expect else f"exit {code}, the document says {cmd.expect}"
    verdict = re.match(r"(/usr/bin/time )?(make run\b|runner/gupnm-run run\b)", cmd.text)
    allowed = VERDICT_CODES if verdict else (0,)
    return None if code in allowed else f"exit {code}, expected {' or '.join(map(str, allowed))}"


def _fill(text: str) -> tuple[str, list[str]]:
    filled = []
    for key, value in PLACEHOLDERS.items():
        if key in text:
            text = text.replace(key, value)
            filled.append(f"{key} -> {value}")
    return text, filled


def script(cmds: list[Command]) -> str:
    """One bash script for a block: each command, then its exit code and time."""
    out = ["set +e"]
    for n, c in enumerate(cmds):
        text, _ = _fill(c.text)
        out += [f"printf '\\n@@docs start {n} %s\\n' \"$EPOCHREALTIME\"", text,
                f"printf '\\n@@docs end {n} %s %s\\n' \"$?\" \"$EPOCHREALTIME\""]
    return "\n".join(out) + "\n"


def run_block(cmds: list[Command], clone: Path, log: Path, env: dict) -> list[dict]:
    """Run @cmds in one bash in @clone; one result per command."""
    with open(log, "w") as f:
        subprocess.run(["bash", "-c", script(cmds)], cwd=clone, env=env, stdout=f,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    text = log.read_text(errors="replace")
    rows = []
    for n, c in enumerate(cmds):
        m = re.search(rf"@@docs start {n} (\S+)\n(.*?)\n@@docs end {n} (\d+) (\S+)\n",
                      text, re.S)
        row = {"where": c.where, "command": c.text, "log": str(log),
               "filled": _fill(c.text)[1]}
        if not m:
            row.update(result="fail", why="did not finish (the block stopped before it)")
        else:
            why = judge(c, int(m.group(3)), m.group(2))
            row.update(result="fail" if why else "pass", why=why, exit=int(m.group(3)),
                       seconds=round(float(m.group(4)) - float(m.group(1)), 1))
        rows.append(row)
    return rows


def fresh_clone(dest: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(dest)], check=True)
    return dest


def once(plan) -> list[list[Command]]:
    """@plan with a long command that an earlier block already has marked
    as a repeat of it (make bench-fix in README.md and docs/benchmark.md):
    run once, not twice."""
    plan, first = list(plan), {}
    for c in (c for b in plan for c in b if c.kind == "long"):
        if c.text in first:
            c.kind, c.comment = "repeat", first[c.text]
        else:
            first[c.text] = c.where
    return plan


def not_run(c: Command) -> dict:
    if c.kind == "repeat":
        return {"where": c.where, "command": c.text, "result": "not run",
                "why": f"the same long command as {c.comment}, run there"}
    why = {"usage": "a usage line with placeholders (flags checked by test_docs.py)",
           "guest": "a step for the machine under test, as root with a module "
                    "(runner/guest/init does it in every guest)",
           "long": "a long target: make check-docs DOCS=all"}[c.kind]
    return {"where": c.where, "command": c.text, "result": "not run", "why": why}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gupnm-check-docs", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--all", action="store_true", help="the long targets too")
    p.add_argument("--list", action="store_true", help="list the commands, run none")
    p.add_argument("--only", metavar="REGEX", help="only commands matching REGEX")
    p.add_argument("--out", type=Path, default=None, help="results folder")
    args = p.parse_args(argv)
    wanted = {"run", "long"} if args.all else {"run"}
    if args.list:
        for c in (c for b in _plan(ROOT, args.only) for c in b):
            print(f"{c.kind:6} {c.where:24} expect={c.expect} {c.text.splitlines()[0]}")
        return 0
    out = args.out or Path(tempfile.mkdtemp(prefix="gupnm-docs-"))
    out.mkdir(parents=True, exist_ok=True)
    clone = fresh_clone(out / "clone")
    # The documents as the clone has them: what a reader of HEAD reads.
    return _run(_plan(clone, args.only), wanted, out, clone)


def _plan(root: Path, only: str | None) -> list[list[Command]]:
    plan = [[c for c in b if not only or re.search(only, c.text)] for b in collect(root)]
    return once(b for b in plan if b)


def _run(plan: list[list[Command]], wanted: set[str], out: Path, clone: Path) -> int:
    (out / "tmp").mkdir(exist_ok=True)
    # A reader's shell: not the make that called us (MAKEFLAGS, MAKELEVEL).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    env = dict(env, TMPDIR=str(out / "tmp"), GIT_COMMITTER_NAME="docs check", GIT_AUTHOR_NAME="docs check",
               GIT_COMMITTER_EMAIL="docs@check.invalid", GIT_AUTHOR_EMAIL="docs@check.invalid")
    rows: list[dict] = []
    for n, block in enumerate(plan):
        runnable = [c for c in block if c.kind in wanted]
        rows += [not_run(c) for c in block if c not in runnable]
        if runnable:
            started = time.monotonic()
            rows += run_block(runnable, clone, out / f"block-{n:02}.log", env)
            print(f"gupnm-check-docs: {block[0].where}: {len(runnable)} command(s), "
                  f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    for r in rows:
        print(f"{r['result']:8} {r['where']:24} {r['command'].splitlines()[0][:70]}"
              + (f"  ({r['why']})" if r.get("why") else "")
              + (f"  {r['seconds']} s" if "seconds" in r else ""))
    shutil.rmtree(out / "tmp", ignore_errors=True)
    (out / "docs-commands.json").write_text(json.dumps(rows, indent=1) + "\n")
    failed = sum(r["result"] == "fail" for r in rows)
    passed = sum(r["result"] == "pass" for r in rows)
    skipped = len(rows) - failed - passed
    print(f"{passed} passed, {failed} failed ({skipped} not run, named above); "
          f"results: {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
