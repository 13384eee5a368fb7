"""Unit tests for gupnm.prepare.source: where a source kernel is built."""

import os
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
        self.assertRegex(old.name, r'^build-all-cfg[0-9a-f]{8}$')
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

    def test_each_selection_builds_beside_the_others_and_mutants_share_one(self):
        kroot = Path('/cache/kernels/linux-source-7.3-c37da0d0c067')
        frags = [('base.config', 'CONFIG_A=y\n')]
        names = {sel: source.build_dir(kroot, frags, selection=sel).name
                 for sel in ('all', 'nofix', 'wrongfix', '1')}
        self.assertEqual(len(set(names.values())), 4)
        cfg = names['all'].rsplit('-', 1)[1]
        self.assertEqual(names['nofix'], f'build-nofix-{cfg}')
        with mock.patch.object(source, 'mutant_of',
                               side_effect=lambda s: Path(s) if s.startswith('mutant-') else None):
            self.assertEqual(source.build_dir(kroot, frags, selection='mutant-a'),
                             source.build_dir(kroot, frags, selection='mutant-b'))
            self.assertEqual(source.build_dir(kroot, frags, selection='mutant-a').name,
                             f'build-mutants-{cfg}')


class SeedTest(unittest.TestCase):
    """_seed: a selection's first build starts from a sibling's objects."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.kroot = Path(self.tmp.name)
        p = mock.patch.object(source, 'progress')
        p.start()
        self.addCleanup(p.stop)

    def _built(self, name: str, commit: str, mtime: float) -> Path:
        b = self.kroot / name
        b.mkdir()
        (b / 'vmlinux').write_text(name)
        stamp = b / source.BUILT_STAMP
        stamp.write_text(commit + '\n')
        os.utime(stamp, (mtime, mtime))
        return b

    def test_copies_the_newest_built_sibling_of_the_same_configuration(self):
        self._built('build-all-cfg11111111', 'a', 100)
        self._built('build-wrongfix-cfg11111111', 'w', 200)
        self._built('build-nofix-cfg22222222', 'n', 300)     # another configuration
        (self.kroot / 'build-half-cfg11111111').mkdir()       # never built: no stamp
        new = self.kroot / 'build-nofix-cfg11111111'
        source._seed(new)
        self.assertEqual((new / 'vmlinux').read_text(), 'build-wrongfix-cfg11111111')
        # Not built from its own commit yet: the stamp is not copied.
        self.assertFalse((new / source.BUILT_STAMP).exists())
        self.assertFalse(new.with_name(new.name + '.seed').exists())

    def test_another_configuration_starts_from_the_same_selection(self):
        self._built('build-all-cfg11111111', 'a', 100)
        self._built('build-nofix-cfg22222222', 'n', 300)
        self._built('build-wrongfix-cfg33333333', 'w', 400)
        new = self.kroot / 'build-all-cfg44444444'
        source._seed(new)
        self.assertEqual((new / 'vmlinux').read_text(), 'build-all-cfg11111111')
        # No build of this selection: the newest of any.
        other = self.kroot / 'build-anonslow-cfg55555555'
        source._seed(other)
        self.assertEqual((other / 'vmlinux').read_text(), 'build-wrongfix-cfg33333333')

    def test_the_tools_builds_absolute_paths_follow_the_copy(self):
        old = self._built('build-all-cfg11111111', 'a', 100)
        cmd = old / 'tools/objtool/.check.o.cmd'
        cmd.parent.mkdir(parents=True)
        cmd.write_text(f'cmd_{old}/tools/objtool/check.o := gcc -o {old}/tools/objtool/check.o\n')
        new = self.kroot / 'build-nofix-cfg11111111'
        source._seed(new)
        self.assertEqual((new / 'tools/objtool/.check.o.cmd').read_text(),
                         f'cmd_{new}/tools/objtool/check.o := gcc -o {new}/tools/objtool/check.o\n')
        self.assertIn(str(old), cmd.read_text())          # the sibling is left as it was

    def test_leaves_an_existing_build_and_a_first_build_alone(self):
        (self.kroot / 'build-half-cfg11111111').mkdir()      # never built: no stamp
        first = self.kroot / 'build-all-cfg33333333'
        source._seed(first)
        self.assertFalse(first.exists())                     # configure makes it
        old = self._built('build-all-cfg11111111', 'a', 100)
        source._seed(old)
        self.assertTrue((old / source.BUILT_STAMP).exists())


class PrepareLockedTest(unittest.TestCase):
    """_prepare_locked with git, make and the configuration mocked."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.kroot = Path(self.tmp.name)
        for name, value in (('progress', None), ('_checkout', 'c0ffee'),
                            ('make_env', {}), ('run', '6.12.117+\n')):
            p = mock.patch.object(source, name, return_value=value)
            p.start()
            self.addCleanup(p.stop)
        for name, value in (('series_gup_test', False),
                            ('fragments', [('base.config', 'CONFIG_A=y\n')])):
            p = mock.patch.object(kconfig, name, return_value=value)
            p.start()
            self.addCleanup(p.stop)
        self.configure = self._patch('_configure')
        self.build = self._patch('_build', side_effect=self._make)

    def _patch(self, name, **kw):
        p = mock.patch.object(source, name, **kw)
        self.addCleanup(p.stop)
        return p.start()

    @staticmethod
    def _make(make, build, *args):
        (build / 'vmlinux').write_text('linux')

    def _prepare(self, selection='nofix'):
        return source._prepare_locked(Path('/base'), 'head', [], selection,
                                      'default', self.kroot)

    def test_a_kernel_built_from_its_commit_is_not_built_again(self):
        self.configure.side_effect = lambda make, frags, kroot, build, *a: build.mkdir()
        k = self._prepare()
        self.assertEqual((k.commit, k.release), ('c0ffee', '6.12.117+'))
        self.assertEqual((k.build / source.BUILT_STAMP).read_text(), 'c0ffee\n')
        self.assertEqual(k.config, k.build / '.config')
        self._prepare()
        self.assertEqual(self.build.call_count, 1)
        self.assertEqual(self.configure.call_count, 1)

    def test_another_commit_or_a_failed_build_is_built_again(self):
        self.configure.side_effect = lambda make, frags, kroot, build, *a: \
            build.mkdir(exist_ok=True)
        k = self._prepare()
        source._checkout.return_value = 'beef'
        self._prepare()
        self.assertEqual(self.build.call_count, 2)
        self.assertEqual((k.build / source.BUILT_STAMP).read_text(), 'beef\n')
        # A build that fails leaves no stamp: the next ask builds.
        source._checkout.return_value = 'dead'
        self.build.side_effect = RuntimeError('make failed')
        with self.assertRaises(RuntimeError):
            self._prepare()
        self.assertFalse((k.build / source.BUILT_STAMP).exists())
        self.build.side_effect = self._make
        self._prepare()
        self.assertEqual(self.build.call_count, 4)

    def test_the_series_gup_test_is_built_in_where_the_tree_has_its_command(self):
        self.configure.side_effect = lambda make, frags, kroot, build, *a: \
            build.mkdir(exist_ok=True)
        self._patch('_seed')                    # each selection its own build
        kconfig.series_gup_test.return_value = True
        for selection, variant, want in (('all', 'default', True),
                                         ('nofix', 'selftests', True),
                                         ('none', 'default', False),     # the pristine base
                                         ('all', 'oot', False),          # --config oot
                                         ('all', 'kselftest', False)):   # the tree's own
            with self.subTest(selection=selection, variant=variant):
                k = source._prepare_locked(Path('/base'), 'head', [], selection,
                                           variant, self.kroot)
                self.assertIs(k.builtin, want)
                self.assertIs(kconfig.fragments.call_args.args[2], want)
        kconfig.series_gup_test.return_value = False      # 6.12: out of tree
        self.assertIs(self._prepare('all').builtin, False)
        self.assertIs(kconfig.fragments.call_args.args[2], False)


