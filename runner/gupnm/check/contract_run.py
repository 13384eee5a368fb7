"""One invocation of the real runner, as the contract checks make it.

The kernels of the real boots (the environment may name exact releases),
`gupnm()` to run `runner/gupnm-run` with a time limit and keep what it said,
and the QEMU processes a run left behind.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ..host import REPO

GUPNM = [sys.executable, str(REPO / "runner" / "gupnm-run")]
# The kernels of the real boots; the environment may name exact releases.
PASS_KERNEL = os.environ.get("GUPNM_CONTRACT_PASS_KERNEL", "debian:6.1")  # exit 0
BUG_KERNEL = os.environ.get("GUPNM_CONTRACT_BUG_KERNEL", "debian:6.12")   # exit 1
BUG_MESSAGE = "GUP-fast rejects NULL-mapping order-0 folios"
RUN_TIMEOUT = 900                   # seconds for one runner invocation


class Run:
    """One finished runner invocation."""

    def __init__(self, argv, rc, out, err, seconds, results):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.seconds, self.results = seconds, results

    @property
    def summary(self) -> dict | None:
        try:
            return json.loads((self.results / "summary.json").read_text())
        except (OSError, ValueError, TypeError):
            return None

    def detail(self) -> str:
        return (f"$ {' '.join(self.argv)}\nexit {self.rc} after {self.seconds:.1f}s\n"
                + self.out[-3000:] + self.err[-3000:])


def _results_line(text: str) -> Path | None:
    m = re.findall(r"^results: (\S+)$", text, re.M)
    return Path(m[-1]) if m else None


def gupnm(args: list[str], *, repo: Path = REPO, timeout: float = RUN_TIMEOUT) -> Run:
    argv = [sys.executable, str(repo / "runner" / "gupnm-run"), *args]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, _text(e.stdout), _text(e.stderr) + f"\n(killed after {timeout}s)"
    results = None
    if "--results" in args:
        results = Path(args[args.index("--results") + 1])
    return Run(argv, rc, out, err, time.monotonic() - t0,
               results or _results_line(out + err))


def _text(data) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def qemu_processes(marker: str) -> list[int]:
    """PIDs of processes whose command line mentions @marker."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "qemu-system" in cmd and marker in cmd:
            out.append(int(d.name))
    return out
