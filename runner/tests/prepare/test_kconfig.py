"""Unit tests for gupnm.prepare.kconfig (config fragments and what survived olddefconfig)."""

import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import kconfig  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402

FRAGMENT = """\
# A fragment, as in runner/configs
CONFIG_64BIT=y
CONFIG_TEST_GUP_FAST=m
# CONFIG_SLUB_TINY is not set
CONFIG_SLUB_DEBUG=n
CONFIG_CMDLINE="console=ttyS0 panic=-1"
CONFIG_NR_CPUS=8
CONFIG_PHYSICAL_START=0x1000000
   CONFIG_INDENTED=y
CONFIG_EMPTY=

#CONFIG_NO_SPACE is not set
# CONFIG_lower is not set (free text)
some other text
"""

# A .config as olddefconfig leaves it.
DOTCONFIG = """\
#
# Automatically generated file; DO NOT EDIT.
# Linux/x86 6.12.117 Kernel Configuration
#
CONFIG_64BIT=y
CONFIG_TEST_GUP_FAST=m
# CONFIG_SLUB_TINY is not set
# CONFIG_SLUB_DEBUG is not set
CONFIG_CMDLINE="console=ttyS0 panic=-1"
CONFIG_NR_CPUS=8
CONFIG_PHYSICAL_START=0x1000000
CONFIG_INDENTED=y
CONFIG_EMPTY=
"""


class ParseTest(unittest.TestCase):

    def test_fragment(self):
        self.assertEqual(kconfig.parse(FRAGMENT), {
            'CONFIG_64BIT': 'y',
            'CONFIG_TEST_GUP_FAST': 'm',
            'CONFIG_SLUB_TINY': 'n',
            'CONFIG_SLUB_DEBUG': 'n',
            'CONFIG_CMDLINE': '"console=ttyS0 panic=-1"',
            'CONFIG_NR_CPUS': '8',
            'CONFIG_PHYSICAL_START': '0x1000000',
            'CONFIG_INDENTED': 'y',
            'CONFIG_EMPTY': '',
        })

    def test_not_set_is_n(self):
        self.assertEqual(kconfig.parse('# CONFIG_X is not set\n'), {'CONFIG_X': 'n'})
        self.assertEqual(kconfig.parse('# CONFIG_X is not set'), {'CONFIG_X': 'n'})
        # Only the exact form: anything after "is not set" is a comment.
        self.assertEqual(kconfig.parse('# CONFIG_X is not set, see below\n'), {})

    def test_crlf(self):
        self.assertEqual(kconfig.parse('CONFIG_A=y\r\n# CONFIG_B is not set\r\n'),
                         {'CONFIG_A': 'y', 'CONFIG_B': 'n'})

    def test_later_line_wins(self):
        self.assertEqual(kconfig.parse('CONFIG_A=y\n# CONFIG_A is not set\n'), {'CONFIG_A': 'n'})
        self.assertEqual(kconfig.parse('# CONFIG_A is not set\nCONFIG_A=m\n'), {'CONFIG_A': 'm'})

    def test_nothing(self):
        self.assertEqual(kconfig.parse(''), {})
        self.assertEqual(kconfig.parse('#\n# comment only\nFOO=y\n'), {})

    def test_repo_fragments_are_well_formed(self):
        # Every non-comment line of runner/configs/*.config is an option line.
        for path in sorted(kconfig.CONFIGS.glob('*.config')):
            for no, line in enumerate(path.read_text().splitlines(), 1):
                s = line.strip()
                if s and not s.startswith('#'):
                    with self.subTest(file=path.name, line=no):
                        self.assertRegex(s, kconfig._LINE)

    def test_repo_fragments_do_not_conflict(self):
        # missing() checks every fragment against the final .config: an option
        # that base.config and debug.config both set, differently, could never pass.
        base = kconfig.parse((kconfig.CONFIGS / 'base.config').read_text())
        debug = kconfig.parse((kconfig.CONFIGS / 'debug.config').read_text())
        self.assertTrue(base and debug)
        self.assertEqual({k: (base[k], debug[k]) for k in base.keys() & debug.keys()
                          if base[k] != debug[k]}, {})


