"""The host's apt and dpkg locks: who holds them, and waiting for them.

apt and dpkg take fcntl locks on four files; while another apt or dpkg
holds one (a host's unattended upgrades, another run's install), an
apt-get that needs it fails at once. The runner's installs wait instead:
at most GUPNM_APT_LOCK_WAIT seconds (default 600), with a progress line
naming the holder (its pid and command, asked of the kernel with F_GETLK
as apt does), and past that bound fail naming it. A holder that takes a
lock between the look and apt's own try makes apt fail with "Could not
get lock": the runner waits again and tries again, within the same bound.
"""
from __future__ import annotations

import fcntl
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .host import RunnerError, progress, run

# What apt-get update (lists), install (dpkg, archives) and dpkg lock.
LOCKS = ("/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock",
         "/var/lib/apt/lists/lock", "/var/cache/apt/archives/lock")
WAIT_ENV = "GUPNM_APT_LOCK_WAIT"
DEFAULT_WAIT = 600.0
# How often the wait says who it waits for again (seconds).
SAY_EVERY = 30.0
# struct flock on the 64-bit Linux hosts the runner supports: l_type,
# l_whence, l_start, l_len, l_pid (and padding).
_FLOCK = "hhqqi4x"
# What apt and dpkg print when a lock they want is taken.
BUSY = ("Could not get lock", "Unable to acquire the dpkg frontend lock",
        "Unable to lock the administration directory", "Unable to lock directory",
        "lock was locked by another process")


@dataclass(frozen=True)
class Holder:
    """A process holding one of the locks."""
    path: str
    pid: int
    command: str

    def __str__(self) -> str:
        if self.pid <= 0:
            return f"another process holds {self.path}"
        return f"process {self.pid} ({self.command}) holds {self.path}"


def command_of(pid: int) -> str:
    """@pid's command line on one line, shortened; its name when it has none."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        text = " ".join(" ".join(a.decode(errors="replace").split()) for a in argv if a)
        if not text:
            text = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "gone"
    return text if len(text) <= 80 else text[:77] + "..."


def holder(path: str) -> Holder | None:
    """Who holds a lock on @path (None: nobody, or the file cannot be
    opened): the kernel's answer to F_GETLK, apt's own way of naming it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        ask = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        kind, _whence, _start, _len, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, ask))
    except OSError:
        return None
    finally:
        os.close(fd)
    if kind == fcntl.F_UNLCK:
        return None
    return Holder(path, pid, command_of(pid) if pid > 0 else "")


def holders(paths: Sequence[str] = LOCKS) -> list[Holder]:
    return [h for p in paths if (h := holder(p))]


def bound() -> float:
    """The longest wait for a lock, in seconds (GUPNM_APT_LOCK_WAIT)."""
    try:
        return max(0.0, float(os.environ.get(WAIT_ENV, DEFAULT_WAIT)))
    except ValueError:
        return DEFAULT_WAIT


def wait_free(what: str, deadline: float, paths: Sequence[str] = LOCKS) -> None:
    """Return once no process holds a lock of @paths; RunnerError naming
    the holder at @deadline (time.monotonic()). @what: the step waiting."""
    said, said_at = None, 0.0
    while (held := holders(paths)):
        now = time.monotonic()
        first = held[0]
        if now >= deadline:
            raise RunnerError(
                f"{what}: {first}, and still did after waiting {bound():.0f}s "
                f"(another apt or dpkg at work: the host's unattended upgrades?); "
                f"let it end, then run again (or wait longer: {WAIT_ENV}=SECONDS)")
        if first != said or now - said_at >= SAY_EVERY:
            progress(f"{what}: waiting, {first} (another apt or dpkg at work); "
                     f"at most {deadline - now:.0f}s more")
            said, said_at = first, now
        time.sleep(0.5)
    if said is not None:
        progress(f"{what}: the lock is free, going on")


def busy(text: str) -> bool:
    """apt's or dpkg's output @text says a lock it wanted was taken."""
    return any(line in text for line in BUSY)


def run_apt(cmd: Sequence[str], *, what: str, env: dict | None = None,
            paths: Sequence[str] = LOCKS) -> str:
    """run(@cmd), an apt-get or dpkg that takes the locks of @paths: once
    they are free, and again while it fails for a lock taken meanwhile,
    for at most bound() seconds in all."""
    deadline = time.monotonic() + bound()
    cmd = list(cmd)
    while True:
        wait_free(what, deadline, paths)
        left = max(0, int(deadline - time.monotonic()))
        # apt waits for the dpkg locks itself within what is left.
        full = ([*cmd[:2], "-o", f"DPkg::Lock::Timeout={left}", *cmd[2:]]
                if Path(cmd[0]).name == "apt-get" else cmd)
        try:
            return run(full, what=what, env=env)
        except RunnerError as err:
            if not busy(str(err)):
                raise
            if time.monotonic() >= deadline:
                said = [line for line in str(err).splitlines() if busy(line)]
                raise RunnerError(
                    f"{what}: {said[0].removeprefix('E: ')} after waiting {bound():.0f}s "
                    "(another apt or dpkg at work); let it end, then run again "
                    f"(or wait longer: {WAIT_ENV}=SECONDS)") from None
            progress(f"{what}: a lock was taken meanwhile; waiting again")
