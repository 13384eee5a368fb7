"""own_image: the two rows it records, with the runner's runs mocked."""
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.check import own_image  # noqa: E402
from gupnm.prepare import debian  # noqa: E402

REL = '6.12.117+deb12-amd64'
TRIXIE, FIXED, SID = '6.12.118+deb13-amd64', '7.3.4+deb13-amd64', '7.2.13+deb14-amd64'
ROOT_KERNELS = ((TRIXIE, ['trixie-security'], '6.12.118-1'),
                (FIXED, ['trixie-backports'], '7.3.4-1~bpo13+1'),
                (SID, ['sid'], '7.2.13-1'))


class FakeTally:
    def __init__(self):
        self.records = []

    def record(self, name, ok, detail=''):
        self.records.append((name, bool(ok)))


class Run:
    def __init__(self, rc, err='', summary=None, seconds=1.0):
        self.rc, self.err, self.summary, self.seconds = rc, err, summary, seconds

    def detail(self):
        return self.err


def kernel(root: Path):
    offered = debian.Offered(REL, 'amd64', f'linux-image-{REL}-unsigned', '6.12.117-1~deb12u1',
                             ['bookworm-security'], 'unsigned', True)
    debs = [Path(f'/d/{n}_6.12.117-1~deb12u1_{a}.deb') for n, a in (
        (f'linux-image-{REL}-unsigned', 'amd64'), (f'linux-headers-{REL}', 'amd64'),
        ('linux-headers-6.12.117+deb12-common', 'all'), ('linux-kbuild-6.12.117+deb12', 'amd64'))]
    return debian.DebianKernel(REL, root / f'boot/vmlinuz-{REL}', root / 'usr/src/x', root,
                               [], offered, debs)


def root_kernel(root: Path, release, suites, version):
    offered = debian.Offered(release, 'amd64', f'linux-image-{release}-unsigned', version,
                             suites, 'unsigned', True)
    return debian.DebianKernel(release, root / f'boot/vmlinuz-{release}', root / 'usr/src/x',
                               root, [], offered, [Path(f'/d/linux-headers-{release}.deb')])


class OwnImageTest(unittest.TestCase):
    def run_with(self, full, bare, *roots):
        t = FakeTally()
        kernels = [kernel(Path('/k'))] + [root_kernel(Path('/k'), *k) for k in ROOT_KERNELS]
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(debian, 'fetch', side_effect=kernels), \
                mock.patch.object(debian, 'present_debs', side_effect=lambda k: k.debs), \
                mock.patch.object(own_image, '_unpack') as unpack, \
                mock.patch.object(own_image, 'check_no_root') as no_root, \
                mock.patch.object(own_image, 'check_debs') as debs_rows, \
                mock.patch.object(own_image, 'gupnm', side_effect=[full, bare, *roots]) as run:
            own_image.check(t, Path(tmp))
            self.assertEqual(len(unpack.call_args_list[0].args[0]), 4)
            self.assertEqual([d.name.split('_')[0] for d in unpack.call_args_list[1].args[0]],
                             [f'linux-image-{REL}-unsigned', f'linux-headers-{REL}'])
            self.assertEqual(len(debs_rows.call_args.args[3]), 4)
            spec = run.call_args_list[0].args[0][2]
            self.assertEqual(spec, f'image:{tmp}/own-full/boot/vmlinuz-{REL}:{tmp}/own-full')
            self.assertEqual(run.call_args_list[2].args[0][2],
                             f'image:{tmp}/own-trixie-security/boot/vmlinuz-{TRIXIE}:'
                             f'{tmp}/own-trixie-security')
            self.assertEqual(no_root.call_args.args[2:],
                             (Path(tmp) / 'own-trixie-security', Path(f'boot/vmlinuz-{TRIXIE}')))
        return [ok for _, ok in t.records]

    BUG = {'verdict': 'shadow 0/512 fast → FAIL: GUP-fast rejects NULL-mapping order-0 '
           'folios (bug present)', 'kernel': {'booted_release': REL}}
    REFUSED = ('needs linux-headers-6.12.117+deb12-common linux-kbuild-6.12.117+deb12, '
               'neither on this machine')

    @staticmethod
    def root_run(release, suite, bug=True, rc=None, built=None):
        verdict = ('shadow 0/512 fast → FAIL: GUP-fast rejects NULL-mapping order-0 '
                   'folios (bug present)' if bug else
                   'shadow 512/512 fast → PASS: GUP-fast takes NULL-mapping order-0 folios')
        return Run(rc if rc is not None else (1 if bug else 0), summary={
            'verdict': verdict, 'kernel': {'booted_release': release, 'source': {
                'build_root': built or f'{suite} (/c/chroots/{suite}-gcc-14-x)'}}})

    def roots(self, **changed):
        runs = {'trixie-security': self.root_run(TRIXIE, 'trixie'),
                'trixie-backports': self.root_run(FIXED, 'trixie', bug=False),
                'sid': self.root_run(SID, 'sid')}
        runs.update(changed)
        return list(runs.values())

    def test_all_right(self):
        self.assertEqual(self.run_with(Run(1, summary=self.BUG), Run(2, self.REFUSED),
                                       *self.roots()), [True] * 5)

    def test_a_build_failure_is_not_the_verdict(self):
        self.assertEqual(self.run_with(Run(3, summary={}), Run(2, 'needs linux-kbuild-x'),
                                       *self.roots())[:2], [False, False])

    def test_a_root_kernel_must_give_its_series_verdict(self):
        wrong = self.root_run(FIXED, 'trixie', bug=True)        # 7.3 said bug
        self.assertEqual(self.run_with(Run(1, summary=self.BUG), Run(2, self.REFUSED),
                                       *self.roots(**{'trixie-backports': wrong}))[2:],
                         [True, False, True])

    def test_a_root_kernel_built_on_the_host_is_not_the_row(self):
        here = self.root_run(TRIXIE, 'trixie', built='host')
        self.assertEqual(self.run_with(Run(1, summary=self.BUG), Run(2, self.REFUSED),
                                       *self.roots(**{'trixie-security': here}))[2:], [False, True, True])

    def test_the_exit_code_must_match_the_verdict(self):
        no_exit = self.root_run(SID, 'sid', rc=3)
        self.assertEqual(self.run_with(Run(1, summary=self.BUG), Run(2, self.REFUSED),
                                       *self.roots(sid=no_exit))[2:], [True, True, False])