class MissingTest(unittest.TestCase):

    def test_all_survived(self):
        self.assertEqual(kconfig.missing([('frag', FRAGMENT)], DOTCONFIG), [])

    def test_option_ended_up_with_another_value(self):
        config = DOTCONFIG.replace('CONFIG_TEST_GUP_FAST=m', 'CONFIG_TEST_GUP_FAST=y') \
                          .replace('CONFIG_NR_CPUS=8', 'CONFIG_NR_CPUS=64')
        self.assertEqual(kconfig.missing([('base.config', FRAGMENT)], config), [
            'CONFIG_TEST_GUP_FAST=m (from base.config) ended up CONFIG_TEST_GUP_FAST=y',
            'CONFIG_NR_CPUS=8 (from base.config) ended up CONFIG_NR_CPUS=64'])

    def test_option_silently_disappeared(self):
        # The classic: a dependency is missing, olddefconfig drops the option.
        config = DOTCONFIG.replace('CONFIG_TEST_GUP_FAST=m\n', '')
        self.assertEqual(kconfig.missing([('selftests/mm/config (CONFIG_TEST_GUP_FAST)',
                                           'CONFIG_TEST_GUP_FAST=m\n')], config),
                         ['CONFIG_TEST_GUP_FAST=m (from selftests/mm/config '
                          '(CONFIG_TEST_GUP_FAST)) ended up CONFIG_TEST_GUP_FAST=n'])

    def test_not_set_request(self):
        frag = [('debug.config', '# CONFIG_SLUB_TINY is not set\nCONFIG_KASAN=n\n')]
        # Absent from .config counts as n.
        self.assertEqual(kconfig.missing(frag, 'CONFIG_64BIT=y\n'), [])
        self.assertEqual(kconfig.missing(frag, 'CONFIG_SLUB_TINY=y\nCONFIG_KASAN=y\n'), [
            'CONFIG_SLUB_TINY=n (from debug.config) ended up CONFIG_SLUB_TINY=y',
            'CONFIG_KASAN=n (from debug.config) ended up CONFIG_KASAN=y'])

    def test_string_value(self):
        frag = [('f', 'CONFIG_CMDLINE="a b"\n')]
        self.assertEqual(kconfig.missing(frag, 'CONFIG_CMDLINE="a b"\n'), [])
        self.assertEqual(kconfig.missing(frag, 'CONFIG_CMDLINE="a"\n'),
                         ['CONFIG_CMDLINE="a b" (from f) ended up CONFIG_CMDLINE="a"'])

    def test_order_follows_fragments(self):
        frags = [('one', 'CONFIG_B=y\nCONFIG_A=y\n'), ('two', 'CONFIG_C=y\n')]
        self.assertEqual([b.split('=')[0] for b in kconfig.missing(frags, '')],
                         ['CONFIG_B', 'CONFIG_A', 'CONFIG_C'])

    def test_a_later_fragment_overrides_an_earlier_one(self):
        # As merge_config.sh merges them: thp-always.config unsets
        # base.config's CONFIG_ADVISE_SYSCALLS=y.
        frags = [('base.config', 'CONFIG_ADVISE_SYSCALLS=y\nCONFIG_A=y\n'),
                 ('thp-always.config', '# CONFIG_ADVISE_SYSCALLS is not set\n')]
        self.assertEqual(kconfig.missing(frags, 'CONFIG_A=y\n'), [])
        self.assertEqual(kconfig.missing(frags, 'CONFIG_A=y\nCONFIG_ADVISE_SYSCALLS=y\n'), [
            'CONFIG_ADVISE_SYSCALLS=n (from thp-always.config) ended up '
            'CONFIG_ADVISE_SYSCALLS=y'])
        self.assertEqual(kconfig.requested(frags), {
            'CONFIG_ADVISE_SYSCALLS': ('n', 'thp-always.config'),
            'CONFIG_A': ('y', 'base.config')})

    def test_comment_lines_are_no_request(self):
        self.assertEqual(kconfig.missing([('f', '# just words\n#\n')], ''), [])


