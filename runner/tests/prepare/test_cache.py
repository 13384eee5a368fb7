"""Unit tests for gupnm.prepare.cache (sizes, cleaning) and gupnm.prepare.vmlinux's content keys."""

import os
import re
import shutil
import struct
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import cache, vmlinux  # noqa: E402
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

    def test_what_make_run_leaves_is_in_a_group(self):
        """Every folder a debian: run fills (issue 30: cache --clean frees
        it all, nothing shows as other)."""
        grouped = {name for names in cache.GROUPS.values() for name in names}
        for name in ('apt', 'debian', 'debs', 'modules', 'vmlinux', 'selftest', 'bench', 'tmp'):
            self.assertIn(name, grouped)

    def test_every_folder_the_runner_fills_is_in_a_group(self):
        """Issue 48: `cache --clean all` left kselftest-paths/ and lava/.
        Every folder the code names under the cache (cache_dir() / "NAME",
        and the static builds' groups) belongs to a group; accel-probe.json
        is one small file (this machine's accelerator), locks/ is kept."""
        package = Path(__file__).resolve().parents[2] / 'gupnm'
        names = set()
        for src in package.rglob('*.py'):
            text = src.read_text()
            names |= set(re.findall(r'cache_dir\(\) / "([^"]+)"', text))
            names |= set(re.findall(r'_static_build\(\s*"([^"]+)"', text))
        self.assertIn('kselftest-paths', names)        # the scan sees them
        self.assertIn('selftest', names)
        grouped = {name for names in cache.GROUPS.values() for name in names}
        self.assertEqual(names - grouped, {'locks', 'accel-probe.json'})

    def test_clean_all_empties_every_group(self):
        for group in cache.GROUPS:
            for folder in cache.folders(group):
                (folder / 'entry').mkdir(parents=True, exist_ok=True)
        cache.clean(['all'], results=self.results)
        for group in cache.GROUPS:
            for folder in cache.folders(group):
                self.assertEqual(list(folder.iterdir()), [], folder)
        self.assertTrue((self.tmp / 'cache/locks').is_dir())

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
    """A bzImage whose setup header is true to its size: one setup sector
    after the boot sector, then @payload."""
    head = bytearray(1024)
    head[0x1f1] = 1
    struct.pack_into('<I', head, 0x1f4, (len(payload) + 15) // 16)
    head[0x202:0x206] = b'HdrS'
    return bytes(head) + payload + b'\0' * (-len(payload) % 16)


def elf(segments=((0x1000, 0x2000),)) -> bytes:
    """An x86-64 ELF64 header with PT_LOAD program headers (offset, filesz)."""
    data = bytearray(64 + 56 * len(segments))
    data[:5] = b'\x7fELF\x02'
    struct.pack_into('<H', data, 18, 62)
    struct.pack_into('<Q', data, 0x20, 64)
    struct.pack_into('<HH', data, 0x36, 56, len(segments))
    for i, (offset, filesz) in enumerate(segments):
        base = 64 + 56 * i
        struct.pack_into('<I', data, base, 1)
        struct.pack_into('<Q', data, base + 8, offset)
        struct.pack_into('<Q', data, base + 32, filesz)
    return bytes(data)


class ScratchTest(unittest.TestCase):

    def test_a_scratch_folder_is_readable_by_other_users_once_renamed(self):
        parent = Path(tempfile.mkdtemp(prefix='gupnm-test-scratch-'))
        self.addCleanup(shutil.rmtree, parent, True)
        tmp = cache.scratch(parent / 'modules', '.entry-')
        self.assertEqual(tmp.parent, parent / 'modules')
        self.assertTrue(tmp.name.startswith('.entry-'))
        self.assertEqual(tmp.stat().st_mode & 0o777, 0o755)   # not mkdtemp's 0700


class FillingTest(unittest.TestCase):
    def test_a_filled_folder_replaces_the_entry_whole(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "entry"
            out.mkdir()
            (out / "old").write_text("o")
            with cache.filling(out) as tmp:
                self.assertEqual(tmp.parent, out.parent)
                self.assertRegex(tmp.name, r"^\.entry-\d+\.\d+-")   # stale_temporaries' tag
                (tmp / "new").write_text("n")
            self.assertEqual(sorted(p.name for p in out.iterdir()), ["new"])
            self.assertEqual(sorted(p.name for p in Path(d).iterdir()), ["entry"])

    def test_a_failed_fill_leaves_the_entry_and_no_scratch(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "entry"
            out.mkdir()
            (out / "old").write_text("o")
            with self.assertRaises(RuntimeError):
                with cache.filling(out) as tmp:
                    (tmp / "half").write_text("h")
                    raise RuntimeError("cut")
            self.assertEqual(sorted(p.name for p in out.iterdir()), ["old"])
            self.assertEqual(sorted(p.name for p in Path(d).iterdir()), ["entry"])


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

    def test_cut_images_are_named_cut(self):
        # Issue 21: an image cut mid-payload was a traceback (struct.error).
        f = self.tmp / 'k'
        whole = bzimage(b'x' * 4096)
        f.write_bytes(whole[:2000])
        with self.assertRaisesRegex(UsageError, r'is cut short: 2000 bytes, its bzImage '
                                    r'headers say 5120; copy the image again'):
            vmlinux.check_kernel(f)
        f.write_bytes(elf() + b'\0' * 100)
        with self.assertRaisesRegex(UsageError, 'is cut short: .* its elf headers say 12288'):
            vmlinux.check_kernel(f)
        f.write_bytes(elf().ljust(0x3000, b'\0'))
        self.assertEqual(vmlinux.check_kernel(f), 'elf')

    def test_extract_from_a_real_debian_image(self):
        # The decompressor exits non-zero on the bytes after the payload:
        # that must not lose the vmlinux (it did, and every boot was slow).
        images = sorted(Path(os.environ.get('GUPNM_CACHE', Path.home() / '.cache/gupnm'))
                        .glob('debian/*/boot/vmlinuz-*-amd64'))
        if not images:
            self.skipTest('no Debian kernel in the cache')
        blob = images[-1].read_bytes()
        data = vmlinux._extract(blob)
        self.assertIsNotNone(data)
        self.assertGreaterEqual(len(data), vmlinux.elf_size(data))
        self.assertIsNone(vmlinux._extract(blob[:len(blob) // 2]))   # cut: the bzImage

    def test_pvh_note_of_a_cut_elf_is_false_not_a_traceback(self):
        data = elf(((0x10000, 0x100),))
        for cut in (len(data), 70, 40):
            self.assertFalse(vmlinux._has_pvh_note(data[:cut]))

    def test_vmlinux_cache_entry_checked_on_use(self):
        a = self.tmp / 'vmlinuz'
        a.write_bytes(bzimage(b'A' * 100))
        calls = []

        def extract(blob):
            calls.append(1)
            return b'\x7fELF' + b'A' * 1000
        with mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.tmp / 'cache')}), \
                mock.patch.object(vmlinux, 'progress'), \
                mock.patch.object(cache, 'progress'), \
                mock.patch.object(vmlinux, '_extract', side_effect=extract):
            out = vmlinux.uncompressed(a)
            self.assertEqual(vmlinux.uncompressed(a), out)
            self.assertEqual(len(calls), 1)
            with open(out, 'r+b') as fh:          # cut, as a full disk would
                fh.truncate(500)
            self.assertEqual(vmlinux.uncompressed(a), out)
            self.assertEqual(len(calls), 2)
            self.assertEqual(out.stat().st_size, 1004)
            self.assertIn('vmlinux is 500 bytes, 1004 when filled', cache.repairs()[-1])

    def test_vmlinux_cache_is_keyed_by_content_not_name(self):
        # Debian 7.x names every image "vmlinuz": two kernels, one name.
        a, b = self.tmp / 'a/vmlinuz', self.tmp / 'b/vmlinuz'
        for path, tag in ((a, b'A'), (b, b'B')):
            path.parent.mkdir()
            path.write_bytes(bzimage(tag * 112))
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


class StaleTemporariesTest(unittest.TestCase):
    """The next run removes what killed runs left; never a live run's."""

    def test_dead_runs_only(self):
        from gupnm import host
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            mine = host.owner_tag()
            dead = '999999999.1'
            made = {
                'tmp/run-%s-abcd1234' % dead: True,
                'tmp/run-%s-abcd1234' % mine: False,
                'modules/.6.12-k-%s-x1y2z3w4' % dead: True,
                'modules/.6.12-k-%s-x1y2z3w4' % mine: False,
                'modules/6.12-k': False,                       # an entry
                'selftest/key/.build-%s-q1w2e3r4' % dead: True,
                'vmlinux/key/.vmlinux-%s-q1w2e3r4' % dead: True,
                'debs/.dl-%s-q1w2e3r4' % dead: True,
                'debs/linux-image_1-%s-q1w2e3r4.deb' % dead: False,   # not hidden
            }
            for rel in made:
                (root / rel).mkdir(parents=True)
            with mock.patch.object(cache, 'progress'):
                gone = cache.sweep_stale(root)
            self.assertEqual(sorted(str(g.relative_to(root)) for g in gone),
                             sorted(r for r, stale in made.items() if stale))
            for rel, stale in made.items():
                self.assertEqual((root / rel).exists(), not stale, rel)


class ManifestTest(unittest.TestCase):
    """cache.record / check / checked: size and sha256 kept when filled,
    checked on use, a failing entry filled once more, then reported."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-manifest-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        p = mock.patch.object(cache, 'progress')
        p.start()
        self.addCleanup(p.stop)
        self.entry = self.tmp / 'modules' / 'k-abc'
        self.entry.mkdir(parents=True)
        (self.entry / 'm.ko').write_bytes(b'\x7fELF module' * 100)

    def test_whole_entry_passes(self):
        cache.record(self.entry, ['m.ko'])
        self.assertIsNone(cache.check(self.entry))

    def test_cut_file(self):
        cache.record(self.entry, ['m.ko'])
        with open(self.entry / 'm.ko', 'r+b') as fh:
            fh.truncate(10)
        self.assertEqual(cache.check(self.entry), 'm.ko is 10 bytes, 1100 when filled')

    def test_same_size_other_bytes(self):
        cache.record(self.entry, ['m.ko'])
        st = (self.entry / 'm.ko').stat()
        with open(self.entry / 'm.ko', 'r+b') as fh:
            fh.seek(100)
            fh.write(b'X')
        os.utime(self.entry / 'm.ko', ns=(st.st_atime_ns, st.st_mtime_ns))   # hide it
        self.assertEqual(cache.check(self.entry), 'm.ko has another sha256 than when filled')

    def test_touched_but_same_bytes_passes(self):
        cache.record(self.entry, ['m.ko'])
        os.utime(self.entry / 'm.ko', (1, 1))
        self.assertIsNone(cache.check(self.entry))
        self.assertIsNone(cache.check(self.entry))

    def test_missing_file_and_manifest(self):
        self.assertIn('no record', cache.check(self.entry))
        cache.record(self.entry, ['m.ko'])
        (self.entry / 'm.ko').unlink()
        self.assertEqual(cache.check(self.entry), 'm.ko is missing')
        (self.entry / cache.MANIFEST).write_text('{')
        self.assertIn('unreadable', cache.check(self.entry))

    def test_checked_fills_a_failing_entry_once(self):
        cache.record(self.entry, ['m.ko'])
        (self.entry / 'm.ko').write_bytes(b'corrupt')
        fills = []

        def fill():
            fills.append(1)
            self.entry.mkdir()
            (self.entry / 'm.ko').write_bytes(b'good')
            cache.record(self.entry, ['m.ko'])
        cache.checked(self.entry, fill, group='kernels')
        self.assertEqual(((self.entry / 'm.ko').read_bytes(), len(fills)), (b'good', 1))
        cache.checked(self.entry, fill, group='kernels')      # now whole: no fill
        self.assertEqual(len(fills), 1)

    def test_checked_reports_an_entry_that_fails_again(self):
        def bad_fill():
            self.entry.mkdir(exist_ok=True)
            (self.entry / 'm.ko').write_bytes(b'good')
            cache.record(self.entry, ['m.ko'])
            (self.entry / 'm.ko').write_bytes(b'bad!!')      # the disk loses it
        with self.assertRaisesRegex(cache.CacheError,
                                    r'fails its check after being filled afresh .*'
                                    r'runner/gupnm-run cache --clean kernels'):
            cache.checked(self.entry, bad_fill, group='kernels')


class TreeTest(unittest.TestCase):
    """cache.record_tree / check_tree / listed: every file's size listed
    when a folder entry is filled, a file gone or cut seen on use."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-tree-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.entry = self.tmp / 'debian' / 'k'
        (self.entry / 'usr/src/h/include').mkdir(parents=True)
        (self.entry / 'usr/src/h/include/mm.h').write_text('x' * 300)
        (self.entry / 'usr/src/h/Makefile').write_text('include x\n')
        (self.entry / 'usr/src/h/scripts').symlink_to('../../lib/kbuild/scripts')
        (self.entry / 'tmp').mkdir()
        (self.entry / '.gupnm-unpacked').write_text('')

    def test_whole_tree_passes(self):
        cache.record_tree(self.entry)
        self.assertIsNone(cache.check_tree(self.entry))
        (self.entry / 'usr/src/h/new-file').write_text('more')   # added: fine
        self.assertIsNone(cache.check_tree(self.entry))

    def test_a_file_gone_cut_or_relinked_is_named(self):
        cache.record_tree(self.entry)
        (self.entry / 'usr/src/h/include/mm.h').unlink()
        self.assertEqual(cache.check_tree(self.entry),
                         '1 of its 3 files missing or not of their size when filled: '
                         'usr/src/h/include/mm.h missing')
        (self.entry / 'usr/src/h/include/mm.h').write_text('x' * 299)
        self.assertIn('usr/src/h/include/mm.h cut or changed', cache.check_tree(self.entry))
        (self.entry / 'usr/src/h/include/mm.h').write_text('x' * 300)
        (self.entry / 'usr/src/h/scripts').unlink()
        (self.entry / 'usr/src/h/scripts').symlink_to('/usr/lib/kbuild/scripts')
        self.assertIn('usr/src/h/scripts cut or changed', cache.check_tree(self.entry))

    def test_skipped_folders_and_the_runners_own_files_are_not_listed(self):
        cache.record_tree(self.entry, ('tmp',))
        (self.entry / 'tmp/build').write_text('a build at work')
        (self.entry / '.gupnm-unpacked').unlink()
        self.assertIsNone(cache.check_tree(self.entry))
        self.assertEqual(sorted(cache._listing(self.entry, ('tmp',))),
                         ['usr/src/h/Makefile', 'usr/src/h/include/mm.h', 'usr/src/h/scripts'])

    def test_no_listing_passes_and_listed_makes_one(self):
        self.assertIsNone(cache.check_tree(self.entry))
        cache.listed(self.entry)
        (self.entry / 'usr/src/h/Makefile').unlink()
        self.assertIn('Makefile missing', cache.check_tree(self.entry))

    def test_unreadable_listing(self):
        (self.entry / cache.TREE).write_text('{')
        self.assertIn('unreadable', cache.check_tree(self.entry))

    def test_verify_filled_checks_the_tree(self):
        cache.record(self.entry, [])
        cache.record_tree(self.entry)
        (self.entry / 'usr/src/h/include/mm.h').unlink()
        with self.assertRaisesRegex(cache.CacheError, 'mm.h missing.*cache --clean kernels'):
            cache.verify_filled(self.entry, 'kernels')


class IdentTest(unittest.TestCase):
    """What names a path in a cache key: its place in the cache, the same
    wherever the cache is copied; a path outside it, as it is."""

    def test_inside_and_outside(self):
        with tempfile.TemporaryDirectory() as d:
            for where in ('home', 'moved/elsewhere'):
                with mock.patch.dict(os.environ, {'GUPNM_CACHE': f'{d}/{where}'}):
                    self.assertEqual(cache.ident(Path(d) / where / 'debian/k/usr/src/h'),
                                     'cache:debian/k/usr/src/h')
            with mock.patch.dict(os.environ, {'GUPNM_CACHE': f'{d}/home'}):
                self.assertEqual(cache.ident(Path('/srv/headers')), '/srv/headers')


if __name__ == '__main__':
    unittest.main()
