"""Unit tests for gupnm.kernels (specs, what a kernel needs) and gupnm.debian.

apt-cache, make, gcc and modinfo never run: subprocess and host.run are mocked.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import debian, kernels, source  # noqa: E402
from gupnm.host import REPO, RunnerError, UsageError  # noqa: E402


class ParseSpecTest(unittest.TestCase):

    VALID = {
        'debian:6.12': ('debian', ['6.12']),
        'debian:6.1': ('debian', ['6.1']),
        'debian:6.12.117+deb12-amd64': ('debian', ['6.12.117+deb12-amd64']),
        'debian:6.1.0-57-amd64': ('debian', ['6.1.0-57-amd64']),
        'source:debian-6.12': ('source', ['debian-6.12', 'all']),
        'source:debian-6.12:all': ('source', ['debian-6.12', 'all']),
        'source:debian-6.12:nofix': ('source', ['debian-6.12', 'nofix']),
        'source:debian-6.12:none': ('source', ['debian-6.12', 'none']),
        'source:/src/linux': ('source', ['/src/linux', 'all']),
        'source:~/linux:nofix': ('source', ['~/linux', 'nofix']),
        'image:/boot/vmlinuz-6.1.0-57-amd64:/usr/src/linux-headers-6.1.0-57-amd64':
            ('image', ['/boot/vmlinuz-6.1.0-57-amd64', '/usr/src/linux-headers-6.1.0-57-amd64']),
        'image:build/arch/x86/boot/bzImage:build': ('image', ['build/arch/x86/boot/bzImage', 'build']),
    }
    BAD = ['', 'debian', 'debian:', 'source', 'source:', 'image', 'image:', 'image:/k',
           'image:/k:', 'image::/d', 'image:/k:/d:/x', 'Debian:6.12', 'deb:6.12', '6.12',
           'kernel:6.12', 'source:debian-6.12:fix', 'source:debian-6.12:ALL',
           'source:debian-6.12:nofix:extra', ':6.12']

    def test_valid(self):
        for spec, want in self.VALID.items():
            with self.subTest(spec=spec):
                self.assertEqual(kernels.parse_spec(spec), want)

    def test_bad(self):
        for spec in self.BAD:
            with self.subTest(spec=spec):
                with self.assertRaises(UsageError):
                    kernels.parse_spec(spec)

    def test_messages(self):
        with self.assertRaisesRegex(UsageError, r"'fix' in 'source:x:fix' is not a patch "
                                                r"selection: all, nofix, none"):
            kernels.parse_spec('source:x:fix')
        with self.assertRaisesRegex(UsageError, r"bad kernel spec 'image:/k': use debian:6.12"):
            kernels.parse_spec('image:/k')

    def test_usage_error_is_a_runner_error(self):
        # cli.main turns UsageError into exit 2, other RunnerErrors into 3.
        self.assertTrue(issubclass(UsageError, RunnerError))

    def test_selections_match_source(self):
        for sel in source.SELECTIONS:
            self.assertEqual(kernels.parse_spec(f'source:t:{sel}'), ('source', ['t', sel]))

    # Regression test (fixed bug): kernels.py parse_spec accepts an empty TREE: 'source::nofix' gives
    # ('source', ['', 'nofix']) while debian: and image: reject empty parts;
    # source.resolve_base('') then resolves '' to the current directory.
    def test_empty_source_tree_rejected(self):
        with self.assertRaises(UsageError):
            kernels.parse_spec('source::nofix')


class PrepareTest(unittest.TestCase):
    """prepare() wiring, with every download and build mocked."""

    def test_debian_debug_variant_refused_before_download(self):
        with mock.patch.object(debian, 'fetch') as fetch:
            with self.assertRaisesRegex(RunnerError, 'debug config needs a source kernel'):
                kernels.prepare('debian:6.12', variant='debug')
        fetch.assert_not_called()

    def test_bad_spec(self):
        with self.assertRaises(UsageError):
            kernels.prepare('bogus')

    def test_image_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(UsageError, 'does not exist'):
                kernels.prepare(f'image:{tmp}/nonexistent:{tmp}')

    def test_image_dir_without_makefile_or_module(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'bzImage').write_bytes(b'x')
            (Path(tmp) / 'mods').mkdir()
            with self.assertRaisesRegex(RunnerError, 'neither a kernel build/headers directory'):
                kernels.prepare(f'image:{tmp}/bzImage:{tmp}/mods')

    def test_image_module_without_vermagic(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'bzImage').write_bytes(b'x')
            ko = Path(tmp) / 'mods/lib/modules/6.1/extra/test_gup_fast.ko'
            ko.parent.mkdir(parents=True)
            ko.write_bytes(b'\x7fELF')
            done = subprocess.CompletedProcess(['modinfo'], 0, stdout='', stderr='')
            with mock.patch.object(kernels.subprocess, 'run', return_value=done) as run:
                with self.assertRaisesRegex(RunnerError, 'cannot read the vermagic'):
                    kernels.prepare(f'image:{tmp}/bzImage:{tmp}/mods')
            self.assertEqual(run.call_args.args[0], ['modinfo', '-F', 'vermagic', str(ko)])

    def _source_kernel(self, tree: Path, module):
        return source.SourceKernel(release='6.12.117+', image=tree / 'build/vmlinux', module=module,
                                   build=tree / 'build', tree=tree / 'src', base=Path('/base'),
                                   base_commit='71c7a458b86e', patches=['0001.patch'],
                                   variant='default')

    def test_source_with_patches_runs_through_run_vmtests(self):
        tree = Path('/k')
        k = self._source_kernel(tree, tree / 'build/lib/test_gup_fast.ko')
        with mock.patch.object(source, 'prepare', return_value=k) as sp, \
                mock.patch.object(kernels, 'build_module') as bm, \
                mock.patch.object(kernels, 'build_selftest', return_value=Path('/bin/t')) as bs:
            prep = kernels.prepare('source:debian-6.12:nofix')
        sp.assert_called_once_with('debian-6.12', 'nofix', 'default')
        bm.assert_not_called()                      # the in-tree module is used
        bs.assert_called_once_with(tree / 'src' / kernels.SELFTEST, tree / 'src', tree / 'src')
        self.assertEqual(prep.run_vmtests, tree / 'src/tools/testing/selftests/mm/run_vmtests.sh')
        self.assertEqual((prep.spec, prep.release, prep.image, prep.module, prep.test_binary),
                         ('source:debian-6.12:nofix', '6.12.117+', tree / 'build/vmlinux',
                          tree / 'build/lib/test_gup_fast.ko', Path('/bin/t')))
        self.assertEqual(prep.source['selection'], 'nofix')
        self.assertEqual(prep.source['config'], 'default')

    def test_source_without_patches_builds_module_out_of_tree(self):
        tree = Path('/k')
        k = self._source_kernel(tree, None)
        with mock.patch.object(source, 'prepare', return_value=k), \
                mock.patch.object(kernels, 'build_module', return_value=Path('/m.ko')) as bm, \
                mock.patch.object(kernels, 'build_selftest', return_value=Path('/bin/t')) as bs:
            prep = kernels.prepare('source:debian-6.12:none', variant='debug')
        bm.assert_called_once_with(tree / 'build', '6.12.117+')
        bs.assert_called_once_with(REPO / kernels.SELFTEST, REPO, tree / 'src')
        self.assertIsNone(prep.run_vmtests)
        self.assertEqual(prep.module, Path('/m.ko'))
        self.assertEqual(prep.source['config'], 'debug')


class BuildTest(unittest.TestCase):
    """build_module / build_selftest / _release_of with make and gcc mocked."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-kernels-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        p = mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.tmp / 'cache')})
        p.start()
        self.addCleanup(p.stop)
        p = mock.patch.object(kernels, 'progress')
        p.start()
        self.addCleanup(p.stop)

    def test_build_module(self):
        def fake_run(cmd, **kw):
            out = Path(cmd[2])
            out.mkdir(parents=True, exist_ok=True)
            (out / 'test_gup_fast.ko').write_bytes(b'\x7fELF')
            return ''

        with mock.patch.object(kernels, 'run', side_effect=fake_run) as run:
            ko = kernels.build_module(Path('/hdrs'), '6.1.0-57-amd64')
            self.assertEqual(ko, self.tmp / 'cache/modules/6.1.0-57-amd64/test_gup_fast.ko')
            cmd = run.call_args.args[0]
            self.assertEqual(cmd, [REPO / 'oot/build-module.sh', Path('/hdrs'), ko.parent, 'W=1'])
            self.assertEqual(kernels.build_module(Path('/hdrs'), '6.1.0-57-amd64'), ko)
            self.assertEqual(run.call_count, 1)     # same inputs: cached

    def test_build_module_left_nothing(self):
        with mock.patch.object(kernels, 'run', return_value=''):
            with self.assertRaisesRegex(RunnerError, 'module build left no'):
                kernels.build_module(Path('/hdrs'), 'r')

    def _selftest_tree(self):
        src = self.tmp / 'gup_null_mapping.c'
        src.write_text('int main(void) { return 0; }\n')
        (self.tmp / 'inc/lib').mkdir(parents=True)
        (self.tmp / 'inc/lib/test_gup_fast_uapi.h').write_text('/* uapi */\n')
        (self.tmp / 'tree/tools/testing/selftests/mm').mkdir(parents=True)
        (self.tmp / 'tree/tools/testing/selftests/kselftest.h').write_text('/* ksft */\n')
        return src, self.tmp / 'inc', self.tmp / 'tree'

    def test_build_selftest(self):
        src, inc, tree = self._selftest_tree()

        def fake_gcc(cmd, **kw):
            Path(cmd[cmd.index('-o') + 1]).write_bytes(b'\x7fELF')
            return ''

        with mock.patch.object(kernels, 'run', side_effect=fake_gcc) as run:
            out = kernels.build_selftest(src, inc, tree)
            self.assertTrue(out.exists())
            self.assertEqual(out.name, 'gup_null_mapping')
            cmd = run.call_args.args[0]
            self.assertEqual(cmd[0], 'gcc')
            for flag in ('-static', '-Werror', '-Wall', '-Wextra'):
                self.assertIn(flag, cmd)
            self.assertEqual(kernels.build_selftest(src, inc, tree), out)
            self.assertEqual(run.call_count, 1)     # cached by content
            (inc / 'lib/test_gup_fast_uapi.h').write_text('/* changed */\n')
            self.assertNotEqual(kernels.build_selftest(src, inc, tree), out)
            self.assertEqual(run.call_count, 2)

    def test_build_selftest_needs_kselftest_h(self):
        src, inc, tree = self._selftest_tree()
        with mock.patch.object(kernels, 'run') as run:
            with self.assertRaisesRegex(RunnerError, 'kselftest.h missing'):
                kernels.build_selftest(src, inc, self.tmp / 'inc')
        run.assert_not_called()

    def test_release_of(self):
        kdir = self.tmp / 'build'
        (kdir / 'include/config').mkdir(parents=True)
        with mock.patch.object(kernels, 'run', return_value='make: Entering\n6.12.117+\n') as run:
            self.assertEqual(kernels._release_of(kdir), '6.12.117+')
            self.assertEqual(run.call_args.args[0], ['make', '-s', '-C', kdir, 'kernelrelease'])
            (kdir / 'include/config/kernel.release').write_text('6.12.117+deb12-amd64\n')
            self.assertEqual(kernels._release_of(kdir), '6.12.117+deb12-amd64')
            self.assertEqual(run.call_count, 1)


