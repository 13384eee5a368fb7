"""Unit tests for gupnm.check.numa (one run judged under NUMA pressure) and the
QEMU NUMA arguments."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.check import numa  # noqa: E402
from gupnm.guest import qemu  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402
from gupnm.parse.status import parse_status  # noqa: E402

REAL = Path(__file__).resolve().parents[1] / 'data' / 'real'


def real_tap(release):
    return parse_status((REAL / f'table-debian-{release}.status.log').read_text()).tap


class JudgeTest(unittest.TestCase):

    def test_real_bug_run_is_no_false_verdict(self):
        ok, detail, tries = numa.judge(real_tap('6.12'), 1, 'bug')
        self.assertEqual((ok, detail), (True, ''))
        # The driver's pages refused for good are asked 10 times; that is not
        # a retry of a control.
        self.assertEqual(tries, 1)

    def test_real_pass_run(self):
        self.assertEqual(numa.judge(real_tap('7.3'), 0, 'pass'), (True, '', 1))

    def test_wrong_expectation_is_a_false_verdict(self):
        ok, detail, _ = numa.judge(real_tap('6.12'), 1, 'pass')
        self.assertFalse(ok)
        self.assertIn('driver read 0/512', detail)     # the row's name today
        self.assertIn('exit 1, expected 0', detail)

    def test_the_row_named_driver_or_shadow(self):
        # The test before v4 called the driver row "shadow" (these real
        # logs); v4 calls it "driver": both judged alike.
        for release, status, expect in (('6.12', 1, 'bug'), ('7.3', 0, 'pass')):
            text = real_tap(release)
            self.assertIn('verdict_shadow_read', text)
            v4 = text.replace('verdict shadow ', 'verdict driver ').replace(
                'verdict_shadow_', 'verdict_driver_')
            with self.subTest(release=release):
                self.assertEqual(numa.judge(v4, status, expect), numa.judge(text, status, expect))
                self.assertTrue(numa.judge(v4, status, expect)[0])

    def test_control_refused_is_a_false_verdict(self):
        text = real_tap('6.12').replace(
            'verdict anon read: 512/512 pages via GUP-fast (expected 512, 1 try)',
            'verdict anon read: 511/512 pages via GUP-fast (expected 512, 10 tries)')
        ok, detail, tries = numa.judge(text, 1, 'bug')
        self.assertEqual((ok, tries), (False, 10))
        self.assertTrue(detail.startswith('anon read 511/512'), detail)

    def test_retry_counted(self):
        text = real_tap('6.12').replace(
            'verdict memfd write: 512/512 pages via GUP-fast (expected 512, 1 try)',
            'verdict memfd write: 512/512 pages via GUP-fast (expected 512, 2 tries)')
        self.assertEqual(numa.judge(text, 1, 'bug'), (True, '', 2))

    def test_cut_short(self):
        ok, detail, _ = numa.judge('TAP version 13\n1..13\n', None, 'bug')
        self.assertFalse(ok)
        self.assertIn('no verdict for anon read', detail)


class NumaArgsTest(unittest.TestCase):

    def test_two_nodes(self):
        self.assertEqual(qemu.numa_args(2, 2, 1024), [
            '-object', 'memory-backend-ram,id=m0,size=512M',
            '-numa', 'node,nodeid=0,memdev=m0,cpus=0',
            '-object', 'memory-backend-ram,id=m1,size=512M',
            '-numa', 'node,nodeid=1,memdev=m1,cpus=1'])

    def test_one_node_is_nothing(self):
        self.assertEqual(qemu.numa_args(0, 2, 1024), [])
        self.assertEqual(qemu.numa_args(1, 2, 1024), [])

    def test_impossible(self):
        with self.assertRaises(RunnerError):
            qemu.numa_args(2, 1, 1024)

    def test_in_the_command(self):
        cmd = qemu.qemu_command(Path('k'), Path('i'), accel='tcg', vcpus=2, memory_mb=1024,
                                append='x', console=Path('c'), status=Path('s'), numa=2)
        self.assertIn('node,nodeid=1,memdev=m1,cpus=1', cmd)
        self.assertLess(cmd.index('-numa'), cmd.index('-kernel'))


class GuestRunsTest(unittest.TestCase):

    def test_status_runs(self):
        st = parse_status('GUPNM-STATUS: booted\nGUPNM-RUN-BEGIN: 1\nok 1 a\n'
                          'GUPNM-RUN-END: 1 0\nGUPNM-RUN-BEGIN: 2\nok 1 a\n')
        self.assertEqual(st.runs, [(1, 0, 'ok 1 a\n'), (2, None, 'ok 1 a\n')])


if __name__ == '__main__':
    unittest.main()


class EarlyDeathTest(unittest.TestCase):
    """A guest that Oopsed before the test started is booted once more."""

    def test_booted_again_once(self):
        import tempfile
        from types import SimpleNamespace
        from unittest import mock
        from gupnm.guest import initramfs, vmrun
        from gupnm.prepare import kernels
        early = (Path(__file__).resolve().parents[1] / 'data' / 'early_panic.log').read_text()
        boots = []

        def fake_boot(image, cpio, outdir, **kw):
            boots.append(kw)
            (outdir / 'console.log').write_text(early if len(boots) == 1 else 'fine\n')
            (outdir / 'status.log').write_text('GUPNM-STATUS: booted\n')
            return SimpleNamespace(timed_out=False)

        prep = SimpleNamespace(test_binary=Path('/t'), release='r', module=Path('/m'),
                               image=Path('/i'))
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(kernels, 'prepare', return_value=prep), \
                mock.patch.object(initramfs, 'build', return_value=Path('/c')), \
                mock.patch.object(vmrun, 'choose_accel', return_value=('tcg', '')), \
                mock.patch.object(numa, 'progress'), \
                mock.patch.object(qemu, 'boot', side_effect=fake_boot):
            r = numa.run_kernel('debian:7.3', 'pass', 2, Path(tmp))
            self.assertTrue((Path(tmp) / 'console.attempt1.log').exists())
        self.assertEqual(len(boots), 2)
        self.assertEqual(r['runs'], 0)
