"""The count of make check: one `ok`/`not ok` line per check, and the totals.

Every check module records through a Tally; the last line a check command
prints is `N passed, N failed`.
"""
from __future__ import annotations

import signal
import time

from ..host import Interrupted, RunnerError, progress


class Tally:
    def __init__(self) -> None:
        self.passed = self.failed = 0
        self.failures: list[str] = []
        self.signum = 0
        # (name, start) of each part of the run (section()), for the
        # closing "where the time went" line.
        self.sections: list[tuple[str, float]] = [("setup", time.monotonic())]

    def stop_on_signals(self) -> None:
        """End the checks on SIGINT or SIGTERM. The runner underneath turns
        the signal into an interrupted run, which returns; the next record
        raises Interrupted again, so no further check starts."""
        def caught(signum, _frame):
            self.signum = signum
            raise Interrupted(signum)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, caught)

    def record(self, name: str, ok: bool, detail: str = "") -> bool:
        if self.signum:
            raise Interrupted(self.signum)
        if ok:
            self.passed += 1
            print(f"ok - {name}", flush=True)
        else:
            self.failed += 1
            self.failures.append(name)
            print(f"not ok - {name}", flush=True)
            for line in detail.strip().splitlines()[-40:]:
                print(f"#   {line}", flush=True)
        return ok

    def guard(self, name: str, fn) -> bool:
        """Run @fn() -> (ok, detail); an exception is a failed check."""
        try:
            ok, detail = fn()
        except RunnerError as err:
            ok, detail = False, str(err)
        return self.record(name, ok, detail)

    def section(self, name: str, short: str) -> None:
        """A part of the run starts: @name on the progress line, @short in
        the closing line."""
        progress(name)
        self.sections.append((short, time.monotonic()))

    def times(self) -> str:
        """Minutes per section so far, in order, the last up to now."""
        ends = [start for _, start in self.sections[1:]] + [time.monotonic()]
        return ", ".join(f"{name} {(end - start) / 60:.1f}"
                         for (name, start), end in zip(self.sections, ends))

    def end(self) -> int:
        """Print the totals line; the command's exit status: 1 when a check
        failed, else 0."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
