"""probe_checks: the rows it records, with the probe's runs mocked."""
import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm import probe  # noqa: E402
from gupnm.check import probe_checks  # noqa: E402


class FakeTally:
    def __init__(self):
        self.records = []

    def record(self, name, ok, detail=''):
        self.records.append((name, bool(ok), detail))

    def guard(self, name, fn):
        ok, detail = fn()
        self.record(name, ok, detail)


def fake_summary(bug):
    return {'bug_present': bug, 'verdict': 'v', 'problems': [],
            'kernel_release': 'r'}


class VmChecksTest(unittest.TestCase):
    def run_with(self, module_diag, probe_bug):
        t = FakeTally()
        modules = {spec: {'kernel': {'release': 'r'}, 'diagnosis': module_diag[spec]}
                   for spec, _ in probe_checks.AGREE if spec in module_diag}
        with mock.patch.object(probe, 'fetch_image', return_value=('r', Path('/i'), {})), \
                mock.patch.object(probe, 'run_guest', return_value=(None, 'qemu-tcg', [])), \
                mock.patch.object(probe, 'write_reports'), \
                mock.patch.object(probe, 'summary',
                                  side_effect=lambda spec, *a, **k: fake_summary(probe_bug[spec])):
            probe_checks.vm_checks(t, modules)
        return [ok for _, ok, _ in t.records]

    def test_agreeing_runs_pass(self):
        self.assertEqual(self.run_with({'debian:6.1': 'pass', 'debian:6.12': 'regression',
                                        'debian:7.3': 'pass'},
                                       {'debian:6.1': False, 'debian:6.12': True,
                                        'debian:7.3': False}),
                         [True, True, True])

    def test_the_three_debian_kernels_of_the_matrix(self):
        self.assertEqual([s for s, _ in probe_checks.AGREE],
                         ['debian:6.1', 'debian:6.12', 'debian:7.3'])

    def test_a_probe_that_disagrees_fails(self):
        self.assertEqual(self.run_with({'debian:6.1': 'pass', 'debian:6.12': 'regression',
                                        'debian:7.3': 'pass'},
                                       {'debian:6.1': False, 'debian:6.12': False,
                                        'debian:7.3': False}),
                         [True, False, True])

    def test_no_module_run_fails(self):
        self.assertEqual(self.run_with({'debian:7.3': 'pass'},
                                       {'debian:6.1': False, 'debian:6.12': True,
                                        'debian:7.3': False}),
                         [False, False, True])


if __name__ == '__main__':
    unittest.main()
