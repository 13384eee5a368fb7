"""Unit tests for gupnm.host.ensure_tools: what a fresh machine gets installed."""

import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import host  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402


class EnsureToolsTest(unittest.TestCase):

    def setUp(self):
        for name in ('progress',):
            p = mock.patch.object(host, name)
            p.start()
            self.addCleanup(p.stop)
        p = mock.patch.object(host, '_apt_updated', False)
        p.start()
        self.addCleanup(p.stop)

    def missing(self, tools=(), packages=()):
        which = mock.patch.object(host.shutil, 'which',
                                  side_effect=lambda t: None if t in tools else f'/usr/bin/{t}')
        query = mock.patch.object(host.subprocess, 'run', side_effect=lambda cmd, **kw: mock.Mock(
            stdout='' if cmd[-1] in packages else 'install ok installed'))
        return which, query

    def test_every_path_names_its_build_tools(self):
        # make run on a fresh Debian 12 failed at "pahole: not found".
        for tool, pkg in (('pahole', 'dwarves'), ('gcc', 'gcc'), ('make', 'make'),
                          ('perl', 'perl'), ('xz', 'xz-utils'), ('depmod', 'kmod'),
                          ('qemu-system-x86_64', 'qemu-system-x86'), ('cpio', 'cpio')):
            self.assertEqual(host.TOOLS[tool], pkg)
        self.assertIn('libc6-dev', host.PACKAGES)          # static libc for the test

    def test_nothing_missing_runs_nothing(self):
        which, query = self.missing()
        with which, query, mock.patch.object(host, 'run') as run:
            host.ensure_tools()
        run.assert_not_called()

    def test_download_then_install_with_update_on_empty_lists(self):
        which, query = self.missing(tools=('pahole',), packages=('libc6-dev',))
        calls = []

        def fake_run(cmd, **kw):
            calls.append(cmd)
            if '--download-only' in cmd and len(calls) == 1:
                raise RunnerError('E: Unable to locate package dwarves')
            return ''
        with which, query, mock.patch.object(host.os, 'geteuid', return_value=0), \
                mock.patch.object(host, 'run', side_effect=fake_run):
            host.ensure_tools()
        self.assertEqual([c[:4] for c in calls], [
            ['apt-get', 'install', '-y', '--download-only'],
            ['apt-get', 'update', '-q'],
            ['apt-get', 'install', '-y', '--download-only'],
            ['apt-get', 'install', '-y', '--no-install-recommends']])
        self.assertEqual(calls[-1][-2:], ['dwarves', 'libc6-dev'])

    def test_not_root_says_what_to_run(self):
        which, query = self.missing(tools=('pahole',))
        with which, query, mock.patch.object(host.os, 'geteuid', return_value=1000):
            with self.assertRaisesRegex(RunnerError, '(?s)as root run:.*apt-get install .*dwarves'):
                host.ensure_tools()


if __name__ == '__main__':
    unittest.main()
