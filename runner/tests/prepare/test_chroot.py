"""chroot: which suite's root builds a module (one rule for debian: and
image:), and a build with headers bound into the root read-only."""
from __future__ import annotations

import shlex
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.host import RunnerError, UsageError
from gupnm.prepare import apt, cache, chroot, debian

REL = '6.12.118+deb13-amd64'


def offered(release, suites):
    return debian.Offered(release, 'amd64', f'linux-image-{release}-unsigned', '1',
                          suites, 'unsigned', True)


def offers(package, *suites):
    return [apt.Offer(package, '1', s, 'amd64') for s in suites]


class SuiteTest(unittest.TestCase):

    def test_kernel_suites_are_the_catalogues(self):
        cat = [offered(REL, ['trixie-security']), offered(REL, ['trixie']),
               offered('7.3.4+deb13-amd64', ['trixie-backports'])]
        with mock.patch.object(debian, 'catalogue', return_value=cat):
            self.assertEqual(chroot.kernel_suites(REL), ['trixie', 'trixie-security'])
            self.assertEqual(chroot.kernel_suites('6.8.0-45-generic'), [])

    def test_a_kernel_debian_offers_gets_its_own_suite(self):
        with mock.patch.object(apt, 'madison') as madison:
            self.assertEqual(chroot.suite_for('gcc-14', ['trixie-backports']), 'trixie')
            self.assertEqual(chroot.suite_for('gcc-16', ['sid']), 'sid')
            self.assertEqual(chroot.suite_for('gcc-12', ['bookworm-security']),
                             'bookworm')
        madison.assert_not_called()

    def test_other_kernels_get_the_oldest_suite_with_the_compiler(self):
        table = {'gcc-14': offers('gcc-14', 'sid', 'trixie'),
                 'gcc-16': offers('gcc-16', 'sid'),
                 'gcc-12': offers('gcc-12', 'sid', 'bookworm', 'trixie')}
        with mock.patch.object(apt, 'madison', side_effect=lambda n: table[n[0]]):
            self.assertEqual(chroot.suite_for('gcc-14', []), 'trixie')
            self.assertEqual(chroot.suite_for('gcc-16', []), 'sid')
            self.assertEqual(chroot.suite_for('gcc-12', []), 'bookworm')

    def test_a_compiler_no_suite_offers_is_bad_input(self):
        with mock.patch.object(apt, 'madison',
                               return_value=offers('gcc-99', 'experimental')):
            with self.assertRaisesRegex(UsageError, r'no Debian suite \(bookworm, '
                                        r'trixie, sid\) offers gcc-99'):
                chroot.suite_for('gcc-99', [])


class PickRootTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        patch = mock.patch.object(chroot, 'cache_dir', return_value=Path(self.tmp.name))
        patch.start()
        self.addCleanup(patch.stop)
        self.addCleanup(self.tmp.cleanup)

    def test_made_root_is_reused_without_asking_the_archive(self):
        ready = chroot._root_path('trixie', 'gcc-14')
        ready.mkdir(parents=True)
        (ready / '.gupnm-ready').write_text('trixie gcc-14\n')
        with mock.patch.object(apt, 'madison') as madison, \
                mock.patch.object(chroot, 'root_for', return_value=ready) as made:
            self.assertEqual(chroot.pick_root('gcc-14', ['trixie']), ('trixie', ready))
        madison.assert_not_called()
        made.assert_called_once_with('trixie', 'gcc-14')

    def test_a_suite_without_the_compiler_makes_no_root(self):
        with mock.patch.object(apt, 'madison', return_value=offers('gcc-99')), \
                mock.patch.object(chroot, 'root_for') as made:
            with self.assertRaisesRegex(UsageError, "Debian's trixie offers no gcc-99"):
                chroot.pick_root('gcc-99', ['trixie'])
        made.assert_not_called()

    def test_a_new_root_of_a_suite_with_the_compiler(self):
        with mock.patch.object(apt, 'madison', return_value=offers('gcc-16', 'sid')), \
                mock.patch.object(chroot, 'root_for', return_value=Path('/r')) as made:
            self.assertEqual(chroot.pick_root('gcc-16', ['sid']), ('sid', Path('/r')))
        made.assert_called_once_with('sid', 'gcc-16')


