"""Unit tests for gupnm.hosttools: what a fresh machine gets installed, and
how (one run at a time, dpkg finished first, never with --no-install)."""

import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import hosttools  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402


class Base(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: subprocess.run(['rm', '-rf', str(self.tmp)]))
        patches = [mock.patch.object(hosttools, 'progress'),
                   mock.patch.object(hosttools, '_apt_updated', False),
                   mock.patch.object(hosttools, '_forbidden', False),
                   mock.patch.object(hosttools, 'lock_path',
                                     return_value=self.tmp / 'install.lock'),
                   mock.patch.object(hosttools.aptlock, 'wait_free'),
                   mock.patch.object(hosttools, 'half_done', return_value=''),
                   mock.patch.dict(os.environ, {hosttools.NO_INSTALL_ENV: ''})]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)

    def missing(self, tools=(), packages=(), half=()):
        """Tools absent from PATH, packages dpkg does not have, packages
        dpkg left half done (unpacked)."""
        which = mock.patch.object(hosttools.shutil, 'which',
                                  side_effect=lambda t: None if t in tools else f'/usr/bin/{t}')

        def state(pkgs):
            return {p: 'U' if p in half else 'i' for p in pkgs if p not in packages}
        return which, mock.patch.object(hosttools, 'states', side_effect=state)

    def root(self, uid=0):
        return mock.patch.object(hosttools.os, 'geteuid', return_value=uid)


class EnsureToolsTest(Base):

    def test_every_path_names_its_build_tools(self):
        # make run on a fresh Debian 12 failed at "pahole: not found".
        for tool, pkg in (('pahole', 'dwarves'), ('gcc', 'gcc'), ('make', 'make'),
                          ('perl', 'perl'), ('xz', 'xz-utils'), ('depmod', 'kmod'),
                          ('qemu-system-x86_64', 'qemu-system-x86'), ('cpio', 'cpio')):
            self.assertEqual(hosttools.TOOLS[tool], pkg)
        self.assertIn('libc6-dev', hosttools.PACKAGES)          # static libc for the test

    def test_nothing_missing_runs_nothing(self):
        which, query = self.missing()
        with which, query, mock.patch.object(hosttools.aptlock, 'run_apt') as run:
            self.assertIsNone(hosttools.ensure_tools())
        run.assert_not_called()

    def test_a_package_dpkg_left_half_done_is_missing(self):
        # qemu's binary unpacked, its package not configured: an interrupted run.
        which, query = self.missing(half=('qemu-system-x86',))
        with which, query:
            self.assertEqual(hosttools.missing_tools(), ['qemu-system-x86'])

    def test_download_then_install_with_update_on_empty_lists(self):
        which, query = self.missing(tools=('pahole',), packages=('libc6-dev',))
        calls = []

        def fake_run(cmd, **kw):
            calls.append(cmd)
            if '--download-only' in cmd and len(calls) == 1:
                raise RunnerError('E: Unable to locate package dwarves')
            return ''
        with which, query, self.root(), \
                mock.patch.object(hosttools.aptlock, 'run_apt', side_effect=fake_run):
            hosttools.ensure_tools()
        self.assertEqual([c[:4] for c in calls], [
            ['apt-get', 'install', '-y', '--download-only'],
            ['apt-get', 'update', '-q'],
            ['apt-get', 'install', '-y', '--download-only'],
            ['apt-get', 'install', '-y', '--no-install-recommends']])
        self.assertEqual(calls[-1][-2:], ['dwarves', 'libc6-dev'])

    def test_qemu_installs_later_in_a_thread_and_its_error_comes_at_wait(self):
        which, query = self.missing(tools=('pahole', 'qemu-system-x86_64'))
        calls = []

        def fake_run(cmd, **kw):
            calls.append(cmd)
            if 'qemu-system-x86' in cmd and '--download-only' not in cmd:
                raise RunnerError('apt-get install failed')
            return ''
        with which, query, self.root(), \
                mock.patch.object(hosttools.aptlock, 'run_apt', side_effect=fake_run):
            later = hosttools.ensure_tools(later=hosttools.BOOT_PACKAGES)
            self.assertIsNotNone(later)
            later.join()
        self.assertEqual(calls[0][-2:], ['dwarves', 'qemu-system-x86'])   # one download
        self.assertEqual(calls[1][-1], 'dwarves')                        # installed now
        self.assertNotIn('qemu-system-x86', calls[1])
        self.assertEqual(calls[2][-1], 'qemu-system-x86')                # in the thread
        self.assertTrue(later.lock.closed)                   # the install lock let go
        with self.assertRaisesRegex(RunnerError, 'apt-get install failed'):
            later.wait()

    def test_nothing_deferred_returns_no_thread(self):
        which, query = self.missing(tools=('pahole',))
        with which, query, self.root(), \
                mock.patch.object(hosttools.aptlock, 'run_apt', return_value=''):
            self.assertIsNone(hosttools.ensure_tools(later=hosttools.BOOT_PACKAGES))

    def test_installed_meanwhile_by_another_run_installs_nothing(self):
        # Two first runs at once: the second gets the lock once the first
        # installed everything, looks again, and finds nothing missing.
        calls = iter([['dwarves'], []])
        with self.root(), \
                mock.patch.object(hosttools, 'missing_tools', side_effect=lambda **kw: next(calls)), \
                mock.patch.object(hosttools.aptlock, 'run_apt') as run:
            self.assertIsNone(hosttools.ensure_tools())
        run.assert_not_called()
        hosttools.aptlock.wait_free.assert_called_once()

    def test_dpkg_left_half_done_is_finished_first(self):
        which, query = self.missing(tools=('qemu-system-x86_64',))
        calls = []
        with which, query, self.root(), \
                mock.patch.object(hosttools, 'half_done', return_value='dpkg was interrupted'), \
                mock.patch.object(hosttools.aptlock, 'run_apt',
                                  side_effect=lambda cmd, **kw: calls.append(cmd)):
            hosttools.ensure_tools()
        self.assertEqual(calls[0][:3], ['dpkg', '--configure', '-a'])
        self.assertEqual([c[:2] for c in calls[1:]], [['apt-get', 'install']] * 2)

    def test_not_root_says_what_to_run(self):
        which, query = self.missing(tools=('pahole',))
        with which, query, self.root(1000):
            with self.assertRaisesRegex(RunnerError, '(?s)as root run:.*apt-get install .*dwarves'):
                hosttools.ensure_tools()