if __name__ == '__main__':
    unittest.main()


class ResolveBasesTest(unittest.TestCase):
    """Issue 47: Debian's two trees are prepared side by side."""

    def test_the_second_tree_is_prepared_beside_the_first(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "log"

            def command(spec):
                # Each records its start, waits for the other to have started
                # (at most 5 s), records its end and prints its tree.
                other = "6.12" if spec == "debian-7.3" else "7.3"
                script = (f"echo start {spec} >> {log}; for i in $(seq 50); do "
                          f"grep -q 'start debian-{other}' {log} && break; sleep 0.1; done; "
                          f"echo end {spec} >> {log}; echo {tmp}/{spec}")
                return ["sh", "-c", script], f"preparing {spec}"

            with mock.patch.object(source, "_base_command", command):
                bases = source.resolve_bases(["debian-6.12", "debian-7.3"])
            self.assertEqual([b.path.name for b in bases], ["debian-6.12", "debian-7.3"])
            self.assertEqual([b.series for b in bases], ["stable-6.12", "upstream"])
            lines = log.read_text().splitlines()
            # Both started before the first ended; 7.3 ran twice (beside,
            # then its path asked in the foreground).
            self.assertLess(max(lines.index("start debian-6.12"),
                                lines.index("start debian-7.3")),
                            lines.index("end debian-6.12"), lines)
            self.assertEqual(lines.count("start debian-7.3"), 2, lines)

    def test_a_failure_beside_is_raised_in_the_foreground(self):
        def command(spec):
            fail = "exit 1" if spec == "debian-7.3" else "echo /x"
            return ["sh", "-c", f"echo {spec} broke >&2; {fail}"], f"preparing {spec}"

        with mock.patch.object(source, "_base_command", command):
            with self.assertRaisesRegex(source.RunnerError, "preparing debian-7.3"):
                source.resolve_bases(["debian-6.12", "debian-7.3"])
