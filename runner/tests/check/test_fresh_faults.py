"""Tests of gupnm.check.fresh_faults's assertions that need no root: what
the fresh root's runs said (two first runs at once, the run after an
interrupted install) and the command that runs something in the root."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.check import fresh_faults
from gupnm.check.tally import Tally

BUG = "GUP-fast rejects NULL-mapping order-0 folios"
VERDICT = f"verdict: driver 0/512 fast \u2192 FAIL: {BUG} (bug present)\nexit:    1\n"
TOOLS = "[   0.3s] downloading busybox-static cpio dwarves gcc (and what they need)\n"
KERNEL = ("[   0.9s] downloading 6.12.118+deb12-amd64 (6.12.118-1~deb12u1, bookworm-security): "
          "linux-image-6.12.118+deb12-amd64-unsigned linux-headers-6.12.118+deb12-amd64\n")
WAITED = "[   0.3s] waiting for another run (pid 7) to finish installing tools (/run/lock/x)\n"


def records(fn, *args):
    t = Tally()
    with contextlib.redirect_stdout(io.StringIO()):
        ok = fn(t, *args)
    return ok, t


class FirstRunsTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="gupnm-test-fresh-"))
        self.addCleanup(__import__("shutil").rmtree, self.tmp, True)
        self.logs = [self.tmp / "a.log", self.tmp / "b.log"]

    def judge(self, a: str, b: str):
        self.logs[0].write_text(a)
        self.logs[1].write_text(b)
        return records(fresh_faults.record_first_runs, self.logs, BUG)

    def test_both_judged_tools_and_kernel_once(self):
        ok, t = self.judge(TOOLS + KERNEL + VERDICT, WAITED + VERDICT)
        self.assertTrue(ok)
        self.assertEqual(t.failures, [])

    def test_tools_installed_twice_fails(self):
        ok, _ = self.judge(TOOLS + KERNEL + VERDICT, TOOLS + VERDICT)
        self.assertFalse(ok)

    def test_kernel_downloaded_twice_fails(self):
        ok, _ = self.judge(TOOLS + KERNEL + VERDICT, KERNEL + VERDICT)
        self.assertFalse(ok)

    def test_one_run_on_apts_lock_fails(self):
        lost = ("gupnm: error: apt-get update failed (exit 100):\nE: Could not get lock "
                "/var/lib/apt/lists/lock. It is held by process 9 (apt-get)\nexit:    3\n")
        ok, _ = self.judge(TOOLS + KERNEL + VERDICT, lost)
        self.assertFalse(ok)
        ok, _ = self.judge(TOOLS + KERNEL + VERDICT + lost, WAITED + VERDICT)
        self.assertFalse(ok)            # a lock failing, even beside a verdict


class RepairedTest(unittest.TestCase):

    def judge(self, text: str, left: str = "", state: str = "ii", interrupted=True):
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "warm.log"
            log.write_text(text)
            with mock.patch.object(fresh_faults, "half_done", return_value=left), \
                    mock.patch.object(fresh_faults.subprocess, "run",
                                      return_value=mock.Mock(stdout=state + " ")):
                return records(fresh_faults.record_repaired, Path(d), log, interrupted)

    def test_finished_and_judged(self):
        said = "[   0.2s] dpkg was interrupted: finishing it (dpkg --configure -a) before installing\n"
        self.assertTrue(self.judge(said + VERDICT)[1].failures == [])
        self.assertTrue(self.judge(said + VERDICT, left="journal ['0000']")[1].failures)
        self.assertTrue(self.judge(said + VERDICT, state="iH")[1].failures)
        self.assertTrue(self.judge(said + VERDICT, interrupted=False)[1].failures)

    def test_judged_without_finishing_fails(self):
        self.assertTrue(self.judge(VERDICT)[1].failures)


class InRootTest(unittest.TestCase):

    def test_the_command(self):
        argv = fresh_faults.in_root(Path("/x/root"), ["make", "run"], network=False,
                                    env=("GUPNM_NO_INSTALL=1",))
        self.assertEqual(argv[:5], ["unshare", "--mount", "--propagation", "private", "--net"])
        self.assertEqual(argv[-5:], ["-", "/x/root", "GUPNM_NO_INSTALL=1", "make", "run"])
        self.assertIn('exec chroot "$r" /usr/bin/env -i ', argv[7])
        self.assertNotIn("--net", fresh_faults.in_root(Path("/r"), ["true"]))

    def test_runs_for_real(self):
        # Only the command's shape: the mounts need root, the argv must reach "$@".
        argv = fresh_faults.in_root(Path("/r"), ["echo", "a b"], env=("X=1",))
        i = argv.index("-c")
        self.assertEqual(argv[i + 2:], ["-", "/r", "X=1", "echo", "a b"])

    def test_no_dpkg_at_work_in_an_empty_root(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(fresh_faults._dpkg_at_work(Path(d)))


if __name__ == "__main__":
    unittest.main()