class DigestTest(unittest.TestCase):

    FRAGS = [('base.config', 'CONFIG_A=y\n'), ('debug.config', 'CONFIG_B=y\n')]

    def test_stable_and_short(self):
        d = kconfig.digest(self.FRAGS)
        self.assertRegex(d, r'^[0-9a-f]{16}$')
        self.assertEqual(d, kconfig.digest([tuple(f) for f in self.FRAGS]))

    def test_changes_with_text_name_and_order(self):
        d = kconfig.digest(self.FRAGS)
        variants = [
            [('base.config', 'CONFIG_A=m\n'), self.FRAGS[1]],
            [('other.config', 'CONFIG_A=y\n'), self.FRAGS[1]],
            list(reversed(self.FRAGS)),
            self.FRAGS[:1],
            [],
            # The separator keeps name/text boundaries apart.
            [('base.configCONFIG_A=y\n', ''), self.FRAGS[1]],
        ]
        digests = [kconfig.digest(v) for v in variants]
        self.assertNotIn(d, digests)
        self.assertEqual(len(set(digests)), len(digests))


class FilesKeyTest(unittest.TestCase):
    """The config files' digest in a source kernel's cache key."""

    def configs(self, files):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for name, text in files.items():
            (Path(d.name) / name).write_text(text)
        return mock.patch.object(kconfig, 'CONFIGS', Path(d.name))

    FILES = {'base.config': 'CONFIG_A=y\n', 'debug.config': 'CONFIG_B=y\n',
             'arm64-64k.config': 'CONFIG_C=y\n'}

    def test_changes_with_the_variants_own_files_only(self):
        with self.configs(self.FILES):
            default, debug = kconfig.files_key('default'), kconfig.files_key('debug')
            arm = kconfig.files_key('default', 'arm64')
        self.assertRegex(default, r'^cfg[0-9a-f]{8}$')
        self.assertEqual(len({default, debug, arm}), 3)
        # A new line in base.config: new keys for default and debug, not arm64.
        with self.configs(dict(self.FILES, **{'base.config': 'CONFIG_A=y\nCONFIG_NET=y\n'})):
            self.assertNotEqual(kconfig.files_key('default'), default)
            self.assertNotEqual(kconfig.files_key('debug'), debug)
            self.assertEqual(kconfig.files_key('default', 'arm64'), arm)
        # debug.config edited: the default kernels keep theirs.
        with self.configs(dict(self.FILES, **{'debug.config': 'CONFIG_B=n\n'})):
            self.assertEqual(kconfig.files_key('default'), default)
            self.assertNotEqual(kconfig.files_key('debug'), debug)
        # A comment changes no key; a variant asking nothing more than
        # base.config shares its build.
        with self.configs(dict(self.FILES, **{'base.config': '# why\nCONFIG_A=y\n',
                                              'debug.config': '# nothing more\n'})):
            self.assertEqual(kconfig.files_key('default'), default)
            self.assertEqual(kconfig.files_key('debug'), default)

    def test_unknown_variant(self):
        with self.assertRaisesRegex(RunnerError, "unknown config variant 'debgu'"):
            kconfig.files_key('debgu')


class ProbeNeedsTest(unittest.TestCase):
    """What the module-free probe needs of a source kernel (its producer,
    af_packet's TX ring; /proc/kpageflags; its trigger and control) is
    asked for by every base fragment, amd64 and arm64 alike."""

    def test_base_fragments(self):
        need = {'CONFIG_NET': 'y', 'CONFIG_PACKET': 'y', 'CONFIG_PROC_PAGE_MONITOR': 'y',
                'CONFIG_FUTEX': 'y', 'CONFIG_SHMEM': 'y', 'CONFIG_PROC_FS': 'y',
                'CONFIG_ADVISE_SYSCALLS': 'y'}
        for name in ('base.config', 'arm64-64k.config'):
            opts = kconfig.parse((kconfig.CONFIGS / name).read_text())
            with self.subTest(fragment=name):
                self.assertEqual({k: opts.get(k) for k in need}, need)


