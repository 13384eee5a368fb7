"""kselftest --kernel IMAGE --kselftest TARBALL [--modules M]: a lab's own
artifacts checked on the host (exit 2) and laid into the guest."""
from __future__ import annotations

import argparse
import io
import os
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.ci import kselftest_own, kselftest_paths, lab
from gupnm.host import UsageError

REL = '7.3.4+'


def tarball(path: Path, names: dict[str, bytes]) -> Path:
    with tarfile.open(path, 'w:gz') as tf:
        for name, data in names.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


KSELFTEST = {'./run_kselftest.sh': b'#!/bin/sh\n', './mm/gup_null_mapping': b'x',
             './mm/ksft_gup_test.sh': b'#!/bin/sh\n'}


class OwnTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix='gupnm-test-own-')
        self.addCleanup(self.tmp.cleanup)
        self.d = Path(self.tmp.name)

    def test_tarball_wrapper_and_refusals(self):
        ok = tarball(self.d / 'k.tar.gz', KSELFTEST)
        self.assertEqual(kselftest_own.check_tarball(ok), 'mm:ksft_gup_test.sh')
        old = tarball(self.d / 'o.tar.gz', {'run_kselftest.sh': b'', 'mm/gup_null_mapping': b''})
        self.assertEqual(kselftest_own.check_tarball(old), 'mm:run_vmtests.sh')
        theirs = tarball(self.d / 't.tar.gz', {'./run_kselftest.sh': b'', './mm/gup_test': b''})
        with self.assertRaisesRegex(UsageError, 'mm/gup_null_mapping'):
            kselftest_own.check_tarball(theirs)
        (self.d / 'junk.tar.gz').write_bytes(b'not a tarball')
        with self.assertRaisesRegex(UsageError, 'not a tarball'):
            kselftest_own.check_tarball(self.d / 'junk.tar.gz')
        with self.assertRaisesRegex(UsageError, 'is not a file'):
            kselftest_own.check_tarball(self.d / 'none.tar.gz')

    def test_module_releases(self):
        tree = self.d / 'mods' / 'lib' / 'modules' / REL / 'kernel'
        tree.mkdir(parents=True)
        self.assertEqual(kselftest_own.module_releases(self.d / 'mods'), [REL])
        self.assertEqual(kselftest_own.module_releases(tree.parent), [REL])
        t = tarball(self.d / 'm.tar.gz', {f'lib/modules/{REL}/kernel/a.ko': b''})
        self.assertEqual(kselftest_own.module_releases(t), [REL])
        t = tarball(self.d / 'n.tar.gz', {f'./{REL}/kernel/a.ko': b''})
        self.assertEqual(kselftest_own.module_releases(t), [REL])

    def test_release_from_the_banner(self):
        img = self.d / 'vmlinux'
        img.write_bytes(b'\0' * 64 + b'Linux version 7.3.4+ (root@h) (gcc) #1 SMP\0')
        with mock.patch.object(kselftest_own.vmlinux, 'uncompressed', return_value=None):
            self.assertEqual(kselftest_own.release_of(img), REL)
        img.write_bytes(b'nothing')
        with mock.patch.object(kselftest_own.vmlinux, 'uncompressed', return_value=None):
            with self.assertRaisesRegex(UsageError, 'banner'):
                kselftest_own.release_of(img)

    def test_modules_of_another_release_refused(self):
        img = self.d / 'vmlinux'
        img.write_bytes(b'x')
        ok = tarball(self.d / 'k.tar.gz', KSELFTEST)
        mods = tarball(self.d / 'm.tar.gz', {'lib/modules/6.12.0/kernel/a.ko': b''})
        with mock.patch.object(kselftest_own.vmlinux, 'check_kernel'), \
                mock.patch.object(kselftest_own, 'release_of', return_value=REL):
            with self.assertRaisesRegex(UsageError, f'no modules of {REL}.*found: 6.12.0'):
                kselftest_own.check(img, mods, ok)
            self.assertEqual(kselftest_own.check(img, None, ok), (REL, 'mm:ksft_gup_test.sh'))

    def test_install_puts_tarball_and_modules(self):
        mods = tarball(self.d / 'm.tar.gz', {f'lib/modules/{REL}/kernel/mm/gup_test.ko': b'',
                                             f'lib/modules/{REL}/modules.order': b''})
        k = kselftest_own.OwnKernel(REL, self.d / 'v', self.d / 'v', mods,
                                    tarball(self.d / 'k.tar.gz', KSELFTEST))
        root = self.d / 'extra'
        self.assertTrue(kselftest_own.install(k, root))
        self.assertTrue((root / kselftest_own.GUEST_TARBALL.lstrip('/')).is_file())
        self.assertTrue((root / f'lib/modules/{REL}/kernel/mm/gup_test.ko').exists())
        k.modules = None
        self.assertFalse(kselftest_own.install(k, self.d / 'extra2'))

    def test_guest_tarball_is_under_the_guest_dir(self):
        self.assertTrue(kselftest_own.GUEST_TARBALL.startswith(
            '/' + kselftest_paths.GUEST_DIR + '/'))


def args(**kw):
    base = dict(spec=None, kernel=None, kselftest=None, modules=None, via='run_kselftest',
                linaro=None, skipfile=None, select='casename')
    base.update(kw)
    return argparse.Namespace(**base)


class LabArgsTest(unittest.TestCase):
    def test_spec_or_own_not_both_nor_neither(self):
        with self.assertRaisesRegex(UsageError, 'not both'):
            lab.check_kselftest(args(spec='source:debian-7.3', kernel=Path('/k')))
        with self.assertRaisesRegex(UsageError, 'need --kernel IMAGE and --kselftest'):
            lab.check_kselftest(args(kernel=Path('/k')))
        with self.assertRaisesRegex(UsageError, 'name a kernel'):
            lab.check_kselftest(args())

    def test_own_checked_before_anything(self):
        with mock.patch.object(lab.kselftest_own, 'check') as check:
            lab.check_kselftest(args(kernel=Path('/k'), kselftest=Path('/t')))
        check.assert_called_once_with(Path('/k'), None, Path('/t'))

    def test_debian_spec_still_refused(self):
        with self.assertRaisesRegex(UsageError, 'made by a source kernel'):
            lab.check_kselftest(args(spec='debian:6.12'))


if __name__ == '__main__':
    unittest.main()
