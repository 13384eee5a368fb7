"""Unit tests for gupnm.prepare.kernels (specs, what a kernel needs) and gupnm.prepare.debian.

apt-cache, make, gcc and modinfo never run: subprocess and host.run are mocked.
"""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import debian, kernels, source  # noqa: E402
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
                                                r"selection: all, nofix, wrongfix, anonslow, none"):
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
            with self.assertRaisesRegex(RunnerError, '--config debug needs a kernel built from source'):
                kernels.prepare('debian:6.12', variant='debug')
        fetch.assert_not_called()

    def test_bad_spec(self):
        with self.assertRaises(UsageError):
            kernels.prepare('bogus')

    def _debian_kernel(self):
        offered = debian.Offered('6.12.118+deb12-amd64', 'amd64',
                                 'linux-image-6.12.118+deb12-amd64-unsigned',
                                 '6.12.118-1~deb12u1', ['bookworm-security'], 'unsigned', True)
        return debian.DebianKernel('6.12.118+deb12-amd64', Path('/r/boot/vmlinuz'),
                                   Path('/r/usr/src/h'), Path('/r'), ['p=1'], offered, [])

    def test_debian_builds_the_test_beside_the_fetch_and_drops_the_debs(self):
        """The test and the benchmark need nothing of the kernel: they build
        while it is fetched; the .debs go once the module is built."""
        order = []
        k = self._debian_kernel()
        with mock.patch.object(debian, 'fetch', side_effect=lambda n: order.append('fetch') or k), \
                mock.patch.object(debian, 'drop_debs', side_effect=lambda k: order.append('drop')), \
                mock.patch.object(kernels, 'build_module',
                                  side_effect=lambda *a: order.append('module') or Path('/m.ko')), \
                mock.patch.object(kernels, 'build_selftest', return_value=Path('/bin/t')) as bs, \
                mock.patch.object(kernels, 'build_bench') as bb, \
                mock.patch.object(kernels.vmlinux, 'uncompressed', return_value=Path('/vmlinux')):
            prep = kernels.prepare('debian:bookworm-security')
        self.assertEqual(order, ['fetch', 'module', 'drop'])
        bs.assert_called_once_with(REPO / kernels.SELFTEST)
        bb.assert_called_once_with()
        self.assertEqual((prep.image, prep.module, prep.test_binary),
                         (Path('/vmlinux'), Path('/m.ko'), Path('/bin/t')))
        self.assertEqual(prep.source['suites'], ['bookworm-security'])

    def test_debian_test_build_failure_is_raised(self):
        k = self._debian_kernel()
        with mock.patch.object(debian, 'fetch', return_value=k), \
                mock.patch.object(debian, 'drop_debs'), \
                mock.patch.object(kernels, 'build_module', return_value=Path('/m.ko')), \
                mock.patch.object(kernels, 'build_selftest', side_effect=RunnerError('cc1: x')), \
                mock.patch.object(kernels, 'build_bench'), \
                mock.patch.object(kernels.vmlinux, 'uncompressed', return_value=None):
            with self.assertRaisesRegex(RunnerError, 'cc1: x'):
                kernels.prepare('debian:bookworm-security')

    def test_start_fetch_only_for_debian_and_silent_on_errors(self):
        self.assertIsNone(kernels.start_fetch('source:debian-6.12:all'))
        with mock.patch.object(debian, 'fetch', side_effect=RunnerError('no network')) as f:
            thread = kernels.start_fetch('debian:bookworm-security', 'arm64')
            thread.join(10)
        self.assertFalse(thread.is_alive())
        f.assert_called_once_with('bookworm-security', 'arm64')

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
            ko = Path(tmp) / 'mods/lib/modules/6.1/extra/gup_test.ko'
            ko.parent.mkdir(parents=True)
            ko.write_bytes(b'\x7fELF')
            done = subprocess.CompletedProcess(['modinfo'], 0, stdout='', stderr='')
            with mock.patch.object(kernels.subprocess, 'run', return_value=done) as run:
                with self.assertRaisesRegex(RunnerError, 'cannot read the vermagic'):
                    kernels.prepare(f'image:{tmp}/bzImage:{tmp}/mods')
            self.assertEqual(run.call_args.args[0], ['modinfo', '-F', 'vermagic', str(ko)])

    def test_image_with_gup_test_built_in_loads_no_module(self):
        # A build whose .config has CONFIG_GUP_TEST=y (the tree's own gup_test,
        # of whichever revision): no module is built, the report says built in.
        with tempfile.TemporaryDirectory() as tmp:
            kdir = Path(tmp) / 'build'
            kdir.mkdir()
            (kdir / 'vmlinux').write_bytes(b'x')
            (kdir / 'Makefile').write_text('# kbuild\n')
            for config, module in (('CONFIG_GUP_TEST=y\n', None), ('# CONFIG_GUP_TEST is not set\n', Path('/m.ko'))):
                (kdir / '.config').write_text(config)
                with mock.patch.object(kernels.ownimage, 'find_kdir', return_value=kdir), \
                        mock.patch.object(kernels.ownimage, 'kbuild_dir', return_value=kdir), \
                        mock.patch.object(kernels, '_release_of', return_value='7.3.4+'), \
                        mock.patch.object(kernels, '_image_root', return_value=None), \
                        mock.patch.object(kernels.debian, 'cc_version_text', return_value='gcc'), \
                        mock.patch.object(kernels, 'build_module', return_value=Path('/m.ko')) as bm, \
                        mock.patch.object(kernels, 'build_selftest', return_value=Path('/t')), \
                        mock.patch.object(kernels.vmlinux, 'uncompressed', return_value=None):
                    prep = kernels.prepare(f'image:{kdir}/vmlinux:{kdir}')
                self.assertEqual(prep.module, module)
                self.assertEqual(bm.called, module is not None)
                self.assertEqual(kernels.gup_test_of(prep)['kind'],
                                 kernels.GUP_TEST_BUILTIN if module is None else kernels.GUP_TEST_RUNNERS)

    def test_a_trees_own_test_builds_against_that_trees_abi(self):
        # A tree carrying another revision of the series (v3: GUP_FAST_VERDICT
        # numbered 10) builds its test with its own mm/gup_test.h and selftest
        # files, never this checkout's generated/ ones: else it asks v4's number.
        tree = Path('/t/src')
        with mock.patch.object(kernels, '_static_build', return_value=Path('/b')) as sb:
            kernels.build_selftest(tree / kernels.SELFTEST, 'gcc', root=tree)
            kernels.build_selftest(REPO / kernels.SELFTEST, 'gcc')
        own, default = sb.call_args_list
        self.assertIn(tree / 'mm/gup_test.h', own.args[3])
        self.assertEqual(own.args[4][0], tree)
        self.assertTrue(all(str(o).startswith(str(tree)) for o in own.kwargs['objs']))
        gen = kernels.modsource.GENERATED
        self.assertIn(gen / 'mm/gup_test.h', default.args[3])
        self.assertEqual(default.args[4][0], gen)

    def _source_kernel(self, tree: Path, builtin: bool):
        return source.SourceKernel(release='6.12.117+', image=tree / 'build/vmlinux', builtin=builtin,
                                   build=tree / 'build', tree=tree / 'src', base=Path('/base'),
                                   base_commit='71c7a458b86e', patches=['0001.patch'],
                                   variant='default', commit='0123abcd',
                                   config=tree / 'build/.config')

    def test_source_with_the_test_patch_uses_the_trees_test(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            (tree / 'src' / kernels.SELFTEST).parent.mkdir(parents=True)
            (tree / 'src' / kernels.SELFTEST).write_text('/* the test patch */\n')
            k = self._source_kernel(tree, True)
            with mock.patch.object(source, 'held', return_value=contextlib.nullcontext(k)) as sp, \
                    mock.patch.object(kernels, 'build_module') as bm, \
                    mock.patch.object(kernels, 'build_selftest', return_value=Path('/bin/t')) as bs:
                prep = kernels.prepare('source:debian-7.3:nofix')
        sp.assert_called_once_with('debian-7.3', 'nofix', 'default')
        bm.assert_not_called()                      # gup_test is built in: no module
        bs.assert_called_once_with(tree / 'src' / kernels.SELFTEST, 'gcc', root=tree / 'src')
        self.assertIsNone(prep.run_vmtests)         # run directly (kselftest paths: run_vmtests)
        self.assertEqual((prep.spec, prep.release, prep.image, prep.module, prep.test_binary),
                         ('source:debian-7.3:nofix', '6.12.117+', tree / 'build/vmlinux',
                          None, Path('/bin/t')))
        self.assertEqual(prep.source['gup_test'], 'built in')
        self.assertEqual(prep.source['selection'], 'nofix')
        self.assertEqual(prep.source['config'], 'default')
        # The probe can judge the same image (probe.judge_unasked).
        self.assertEqual(prep.source['boot_image'], str(tree / 'build/vmlinux'))

    def test_source_without_the_series_gup_test_builds_it_out_of_tree(self):
        tree = Path('/k')
        k = self._source_kernel(tree, False)
        with mock.patch.object(source, 'held', return_value=contextlib.nullcontext(k)), \
                mock.patch.object(kernels, 'build_module', return_value=Path('/m.ko')) as bm, \
                mock.patch.object(kernels, 'build_selftest', return_value=Path('/bin/t')) as bs:
            prep = kernels.prepare('source:debian-6.12:none', variant='debug')
        bm.assert_called_once_with(tree / 'build', '6.12.117+')
        # The tree has no test (6.12's stable series is the fix alone): this
        # checkout's.
        bs.assert_called_once_with(REPO / kernels.SELFTEST, 'gcc')
        self.assertIsNone(prep.run_vmtests)
        self.assertEqual(prep.module, Path('/m.ko'))
        self.assertEqual(prep.source['gup_test'], "the runner's module (out of tree)")
        self.assertEqual(prep.source['config'], 'debug')


class GupTestOfTest(unittest.TestCase):
    """Which gup_test answers the test, as summary.json and the report say."""

    def prep(self, module):
        return kernels.Prepared('source:debian-7.3', '7.3.4', Path('/k/vmlinux'), module,
                                Path('/t'), None)

    def test_built_in(self):
        got = kernels.gup_test_of(self.prep(None))
        self.assertEqual((got['kind'], got['module']), ('built in', None))
        self.assertIn('7.3.4', got['why'])
        self.assertIn('no module loaded', got['why'])

    def test_the_runners_module(self):
        got = kernels.gup_test_of(self.prep(Path('/cache/m/gup_test.ko')))
        self.assertEqual((got['kind'], got['module']),
                         ("the runner's module (out of tree)", '/cache/m/gup_test.ko'))
        self.assertIn('gup_test.ko', got['why'])

    def test_the_same_words_as_the_source_and_the_command(self):
        from gupnm.prepare import command
        self.assertEqual((command.BUILTIN, command.RUNNERS),
                         (kernels.GUP_TEST_BUILTIN, kernels.GUP_TEST_RUNNERS))


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

    def _source(self):
        """gup_test_source() stands in for the script and the 7.3 tree."""
        src = self.tmp / 'src'
        src.mkdir(exist_ok=True)
        for name in ('gup_test.c', 'gup_test.h'):
            (src / name).write_text(f'/* {name} */\n')
        p = mock.patch.object(kernels, 'gup_test_source', return_value=src)
        p.start()
        self.addCleanup(p.stop)

    def test_build_module(self):
        self._source()

        def fake_run(cmd, **kw):
            out = Path(cmd[2])
            # The series' source is in place before the build starts.
            self.assertTrue((out / 'gup_test.c').exists())
            (out / 'gup_test.ko').write_bytes(b'\x7fELF')
            return ''

        with mock.patch.object(kernels, 'run', side_effect=fake_run) as run:
            ko = kernels.build_module(Path('/hdrs'), '6.1.0-57-amd64')
            self.assertEqual(ko.parent.parent, self.tmp / 'cache/modules')
            self.assertRegex(ko.parent.name, r'^6\.1\.0-57-amd64-[0-9a-f]{20}$')
            self.assertEqual(ko.name, 'gup_test.ko')
            cmd = run.call_args.args[0]
            # Built in a private directory, renamed into place.
            self.assertEqual(cmd[:2], [REPO / 'oot/build-module.sh', Path('/hdrs')])
            self.assertEqual(cmd[3:], ['W=1'])
            self.assertNotEqual(cmd[2], ko.parent)
            self.assertFalse(cmd[2].exists())
            self.assertEqual(kernels.build_module(Path('/hdrs'), '6.1.0-57-amd64'), ko)
            self.assertEqual(run.call_count, 1)     # same inputs: cached
            # Another kernel side (another build dir) with the same release: its own entry.
            other = kernels.build_module(Path('/other-hdrs'), '6.1.0-57-amd64')
            self.assertNotEqual(other, ko)
            self.assertEqual(run.call_count, 2)

    def test_module_of_headers_in_the_cache_keyed_by_their_place_in_it(self):
        """A cache copied or mounted at another path finds its modules: the
        key names the headers by their place in the cache."""
        self._source()
        names = []
        for where in ('home', 'moved'):
            cache_root = self.tmp / where
            kdir = cache_root / 'debian/k/usr/src/linux-headers-r'
            kdir.mkdir(parents=True)
            (kdir / '.config').write_text('CONFIG_X=y\n')
            with mock.patch.dict(os.environ, {'GUPNM_CACHE': str(cache_root)}), \
                    mock.patch.object(kernels, 'run',
                                      side_effect=lambda cmd, **kw: (Path(cmd[2]) / 'gup_test.ko')
                                      .write_bytes(b'\x7fELF')):
                names.append(kernels.build_module(kdir, 'r').parent.name)
        self.assertEqual(names[0], names[1])

    def test_build_module_left_nothing(self):
        self._source()
        with mock.patch.object(kernels, 'run', return_value=''):
            with self.assertRaisesRegex(RunnerError, 'module build left no'):
                kernels.build_module(Path('/hdrs'), 'r')

    def _selftest_tree(self):
        """What gup_test_source() holds for the test: its ABI header, the
        base's kselftest.h, vm_util.[ch] and uapi <linux/fs.h>."""
        src = self.tmp / 'gup_null_mapping.c'
        src.write_text('int main(void) { return 0; }\n')
        gts = self.tmp / 'gts'
        for name in ('mm/gup_test.h', 'include/uapi/linux/fs.h',
                     'tools/testing/selftests/kselftest.h',
                     'tools/testing/selftests/mm/vm_util.h',
                     'tools/testing/selftests/mm/vm_util.c',
                     'tools/testing/selftests/mm/hugepage_settings.h',
                     'tools/testing/selftests/mm/hugepage_settings.c'):
            (gts / name).parent.mkdir(parents=True, exist_ok=True)
            (gts / name).write_text(f'/* {name} */\n')
        return src, gts

    def test_build_selftest(self):
        src, gts = self._selftest_tree()

        def fake_gcc(cmd, **kw):
            Path(cmd[cmd.index('-o') + 1]).write_bytes(b'\x7fELF')
            return ''

        with mock.patch.object(kernels.modsource, 'GENERATED', gts), \
                mock.patch.object(kernels, 'run', side_effect=fake_gcc) as run:
            out = kernels.build_selftest(src)
            self.assertTrue(out.exists())
            self.assertEqual(out.name, 'gup_null_mapping')
            lib, lib2, cmd = (c.args[0] for c in run.call_args_list)
            self.assertIn(gts / 'tools/testing/selftests/mm/vm_util.c', lib)   # no -Werror
            self.assertIn(gts / 'tools/testing/selftests/mm/hugepage_settings.c', lib2)
            self.assertNotIn('-Werror', lib + lib2)
            self.assertEqual(cmd[0], 'gcc')
            for flag in ('-static', '-Werror', '-Wall', '-Wextra'):
                self.assertIn(flag, cmd)
            # the base's <linux/fs.h> before the system's
            self.assertIn(gts / 'include/uapi', cmd)
            self.assertEqual(kernels.build_selftest(src), out)
            self.assertEqual(run.call_count, 3)     # cached by content
            (gts / 'tools/testing/selftests/mm/vm_util.h').write_text('/* changed */\n')
            self.assertNotEqual(kernels.build_selftest(src), out)
            self.assertEqual(run.call_count, 6)

    def test_build_selftest_needs_vm_util(self):
        src, gts = self._selftest_tree()
        (gts / 'tools/testing/selftests/mm/vm_util.c').unlink()
        with mock.patch.object(kernels.modsource, 'GENERATED', gts), \
                mock.patch.object(kernels, 'run') as run:
            with self.assertRaisesRegex(RunnerError, 'vm_util.c missing'):
                kernels.build_selftest(src)
        run.assert_not_called()

    def test_release_of(self):
        kdir = self.tmp / 'build'
        (kdir / 'include/config').mkdir(parents=True)
        with mock.patch.object(kernels, 'run', return_value='make: Entering\n6.12.117+\n') as run:
            self.assertEqual(kernels._release_of(kdir), '6.12.117+')
            self.assertEqual(run.call_args.args[0], ['make', '-s', '--no-print-directory',
                                                   '-C', kdir, 'kernelrelease'])
            (kdir / 'include/config/kernel.release').write_text('6.12.117+deb12-amd64\n')
            self.assertEqual(kernels._release_of(kdir), '6.12.117+deb12-amd64')
            self.assertEqual(run.call_count, 1)


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
            return source._series_key(Path('/base'), 'upstream')

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


class SelectionTest(unittest.TestCase):
    """What each source selection makes of mm/gup.c and of the series."""

    GUP = ("\tmapping = READ_ONCE(folio->mapping);\n\n"
           "\tif (!mapping)\n\t\treturn !reject_file_backed;\n\n"
           "\tmapping_flags = (unsigned long)mapping & PAGE_MAPPING_FLAGS;\n")

    def test_mutations(self):
        self.assertEqual(source.mutate_gup(self.GUP, "all"), self.GUP)
        self.assertIn("\tif (!mapping)\n\t\treturn false;\n",
                      source.mutate_gup(self.GUP, "nofix"))
        self.assertIn("\tif (!mapping)\n\t\treturn true;\n",
                      source.mutate_gup(self.GUP, "wrongfix"))
        self.assertNotIn("reject_file_backed;\n\n\tmapping_flags",
                         source.mutate_gup(self.GUP, "wrongfix"))

    def test_unfixed_tree(self):
        unfixed = source.mutate_gup(self.GUP, "nofix")
        self.assertEqual(source.mutate_gup(unfixed, "nofix"), unfixed)
        with self.assertRaisesRegex(RunnerError, "cannot make the 'wrongfix' kernel"):
            source.mutate_gup(unfixed, "wrongfix")

    # The 6.12 spelling (PAGE_) and 7.x's (FOLIO_), the lines around them
    # as in gup_fast_folio_allowed().
    ANON = ("\t/* Anonymous folios pose no problem. */\n"
            "\tmapping_flags = (unsigned long)mapping & {p}_MAPPING_FLAGS;\n"
            "\tif (mapping_flags)\n\t\treturn mapping_flags & {p}_MAPPING_ANON;\n\n"
            "\t/*\n\t * At this point, we know the mapping is non-null ...\n")

    def test_anonslow_refuses_anon_and_keeps_the_fix(self):
        for prefix in ("PAGE", "FOLIO"):
            with self.subTest(prefix=prefix):
                text = self.GUP + self.ANON.format(p=prefix)
                out = source.mutate_gup(text, "anonslow")
                self.assertIn("\tif (mapping_flags)\n\t\treturn false;\n\n", out)
                self.assertNotIn("_MAPPING_ANON;", out)
                self.assertIn("\tif (!mapping)\n\t\treturn !reject_file_backed;\n", out)
                # Nothing else changed: one line of the file.
                self.assertEqual(len(out.splitlines()), len(text.splitlines()))
                self.assertEqual(sum(a != b for a, b in zip(out.splitlines(),
                                                            text.splitlines())), 1)

    def test_anonslow_needs_the_fix(self):
        unfixed = source.mutate_gup(self.GUP, "nofix") + self.ANON.format(p="FOLIO")
        with self.assertRaisesRegex(RunnerError, "'anonslow' kernel needs the fix"):
            source.mutate_gup(unfixed, "anonslow")

    def test_anonslow_needs_the_anon_line(self):
        for text in (self.GUP, self.GUP + self.ANON.format(p="PAGE") * 2,
                     self.GUP + self.ANON.format(p="PAGE").replace(
                         "mapping_flags & PAGE_MAPPING_ANON", "folio_test_anon(folio)")):
            with self.subTest(text=text), \
                    self.assertRaisesRegex(RunnerError,
                                           "cannot make the 'anonslow' kernel"):
                source.mutate_gup(text, "anonslow")

    def test_nofix_drops_the_fix_patch_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            (d / "0001-fix.patch").write_text("x\ndiff --git a/mm/gup.c b/mm/gup.c\n"
                                              "-\t\treturn false;\n"
                                              "+\t\treturn !reject_file_backed;\n")
            (d / "0002-lib.patch").write_text("x\ndiff --git a/lib/Makefile b/lib/Makefile\n")
            # v4's GUP_FAST_VERDICT patch changes mm/gup.c too: not the fix.
            (d / "0003-verdict.patch").write_text(
                "x\ndiff --git a/mm/gup.c b/mm/gup.c\n+long pin_user_pages_fast_only(\n")
            (d / "series").write_text("0001-fix.patch\n0002-lib.patch\n0003-verdict.patch\n")
            names = lambda sel: [p.name for p in source.series(sel, d)]
            every = ["0001-fix.patch", "0002-lib.patch", "0003-verdict.patch"]
            self.assertEqual(names("all"), every)
            self.assertEqual(names("wrongfix"), every)
            self.assertEqual(names("anonslow"), every)
            self.assertEqual(names("nofix"), ["0002-lib.patch", "0003-verdict.patch"])
            self.assertEqual(names("none"), [])

    def test_series_of_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            mk = Path(tmp) / "Makefile"
            mk.write_text("VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 118\n")
            self.assertEqual(source.series_of_tree(Path(tmp)), "stable-6.12")
            mk.write_text("VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\n")
            self.assertEqual(source.series_of_tree(Path(tmp)), "upstream")

    def test_pinned_bases(self):
        self.assertEqual(source.pinned("stable-6.12")[0], "linux-source-6.12")
        self.assertEqual(source.pinned("upstream")[0], "linux-source-7.3")
