"""Unit tests for gupnm.prepare.source: where a source kernel is built."""

import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import kconfig, source  # noqa: E402


class BuildDirTest(unittest.TestCase):

    def test_one_build_per_configuration_beside_the_tree(self):
        kroot = Path('/cache/kernels/linux-source-7.3-c37da0d0c067-all-default')
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(kconfig, 'CONFIGS', Path(tmp)):
            (Path(tmp) / 'base.config').write_text('CONFIG_A=y\n')
            (Path(tmp) / 'arm64-64k.config').write_text('CONFIG_A=y\n')
            old = source.build_dir(kroot, 'default')
            arm = source.build_dir(kroot, 'default', 'arm64')
            (Path(tmp) / 'base.config').write_text('CONFIG_A=y\nCONFIG_NET=y\n')
            new = source.build_dir(kroot, 'default')
        self.assertEqual(old.parent, kroot)
        self.assertRegex(old.name, r'^build-cfg[0-9a-f]{8}$')
        # A changed fragment: a new build directory; the old one, which a
        # clone on the old fragment still uses, is left as it is.
        self.assertNotEqual(new, old)
        self.assertEqual(new.parent, kroot)
        self.assertNotEqual(arm, old)
        # Never the name the runner used before the digest was in it.
        self.assertNotEqual(old.name, 'build')


if __name__ == '__main__':
    unittest.main()
