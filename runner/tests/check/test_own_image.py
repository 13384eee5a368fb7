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


class OwnImageTest(unittest.TestCase):
    def run_with(self, full, bare):
        t = FakeTally()
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(debian, 'fetch', return_value=kernel(Path('/k'))), \
                mock.patch.object(own_image, '_unpack') as unpack, \
                mock.patch.object(own_image, 'gupnm', side_effect=[full, bare]) as run:
            own_image.check(t, Path(tmp))
            self.assertEqual(len(unpack.call_args_list[0].args[0]), 4)
            self.assertEqual([d.name.split('_')[0] for d in unpack.call_args_list[1].args[0]],
                             [f'linux-image-{REL}-unsigned', f'linux-headers-{REL}'])
            spec = run.call_args_list[0].args[0][2]
            self.assertEqual(spec, f'image:{tmp}/own-full/boot/vmlinuz-{REL}:{tmp}/own-full')
        return [ok for _, ok in t.records]

    BUG = {'verdict': 'shadow 0/512 fast → FAIL: GUP-fast rejects NULL-mapping order-0 '
           'folios (bug present)', 'kernel': {'booted_release': REL}}
    REFUSED = ('needs linux-headers-6.12.117+deb12-common linux-kbuild-6.12.117+deb12, '
               'neither on this machine')

    def test_both_right(self):
        self.assertEqual(self.run_with(Run(1, summary=self.BUG), Run(2, self.REFUSED)),
                         [True, True])

    def test_a_build_failure_is_not_the_verdict(self):
        self.assertEqual(self.run_with(Run(3, summary={}), Run(2, 'needs linux-kbuild-x')),
                         [False, False])


if __name__ == '__main__':
    unittest.main()