# --- gupnm.debian --------------------------------------------------------------

# What `apt-cache search --names-only` could see on a Debian 12 host with
# backports and security: a few flavours and package kinds beside the wanted one.
APT_PACKAGES = [
    'linux-image-6.1.0-9-amd64-unsigned',
    'linux-image-6.1.0-57-amd64-unsigned',
    'linux-image-6.1.0-57-rt-amd64-unsigned',
    'linux-image-6.1.0-57-cloud-amd64-unsigned',
    'linux-image-6.1.0-57-amd64',
    'linux-image-6.1.0-57-amd64-dbg',
    'linux-image-6.10.6+bpo-amd64-unsigned',
    'linux-image-6.12.9+bpo-amd64-unsigned',
    'linux-image-6.12.10+bpo-amd64-unsigned',
    'linux-image-6.12.10+bpo-rt-amd64-unsigned',
    'linux-image-6.12.117+deb12-amd64-unsigned',
    'linux-image-6.12.117+deb12-rt-amd64-unsigned',
    'linux-image-6.12.117+deb12-cloud-amd64-unsigned',
    'linux-image-6.12.117+deb12-amd64',
    'linux-image-amd64',
    'linux-image-cloud-amd64',
    'linux-headers-6.12.117+deb12-amd64',
    'linux-headers-6.12.117+deb12-common',
]


