"""One invocation of the real runner, as the contract checks make it.

The kernels of the real boots (the environment may name exact releases),
`gupnm()` to run `runner/gupnm-run` with a time limit and keep what it said,
and the QEMU processes a run left behind.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
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


def tmpfs(path: Path, size: str) -> bool:
    """A tmpfs of @size mounted at @path (made if missing): whether it worked."""
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                           str(path)], capture_output=True).returncode == 0


def umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(path: Path) -> None:
    """Write into @path until its filesystem is full."""
    with open(path / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (1 << 20))
                fh.flush()
        except OSError:
            pass


@contextlib.contextmanager
def filled_at(mnt: Path, status: Path, marker: str):
    """For the with-block: a thread that fills @mnt's filesystem the moment
    the run's @status log holds @marker (a GUPNM- line)."""
    stop = threading.Event()

    def filler() -> None:
        while not stop.is_set():
            try:
                if marker in status.read_text(errors="replace"):
                    fill(mnt)
                    return
            except OSError:
                pass
            time.sleep(0.005)
    th = threading.Thread(target=filler, daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join(5)
