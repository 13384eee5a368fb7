"""Issue 48 item 6: `lava` and `kselftest` summaries keep how the kernel was
obtained: the packages with their versions and sha256, the image's sha256."""

import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.ci import lab, lava  # noqa: E402
from gupnm.report import schema  # noqa: E402
from tests.test_cli import call  # noqa: E402

SOURCE = {'kind': 'debian', 'release': '6.12.118+deb13-amd64',
          'packages': ['linux-image-6.12.118+deb13-amd64-unsigned=6.12.118-1',
                       'linux-headers-6.12.118+deb13-amd64=6.12.118-1'],
          'package_sha256': {'linux-image-6.12.118+deb13-amd64-unsigned=6.12.118-1': 'a' * 64,
                             'linux-headers-6.12.118+deb13-amd64=6.12.118-1': 'b' * 64},
          'version': '6.12.118-1', 'suites': ['trixie'], 'boot_image': '/c/vmlinux',
          'boot_image_sha256': 'c' * 64}


class LavaSummarySourceTest(unittest.TestCase):

    def test_the_packages_and_their_sha256_stay(self):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)

        def run(job, spec, outdir, again, export=None, byo=None):
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / 'lava-run.log').write_text(
                '{"dt": "t", "lvl": "target", "msg": "Linux version 6.12.118+deb13-amd64 (x)"}\n')
            cases = [lava.Case('lava', 'job', 'pass'),
                     lava.Case('gup_null_mapping', 'verdict_driver_read', 'fail')]
            return lava.LavaRun(job, spec, '6.12.118+deb13-amd64', cases, 0, 5.0, outdir,
                                dict(SOURCE)), []
        with mock.patch.object(lab, 'ensure_tools', return_value=None), \
                mock.patch.object(lava, 'run_again_if_died', side_effect=run):
            rc, _, err = call(['lava', 'debian-module', 'debian:6.12',
                               '--results', str(tmp / 'r')])
        self.assertEqual(rc, 1, err)
        s = json.loads((tmp / 'r' / 'summary.json').read_text())
        self.assertEqual(schema.errors(s, schema.load()), [])
        self.assertEqual(s['kernel']['source'], {**SOURCE, 'lava_job': 'debian-module'})
        xml = (tmp / 'r' / 'junit.xml').read_text()
        self.assertIn('<property name="kernel.package_version" value="6.12.118-1" />', xml)
        self.assertIn(f'<property name="kernel.boot_image_sha256" value="{"c" * 64}" />', xml)


if __name__ == '__main__':
    unittest.main()
