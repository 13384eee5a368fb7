"""Issue 48 item 6: the sha256 of the image booted and of every package a
Debian kernel came from (cache.recorded_sha256, debian.package_sha256),
as summary.json records them (kernel.source)."""

import hashlib
import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import apt, cache, debian  # noqa: E402
from gupnm.report import schema  # noqa: E402


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RecordedSha256Test(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-prov-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        p = mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.tmp)})
        p.start()
        self.addCleanup(p.stop)
        self.entry = self.tmp / 'vmlinux' / 'abc'
        self.entry.mkdir(parents=True)
        self.image = self.entry / 'vmlinux'
        self.image.write_bytes(b'kernel')
        cache.record(self.entry, ['vmlinux'])

    def test_a_recorded_file_is_not_hashed_again(self):
        with mock.patch.object(cache, 'sha256', side_effect=AssertionError('hashed')):
            self.assertEqual(cache.recorded_sha256(self.image), sha(b'kernel'))

    def test_a_changed_file_is_hashed(self):
        self.image.write_bytes(b'other!')
        self.assertEqual(cache.recorded_sha256(self.image), sha(b'other!'))

    def test_a_file_outside_the_cache_and_a_missing_one(self):
        own = self.tmp.parent / f'{self.tmp.name}-own-vmlinuz'
        own.write_bytes(b'mine')
        self.addCleanup(own.unlink)
        self.assertEqual(cache.recorded_sha256(own), sha(b'mine'))
        self.assertIsNone(cache.recorded_sha256(self.tmp / 'gone'))


class PackageSha256Test(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-pkg-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.root = self.tmp / 'debian' / 'k'
        self.root.mkdir(parents=True)
        debs = self.tmp / 'debs'
        debs.mkdir()
        self.debs = [debs / 'linux-image-6.12.118+deb12-amd64-unsigned_6.12.118-1~deb12u1_amd64.deb',
                     debs / 'linux-kbuild-6.12.118+deb12_6.12.118-1~deb12u1_amd64.deb']
        for d in self.debs:
            d.write_bytes(d.name.encode())
        self.k = debian.DebianKernel(
            '6.12.118+deb12-amd64', self.root / 'vmlinuz', self.root, self.root,
            [debian._name_version(d) for d in self.debs], None, list(self.debs))

    def test_of_the_debs_then_kept(self):
        got = debian.package_sha256(self.k)
        self.assertEqual(got, {debian._name_version(d): sha(d.name.encode()) for d in self.debs})
        for d in self.debs:
            d.unlink()                      # dropped: the kept record answers
        with mock.patch.object(apt, 'field', side_effect=AssertionError('asked apt')):
            self.assertEqual(debian.package_sha256(self.k), got)

    def test_dropped_debs_take_the_lists_sha256(self):
        self.debs[1].unlink()
        with mock.patch.object(apt, 'field', return_value='ab' * 32) as field:
            got = debian.package_sha256(self.k)
        self.assertEqual(got['linux-kbuild-6.12.118+deb12=6.12.118-1~deb12u1'], 'ab' * 32)
        self.assertEqual(field.call_args.args[2], 'SHA256')

    def test_a_package_the_lists_no_longer_name_is_null_and_not_kept(self):
        self.debs[1].unlink()
        with mock.patch.object(apt, 'field', return_value=''):
            got = debian.package_sha256(self.k)
        self.assertIsNone(got['linux-kbuild-6.12.118+deb12=6.12.118-1~deb12u1'])
        self.assertFalse((self.root / debian.PACKAGE_SHA256).exists())


class SchemaTest(unittest.TestCase):

    def test_the_schema_types_the_sha256s(self):
        s = json.loads((Path(__file__).resolve().parents[1] / 'data' / 'real' /
                        'debian-6.12.summary.json').read_text())
        source = s['kernel']['source']
        source.update(boot_image_sha256='0' * 64, package_sha256={'a=1': 'f' * 64, 'b=2': None})
        node = schema.load()['properties']['kernel']
        self.assertEqual(schema.errors(s['kernel'], node, root=schema.load()), [])
        source['boot_image_sha256'] = 'not-a-sha'
        source['package_sha256']['a=1'] = 'F' * 64
        errs = schema.errors(s['kernel'], node, root=schema.load())
        self.assertEqual(len(errs), 2, errs)


if __name__ == '__main__':
    unittest.main()