class DebsTest(unittest.TestCase):
    def run_debs(self, full, bare):
        t = FakeTally()
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(own_image, 'gupnm', side_effect=[full, bare]) as run:
            k = kernel(Path('/k'))
            own_image.check_debs(t, Path(tmp), k, k.debs)
            specs = [c.args[0][2] for c in run.call_args_list]
            self.assertEqual(specs, [f'debs:{tmp}/own-debs', f'debs:{tmp}/own-debs-bare'])
            self.assertEqual(len(list((Path(tmp) / 'own-debs').iterdir())), 4)
            self.assertEqual(sorted(p.name.split('_')[0] for p in
                                    (Path(tmp) / 'own-debs-bare').iterdir()),
                             [f'linux-headers-{REL}', f'linux-image-{REL}-unsigned'])
        return [ok for _, ok in t.records]

    BUG = {**OwnImageTest.BUG, 'kernel': {'booted_release': REL, 'source': {'kind': 'debs'}}}
    REFUSED = ("debs:/x lacks the headers' -common package (...); the kbuild tools (...)")

    def test_all_right(self):
        self.assertEqual(self.run_debs(Run(1, summary=self.BUG), Run(2, self.REFUSED)),
                         [True, True])

    def test_not_through_debs_or_not_refused(self):
        image = {**self.BUG, 'kernel': {'booted_release': REL, 'source': {'kind': 'image'}}}
        self.assertEqual(self.run_debs(Run(1, summary=image), Run(3, 'boom')), [False, False])


class NoRootTest(unittest.TestCase):
    def test_a_copy_names_gcc_99_and_the_original_stays(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / 'own-trixie'
            headers = folder / f'usr/src/linux-headers-{TRIXIE}'
            headers.mkdir(parents=True)
            cc = 'CONFIG_CC_VERSION_TEXT="x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0"\n'
            (headers / '.config').write_text('CONFIG_X=y\n' + cc)
            seen = {}

            def fake(args, timeout=None):
                seen['spec'] = args[2]
                seen['config'] = (Path(tmp) / f'own-gcc99/usr/src/linux-headers-{TRIXIE}'
                                  '/.config').read_text()
                return Run(2, 'x86_64-linux-gnu-gcc-99 ... --method probe')
            t = FakeTally()
            with mock.patch.object(own_image, 'gupnm', side_effect=fake):
                own_image.check_no_root(t, Path(tmp), folder, Path('boot/vmlinuz'))
            self.assertEqual((headers / '.config').read_text(), 'CONFIG_X=y\n' + cc)
        self.assertIn('CONFIG_CC_VERSION_TEXT="x86_64-linux-gnu-gcc-99 ', seen['config'])
        self.assertIn('CONFIG_X=y', seen['config'])
        self.assertEqual(seen['spec'], f'image:{tmp}/own-gcc99/boot/vmlinuz:{tmp}/own-gcc99')
        self.assertEqual(t.records[0][1], True)


if __name__ == '__main__':
    unittest.main()