def fake_apt_cache(packages=APT_PACKAGES):
    """A subprocess.run stand-in for `apt-cache search --names-only REGEX`.

    apt matches case-insensitively with POSIX extended regexes; for these
    patterns Python's re agrees.
    """
    calls = []

    def run(cmd, **kw):
        calls.append(cmd)
        assert cmd[:3] == ['apt-cache', 'search', '--names-only'], cmd
        pattern = re.compile(cmd[3], re.I)
        out = ''.join(f'{p} - Linux kernel image (unsigned)\n' for p in packages
                      if pattern.search(p))
        return subprocess.CompletedProcess(cmd, 0, stdout=out, stderr='')

    return run, calls


class ReleaseCandidatesTest(unittest.TestCase):

    def candidates(self, spec, packages=APT_PACKAGES):
        run, calls = fake_apt_cache(packages)
        with mock.patch.object(debian.subprocess, 'run', side_effect=run):
            return debian.release_candidates(spec), calls

    def test_series_6_12(self):
        got, calls = self.candidates('6.12')
        # Numeric order, not text order: 6.12.9 < 6.12.10 < 6.12.117.
        self.assertEqual(got, ['6.12.9+bpo-amd64', '6.12.10+bpo-amd64', '6.12.117+deb12-amd64'])
        self.assertEqual(len(calls), 1)

    def test_series_6_1_does_not_match_6_10_or_6_12(self):
        got, _ = self.candidates('6.1')
        self.assertEqual(got, ['6.1.0-9-amd64', '6.1.0-57-amd64'])

    def test_series_6_10(self):
        self.assertEqual(self.candidates('6.10')[0], ['6.10.6+bpo-amd64'])

    def test_no_rt_or_cloud(self):
        for spec in ('6.1', '6.12'):
            for rel in self.candidates(spec)[0]:
                with self.subTest(rel=rel):
                    self.assertNotRegex(rel, r'-(rt|cloud)-')
                    self.assertTrue(rel.endswith('-amd64'))

    def test_release(self):
        for spec in ('6.12.117+deb12-amd64', '6.12.117+deb12'):
            with self.subTest(spec=spec):
                self.assertEqual(self.candidates(spec)[0], ['6.12.117+deb12-amd64'])
        self.assertEqual(self.candidates('6.1.0-57')[0], ['6.1.0-57-amd64'])
        self.assertEqual(self.candidates('6.1.0-5')[0], [])

    def test_release_pattern_is_exact(self):
        _, calls = self.candidates('6.12.117+deb12-amd64')
        pattern = re.compile(calls[0][3])
        self.assertTrue(pattern.search('linux-image-6.12.117+deb12-amd64-unsigned'))
        # '+' and '.' are literal.
        self.assertFalse(pattern.search('linux-image-6.12.1177deb12-amd64-unsigned'))
        self.assertFalse(pattern.search('linux-image-6x12.117+deb12-amd64-unsigned'))
        self.assertFalse(pattern.search('linux-image-6.12.117+deb12-amd64-unsigned-dbg'))

    def test_numeric_order_regardless_of_apt_order(self):
        pkgs = ['linux-image-6.12.10+bpo-amd64-unsigned', 'linux-image-6.12.100+bpo-amd64-unsigned',
                'linux-image-6.12.9+bpo-amd64-unsigned', 'linux-image-6.12.11+bpo-amd64-unsigned']
        self.assertEqual(self.candidates('6.12', pkgs)[0],
                         ['6.12.9+bpo-amd64', '6.12.10+bpo-amd64', '6.12.11+bpo-amd64',
                          '6.12.100+bpo-amd64'])

    def test_nothing_found(self):
        self.assertEqual(self.candidates('7.0')[0], [])
        self.assertEqual(self.candidates('6.12', [])[0], [])

    def test_bad_specs_never_reach_apt(self):
        for spec in ('', 'latest', '6', '6.', 'v6.12', '6.12 x', '6.12;reboot', '-6.12', '6.12:x',
                     '6.12/..'):
            with self.subTest(spec=spec):
                run, calls = fake_apt_cache()
                with mock.patch.object(debian.subprocess, 'run', side_effect=run):
                    with self.assertRaises(UsageError):
                        debian.release_candidates(spec)
                self.assertEqual(calls, [])


