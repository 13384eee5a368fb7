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
        kroot = Path('/cache/kernels/linux-source-7.3-c37da0d0c067-all')
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(kconfig, 'CONFIGS', Path(tmp)):
            (Path(tmp) / 'base.config').write_text('CONFIG_A=y\n')
            (Path(tmp) / 'arm64-64k.config').write_text('CONFIG_A=y\n')
            old = source.build_dir(kroot, kconfig.config_files('default'))
            arm = source.build_dir(kroot, kconfig.config_files('default', 'arm64'), 'arm64')
            (Path(tmp) / 'base.config').write_text('CONFIG_A=y\nCONFIG_NET=y\n')
            new = source.build_dir(kroot, kconfig.config_files('default'))
        self.assertEqual(old.parent, kroot)
        self.assertRegex(old.name, r'^build-cfg[0-9a-f]{8}$')
        # A changed fragment: a new build directory; the old one, which a
        # clone on the old fragment still uses, is left as it is.
        self.assertNotEqual(new, old)
        self.assertEqual(new.parent, kroot)
        self.assertNotEqual(arm, old)
        # Never the name the runner used before the digest was in it.
        self.assertNotEqual(old.name, 'build')

    def test_variants_asking_the_same_options_share_a_build(self):
        # The selftests variant of a tree without the series: the tree's
        # THP line and gup_test left out, as base.config already has them
        # (issue 33: bench-fix built both 6.12 kernels a second time).
        kroot = Path('/cache/kernels/linux-source-6.12-6be647aaca78-nofix')
        base = ('base.config', 'CONFIG_TRANSPARENT_HUGEPAGE=y\n')
        default = [base, ('gup_test out of tree: not built in', '# CONFIG_GUP_TEST is not set\n')]
        selftests = [base, ('selftests.config', '# nothing more\n'),
                     ("selftests/mm/config (gup_test's options)",
                      'CONFIG_TRANSPARENT_HUGEPAGE=y\n'),
                     ('gup_test out of tree: not built in', '# CONFIG_GUP_TEST is not set\n')]
        kselftest = [base, ('selftests/mm/config (gup_test built in)', 'CONFIG_GUP_TEST=y\n')]
        self.assertEqual(source.build_dir(kroot, selftests), source.build_dir(kroot, default))
        self.assertNotEqual(source.build_dir(kroot, kselftest),
                            source.build_dir(kroot, default))


if __name__ == '__main__':
    unittest.main()
