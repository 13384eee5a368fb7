"""Where a run's wall-clock time goes: every second in one named phase.

One clock per run (start()), read by the run's reports (durations()):
the main thread names the phase it is in (`with phase("download"):`), and
the time until it leaves it is that phase's; time in no named phase is
"other". Work in other threads (the test built while the kernel
downloads, a kernel fetched while the tools install) is not counted
again: its seconds are those of the phase the main thread waits in. So
the phases never overlap, and their sum is the clock's total: from the
runner's process start for `run` (process_start(): the kernel's start
time of the process, /proc/self/stat), from its own start for each run of
`compare` and `survey`.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time

OTHER = "other"
TOTAL = "total"


class Clock:
    """Seconds per phase since @start (a time.monotonic() value)."""

    def __init__(self, start: float, first: str = OTHER) -> None:
        self.start = start
        self.current, self.since = first, start
        self.spent: dict[str, float] = {}

    def switch(self, name: str, now: float | None = None) -> str:
        """Enter phase @name; the phase left, whose time ends now."""
        now = time.monotonic() if now is None else now
        left = self.current
        self.spent[left] = self.spent.get(left, 0.0) + max(0.0, now - self.since)
        self.current, self.since = name, now
        return left

    def durations(self, now: float | None = None) -> dict[str, float]:
        """Phase -> seconds (ms), "other" last, and "total": the time since
        the start; the phases add up to it exactly ("other" takes the
        rounding)."""
        now = time.monotonic() if now is None else now
        spent = dict(self.spent)
        spent[self.current] = spent.get(self.current, 0.0) + max(0.0, now - self.since)
        total = round(now - self.start, 3)
        out = {k: round(v, 3) for k, v in spent.items() if k != OTHER}
        out[OTHER] = max(0.0, round(total - sum(out.values()), 3))
        out[TOTAL] = round(sum(out.values()), 3)
        return out


_clock: Clock | None = None
_from = "run"


def process_start() -> float | None:
    """time.monotonic() of this process's start (the kernel's start time of
    it, in clock ticks since boot), or None where /proc does not say."""
    try:
        with open("/proc/self/stat") as fh:
            stat = fh.read()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        age = since_boot - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.monotonic() - age if 0 <= age < 3600 else None


def start(at: float | None = None, first: str = OTHER) -> Clock:
    """A new clock for one run, from @at (process_start(), or now)."""
    global _clock, _from
    _from = "process" if at is not None else "run"
    _clock = Clock(time.monotonic() if at is None else at, first)
    return _clock


def running() -> bool:
    return _clock is not None


def measured_from() -> str:
    """Where the current clock started: "process" or "run"."""
    return _from


@contextlib.contextmanager
def phase(name: str):
    """The block's time is phase @name's (the main thread's; elsewhere, or
    without a clock, nothing is counted)."""
    clock = _clock
    if clock is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    left = clock.switch(name)
    try:
        yield
    finally:
        if _clock is clock:
            clock.switch(left)


def enter(name: str) -> None:
    """From now on the main thread is in phase @name (no block to leave)."""
    if _clock is not None and threading.current_thread() is threading.main_thread():
        _clock.switch(name)


def durations() -> dict[str, float]:
    """The current clock's phases and total ({} without one)."""
    return _clock.durations() if _clock is not None else {}


def stop() -> dict[str, float]:
    """durations(), and the clock ended: the next run starts its own."""
    global _clock
    out = durations()
    _clock = None
    return out
