"""Issue 48 item 6: `gupnm-run --version` says the version and where it
comes from (git describe of the checkout, or why there is none), and runs
record the same in summary.json's tool_version."""

import shutil
import subprocess
import sys
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import cli  # noqa: E402
from gupnm.host import REPO  # noqa: E402
from tests.test_cli import call  # noqa: E402


class VersionTest(unittest.TestCase):

    def test_a_git_checkout(self):
        want = subprocess.run(['git', '-C', str(REPO), 'describe', '--always', '--dirty',
                               '--tags'], capture_output=True, text=True).stdout.strip()
        rc, out, _ = call(['--version'])
        self.assertEqual(rc, ('exit', 0))
        self.assertEqual(out, f'gupnm-run {want} (git describe --always --dirty --tags '
                         f'of {REPO})\n')
        self.assertEqual(cli.run_meta(datetime.now(timezone.utc))['tool_version'], want)

    def test_not_a_git_checkout(self):
        tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-version-'))
        self.addCleanup(shutil.rmtree, tmp, True)
        with mock.patch.object(cli, 'REPO', tmp), \
                mock.patch.dict('os.environ', {'GIT_CEILING_DIRECTORIES': str(tmp.parent)}):
            rc, out, _ = call(['--version'])
            meta = cli.run_meta(datetime.now(timezone.utc))
        self.assertEqual(rc, ('exit', 0))
        self.assertTrue(out.startswith(f'gupnm-run unknown (no version: {tmp} is not a git '
                                       'checkout ('), out)
        self.assertIsNone(meta['tool_version'])

    def test_git_missing(self):
        with mock.patch.object(cli.subprocess, 'run', side_effect=FileNotFoundError('git')):
            version, where = cli.tool_version()
        self.assertIsNone(version)
        self.assertIn('git describe could not run', where)


if __name__ == '__main__':
    unittest.main()
