"""image:KERNEL:DIR: the headers found in DIR, Debian's absolute include
pointed at the unpacked -common copy, a failed build's first error line."""
from __future__ import annotations

import os
import re
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.host import RunnerError, UsageError
from gupnm.prepare import kernels, ownimage

REL = '6.12.117+deb12-amd64'
_HERMETIC = []


def setUpModule():
    """Whatever this machine has in /usr/src (Debian's headers of REL's
    -common) and in its cache, the tests see an empty root and cache."""
    tmp = tempfile.TemporaryDirectory(prefix='gupnm-test-ownimage-')
    _HERMETIC.append(tmp)
    for p in (mock.patch.object(ownimage, 'HOST', Path(tmp.name) / 'host'),
              mock.patch.dict(os.environ, {'GUPNM_CACHE': f'{tmp.name}/cache'})):
        p.start()
        _HERMETIC.append(p)


def tearDownModule():
    for p in reversed(_HERMETIC):
        p.cleanup() if isinstance(p, tempfile.TemporaryDirectory) else p.stop()
COMMON = '6.12.117+deb12-common'


def unpacked(root: Path, *, common: bool = True, kbuild: bool = True) -> Path:
    """What dpkg-deb -x of image, headers, -common and kbuild leaves in @root."""
    src = root / 'usr/src'
    kdir = src / f'linux-headers-{REL}'
    (kdir / 'include').mkdir(parents=True)
    (kdir / '.config').write_text('CONFIG_CC_VERSION_TEXT="gcc-12 (Debian 12.2.0-14) 12.2.0"\n')
    (kdir / 'Makefile').write_text(f'include /usr/src/linux-headers-{COMMON}/Makefile\n')
    (kdir / 'scripts').symlink_to('../../lib/linux-kbuild-6.12.117+deb12/scripts')
    if common:
        (src / f'linux-headers-{COMMON}').mkdir()
        (src / f'linux-headers-{COMMON}/Makefile').write_text('# the top Makefile\n')
    if kbuild:
        (root / 'usr/lib/linux-kbuild-6.12.117+deb12/scripts').mkdir(parents=True)
    return kdir


