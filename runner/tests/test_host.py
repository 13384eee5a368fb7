"""Unit tests for gupnm.host: commands, children, locks, the cache's place."""

import os
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import host  # noqa: E402


class CalledFromMakeTest(unittest.TestCase):
    """The runner under a make (make run, make check-docs, a CI's make): a
    sub-make's output must be what it prints, not make's directory lines."""

    def test_a_calling_makes_flags_do_not_reach_commands(self):
        with tempfile.TemporaryDirectory() as d, mock.patch.dict(
                os.environ, {"MAKEFLAGS": "w -- KERNEL=x", "MAKELEVEL": "2", "MFLAGS": "-w"}):
            Path(d, "Makefile").write_text("kernelrelease:\n\t@echo 6.12.118\n")
            out = host.run(["make", "-s", "-C", d, "kernelrelease"])
            env = host.run(["sh", "-c", "echo ${MAKEFLAGS-none}/${MAKELEVEL-none}"])
        self.assertEqual(out.strip().splitlines(), ["6.12.118"])
        self.assertEqual(env.strip(), "none/none")


if __name__ == '__main__':
    unittest.main()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return False
    return stat.rsplit(')', 1)[1].split()[0] != 'Z'


def _wait_gone(pids, seconds=10.0) -> list:
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return left


class ChildrenTest(unittest.TestCase):
    """Children die with the runner: real processes (sleep), never a
    stand-in: only groups the runner made are ever signalled."""

    def test_stop_ends_the_whole_group(self):
        import subprocess
        proc = host.spawn(['sh', '-c', 'sleep 30 & echo $!; exec sleep 30'],
                          stdout=subprocess.PIPE, text=True)
        grandchild = int(proc.stdout.readline())
        host.stop(proc)
        self.assertEqual(_wait_gone([proc.pid, grandchild]), [])
        self.assertNotIn(proc.pid, host._groups)

    def test_sigkill_of_the_runner_ends_its_children(self):
        # A runner that spawns a group, then dies by SIGKILL: the watchdog
        # kills the group; the leader also has PR_SET_PDEATHSIG.
        import os
        import signal
        import subprocess
        # One line from one writer: the shell's echo and the runner's print
        # sharing a pipe could interleave (seen: both pids, then a bare newline).
        code = ('import subprocess, sys, time; sys.path.insert(0, sys.argv[1])\n'
                'from gupnm import host\n'
                'p = host.spawn(["sh", "-c", "sleep 30 & echo $!; exec sleep 30"],\n'
                '               stdout=subprocess.PIPE, text=True)\n'
                'print(p.stdout.readline().strip(), p.pid, flush=True)\n'
                'time.sleep(60)\n')
        runner = subprocess.Popen([sys.executable, '-c', code,
                                   str(Path(__file__).resolve().parents[1])],
                                  stdout=subprocess.PIPE, text=True)
        try:
            grandchild, leader = map(int, runner.stdout.readline().split())
            self.assertTrue(_alive(leader) and _alive(grandchild))
            os.kill(runner.pid, signal.SIGKILL)
            runner.wait()
            self.assertEqual(_wait_gone([leader, grandchild]), [])
        finally:
            runner.kill()
            runner.wait()
            runner.stdout.close()

    def test_die_with_parent_through_setpriv(self):
        import shutil
        import signal
        if not shutil.which('setpriv'):
            self.skipTest('no setpriv')
        argv = host.die_with_parent(['sleep', 1], signal.SIGTERM)
        self.assertEqual(argv[1:], ['--pdeathsig=TERM', '--', 'sleep', '1'])
        with mock.patch.object(host.shutil, 'which', return_value=None):
            self.assertEqual(host.die_with_parent(['sleep', 1]), ['sleep', '1'])

    def test_a_stand_in_is_never_signalled(self):
        proc = mock.Mock(pid=1)
        with mock.patch.object(host.os, 'killpg') as killpg:
            host.reaped(proc)
            host.stop(proc)
        killpg.assert_not_called()

    def test_owner_tags(self):
        tag = host.owner_tag()
        self.assertTrue(host.owner_alive(tag))
        self.assertFalse(host.owner_alive('999999999.1'))
        self.assertFalse(host.owner_alive(tag.split('.')[0] + '.1'))   # pid reused


class UnwritableCacheTest(unittest.TestCase):
    """A cache this run cannot write: locks read-only or none, the run's
    work folder in the system's temporary folder."""

    def setUp(self):
        import shutil
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def _denied(self, real_open=open):
        import errno

        def fake(path, mode="r", *a, **kw):
            if "w" in mode:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_open(path, mode, *a, **kw)
        return mock.patch("builtins.open", side_effect=fake)

    def test_lock_opened_for_reading(self):
        lock = self.tmp / "locks" / "x.lock"
        lock.parent.mkdir()
        lock.write_text("")
        with self._denied():
            with host.locked(lock):
                pass

    def test_no_lock_file_no_lock(self):
        with self._denied():
            with host.locked(self.tmp / "x.lock"):
                pass
        self.assertFalse((self.tmp / "x.lock").exists())

    def test_other_errors_stay(self):
        with self.assertRaises(OSError):
            with host.locked(Path("/proc/no/such/x.lock")):
                pass

    def test_private_tmp_falls_back(self):
        import errno
        import shutil
        with mock.patch.object(host, "cache_dir", return_value=self.tmp), \
                mock.patch.object(Path, "mkdir", side_effect=OSError(errno.EROFS, "ro")):
            work = host.private_tmp("run")
        self.addCleanup(shutil.rmtree, work, True)
        self.assertEqual(work.parent, Path(tempfile.gettempdir()))
        self.assertRegex(work.name, r"^gupnm-run-\d+\.\d+-")