class DependsTest(unittest.TestCase):

    def test_depends_keeps_kernel_build_packages(self):
        out = ('linux-headers-6.12.117+deb12-amd64\n'
               '  Depends: linux-headers-6.12.117+deb12-common\n'
               '  Depends: linux-kbuild-6.12.117+deb12\n'
               ' |Depends: linux-compiler-gcc-12-x86\n'
               '  Depends: gcc-12\n'
               '  Depends: libc6\n'
               '  Recommends: linux-headers-extra\n')
        done = subprocess.CompletedProcess([], 0, stdout=out, stderr='')
        with mock.patch.object(debian.subprocess, 'run', return_value=done) as run:
            got = debian._depends('linux-headers-6.12.117+deb12-amd64')
        self.assertEqual(run.call_args.args[0],
                         ['apt-cache', 'depends', 'linux-headers-6.12.117+deb12-amd64'])
        self.assertEqual(got, ['linux-headers-6.12.117+deb12-common',
                               'linux-kbuild-6.12.117+deb12', 'linux-compiler-gcc-12-x86'])


class FetchTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-debian-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        p = mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.tmp)})
        p.start()
        self.addCleanup(p.stop)

    def test_no_package(self):
        with mock.patch.object(debian, '_apt_names', return_value=[]):
            with self.assertRaisesRegex(UsageError, "no Debian kernel package matches '6.13'"):
                debian.fetch('6.13')

    def test_newest_is_fetched_under_a_lock(self):
        run, _ = fake_apt_cache()
        with mock.patch.object(debian.subprocess, 'run', side_effect=run), \
                mock.patch.object(debian, '_fetch_locked', return_value='K') as fl:
            self.assertEqual(debian.fetch('6.12'), 'K')
        fl.assert_called_once_with('6.12.117+deb12-amd64')
        self.assertTrue((self.tmp / 'locks' / 'debian-6.12.117+deb12-amd64.lock').exists())

    def test_cached_unpack_is_used(self):
        rel = '6.1.0-57-amd64'
        root = self.tmp / 'debian' / rel
        (root / 'boot').mkdir(parents=True)
        (root / 'boot' / f'vmlinuz-{rel}').write_bytes(b'MZ')
        kdir = root / 'usr/src' / f'linux-headers-{rel}'
        kdir.mkdir(parents=True)
        (kdir / 'Makefile').write_text(f'include {root}/usr/src/linux-headers-6.1.0-57-common/Makefile\n')
        (root / '.gupnm-unpacked').write_text(f'linux-image-{rel}-unsigned\nlinux-headers-{rel}\n')
        with mock.patch.object(debian, 'run') as run, \
                mock.patch.object(debian.subprocess, 'run') as sub:
            k = debian._fetch_locked(rel)
        run.assert_not_called()
        sub.assert_not_called()
        self.assertEqual((k.release, k.image, k.kdir, k.root),
                         (rel, root / 'boot' / f'vmlinuz-{rel}', kdir, root))
        self.assertEqual(k.packages, [f'linux-image-{rel}-unsigned', f'linux-headers-{rel}'])

    def test_cached_unpack_incomplete(self):
        rel = '6.1.0-57-amd64'
        root = self.tmp / 'debian' / rel
        root.mkdir(parents=True)
        (root / '.gupnm-unpacked').write_text('x\n')
        with self.assertRaisesRegex(RunnerError, f'vmlinuz-{rel} missing after unpacking'):
            debian._fetch_locked(rel)