class FindKdirTest(unittest.TestCase):
    def test_build_tree_is_itself(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'Makefile').write_text('')
            self.assertEqual(ownimage.find_kdir(Path(tmp)), Path(tmp))

    def test_unpack_root_finds_the_arch_headers_not_common(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp))
            self.assertEqual(ownimage.find_kdir(Path(tmp)), kdir)

    def test_nothing_is_none(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(ownimage.find_kdir(Path(tmp)))

    def test_two_kernels_refused_naming_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            for rel in ('6.1.0-57-amd64', '6.1.0-56-amd64'):
                d = Path(tmp) / 'usr/src' / f'linux-headers-{rel}'
                d.mkdir(parents=True)
                (d / 'Makefile').write_text('')
                (d / '.config').write_text('')
            with self.assertRaisesRegex(UsageError, r'headers of 2 kernels \(linux-headers-6.1.0-56'):
                ownimage.find_kdir(Path(tmp))


class RewriteTest(unittest.TestCase):
    def test_include_points_at_the_unpacked_common(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp))
            new, missing = ownimage.rewritten(kdir, (kdir / 'Makefile').read_text())
            self.assertEqual(new, f'include {tmp}/usr/src/linux-headers-{COMMON}/Makefile\n')
            self.assertEqual(missing, [])

    def test_existing_absolute_include_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'src').mkdir()
            (Path(tmp) / 'src/Makefile').write_text('')
            build = Path(tmp) / 'build'
            build.mkdir()
            with mock.patch.object(ownimage, 'HOST', Path('/')):
                self.assertEqual(ownimage.rewritten(build, f'include {tmp}/src/Makefile\n'),
                                 (None, []))

    def test_an_include_this_machine_has_is_not_missing(self):
        """Debian's headers installed on this machine serve the include."""
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp) / 'dir', common=False)
            host = Path(tmp) / 'host'
            (host / f'usr/src/linux-headers-{COMMON}').mkdir(parents=True)
            (host / f'usr/src/linux-headers-{COMMON}/Makefile').write_text('')
            with mock.patch.object(ownimage, 'HOST', host):
                self.assertEqual(ownimage.rewritten(kdir, (kdir / 'Makefile').read_text()),
                                 (None, []))
            self.assertEqual(ownimage.rewritten(kdir, (kdir / 'Makefile').read_text())[1],
                             [f'/usr/src/linux-headers-{COMMON}/Makefile'])

    def test_missing_common_says_which_package_to_unpack(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp), common=False)
            with self.assertRaisesRegex(UsageError, re.escape(
                    f'needs linux-headers-{COMMON}, neither on this machine nor unpacked '
                    f'under {tmp} (its Makefile includes /usr/src/linux-headers-{COMMON}'
                    f'/Makefile): unpack them there too: for d in linux-headers-{COMMON}'
                    f'_*.deb; do dpkg-deb -x $d {tmp}; done')):
                ownimage.kbuild_dir(kdir)

    def test_missing_common_and_kbuild_named_together(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp), common=False, kbuild=False)
            with self.assertRaisesRegex(UsageError, re.escape(
                    f'needs linux-headers-{COMMON} linux-kbuild-6.12.117+deb12, ')):
                ownimage.kbuild_dir(kdir)

    def test_shadow_links_every_entry_and_rewrites_makefile(self):
        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
            kdir = unpacked(Path(tmp))
            with mock.patch.object(ownimage, 'cache_dir', return_value=Path(cache)):
                out = ownimage.kbuild_dir(kdir)
                self.assertEqual(ownimage.kbuild_dir(kdir), out)      # cached
            self.assertTrue(str(out).startswith(cache))
            self.assertEqual(os.readlink(out / '.config'), str(kdir / '.config'))
            self.assertTrue((out / 'scripts').is_dir())
            self.assertIn(f'{tmp}/usr/src/linux-headers-{COMMON}/Makefile',
                          (out / 'Makefile').read_text())
            self.assertEqual((kdir / 'Makefile').read_text(),       # DIR untouched
                             f'include /usr/src/linux-headers-{COMMON}/Makefile\n')

    def test_a_shadow_cut_short_or_leading_nowhere_is_made_again(self):
        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
            kdir = unpacked(Path(tmp))
            with mock.patch.object(ownimage, 'cache_dir', return_value=Path(cache)):
                out = ownimage.kbuild_dir(kdir)
                (out / 'include').unlink()
                self.assertFalse(ownimage._shadow_whole(out, kdir))
                self.assertEqual(ownimage.kbuild_dir(kdir), out)
                self.assertEqual(os.readlink(out / 'include'), str(kdir / 'include'))
                (out / 'scripts').unlink()
                (out / 'scripts').symlink_to('/nonexistent/scripts')
                self.assertEqual(ownimage.kbuild_dir(kdir), out)
                self.assertTrue(ownimage._shadow_whole(out, kdir))

    def test_plain_tree_used_as_is(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'Makefile').write_text('# a kernel tree\n')
            self.assertEqual(ownimage.kbuild_dir(Path(tmp)), Path(tmp))


class BuildFailureTest(unittest.TestCase):
    LOG = ('$ oot/build-module.sh /k /o W=1\n'
           "make: Entering directory '/k'\n"
           '  CC [M]  /o/gup_test.o\n'
           "/o/gup_test.c:12:10: fatal error: linux/gup.h: No such file or directory\n"
           "make[2]: *** [scripts/Makefile.build:229: /o/gup_test.o] Error 1\n")

    def test_first_compiler_error_line(self):
        self.assertEqual(ownimage.first_error(self.LOG),
                         '/o/gup_test.c:12:10: fatal error: linux/gup.h: No such file or directory')

    def test_missing_compiler(self):
        self.assertEqual(ownimage.first_error('$ x\n/bin/sh: 1: x86_64-linux-gnu-gcc-14: not found\n'),
                         '/bin/sh: 1: x86_64-linux-gnu-gcc-14: not found')

    def test_build_failure_is_usage_error_with_first_line_and_log(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / 'm.log'
            log.write_text(self.LOG)
            err = ownimage.build_failure(RunnerError(
                f'module build failed (exit 2); last lines of {log}:\n...'), Path('/k'))
        self.assertIsInstance(err, UsageError)
        self.assertIn('does not build against /k: /o/gup_test.c:12:10: fatal error', str(err))
        self.assertIn(f'the whole log: {log}', str(err))

    def test_image_spec_build_failure_exits_as_usage(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp))
            (Path(tmp) / 'vmlinuz').write_bytes(b'x')
            fail = RunnerError('module build failed (exit 2):\ngcc: error: bad flag')
            with mock.patch.object(kernels, '_release_of', return_value=REL), \
                    mock.patch.object(ownimage, 'kbuild_dir', return_value=kdir), \
                    mock.patch.object(kernels, '_image_root', return_value=None), \
                    mock.patch.object(kernels, 'build_module', side_effect=fail):
                with self.assertRaisesRegex(UsageError, re.escape(
                        f'does not build against {kdir}: gcc: error: bad flag')):
                    kernels.prepare(f'image:{tmp}/vmlinuz:{tmp}')


    def test_cache_failure_is_not_called_bad_input(self):
        from gupnm.prepare import cache
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp))
            (Path(tmp) / 'vmlinuz').write_bytes(b'x')
            fail = cache.CacheError('module entry fails its check again')
            with mock.patch.object(kernels, '_release_of', return_value=REL), \
                    mock.patch.object(ownimage, 'kbuild_dir', return_value=kdir), \
                    mock.patch.object(kernels, '_image_root', return_value=None), \
                    mock.patch.object(kernels, 'build_module', side_effect=fail):
                with self.assertRaises(cache.CacheError) as caught:
                    kernels.prepare(f'image:{tmp}/vmlinuz:{tmp}')
            self.assertNotIsInstance(caught.exception, UsageError)


