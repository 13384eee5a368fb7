"""make check-kernelci-arm64's rows judged from a guest's outcome: each
row's checks, and that a fixed kernel on the no-fix row (or the reverse)
fails it. The guest is not booted: kernelci.run is mocked with outcomes
made from a real 7.3 run_kselftest.sh output (tests/data)."""
import io
import unittest
from contextlib import redirect_stdout
from unittest import mock

from gupnm.check import kernelci_checks
from gupnm.check.tally import Tally
from gupnm.ci import kernelci

try:                                    # run_unit_tests.py: tests/ on sys.path
    from ci.test_kernelci import _outcome, _run
except ImportError:                     # python3 -m unittest tests.check...
    from ..ci.test_kernelci import _outcome, _run


def _row(spec: str, bug: bool, outcome) -> tuple[Tally, str, float | None]:
    t = Tally()
    out = io.StringIO()
    with mock.patch.object(kernelci, "run_again_if_died", return_value=(outcome, [])), \
            redirect_stdout(out):
        secs = kernelci_checks.check_row(t, spec, bug, built=object(),
                                         budget=outcome.budget)
    return t, out.getvalue(), secs


class Rows(unittest.TestCase):
    def test_rows(self):
        self.assertEqual(kernelci_checks.ROWS, (("debian:7.3", False), ("debian:6.12", True)))

    def test_fixed_row_passes(self):
        t, out, secs = _row("debian:7.3", False, _outcome(_run(False), wall=41.5))
        self.assertEqual((t.passed, t.failed), (4, 0), out)
        self.assertIn("boot to result 42 s, within the 600 s job timeout", out)
        self.assertEqual(secs, 41.5)

    def test_negative_control_row(self):
        t, out, _ = _row("debian:6.12", True, _outcome(_run(True)))
        self.assertEqual((t.passed, t.failed), (4, 0), out)
        self.assertIn("failing: 2", out)
        # A kernel that passes everything is not the no-fix control.
        t, out, _ = _row("debian:6.12", True, _outcome(_run(False)))
        self.assertEqual(t.failed, 1, out)

    def test_timeout_fails_the_budget(self):
        t, out, _ = _row("debian:7.3", False, _outcome(None, wall=600.2, timed_out=True))
        self.assertIn("not ok - kernelci arm64 debian:7.3: no result before the 600 s "
                      "job timeout (QEMU killed)", out)
        self.assertEqual(t.failed, 2, out)      # the budget and the verdicts


class Budget(unittest.TestCase):
    def test_budget_option(self):
        with mock.patch.object(kernelci_checks, "check", return_value={}) as chk, \
                redirect_stdout(io.StringIO()):
            self.assertEqual(kernelci_checks.main(["--budget", "5"]), 0)
        self.assertEqual(chk.call_args[0][1], 5.0)
        with self.assertRaises(SystemExit), mock.patch("sys.stderr", io.StringIO()):
            kernelci_checks.main(["--budget", "0"])


if __name__ == "__main__":
    unittest.main()