class BoundBuildTest(unittest.TestCase):
    """build_module with image:'s headers bound into the root."""

    def build(self, bound_of):
        with tempfile.TemporaryDirectory() as tmp:
            root, src = Path(tmp) / 'root', Path(tmp) / 'src'
            (root / 'usr/src').mkdir(parents=True)
            (root / 'usr/lib').mkdir()
            src.mkdir()
            for name in ('gup_test.c', 'gup_test.h'):
                (src / name).write_text('')
            calls = []

            def fake_run(argv, **kw):
                calls.append(argv)
                for out in (root / 'tmp').glob('gupnm-build-*/out'):
                    (out / 'gup_test.ko').write_bytes(b'ko')
                return ''
            with mock.patch.object(chroot, 'ensure_tools'), \
                    mock.patch.object(chroot, 'gup_test_source', return_value=src), \
                    mock.patch.object(chroot, 'run', side_effect=fake_run):
                ko = chroot.build_module(root, REL, Path(tmp) / 'out', Path(tmp) / 'log',
                                         ['W=1'], bound_of(root))
                self.assertEqual(ko.read_bytes(), b'ko')
                made = [p.relative_to(root) for p in (root / 'usr/lib').iterdir()]
            return root, calls[0][-1], made

    def test_binds_read_only_before_the_chroot_and_builds_there(self):
        binds = ((Path('/d/usr/src'), '/usr/src'),
                 (Path('/d/usr/lib/linux-kbuild-6.12.118+deb13'),
                  '/usr/lib/linux-kbuild-6.12.118+deb13'))
        root, script, made = self.build(lambda root: chroot.Bound(
            'trixie', root, f'/usr/src/linux-headers-{REL}', binds))
        steps = script.split(' && ')
        self.assertEqual(steps[0], f'mount -t proc proc {root}/proc')
        self.assertEqual(steps[1], f'mount --bind -o ro /d/usr/src {root}/usr/src')
        self.assertEqual(steps[2], 'mount --bind -o ro /d/usr/lib/linux-kbuild-6.12.118'
                                   f'+deb13 {root}/usr/lib/linux-kbuild-6.12.118+deb13')
        self.assertTrue(steps[3].startswith(f'exec chroot {root} /bin/sh -c '))
        inner = shlex.split(steps[3])[-1].split()
        self.assertEqual(inner[1:], [f'/usr/src/linux-headers-{REL}', inner[2], 'W=1'])
        self.assertEqual(made, [Path('usr/lib/linux-kbuild-6.12.118+deb13')])

    def test_without_binds_the_headers_unpacked_in_the_root(self):
        root, script, _ = self.build(lambda root: None)
        self.assertNotIn('--bind', script)
        self.assertIn(f'/usr/src/linux-headers-{REL} ', script)

    def test_paths_with_spaces_stay_one_word(self):
        tree = Path('/home/a b/linux')
        _, script, _ = self.build(lambda root: chroot.Bound(
            'trixie', root, str(tree), ((tree, str(tree)),)))
        self.assertIn("mount --bind -o ro '/home/a b/linux' ", script)
        inner = shlex.split(shlex.split(script.split(' && ')[-1])[-1])
        self.assertEqual(inner[1], '/home/a b/linux')

    def test_a_build_that_leaves_no_module_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            with mock.patch.object(chroot, 'ensure_tools'), \
                    mock.patch.object(chroot, 'gup_test_source', return_value=root), \
                    mock.patch.object(chroot.shutil, 'copy2'), \
                    mock.patch.object(chroot, 'run', return_value=''):
                with self.assertRaisesRegex(RunnerError, 'left no gup_test.ko'):
                    chroot.build_module(root, REL, root / 'out', root / 'log')


class RootCheckTest(unittest.TestCase):
    """A build root cut short since it was made is made again, once."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        for target, name in ((chroot, 'cache_dir'), (chroot, 'progress'),
                             (cache, 'progress')):
            p = mock.patch.object(target, name, return_value=Path(self.tmp.name))
            p.start()
            self.addCleanup(p.stop)
        self.made = 0

    def mmdebstrap(self, cmd, **kw):
        self.made += 1
        root = Path(cmd[-2])
        (root / 'usr/bin').mkdir(parents=True)
        (root / 'usr/bin/gcc-14').write_bytes(b'\x7fELF' * 100)
        return ''

    def test_cut_root_is_made_again(self):
        with mock.patch.object(chroot, 'run', side_effect=self.mmdebstrap), \
                mock.patch.object(chroot, 'ensure_tools'):
            root = chroot.root_for('trixie', 'gcc-14')
            self.assertEqual(chroot.root_for('trixie', 'gcc-14'), root)
            self.assertEqual(self.made, 1)
            (root / 'usr/bin/gcc-14').write_bytes(b'cut')
            (root / 'tmp').mkdir()
            (root / 'tmp/work').write_text('builds work here: not listed')
            self.assertEqual(chroot.root_for('trixie', 'gcc-14'), root)
        self.assertEqual(self.made, 2)
        self.assertEqual((root / 'usr/bin/gcc-14').stat().st_size, 400)


class InstallHeadersTest(unittest.TestCase):
    """The header packages unpacked into a root once; dropped .debs are
    asked of @present (downloaded again), the image never."""

    def test_only_the_header_packages_and_only_once(self):
        import os
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {"GUPNM_CACHE": f"{d}/cache"}):
            root = Path(d) / "root"
            kdir = root / "usr/src/linux-headers-6.12.118+deb13-amd64"
            debs = [Path(f"/gone/{n}_6.12.118-1_{a}.deb") for n, a in (
                ("linux-image-6.12.118+deb13-amd64-unsigned", "amd64"),
                ("linux-headers-6.12.118+deb13-amd64", "amd64"),
                ("linux-kbuild-6.12.118+deb13", "amd64"))]
            asked = []

            def present(wanted):
                asked.append([p.name.split("_")[0] for p in wanted])
                return [Path("/again") / p.name for p in wanted]

            def unpack(cmd, **kw):
                kdir.mkdir(parents=True, exist_ok=True)
                (kdir / "Makefile").write_text("")
            with mock.patch.object(chroot, "run", side_effect=unpack) as run:
                for _ in range(2):
                    self.assertEqual(chroot.install_headers(root, debs, "6.12.118+deb13-amd64",
                                                            present), kdir)
            self.assertEqual(asked, [["linux-headers-6.12.118+deb13-amd64",
                                      "linux-kbuild-6.12.118+deb13"]])
            self.assertEqual([c.args[0][2].parent for c in run.call_args_list],
                             [Path("/again")] * 2)


if __name__ == "__main__":
    unittest.main()