class NoInstallTest(Base):
    """--no-install and GUPNM_NO_INSTALL=1: the host's packages are never
    touched; what is missing is named."""

    def refused(self, **env):
        which, query = self.missing(tools=('pahole', 'qemu-system-x86_64'))
        with which, query, self.root(), mock.patch.dict(os.environ, env), \
                mock.patch.object(hosttools.aptlock, 'run_apt') as run:
            with self.assertRaises(RunnerError) as caught:
                hosttools.ensure_tools(later=hosttools.BOOT_PACKAGES)
        run.assert_not_called()
        return str(caught.exception)

    def test_the_option(self):
        hosttools.forbid_install()
        said = self.refused()
        self.assertRegex(said, r'^missing on this host: dwarves qemu-system-x86; the runner '
                         r'leaves the host\'s packages alone \(--no-install or GUPNM_NO_INSTALL\)')
        self.assertIn('apt-get install -y --no-install-recommends dwarves qemu-system-x86', said)
        self.assertNotIn('\n', said)

    def test_the_environment(self):
        for value in ('1', 'yes', 'true'):
            self.assertIn('missing on this host', self.refused(GUPNM_NO_INSTALL=value))
        for value in ('', '0', 'no'):
            with mock.patch.dict(os.environ, {hosttools.NO_INSTALL_ENV: value}):
                self.assertTrue(hosttools.install_allowed())

    def test_a_half_done_dpkg_is_named_not_repaired(self):
        hosttools.forbid_install()
        with mock.patch.object(hosttools, 'half_done', return_value='dpkg was interrupted'):
            said = self.refused()
        self.assertIn('(dpkg was interrupted)', said)
        self.assertIn('`dpkg --configure -a && apt-get update', said)

    def test_other_packages_too(self):
        hosttools.forbid_install()
        which, query = self.missing(packages=('rsync',))
        with which, query, self.root(), \
                mock.patch.object(hosttools.aptlock, 'run_apt') as run:
            with self.assertRaisesRegex(RunnerError, '^the kselftest paths: missing on this '
                                        'host: rsync;'):
                hosttools.install_packages(['rsync', 'cpio'], 'the kselftest paths')
        run.assert_not_called()


