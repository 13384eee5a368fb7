"""Host side plumbing: progress lines, commands, cache paths (the tools
a run installs: hosttools.py).

Everything the runner downloads or builds lives under the cache directory
(GUPNM_CACHE, default ~/.cache/gupnm), never in the repository and never in
the host's own /boot or /lib/modules.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parents[2]


class RunnerError(Exception):
    """An error the user can act on; the message says what to do."""


class UsageError(RunnerError):
    """Bad input from the user: a spec, option or file that makes no sense."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``signum`` says which."""

    def __init__(self, signum: int = 2) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def cache_dir() -> Path:
    path = Path(os.environ.get("GUPNM_CACHE", Path.home() / ".cache" / "gupnm"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _start_time(pid: int) -> str | None:
    """The start time of process @pid (clock ticks since boot), None when
    there is no such process: with the pid, it names one process for good."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def owner_tag() -> str:
    """<pid>.<start time> of this process, put in the name of every
    temporary it makes, so that a later run can tell a dead run's leftovers
    from a live run's work (owner_alive)."""
    return f"{os.getpid()}.{_start_time(os.getpid())}"


def owner_alive(tag: str) -> bool:
    pid, _, start = tag.partition(".")
    return pid.isdigit() and _start_time(int(pid)) == start


# A cache this run cannot write (read-only, another user's): EROFS, EACCES, EPERM.
UNWRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def private_tmp(kind: str) -> Path:
    """A new folder of this run's own in the cache's tmp/, named with its
    owner_tag (cache.sweep_stale removes those of dead runs); in the
    system's temporary folder when the cache cannot be written."""
    base = cache_dir() / "tmp"
    try:
        base.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{kind}-{owner_tag()}-", dir=base))
    except OSError as err:
        if err.errno not in UNWRITABLE:
            raise
    return Path(tempfile.mkdtemp(prefix=f"gupnm-{kind}-{owner_tag()}-"))


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive lock on @path: two runs never share a cache entry.
    In a cache this run cannot write (read-only, another user's) the lock
    file is opened for reading, or, when it cannot be made, none is taken:
    such a run only reads entries, which are renamed into place whole."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "w")
    except OSError as err:
        if err.errno not in UNWRITABLE:
            raise
        try:
            fh = open(path)
        except OSError:
            yield
            return
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"waiting for another run to release {path}")
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


_T0 = time.monotonic()


def progress(msg: str) -> None:
    """A progress line on stderr, with the seconds since the runner started."""
    print(f"[{time.monotonic() - _T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


# Children die with the runner, however it ends: each is the
# leader of a process group of its own, which the runner kills when it
# stops waiting for it (an exception, SIGINT, SIGTERM) and which a small
# watchdog process kills when the runner dies without a word (SIGKILL):
# it holds a pipe from the runner and wakes on its end-of-file. A child
# also gets PR_SET_PDEATHSIG, in case the watchdog went too, through
# setpriv(1) (util-linux, Essential in Debian) rather than a preexec_fn,
# which is not safe while the runner has threads.
# Never a pgid below 2: killpg(1) is kill(-1), every process there is.
WATCHDOG = """
import os, signal, sys, time
groups = set()
for line in sys.stdin:
    op, pgid = line[0], int(line[1:])
    if pgid > 1 and pgid != os.getpgid(0):
        (groups.add if op == "+" else groups.discard)(pgid)
for sig in (signal.SIGTERM, signal.SIGKILL):
    for pgid in list(groups):
        try:
            os.killpg(pgid, sig)
        except OSError:
            groups.discard(pgid)
    if groups:
        time.sleep(2)
"""
_watchdog: subprocess.Popen | None = None
# The groups this runner made (spawn) and has not reaped: the only ones it
# ever signals.
_groups: set[int] = set()


def _killpg(pgid: int, sig: int) -> None:
    """Signal a group of our own (spawn); any other pgid is left alone."""
    if pgid in _groups and isinstance(pgid, int) and pgid > 1 \
            and pgid != os.getpgid(0):
        os.killpg(pgid, sig)


def die_with_parent(cmd: Sequence[str], sig: int = signal.SIGKILL) -> list[str]:
    """@cmd, made to get @sig when the runner dies (setpriv sets
    PR_SET_PDEATHSIG, which exec keeps, and execs it); @cmd alone on a host
    without setpriv (the watchdog still covers it)."""
    setpriv = shutil.which("setpriv")
    cmd = [str(c) for c in cmd]
    if not setpriv:
        return cmd
    return [setpriv, f"--pdeathsig={signal.Signals(sig).name[3:]}", "--", *cmd]


def _watch(op: str, pgid: int) -> None:
    """Tell the watchdog (started on first use) about a child's group."""
    global _watchdog
    try:
        if _watchdog is None or _watchdog.poll() is not None:
            _watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG],
                                         stdin=subprocess.PIPE, text=True,
                                         start_new_session=True)
        _watchdog.stdin.write(f"{op}{pgid}\n")
        _watchdog.stdin.flush()
    except OSError:
        pass                    # PR_SET_PDEATHSIG still covers the leader


def spawn(cmd: Sequence[str], *, term: int = signal.SIGKILL, **kw) -> subprocess.Popen:
    """Popen @cmd as the leader of a group of its own that dies with the
    runner (@term: the signal the leader gets if the runner dies first)."""
    proc = subprocess.Popen(die_with_parent(cmd, term), start_new_session=True, **kw)
    # Only a real child (a test's stand-in never gets a signal sent).
    if type(proc) is subprocess.Popen and proc.pid > 1:
        _groups.add(proc.pid)
        _watch("+", proc.pid)
    return proc


def stop(proc: subprocess.Popen, grace: float = 0.0) -> None:
    """End @proc's whole group (SIGTERM first when @grace is given, then
    SIGKILL) and reap it."""
    sigs = ([signal.SIGTERM] if grace else []) + [signal.SIGKILL]
    for sig in sigs:
        try:
            _killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        if proc.poll() is None and sig == signal.SIGKILL:
            proc.kill()
        try:
            proc.wait(timeout=grace or None)
            break
        except subprocess.TimeoutExpired:
            continue
    reaped(proc)


def reaped(proc: subprocess.Popen) -> None:
    """@proc is gone: kill what is left of its group, forget it."""
    try:
        _killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.pid in _groups:
        _groups.discard(proc.pid)
        _watch("-", proc.pid)


def _communicate(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        out, err = proc.communicate()
    except BaseException:
        stop(proc, grace=5)         # a package install gets to end cleanly
        raise
    reaped(proc)
    return out or "", err or ""


# What a make that called the runner exports: a sub-make sees it and prints
# "make[2]: Entering directory" even with -s (a "make -s kernelrelease" then
# ends in that line), and joins the caller's jobserver instead of our -j.
MAKE_INHERITED = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")


def child_env() -> dict:
    """The runner's environment without what a calling make exported."""
    return {k: v for k, v in os.environ.items() if k not in MAKE_INHERITED}


def run(cmd: Sequence[str], *, log: Path | None = None, cwd: Path | None = None,
        env: dict | None = None, what: str | None = None, tail: int = 30) -> str:
    """Run a command; on failure raise RunnerError with the log's tail.

    Output goes to @log when given (appended), else is captured; returns the
    captured stdout (empty when logging to a file). The command and its
    children die with the runner (spawn).
    """
    full_env = dict(child_env(), **(env or {}))
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as fh:
            fh.write(f"$ {' '.join(map(str, cmd))}\n")
            fh.flush()
            proc = spawn(cmd, term=signal.SIGTERM, cwd=cwd, env=full_env,
                         stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT)
            _communicate(proc)
        if proc.returncode:
            lines = log.read_text(errors="replace").splitlines()[-tail:]
            raise RunnerError(f"{what or cmd[0]} failed (exit {proc.returncode}); "
                              f"last lines of {log}:\n" + "\n".join(lines))
        return ""
    proc = spawn(cmd, term=signal.SIGTERM, cwd=cwd, env=full_env,
                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=True)
    stdout, stderr = _communicate(proc)
    if proc.returncode:
        out = (stdout + stderr).strip().splitlines()[-tail:]
        raise RunnerError(f"{what or cmd[0]} failed (exit {proc.returncode}):\n"
                          + "\n".join(out))
    return stdout