class FixHeadersTest(unittest.TestCase):
    """_fix_headers: Debian's headers Makefile is one include of an absolute /usr/src path."""

    REL = '6.12.117+deb12-amd64'

    def make_tree(self, root: Path, text: str) -> Path:
        makefile = root / 'usr/src' / f'linux-headers-{self.REL}' / 'Makefile'
        makefile.parent.mkdir(parents=True)
        makefile.write_text(text)
        return makefile

    def test_include_repointed(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / 'debian' / self.REL
            mf = self.make_tree(root, 'include /usr/src/linux-headers-6.12.117+deb12-common/Makefile\n')
            debian._fix_headers(root, self.REL)
            self.assertEqual(mf.read_text(), f'include {root}/usr/src/'
                                             'linux-headers-6.12.117+deb12-common/Makefile\n')
            # Idempotent: a second run changes nothing.
            debian._fix_headers(root, self.REL)
            self.assertEqual(mf.read_text(), f'include {root}/usr/src/'
                                             'linux-headers-6.12.117+deb12-common/Makefile\n')

    def test_only_include_lines_at_line_start(self):
        text = ('# generated\n'
                'MAKEFLAGS += --no-print-directory\n'
                'VAR := /usr/src/keep\n'
                '-include /usr/src/optional.mk\n'
                '  include /usr/src/indented.mk\n'
                'include /usr/src/linux-headers-6.12.117+deb12-common/Makefile\n')
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            mf = self.make_tree(root, text)
            debian._fix_headers(root, self.REL)
            want = text.replace('\ninclude /usr/src/', f'\ninclude {root}/usr/src/')
            self.assertEqual(mf.read_text(), want)

    def test_missing_makefile(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaisesRegex(RunnerError, f'linux-headers-{re.escape(self.REL)} has no Makefile'):
                debian._fix_headers(Path(tmp), self.REL)

    # Regression test (fixed bug): debian.py _fix_headers passes the cache path as the *replacement*
    # of re.sub(), which interprets backslashes: with GUPNM_CACHE=/tmp/c\1
    # (or any '\' in the path) it raises re.error ("invalid group reference")
    # or writes a wrong include; a lambda replacement would take it literally.
    def test_backslash_in_cache_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / 'cache\\1' / self.REL
            mf = self.make_tree(root, 'include /usr/src/linux-headers-6.12.117+deb12-common/Makefile\n')
            debian._fix_headers(root, self.REL)
            self.assertEqual(mf.read_text(), f'include {root}/usr/src/'
                                             'linux-headers-6.12.117+deb12-common/Makefile\n')



class ReleaseOfTest(unittest.TestCase):
    """image:KERNEL:HEADERS takes uname -r from UTS_RELEASE (Debian's layout)."""

    def test_debian_headers_use_utsrelease(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = Path(tmp)
            (kdir / 'include/config').mkdir(parents=True)
            (kdir / 'include/generated').mkdir(parents=True)
            (kdir / 'include/config/kernel.release').write_text('6.1.192\n')
            (kdir / 'include/generated/utsrelease.h').write_text(
                '#define UTS_RELEASE "6.1.0-57-amd64"\n')
            self.assertEqual(kernels._release_of(kdir), '6.1.0-57-amd64')

    def test_kernel_release_file_as_fallback(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = Path(tmp)
            (kdir / 'include/config').mkdir(parents=True)
            (kdir / 'include/config/kernel.release').write_text('6.12.117+\n')
            self.assertEqual(kernels._release_of(kdir), '6.12.117+')



class SeriesKeyTest(unittest.TestCase):
    """The generated series is cached by the state of its inputs."""

    def key(self, repo):
        with mock.patch.object(source, 'REPO', repo), \
                mock.patch.object(source, '_git', return_value='0' * 40):
            return source._series_key(Path('/base'))

    def test_key_follows_inputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            for name in ('lib/test_gup_fast.c', 'tools/t.c', 'patchgen/edits/03.diff',
                         'runner/gupnm/x.py'):
                (repo / name).parent.mkdir(parents=True, exist_ok=True)
                (repo / name).write_text('a\n')
            first = self.key(repo)
            self.assertEqual(self.key(repo), first)
            (repo / 'runner/gupnm/x.py').write_text('b\n')      # not an input
            self.assertEqual(self.key(repo), first)
            (repo / 'patchgen/edits/03.diff').write_text('b\n')
            self.assertNotEqual(self.key(repo), first)


if __name__ == '__main__':
    unittest.main()
