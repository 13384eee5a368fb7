"""Unit tests for gupnm.cache (sizes, cleaning) and gupnm.vmlinux's content keys."""

import os
import shutil
import struct
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import cache, vmlinux  # noqa: E402
from gupnm.host import UsageError  # noqa: E402


class CacheTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-cache-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        p = mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.tmp / 'cache')})
        p.start()
        self.addCleanup(p.stop)
        self.results = self.tmp / 'results'
        old = time.time() - 10 * 86400
        for rel, size, mtime in (('cache/modules/a/test_gup_fast.ko', 1000, None),
                                 ('cache/debian/6.12/boot/vmlinuz', 5000, old),
                                 ('cache/debs/x.deb', 300, None),
                                 ('cache/chroots/trixie/bin/sh', 10, None),
                                 ('cache/mystery/f', 7, None),
                                 ('results/new/summary.json', 20, None),
                                 ('results/old/summary.json', 30, old)):
            f = self.tmp / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b'x' * size)
            if mtime:
                os.utime(f.parent, (mtime, mtime))
        (self.tmp / 'cache/locks').mkdir()

    def test_show(self):
        rows = {(g, p.name): n for g, p, n in cache.sizes(self.results)}
        self.assertEqual(rows[('kernels', 'modules')], 1000)
        self.assertEqual(rows[('kernels', 'debian')], 5000)
        self.assertEqual(rows[('sources', 'debs')], 300)
        self.assertEqual(rows[('chroots', 'chroots')], 10)
        self.assertEqual(rows[('results', 'results')], 50)
        self.assertEqual(rows[('other', 'mystery')], 7)
        self.assertNotIn(('other', 'locks'), rows)
        text = cache.show(self.results)
        self.assertIn('total', text.splitlines()[-1])
        self.assertIn('4.9 KiB', text)

    def test_clean_kernels(self):
        removed = cache.clean(['kernels'], results=self.results)
        self.assertEqual(sorted(p.name for p, _ in removed), ['6.12', 'a'])
        self.assertFalse((self.tmp / 'cache/modules/a').exists())
        self.assertTrue((self.tmp / 'cache/debs/x.deb').exists())
        self.assertTrue((self.tmp / 'results/old').exists())

    def test_clean_results_older_than(self):
        removed = cache.clean(['results'], 7, results=self.results)
        self.assertEqual([(p.name, n) for p, n in removed], [('old', 30)])
        self.assertTrue((self.tmp / 'results/new').exists())

    def test_clean_all(self):
        cache.clean(['all'], results=self.results)
        self.assertEqual(list((self.tmp / 'cache/chroots').iterdir()), [])
        self.assertEqual(list(self.results.iterdir()), [])
        self.assertTrue((self.tmp / 'cache/mystery/f').exists())   # not ours to judge

    def test_bad_input(self):
        with self.assertRaisesRegex(UsageError, 'unknown cache group'):
            cache.clean(['everything'])
        with self.assertRaisesRegex(UsageError, '0 or more'):
            cache.clean(['results'], -1)

    def test_human(self):
        self.assertEqual([cache.human(n) for n in (5, 2048, 3 * 1024 ** 3)],
                         ['5 B', '2.0 KiB', '3.0 GiB'])


def bzimage(payload: bytes = b'') -> bytes:
    head = bytearray(0x210)
    head[0x202:0x206] = b'HdrS'
    return bytes(head) + payload


class KernelImageTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-vmlinux-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_check_kernel(self):
        f = self.tmp / 'k'
        f.write_bytes(bzimage())
        self.assertEqual(vmlinux.check_kernel(f), 'bzImage')
        elf = bytearray(64)
        elf[:4] = b'\x7fELF'
        struct.pack_into('<H', elf, 18, 62)
        f.write_bytes(bytes(elf))
        self.assertEqual(vmlinux.check_kernel(f), 'elf')
        struct.pack_into('<H', elf, 18, 183)         # aarch64
        f.write_bytes(bytes(elf))
        with self.assertRaisesRegex(UsageError, 'is not an x86 kernel image'):
            vmlinux.check_kernel(f)
        f.write_text('#!/bin/sh\n')
        with self.assertRaisesRegex(UsageError, 'is not an x86 kernel image'):
            vmlinux.check_kernel(f)
        with self.assertRaisesRegex(UsageError, 'cannot read kernel image'):
            vmlinux.check_kernel(self.tmp / 'missing')

    def test_vmlinux_cache_is_keyed_by_content_not_name(self):
        # Debian 7.x names every image "vmlinuz": two kernels, one name.
        a, b = self.tmp / 'a/vmlinuz', self.tmp / 'b/vmlinuz'
        for path, tag in ((a, b'A'), (b, b'B')):
            path.parent.mkdir()
            path.write_bytes(bzimage(tag * 100))
        with mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.tmp / 'cache')}), \
                mock.patch.object(vmlinux, 'progress'), \
                mock.patch.object(vmlinux, '_extract',
                                  side_effect=lambda blob: b'\x7fELF' + blob[-1:] * 10):
            va, vb = vmlinux.uncompressed(a), vmlinux.uncompressed(b)
            self.assertNotEqual(va, vb)
            self.assertEqual(va.read_bytes()[4:5], b'A')
            self.assertEqual(vb.read_bytes()[4:5], b'B')
            self.assertEqual(va.stat().st_mode & 0o777, 0o644)
            self.assertEqual(vmlinux.uncompressed(a), va)      # cached
            self.assertEqual(va.parent.name, vmlinux.content_key(a)[:20])


if __name__ == '__main__':
    unittest.main()