class RootBindsTest(unittest.TestCase):
    """What a build root of another suite sees of DIR."""

    def test_unpacked_packages_keep_their_packaged_paths(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp).resolve()
            kdir = unpacked(root)
            (root / 'usr/lib/linux-kbuild-link').symlink_to('linux-kbuild-6.12.117+deb12')
            self.assertEqual(ownimage.root_binds(kdir), (
                f'/usr/src/linux-headers-{REL}',
                [(root / 'usr/src', '/usr/src'),
                 (root / 'usr/lib/linux-kbuild-6.12.117+deb12',
                  '/usr/lib/linux-kbuild-6.12.117+deb12')]))

    def test_a_piece_only_this_machine_has_is_not_enough(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp).resolve()
            kdir = unpacked(root, common=False, kbuild=False)
            (kdir / 'Makefile').write_text('include /usr/share/dpkg/default.mk\n')
            (kdir / 'scripts').unlink()
            (kdir / 'scripts').symlink_to('/usr/lib/linux-kbuild-6.12.117+deb12/scripts')
            with self.assertRaisesRegex(UsageError, re.escape(
                    f'needs /usr/share/dpkg/default.mk linux-kbuild-6.12.117+deb12, not '
                    f'unpacked under {root} (the module builds in a root of the kernel\'s '
                    "suite, which sees only DIR's copies: its Makefile includes /usr/share"
                    '/dpkg/default.mk; scripts -> /usr/lib/linux-kbuild-6.12.117+deb12/'
                    'scripts): unpack them there too')):
                ownimage.root_binds(kdir)

    def test_missing_kbuild_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = unpacked(Path(tmp).resolve(), kbuild=False)
            with self.assertRaisesRegex(UsageError, 'needs linux-kbuild-6.12.117'
                                        r'\+deb12, not unpacked'):
                ownimage.root_binds(kdir)

    def test_build_tree_and_its_source_keep_their_own_paths(self):
        with tempfile.TemporaryDirectory() as tmp:
            src, build = Path(tmp).resolve() / 'linux', Path(tmp).resolve() / 'build'
            (src / 'tools').mkdir(parents=True)
            build.mkdir()
            (src / 'Makefile').write_text('')
            (build / 'Makefile').write_text(f'include {src}/Makefile\n')
            (build / 'source').symlink_to(src)
            self.assertEqual(ownimage.root_binds(build),
                             (str(build), [(build, str(build)), (src, str(src))]))

    def test_a_tree_inside_another_is_bound_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp).resolve() / 'linux'
            (src / 'build').mkdir(parents=True)
            (src / 'Makefile').write_text('')
            (src / 'build/Makefile').write_text(f'include {src}/Makefile\n')
            self.assertEqual(ownimage.root_binds(src / 'build'),
                             (str(src / 'build'), [(src, str(src))]))


