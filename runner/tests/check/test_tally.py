"""Tests of gupnm.check.tally: the count every check command ends with."""

import contextlib
import io
import unittest

from gupnm.check.tally import Tally


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


if __name__ == "__main__":
    unittest.main()
