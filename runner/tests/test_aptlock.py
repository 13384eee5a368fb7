"""Unit tests for gupnm.aptlock: apt's and dpkg's locks, held by real
processes (fcntl locks on files of a temporary folder, as apt takes them)."""

import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import aptlock  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402

# A process that takes a write lock on argv[1] as apt does (fcntl), says
# so, and lets it go after argv[2] seconds.
HOLDER = ('import fcntl, sys, time\n'
          'f = open(sys.argv[1], "w")\n'
          'fcntl.lockf(f, fcntl.LOCK_EX)\n'
          'print("held", flush=True)\n'
          'time.sleep(float(sys.argv[2]))\n')


class LockTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: subprocess.run(['rm', '-rf', str(self.tmp)]))
        self.lock = str(self.tmp / 'lock-frontend')
        Path(self.lock).write_text('')
        p = mock.patch.object(aptlock, 'progress')
        self.progress = p.start()
        self.addCleanup(p.stop)

    def hold(self, seconds: float) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, '-c', HOLDER, self.lock, str(seconds)],
                                stdout=subprocess.PIPE, text=True)
        self.addCleanup(proc.stdout.close)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        self.assertEqual(proc.stdout.readline().strip(), 'held')
        return proc

    def test_the_holder_is_named_by_pid_and_command(self):
        self.assertIsNone(aptlock.holder(self.lock))
        proc = self.hold(30)
        h = aptlock.holder(self.lock)
        self.assertEqual(h.pid, proc.pid)
        self.assertIn('-c import fcntl, sys, time f = open(', h.command)   # one line
        self.assertIn(f'process {proc.pid} (', str(h))
        self.assertIn(f'holds {self.lock}', str(h))
        proc.kill()
        proc.wait()
        self.assertIsNone(aptlock.holder(self.lock))

    def test_no_file_no_holder(self):
        self.assertIsNone(aptlock.holder(str(self.tmp / 'none')))
        self.assertEqual(aptlock.holders([str(self.tmp / 'none'), self.lock]), [])

    def test_waits_for_the_holder_saying_who_it_is(self):
        proc = self.hold(1.0)
        t0 = time.monotonic()
        aptlock.wait_free('installing tools', time.monotonic() + 30, [self.lock])
        self.assertGreater(time.monotonic() - t0, 0.5)
        said = ' '.join(c.args[0] for c in self.progress.call_args_list)
        self.assertIn(f'waiting, process {proc.pid} (', said)
        self.assertIn('the lock is free', said)

    def test_past_the_bound_the_holder_is_named(self):
        proc = self.hold(30)
        with mock.patch.dict(os.environ, {aptlock.WAIT_ENV: '1'}):
            with self.assertRaisesRegex(
                    RunnerError, rf'apt-get update: process {proc.pid} \(.*\) holds '
                    rf'{self.lock}, and still did after waiting 1s .*GUPNM_APT_LOCK_WAIT'):
                aptlock.wait_free('apt-get update', time.monotonic() + 1, [self.lock])

    def test_bound(self):
        for value, want in (('5', 5.0), ('0', 0.0), ('-3', 0.0), ('x', aptlock.DEFAULT_WAIT)):
            with mock.patch.dict(os.environ, {aptlock.WAIT_ENV: value}):
                self.assertEqual(aptlock.bound(), want)


TAKEN = ('apt-get install failed (exit 100):\nE: Could not get lock '
         '/var/cache/apt/archives/lock. It is held by process 4242 (apt-get)\n'
         'E: Unable to lock directory /var/cache/apt/archives/')


class RunAptTest(unittest.TestCase):

    def setUp(self):
        for name, value in (('progress', None), ('wait_free', None)):
            p = mock.patch.object(aptlock, name)
            p.start()
            self.addCleanup(p.stop)

    def test_apt_waits_for_dpkg_locks_itself_within_the_bound(self):
        with mock.patch.object(aptlock, 'run', return_value='') as run, \
                mock.patch.dict(os.environ, {aptlock.WAIT_ENV: '100'}):
            aptlock.run_apt(['apt-get', 'install', '-y', 'cpio'], what='x')
            aptlock.run_apt(['dpkg', '--configure', '-a'], what='y')
        first = run.call_args_list[0].args[0]
        self.assertEqual(first[:3], ['apt-get', 'install', '-o'])
        self.assertRegex(first[3], r'^DPkg::Lock::Timeout=(99|100)$')
        self.assertEqual(run.call_args_list[1].args[0], ['dpkg', '--configure', '-a'])

    def test_a_lock_taken_meanwhile_is_waited_for_again(self):
        with mock.patch.object(aptlock, 'run', side_effect=[RunnerError(TAKEN), 'ok']) as run:
            self.assertEqual(aptlock.run_apt(['apt-get', 'update'], what='x'), 'ok')
        self.assertEqual(run.call_count, 2)
        self.assertEqual(aptlock.wait_free.call_count, 2)

    def test_another_failure_is_not_retried(self):
        err = RunnerError('apt-get install failed (exit 100):\nE: Unable to locate package x')
        with mock.patch.object(aptlock, 'run', side_effect=err) as run:
            with self.assertRaisesRegex(RunnerError, 'Unable to locate'):
                aptlock.run_apt(['apt-get', 'install', 'x'], what='x')
        self.assertEqual(run.call_count, 1)

    def test_still_taken_past_the_bound_names_it(self):
        with mock.patch.object(aptlock, 'run', side_effect=RunnerError(TAKEN)), \
                mock.patch.dict(os.environ, {aptlock.WAIT_ENV: '0'}):
            with self.assertRaisesRegex(RunnerError, r'^apt-get install: Could not get lock '
                                        r'/var/cache/apt/archives/lock\. It is held by '
                                        r'process 4242 \(apt-get\) after waiting 0s'):
                aptlock.run_apt(['apt-get', 'install', 'x'], what='apt-get install')

    def test_busy(self):
        self.assertTrue(aptlock.busy(TAKEN))
        self.assertTrue(aptlock.busy('dpkg: error: dpkg frontend lock was locked by '
                                     'another process with pid 7'))
        self.assertFalse(aptlock.busy('E: dpkg was interrupted, you must manually run'))


if __name__ == '__main__':
    unittest.main()