STATUS = ('Package: cpio\nStatus: install ok installed\nArchitecture: amd64\n'
          'Version: 2.13\n\n'
          'Package: qemu-system-x86\nStatus: install {state}\n'
          'Architecture: amd64\nVersion: 1:7.2\n\n')


class DpkgStateTest(unittest.TestCase):

    def test_states_in_one_query(self):
        out = ('cpio ii \nqemu-system-x86 iU \nlibc6-dev ii \nlibc6-dev rc \n'
               'dwarves iH \n')
        with mock.patch.object(hosttools.subprocess, 'run',
                               return_value=mock.Mock(stdout=out)) as run:
            got = hosttools.states(['cpio', 'qemu-system-x86', 'libc6-dev', 'dwarves', 'x'])
        self.assertEqual(got, {'cpio': 'i', 'qemu-system-x86': 'U', 'libc6-dev': 'i',
                               'dwarves': 'H'})
        run.assert_called_once()

    def test_states_of_this_host(self):
        # dpkg's real answer: dpkg itself is installed, a made-up name is not known.
        got = hosttools.states(['dpkg', 'gupnm-no-such-package'])
        self.assertEqual(got, {'dpkg': 'i'})

    def test_an_interrupted_dpkg_by_its_journal_or_its_packages(self):
        # A dpkg database of its own (dpkg-query --admindir): the real tool reads it.
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / 'updates').mkdir()
            status = Path(d) / 'status'
            status.write_text(STATUS.format(state='ok installed'))
            self.assertEqual(hosttools.half_done(Path(d)), '')
            (Path(d) / 'updates' / 'tmp.i').write_text('')       # dpkg's scratch: not a journal
            self.assertEqual(hosttools.half_done(Path(d)), '')
            for state in ('reinstreq half-installed', 'ok unpacked', 'ok half-configured'):
                status.write_text(STATUS.format(state=state))
                self.assertEqual(hosttools.half_done(Path(d)),
                                 'dpkg left packages half done: qemu-system-x86')
            (Path(d) / 'updates' / '0002').write_text('')
            self.assertEqual(hosttools.half_done(Path(d)), 'dpkg was interrupted')


class InstallLockTest(unittest.TestCase):
    """One run installs at a time: the second waits, told who holds it."""

    def test_a_second_taker_waits_for_the_first(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(hosttools, 'progress') as progress:
            path = Path(d) / 'install.lock'
            first = hosttools.take_lock(path)
            got = []
            second = threading.Thread(target=lambda: got.append(hosttools.take_lock(path)))
            second.start()
            time.sleep(0.3)
            self.assertEqual(got, [])
            first.close()
            second.join(5)
            self.assertEqual(len(got), 1)
            got[0].close()
        progress.assert_called_once()
        self.assertIn("this run's install in the background", progress.call_args.args[0])

    def test_another_run_is_named_by_its_pid(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(hosttools, 'progress') as progress:
            path = Path(d) / 'install.lock'
            other = subprocess.Popen(
                [sys.executable, '-c', 'import fcntl, os, sys, time\n'
                 'f = open(sys.argv[1], "a+"); fcntl.flock(f, fcntl.LOCK_EX)\n'
                 'f.write(f"{os.getpid()}\\n"); f.flush(); print("held", flush=True)\n'
                 'time.sleep(1)\n', str(path)], stdout=subprocess.PIPE, text=True)
            self.assertEqual(other.stdout.readline().strip(), 'held')
            hosttools.take_lock(path).close()
            other.wait()
            other.stdout.close()
        self.assertIn(f'another run (pid {other.pid}) to finish installing tools',
                      progress.call_args.args[0])


if __name__ == '__main__':
    unittest.main()
