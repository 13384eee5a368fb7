"""debs:DIR: a folder of a kernel's .debs found, refused naming what it
lacks, unpacked into the cache once (keyed by their sha256), then image:."""
from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.host import UsageError
from gupnm.prepare import cache, debdir, kernels

REL = '6.12.117+deb12-amd64'
DEBIAN_DEPENDS = 'linux-headers-6.12.117+deb12-common (= 1), linux-kbuild-6.12.117+deb12 (= 1)'


def make_deb(folder: Path, name: str, version: str = '1', depends: str = '',
             files: dict[str, str] | None = None) -> Path:
    """A real (tiny) .deb made with dpkg-deb -b."""
    root = Path(tempfile.mkdtemp(dir=folder.parent))
    (root / 'DEBIAN').mkdir()
    control = (f'Package: {name}\nVersion: {version}\nArchitecture: amd64\n'
               f'Maintainer: t <t@t>\nDescription: t\n'
               + (f'Depends: {depends}\n' if depends else ''))
    (root / 'DEBIAN' / 'control').write_text(control)
    for path, text in (files or {}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    out = folder / f'{name}_{version}_amd64.deb'
    subprocess.run(['dpkg-deb', '-Zgzip', '-b', str(root), str(out)], check=True,
                   capture_output=True)
    return out


class DebDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix='gupnm-test-debdir-')
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name) / 'debs'
        self.dir.mkdir()
        p = mock.patch.dict(os.environ, {'GUPNM_CACHE': f'{self.tmp.name}/cache'})
        p.start()
        self.addCleanup(p.stop)

    def debian_set(self, common=True, kbuild=True):
        make_deb(self.dir, f'linux-image-{REL}-unsigned',
                 files={f'boot/vmlinuz-{REL}': 'kernel'})
        make_deb(self.dir, f'linux-headers-{REL}', depends=DEBIAN_DEPENDS,
                 files={f'usr/src/linux-headers-{REL}/.config': 'CONFIG_X=y\n'})
        if common:
            make_deb(self.dir, 'linux-headers-6.12.117+deb12-common',
                     files={'usr/src/linux-headers-6.12.117+deb12-common/Makefile': ''})
        if kbuild:
            make_deb(self.dir, 'linux-kbuild-6.12.117+deb12',
                     files={'usr/lib/linux-kbuild-6.12.117+deb12/scripts/x': ''})

    def test_a_debian_set_is_found(self):
        self.debian_set()
        make_deb(self.dir, f'linux-image-{REL}-dbg')       # left alone
        found = debdir.find(self.dir)
        self.assertEqual(found.release, REL)
        self.assertEqual(len(found.debs()), 4)
        self.assertIn('-unsigned', found.image.name)

    def test_an_empty_folder_names_every_package(self):
        with self.assertRaises(UsageError) as cm:
            debdir.find(self.dir)
        for what in ('kernel image', 'headers', '-common', 'kbuild'):
            self.assertIn(what, str(cm.exception))

    def test_missing_common_and_kbuild_are_named(self):
        self.debian_set(common=False, kbuild=False)
        with self.assertRaises(UsageError) as cm:
            debdir.find(self.dir)
        msg = str(cm.exception)
        self.assertIn('-common package', msg)
        self.assertIn('kbuild tools', msg)
        self.assertNotIn('kernel image', msg)

    def test_bindeb_pkg_headers_need_neither(self):
        """make bindeb-pkg's linux-headers depends on no -common or kbuild."""
        make_deb(self.dir, 'linux-image-7.3.4+', files={'boot/vmlinuz-7.3.4+': 'k'})
        make_deb(self.dir, 'linux-headers-7.3.4+')
        found = debdir.find(self.dir)
        self.assertEqual((found.common, found.kbuild), (None, None))

    def test_two_kernels_refused(self):
        self.debian_set()
        make_deb(self.dir, 'linux-image-6.1.0-57-amd64')
        with self.assertRaisesRegex(UsageError, 'images of 2 kernels'):
            debdir.find(self.dir)

    def test_not_a_folder(self):
        with self.assertRaisesRegex(UsageError, 'not a directory'):
            debdir.find(self.dir / 'nope')

    def test_unpacked_once_and_again_when_cut(self):
        self.debian_set()
        found = debdir.find(self.dir)
        shas = debdir.sha256s(found)
        root = debdir.unpacked(found, shas)
        self.assertTrue((root / f'boot/vmlinuz-{REL}').is_file())
        self.assertTrue((root / 'usr/src/linux-headers-6.12.117+deb12-common/Makefile').exists())
        self.assertEqual(debdir.image_in(root, REL), root / f'boot/vmlinuz-{REL}')
        with mock.patch.object(debdir.subprocess, 'run') as run:
            self.assertEqual(debdir.unpacked(found, shas), root)
            run.assert_not_called()
        cache.take_repairs()
        (root / f'boot/vmlinuz-{REL}').unlink()        # cut short
        self.assertEqual(debdir.unpacked(found, shas), root)
        self.assertTrue((root / f'boot/vmlinuz-{REL}').is_file())
        # Noted for the run's summary, as every cache entry filled again.
        self.assertRegex(' '.join(cache.take_repairs()), 'failed its check.*missing')

    def test_unpacked_wrong_again_names_the_way_out(self):
        self.debian_set()
        found = debdir.find(self.dir)
        with mock.patch.object(debdir.cache, 'record_tree',
                               lambda e: (e / 'stray').write_text('x')), \
                mock.patch.object(debdir.cache, 'check_tree', return_value='cut'):
            with self.assertRaisesRegex(cache.CacheError, 'cache --clean debs-unpacked'):
                debdir.unpacked(found, debdir.sha256s(found))

    def test_key_follows_the_bytes(self):
        self.assertNotEqual(debdir.key_of({'a.deb': '1'}), debdir.key_of({'a.deb': '2'}))

    def test_image_of_7x_in_usr_lib_modules(self):
        root = Path(self.tmp.name) / 'r'
        (root / 'usr/lib/modules/7.3.4+deb13-amd64').mkdir(parents=True)
        (root / 'usr/lib/modules/7.3.4+deb13-amd64/vmlinuz').write_text('k')
        self.assertTrue(str(debdir.image_in(root, '7.3.4+deb13-amd64')).endswith('vmlinuz'))
        with self.assertRaises(UsageError):
            debdir.image_in(root, 'other')

    def test_spec_and_prepare(self):
        self.assertEqual(kernels.parse_spec('debs:/x/y'), ('debs', ['/x/y']))
        self.debian_set()
        prep = kernels.Prepared('s', REL, Path('/i'), None, Path('/t'), None,
                                {'kind': 'image'})
        with mock.patch.object(kernels, '_prepare_image', return_value=prep) as img:
            out = kernels._prepare_debs(f'debs:{self.dir}', self.dir)
        image, moddir = img.call_args.args[1:]
        self.assertEqual(image, moddir / f'boot/vmlinuz-{REL}')
        self.assertEqual(out.source['kind'], 'debs')
        self.assertEqual(len(out.source['debs']), 4)


if __name__ == '__main__':
    unittest.main()