class ImageRootTest(unittest.TestCase):
    """kernels._image_root: image:'s module in the root debian: would use."""
    TRIXIE = 'x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0'

    def kdir(self, tmp: str, cc: str) -> Path:
        kdir = unpacked(Path(tmp).resolve())
        (kdir / '.config').write_text(f'CONFIG_CC_VERSION_TEXT="{cc}"\n')
        return kdir

    def image_root(self, cc, suites=(), pick=None):
        from gupnm.prepare import chroot
        with tempfile.TemporaryDirectory() as tmp:
            kdir = self.kdir(tmp, cc)
            with mock.patch.object(chroot, 'host_has', return_value=False), \
                    mock.patch.object(chroot, 'kernel_suites', return_value=list(suites)), \
                    mock.patch.object(chroot, 'pick_root', side_effect=pick) as picked:
                return kdir, kernels._image_root(kdir, REL), picked

    def test_this_machines_compiler_builds_here(self):
        from gupnm.prepare import chroot
        with tempfile.TemporaryDirectory() as tmp:
            kdir = self.kdir(tmp, self.TRIXIE)
            with mock.patch.object(chroot, 'host_has', return_value=True), \
                    mock.patch.object(chroot, 'pick_root') as picked:
                self.assertIsNone(kernels._image_root(kdir, REL))
            picked.assert_not_called()

    def test_the_kernels_suite_root_with_dir_bound_in(self):
        kdir, bound, picked = self.image_root(
            self.TRIXIE, ['trixie'], lambda pkg, suites: ('trixie', Path('/r')))
        picked.assert_called_once_with('gcc-14', ['trixie'])
        root = kdir.parents[2]
        self.assertEqual((bound.suite, bound.root, bound.kdir), (
            'trixie', Path('/r'), f'/usr/src/linux-headers-{REL}'))
        self.assertEqual(bound.binds[0], (root / 'usr/src', '/usr/src'))

    def test_a_compiler_no_root_provides_is_bad_input(self):
        def none(pkg, suites):
            raise UsageError(f'no Debian suite (bookworm, trixie, sid) offers {pkg}')
        with self.assertRaisesRegex(UsageError, re.escape(
                "names the compiler 'x86_64-linux-gnu-gcc-99 (Debian 99.1.0-1) 99.1.0' "
                '(CONFIG_CC_VERSION_TEXT), which this machine lacks and no build root '
                'provides (no Debian suite (bookworm, trixie, sid) offers gcc-99): ')
                + '.*--method probe'):
            self.image_root('x86_64-linux-gnu-gcc-99 (Debian 99.1.0-1) 99.1.0', [], none)

    def test_not_gcc_is_bad_input(self):
        with self.assertRaisesRegex(UsageError, 'only gcc-N is supported.*--method probe'):
            self.image_root('Debian clang version 19.1.7 (3)')

    def test_a_root_that_cannot_be_made_is_not_bad_input(self):
        def fails(pkg, suites):
            raise RunnerError('mmdebstrap trixie failed (exit 1)')
        with self.assertRaises(RunnerError) as caught:
            self.image_root(self.TRIXIE, ['trixie'], fails)
        self.assertNotIsInstance(caught.exception, UsageError)

    def test_a_build_failing_in_the_root_names_it(self):
        from gupnm.prepare import chroot
        with tempfile.TemporaryDirectory() as tmp:
            kdir = self.kdir(tmp, self.TRIXIE)
            bound = chroot.Bound('trixie', Path('/r'), '/usr/src/x', ())
            fail = RunnerError('module build failed (exit 2):\ncc1: error: bad flag')
            with mock.patch.object(kernels, '_release_of', return_value=REL), \
                    mock.patch.object(kernels, '_image_root', return_value=bound), \
                    mock.patch.object(kernels, 'build_module', side_effect=fail) as built:
                with self.assertRaisesRegex(UsageError, re.escape(
                        f'does not build against {kdir}: cc1: error: bad flag. Check that '
                        'DIR holds the headers of KERNEL (built with the compiler they '
                        'name, in the trixie root /r)')):
                    kernels._image_module(kdir.parents[2])
            self.assertIs(built.call_args.kwargs['bound'], bound)

    def test_the_summary_says_where_it_was_built(self):
        from gupnm.prepare import chroot
        with tempfile.TemporaryDirectory() as tmp:
            kdir = self.kdir(tmp, self.TRIXIE)
            bound = chroot.Bound('trixie', Path('/r'), '/usr/src/x', ())
            with mock.patch.object(kernels, '_release_of', return_value=REL), \
                    mock.patch.object(kernels, '_image_root', return_value=bound), \
                    mock.patch.object(kernels, 'build_module', return_value=Path('/m.ko')):
                self.assertEqual(kernels._image_module(kdir.parents[2]), (
                    REL, Path('/m.ko'), {'compiler': self.TRIXIE,
                                         'build_root': 'trixie (/r)',
                                         'gup_test': kernels.GUP_TEST_RUNNERS},
                    kdir / '.config'))


if __name__ == '__main__':
    unittest.main()