class FragmentsTest(unittest.TestCase):

    def test_an_arm64_guest_has_the_64k_base_and_its_own_key(self):
        names = [n for n, _ in kconfig.fragments('debug', None, True, 'arm64')]
        self.assertEqual(names[:2], ['arm64-64k.config', 'debug.config'])
        self.assertNotEqual(kconfig.files_key('default', 'arm64'), kconfig.files_key('default'))

    def test_default_and_debug(self):
        self.assertEqual([n for n, _ in kconfig.fragments('default', None, False)],
                         ['base.config', 'gup_test out of tree: not built in'])
        frags = kconfig.fragments('debug', None, False)
        self.assertEqual([n for n, _ in frags], ['base.config', 'debug.config', 'gup_test out of tree: not built in'])
        self.assertEqual(frags[1][1], (kconfig.CONFIGS / 'debug.config').read_text())

    def test_built_in_line_when_the_tree_has_the_series_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            frags = kconfig.fragments('default', Path(tmp), True)
        self.assertEqual(frags[-1], ("the series' gup_test, built in",
                                     'CONFIG_GUP_TEST=y\n'))
        self.assertEqual(len(frags), 2)

    def test_no_module_line_without_it(self):
        # The tree's own (bool) gup_test stays out in every variant, so the
        # default and selftests variants ask the same options.
        frags = kconfig.fragments('default', None, False)
        self.assertEqual(frags[1:], [('gup_test out of tree: not built in', '# CONFIG_GUP_TEST is not set\n')])
        with tempfile.TemporaryDirectory() as tmp:
            mm = Path(tmp) / 'tools/testing/selftests/mm'
            mm.mkdir(parents=True)
            (mm / 'config').write_text('CONFIG_GUP_TEST=y\nCONFIG_TRANSPARENT_HUGEPAGE=y\n')
            selftests = kconfig.fragments('selftests', Path(tmp), False)
        self.assertEqual(kconfig.options_key(frags), kconfig.options_key(selftests))

    def test_series_gup_test_reads_mm_gup_test_h(self):
        # The series' gup_test is built in from the patch that adds its
        # command on (v4: GUP_TEST stays bool, never a module).
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'mm').mkdir()
            h = Path(tmp) / 'mm/gup_test.h'
            self.assertFalse(kconfig.series_gup_test(Path(tmp)))
            h.write_text('#define GUP_FAST_BENCHMARK\t_IOWR(\'g\', 1, struct gup_test)\n')
            self.assertFalse(kconfig.series_gup_test(Path(tmp)))
            h.write_text('/* GUP_FAST_VERDICT comes later */\n#define GUP_FAST_VERDICTS 1\n')
            self.assertFalse(kconfig.series_gup_test(Path(tmp)))
            h.write_text('#define PIN_LONGTERM_TEST_READ\t_IOW(\'g\', 9, __u64)\n'
                         '#define GUP_FAST_VERDICT\t_IOWR(\'g\', 11, struct gup_fast_verdict)\n')
            self.assertTrue(kconfig.series_gup_test(Path(tmp)))

    def test_oot_variant_asks_the_default_options(self):
        # --config oot: the runner's module even where the tree could build
        # the series' gup_test in; the same build as default's without it.
        self.assertIn('oot', kconfig.VARIANTS)
        oot = kconfig.fragments('oot', None, False)
        self.assertEqual([n for n, _ in oot], ['base.config', 'oot.config',
                                               'gup_test out of tree: not built in'])
        self.assertEqual(kconfig.parse(oot[1][1]), {})
        self.assertEqual(kconfig.options_key(oot),
                         kconfig.options_key(kconfig.fragments('default', None, False)))

    def test_selftests_variant_takes_gup_test_lines_of_the_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            mm = Path(tmp) / 'tools/testing/selftests/mm'
            mm.mkdir(parents=True)
            (mm / 'config').write_text('CONFIG_SYSVIPC=y\nCONFIG_TEST_HMM=m\n'
                                       'CONFIG_GUP_TEST=y\nCONFIG_FTRACE=y\n'
                                       'CONFIG_TRANSPARENT_HUGEPAGE=y\n')
            frags = kconfig.fragments('selftests', Path(tmp), False)
            # gup_test comes out of tree then: the tree's own stays out.
            self.assertEqual([n for n, _ in frags],
                             ['base.config', 'selftests.config',
                              "selftests/mm/config (gup_test's options)",
                              'gup_test out of tree: not built in'])
            # The tree's CONFIG_GUP_TEST=y is not asked for: where the
            # series' gup_test comes from decides (bench-fix failed on a
            # 6.12 tree with "CONFIG_GUP_TEST=y ... ended up =n").
            self.assertEqual(frags[2][1], 'CONFIG_TRANSPARENT_HUGEPAGE=y\n')
            self.assertEqual(frags[3][1], '# CONFIG_GUP_TEST is not set\n')
            final = '# CONFIG_GUP_TEST is not set\nCONFIG_TRANSPARENT_HUGEPAGE=y\n'
            self.assertEqual(kconfig.missing(frags[2:], final), [])
            # Built in (7.3 + the series' command): =y from the series'
            # line, not from the tree's selftests config.
            builtin = kconfig.fragments('selftests', Path(tmp), True)
            self.assertEqual(builtin[-1], ("the series' gup_test, built in",
                                           'CONFIG_GUP_TEST=y\n'))
            self.assertNotIn('CONFIG_GUP_TEST', builtin[2][1])
            self.assertEqual(kconfig.missing(builtin[2:], final.replace(
                '# CONFIG_GUP_TEST is not set', 'CONFIG_GUP_TEST=y')), [])
            # base.config has what the selftests need: the variant asks for
            # nothing more and shares the default build (one build, not two,
            # for every --command short form make check runs).
            self.assertIn('CONFIG_KSM=y', frags[0][1])
            self.assertIn('CONFIG_TRANSPARENT_HUGEPAGE_MADVISE=y', frags[0][1])
            self.assertEqual(kconfig.parse(frags[1][1]), {})
            self.assertEqual(kconfig.files_key('selftests'), kconfig.files_key('default'))
            (mm / 'config').write_text('CONFIG_SYSVIPC=y\n')
            with self.assertRaisesRegex(RunnerError, 'does not name CONFIG_GUP_TEST'):
                kconfig.fragments('selftests', Path(tmp), False)

    def test_thp_always(self):
        # THP "always" and no madvise(), after base.config (issue 32).
        frags = kconfig.fragments('thp-always', None, False)
        self.assertEqual([n for n, _ in frags], ['base.config', 'thp-always.config', 'gup_test out of tree: not built in'])
        want = kconfig.requested(frags)
        self.assertEqual({k: want[k][0] for k in (
            'CONFIG_TRANSPARENT_HUGEPAGE', 'CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS',
            'CONFIG_ADVISE_SYSCALLS', 'CONFIG_SECRETMEM', 'CONFIG_PROC_PAGE_MONITOR')},
            {'CONFIG_TRANSPARENT_HUGEPAGE': 'y', 'CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS': 'y',
             'CONFIG_ADVISE_SYSCALLS': 'n', 'CONFIG_SECRETMEM': 'y',
             'CONFIG_PROC_PAGE_MONITOR': 'y'})
        self.assertIn('thp-always', kconfig.VARIANTS)
        self.assertNotEqual(kconfig.files_key('thp-always'), kconfig.files_key('default'))

    def test_missing_config_file(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(kconfig, 'CONFIGS', Path(tmp)):
            with self.assertRaisesRegex(RunnerError, "unknown config variant 'default'"):
                kconfig.fragments('default', None, False)

    # Regression test (fixed bug): kconfig.py fragments() builds its file list from variant == "debug"
    # only, so any other variant name (a typo, 'kasan') silently gives the
    # default config; the "unknown config variant" error fires only when
    # base.config/debug.config is missing from the repository. (The CLI's
    # --config choices keep it unreachable from gupnm run; source.prepare()
    # and the cache key take the variant as given.)
    def test_unknown_variant_rejected(self):
        with self.assertRaises(RunnerError):
            kconfig.fragments('debgu', None, False)


if __name__ == '__main__':
    unittest.main()


class UndefinedOptionTest(unittest.TestCase):
    """An option the tree no longer defines is not a lost option."""

    def test_option_gone_from_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            (tree / "fs").mkdir()
            (tree / "fs" / "Kconfig").write_text("config PROC_FS\n\tbool\n")
            frags = [("base.config", "CONFIG_PROC_FS=y\nCONFIG_PROC_SYSCTL=y\n")]
            self.assertEqual(kconfig.missing(frags, "CONFIG_PROC_FS=y\n", tree), [])
            self.assertEqual(len(kconfig.missing(frags, "CONFIG_PROC_FS=y\n")), 1)
            self.assertEqual(len(kconfig.missing(frags, "", tree)), 1)   # PROC_FS lost
