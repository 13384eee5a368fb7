"""make check's row for a lab's own artifacts: the modules tarball laid
out as modules_install lays it out, and the row failing on a wrong answer."""
from __future__ import annotations

import contextlib
import io
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.check import own_kselftest
from gupnm.check.tally import Tally
from gupnm.ci import kselftest_own

REL = '7.3.4+'
DRIVER = 'mm_ksft_gup_test_sh_gup_null_mapping_verdict_driver_'


def summary(code, failing):
    names = [DRIVER + 'read', DRIVER + 'write', 'mm_ksft_gup_test_sh_gup_null_mapping_verdict_anon_read']
    return {'exit_code': code, 'verdict': 'v',
            'cases': [{'name': n, 'status': 'fail' if n in failing else 'pass'} for n in names],
            'kernel': {'booted_release': REL, 'source': {'kind': 'own'}}}


class OwnKselftestRowTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-ownks-'))
        self.addCleanup(__import__('shutil').rmtree, self.tmp, True)
        self.build = self.tmp / 'build'
        (self.build / 'drivers/x').mkdir(parents=True)
        (self.build / 'drivers/x/a.ko').write_bytes(b'ko')
        (self.build / 'modules.order').write_text('drivers/x/a.ko\n')

    def test_modules_tarball_as_modules_install(self):
        out = own_kselftest.modules_tarball(self.build, REL, self.tmp)
        with tarfile.open(out) as tf:
            names = tf.getnames()
        self.assertIn(f'lib/modules/{REL}/kernel/drivers/x/a.ko', names)
        self.assertIn(f'lib/modules/{REL}/modules.order', names)
        self.assertEqual(kselftest_own.module_releases(out), [REL])

    def run_row(self, code, failing):
        k = mock.Mock(build=self.build, release=REL, image=self.tmp / 'vmlinux')
        built = mock.Mock(tarball=self.tmp / 'k.tar.gz')

        def fake(argv):
            if '--modules' not in argv:
                return 2, {'exit_code': 2}, 'has no mm/gup_null_mapping'
            s = summary(code, failing)
            s['kernel']['source']['modules'] = argv[argv.index('--modules') + 1]
            return code, s, ''
        t = Tally()
        with mock.patch.object(own_kselftest, 'REPO', self.tmp), \
                mock.patch.object(own_kselftest.kselftest_paths, 'prepared',
                                  return_value=(k, built)), \
                mock.patch.object(own_kselftest, '_kselftest', side_effect=fake), \
                contextlib.redirect_stdout(io.StringIO()):
            own_kselftest.check_own(t)
        return t

    def test_the_bug_passes_the_row(self):
        t = self.run_row(1, {DRIVER + 'read', DRIVER + 'write'})
        self.assertEqual((t.passed, t.failures), (2, []))

    def test_a_pass_or_other_failures_fail_it(self):
        for code, failing in ((0, set()), (1, {DRIVER + 'read'}),
                              (1, {DRIVER + 'read', DRIVER + 'write',
                                   'mm_ksft_gup_test_sh_gup_null_mapping_verdict_anon_read'})):
            with self.subTest(code=code, failing=failing):
                t = self.run_row(code, failing)
                self.assertEqual(len(t.failures), 1, t.failures)


if __name__ == '__main__':
    unittest.main()
