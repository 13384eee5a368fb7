"""Tests of gupnm.check.tally: the count every check command ends with."""

import contextlib
import io
import os
import signal
import unittest
import unittest.mock

from gupnm.check.tally import Tally
from gupnm.host import Interrupted


class EndTest(unittest.TestCase):
    def end(self, oks):
        t = Tally()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            for n, ok in enumerate(oks):
                t.record(f"check {n}", ok, "why")
            code = t.end()
        return code, out.getvalue().splitlines()[-1]

    def test_the_totals_line_and_the_exit_status(self):
        self.assertEqual(self.end([True, True]), (0, "2 passed, 0 failed"))
        self.assertEqual(self.end([True, False]), (1, "1 passed, 1 failed"))
        self.assertEqual(self.end([]), (0, "0 passed, 0 failed"))


class SectionsTest(unittest.TestCase):
    def test_minutes_per_section_in_order_adding_up_to_now(self):
        clock = iter([0.0, 60.0, 150.0, 300.0])
        with unittest.mock.patch("gupnm.check.tally.time.monotonic",
                                 lambda: next(clock)), \
                unittest.mock.patch("gupnm.check.tally.progress") as said:
            t = Tally()
            t.section("host checks", "host")
            t.section("VM matrix", "VM matrix")
            self.assertEqual(t.times(), "setup 1.0, host 1.5, VM matrix 2.5")
        self.assertEqual([c.args[0] for c in said.call_args_list],
                         ["host checks", "VM matrix"])


class SignalTest(unittest.TestCase):
    """A signal the runner underneath swallows (it returns an interrupted
    run) still ends the checks at the next record: make check interrupted
    by Ctrl-C went on to boot the next kernel."""

    def setUp(self):
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        self.addCleanup(lambda: [signal.signal(s, h) for s, h in old.items()])

    def interrupted_by(self, sig):
        t = Tally()
        t.stop_on_signals()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            t.record("before", True)
            try:
                os.kill(os.getpid(), sig)
            except Interrupted:
                pass            # what the runner's boot does with it
            with self.assertRaises(Interrupted) as caught:
                t.record("after", True)
        self.assertEqual((t.passed, t.failed), (1, 0))
        self.assertNotIn("after", out.getvalue())
        return caught.exception.exit_code

    def test_sigint_and_sigterm_end_the_checks(self):
        self.assertEqual(self.interrupted_by(signal.SIGINT), 130)
        self.assertEqual(self.interrupted_by(signal.SIGTERM), 143)


if __name__ == "__main__":
    unittest.main()
