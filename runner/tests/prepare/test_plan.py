"""Unit tests for gupnm.prepare.plan (the one prepare step: a spec and the
run's options made into the Payload a boot needs) and prepare/payload.py.

Nothing is built: kernels.prepare and the static builds are mocked.
"""

import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import cache, kernels, plan  # noqa: E402
from gupnm.prepare.kernels import Prepared  # noqa: E402
from gupnm.prepare.payload import Payload  # noqa: E402


def _prep(**kw) -> Prepared:
    args = dict(spec='debian:6.12', release='6.12.118+deb12-amd64', image=Path('/k/vmlinux'),
                module=Path('/m/gup_test.ko'), test_binary=Path('/s/gup_null_mapping'),
                run_vmtests=None, source={'kind': 'debian'})
    args.update(kw)
    return Prepared(**args)


class MakeTest(unittest.TestCase):
    """plan.make(): everything the boot needs decided and built in one step."""

    def make(self, prep, **asked):
        with mock.patch.object(kernels, 'prepare', return_value=prep) as kp, \
                mock.patch.object(kernels, 'build_bench',
                                  return_value=Path('/b/gup_fast_bench')) as bb, \
                mock.patch.object(kernels, 'build_stress',
                                  return_value=Path('/b/gupnm_stress')) as bs, \
                mock.patch.object(cache, 'take_repairs', return_value=['refilled x']):
            pay = plan.make(plan.Asked(prep.spec, **asked))
        return pay, kp, bb, bs

    def test_the_test_and_the_benchmark_built_before_the_boot(self):
        pay, kp, bb, bs = self.make(_prep(), test_args='-p 64 1')
        kp.assert_called_once_with('debian:6.12', variant='default')
        bb.assert_called_once_with()
        bs.assert_not_called()
        self.assertIsInstance(pay, Payload)
        self.assertEqual((pay.command, pay.files, pay.bench_command, pay.module),
                         ('./gup_null_mapping',
                          {'gup_null_mapping': Path('/s/gup_null_mapping'),
                           'gup_fast_bench': Path('/b/gup_fast_bench')},
                          './gup_fast_bench -p 64 1', Path('/m/gup_test.ko')))
        self.assertEqual(pay.gup_test['kind'], kernels.GUP_TEST_RUNNERS)
        self.assertEqual((pay.program, pay.vmtests, pay.stress_command, pay.xcheck,
                          pay.kmemleak, pay.busybox), (False, False, None, None, False, None))
        # Cache entries filled again while preparing: the run's notes.
        self.assertEqual(pay.notes, ['refilled x'])

    def test_stress_and_debug(self):
        prep = _prep(spec='source:debian-6.12:all', module=None)
        pay, _, _, bs = self.make(prep, config='debug', stress='-p 32')
        bs.assert_called_once_with()
        self.assertEqual((pay.files['gupnm_stress'], pay.stress_command, pay.kmemleak),
                         (Path('/b/gupnm_stress'), './gupnm_stress -p 32', True))
        self.assertEqual((pay.module, pay.gup_test['kind']), (None, kernels.GUP_TEST_BUILTIN))

    def test_run_vmtests(self):
        pay = plan.base(_prep(run_vmtests=Path('/t/run_vmtests.sh')))
        self.assertEqual((pay.command, pay.vmtests, pay.files['run_vmtests.sh']),
                         ('bash ./run_vmtests.sh -t gup_test', True, Path('/t/run_vmtests.sh')))

    def test_arm64_static_programs_cross_built_and_the_guests_busybox(self):
        from gupnm.prepare import arm64
        prep = _prep(arch='arm64')
        with mock.patch.object(arm64, 'selftest_cc', return_value='aarch64-linux-gnu-gcc'), \
                mock.patch.object(arm64, 'busybox', return_value=Path('/bb/busybox')):
            pay, kp, bb, _ = self.make(prep, arch='arm64')
        kp.assert_called_once_with('debian:6.12', variant='default', arch='arm64')
        bb.assert_called_once_with(cc='aarch64-linux-gnu-gcc')
        self.assertEqual((pay.arch, pay.busybox), ('arm64', Path('/bb/busybox')))


class ProbeTest(unittest.TestCase):
    """The probe's guest from the same prepare step (probe.run_guest)."""

    def test_amd64_and_arm64(self):
        from gupnm.prepare import arm64
        with mock.patch.object(kernels, 'build_probe', return_value=Path('/p/gupnm_probe')) as bp:
            pay = plan.probe(Path('/k/vmlinux'))
            bp.assert_called_once_with()
            self.assertEqual((pay.image, pay.files, pay.module, pay.busybox),
                             (Path('/k/vmlinux'), {'gupnm_probe': Path('/p/gupnm_probe')},
                              None, None))
            with mock.patch.object(arm64, 'selftest_cc', return_value='aarch64-linux-gnu-gcc'), \
                    mock.patch.object(arm64, 'busybox', return_value=Path('/bb/busybox')):
                pay = plan.probe(Path('/k/Image'), 'arm64')
            bp.assert_called_with(cc='aarch64-linux-gnu-gcc')
            self.assertEqual((pay.arch, pay.busybox), ('arm64', Path('/bb/busybox')))


class CrossCheckChoiceTest(unittest.TestCase):
    """Which gup_test command cross-checks which benchmark (issue 12)."""

    def xc(self, test_args):
        with mock.patch.object(plan, 'selftests_mm', return_value=Path('/mm')), \
                mock.patch.object(plan, 'progress'):
            return plan.crosscheck(mock.Mock(), plan.Asked('x', test_args=test_args,
                                                           selftests='debian-6.12'))

    def test_same_size_and_pages_per_call(self):
        xc = self.xc('-c 32 1 2')
        self.assertEqual((xc.command, xc.binary, xc.pages),
                         ('taskset -c 0 ./gup_test -a -T -m 2 -n 32 -r 100', Path('/mm/gup_test'), 512))
        self.assertEqual(self.xc('-p 1024').command, 'taskset -c 0 ./gup_test -a -T -m 4 -n 1024 -r 100')

    def test_rounds_of_the_test_at_one_thread_with_its_sampling(self):
        xc = self.xc('-r 100 -i 1 1 2 4 8')
        self.assertEqual((xc.test_command, xc.rounds),
                         ('./gup_fast_bench -p 512 -c 512 -r 100 -i 1 1', plan.XCHECK_ROUNDS))
        self.assertEqual(self.xc('').test_command, './gup_fast_bench -p 512 -c 512 -r 3 -i 10 1')

    def test_none_when_nothing_comparable(self):
        self.assertIsNone(self.xc('-B'))
        self.assertIsNone(self.xc('-L 1 2'))     # gup_test -L is the slow path
        self.assertIsNone(self.xc('-p 100'))     # not a whole MiB


class PayloadModuleTest(unittest.TestCase):
    def test_the_type_module_imports_nothing_of_the_runners(self):
        # guest/ takes the type alone: its module must not pull prepare/ in.
        import ast
        src = (Path(plan.__file__).parent / 'payload.py').read_text()
        ours = [n.lineno for n in ast.walk(ast.parse(src))
                if isinstance(n, ast.ImportFrom) and (n.level or (n.module or '').startswith('gupnm'))
                or isinstance(n, ast.Import) and any(a.name.startswith('gupnm') for a in n.names)]
        self.assertEqual(ours, [])

if __name__ == '__main__':
    unittest.main()
