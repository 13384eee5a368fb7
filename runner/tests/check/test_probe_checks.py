"""probe_checks: the rows it records, with the probe's runs mocked, and
judge() on the module's and the probe's summaries."""
import json
import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm import probe  # noqa: E402
from gupnm.check import probe_checks  # noqa: E402

SPECS = [s for s, _, _ in probe_checks.AGREE]
# What each kernel of the matrix is: the module's diagnosis there.
DIAG = {s: d for s, _, d in probe_checks.AGREE}
# What the probe says on each (bug present?), as it should.
BUG = {s: b for s, b, _ in probe_checks.AGREE}


class FakeTally:
    def __init__(self):
        self.records = []

    def record(self, name, ok, detail=''):
        self.records.append((name, bool(ok), detail))

    def guard(self, name, fn):
        ok, detail = fn()
        self.record(name, ok, detail)


ROWS = ('anon', 'thp', 'hugetlb', 'memfd', 'file', 'shadow', 'secretmem')


def cells(bug, total):
    """The read and write cells of the table, as the rules and @bug say."""
    return [{'backing': b, 'access': a, 'total': total,
             'fast': 0 if b == 'secretmem' or (b == 'shadow' and bug) else total}
            for b in ROWS for a in ('read', 'write')]


def fake_summary(bug, unseen='skip'):
    return {'bug_present': bug, 'verdict': 'v', 'problems': [],
            'kernel_release': 'r', 'table': cells(bug, 16),
            'results': [{'name': 'packet_tx_ring', 'status': 'fail' if bug else 'pass'},
                        {'name': 'longterm_write_pin', 'status': unseen}]}


def module(diag, release='r'):
    return {'kernel': {'release': release}, 'diagnosis': diag,
            'verdicts': cells(diag == 'regression', 512)}


class VmChecksTest(unittest.TestCase):
    def run_with(self, module_diag, probe_bug):
        t = FakeTally()
        modules = {spec: module(module_diag[spec]) for spec in SPECS if spec in module_diag}
        with mock.patch.object(probe, 'image_for', return_value=('r', Path('/i'), {})), \
                mock.patch.object(probe, 'run_guest', return_value=(None, 'qemu-tcg', [])), \
                mock.patch.object(probe, 'write_reports'), \
                mock.patch.object(probe, 'summary',
                                  side_effect=lambda spec, *a, **k: fake_summary(probe_bug[spec])):
            probe_checks.vm_checks(t, modules)
        return [ok for _, ok, _ in t.records]

    def test_agreeing_runs_pass(self):
        self.assertEqual(self.run_with(DIAG, BUG), [True] * len(SPECS))

    def test_the_matrix_kernels(self):
        self.assertEqual(SPECS, ['debian:6.1', 'debian:6.12', 'debian:7.3',
                                 'source:debian-6.12:nofix', 'source:debian-6.12:all',
                                 'source:debian-6.12:wrongfix', 'source:debian-7.3:all',
                                 'source:debian-7.3:nofix', 'source:debian-7.3:wrongfix'])
        # Every one is a kernel the module's matrix runs (its summaries are
        # what the probe is compared with).
        from gupnm.check import matrix
        self.assertLessEqual(set(SPECS), {s for s, _ in matrix.MATRIX})

    def test_negative_controls_must_say_bug(self):
        # The kernels without the fix: a probe that says "no bug" there fails.
        for spec in ('debian:6.12', 'source:debian-6.12:nofix', 'source:debian-7.3:nofix'):
            with self.subTest(spec=spec):
                got = self.run_with(DIAG, dict(BUG, **{spec: False}))
                self.assertEqual(got, [s != spec for s in SPECS])

    def test_a_probe_that_sees_a_bug_on_a_fixed_kernel_fails(self):
        for spec in ('source:debian-6.12:all', 'source:debian-7.3:all',
                     'source:debian-7.3:wrongfix'):
            with self.subTest(spec=spec):
                got = self.run_with(DIAG, dict(BUG, **{spec: True}))
                self.assertEqual(got, [s != spec for s in SPECS])

    def test_no_module_run_fails(self):
        got = self.run_with({'debian:7.3': 'pass'}, BUG)
        self.assertEqual(got, [s == 'debian:7.3' for s in SPECS])

    def test_titles_say_what_is_asserted(self):
        t = FakeTally()
        with mock.patch.object(probe, 'image_for', return_value=('r', Path('/i'), {})), \
                mock.patch.object(probe, 'run_guest', return_value=(None, 'qemu-tcg', [])), \
                mock.patch.object(probe, 'write_reports'), \
                mock.patch.object(probe, 'summary',
                                  side_effect=lambda spec, *a, **k: fake_summary(BUG[spec])):
            probe_checks.vm_checks(t, {s: module(DIAG[s]) for s in SPECS})
        names = [n for n, _, _ in t.records]
        self.assertEqual(len(set(names)), len(names))
        self.assertIn('probe source:debian-7.3:nofix: bug, as the module found on '
                      'the same kernel, and the module\'s table where both judged', names)
        self.assertTrue(any(n.startswith('probe source:debian-6.12:wrongfix: no bug')
                            and 'unseen' in n for n in names))


class JudgeTest(unittest.TestCase):

    def test_fixed_and_not_fixed(self):
        self.assertTrue(probe_checks.judge(True, 'regression', module('regression'),
                                           fake_summary(True))[0])
        self.assertTrue(probe_checks.judge(False, 'pass', module('pass'),
                                           fake_summary(False))[0])
        self.assertFalse(probe_checks.judge(True, 'regression', module('regression'),
                                            fake_summary(False))[0])

    def test_the_module_must_have_found_what_the_kernel_is(self):
        # A nofix kernel on which the module passed: the row fails even though
        # module and probe "agree" (both wrong).
        ok, detail = probe_checks.judge(True, 'regression', module('pass'),
                                        fake_summary(False))
        self.assertFalse(ok)
        self.assertIn("not 'regression'", detail)

    def test_another_kernel(self):
        ok, detail = probe_checks.judge(False, 'pass', module('pass', release='x'),
                                        fake_summary(False))
        self.assertFalse(ok)
        self.assertIn('not the same kernel', detail)

    def test_wrongfix(self):
        ok, detail = probe_checks.judge(False, 'wrongfix', module('wrongfix'),
                                        fake_summary(False))
        self.assertTrue(ok, detail)
        self.assertIn('write 512/512 fast', detail)
        self.assertIn('14 cells judged by both, differing: none', detail)
        self.assertIn('cannot see', detail)
        # The probe sees a bug: the half both see disagrees.
        self.assertFalse(probe_checks.judge(False, 'wrongfix', module('wrongfix'),
                                            fake_summary(True))[0])
        # The probe claims to have judged the long-term pin: it cannot.
        ok, detail = probe_checks.judge(False, 'wrongfix', module('wrongfix'),
                                        fake_summary(False, unseen='pass'))
        self.assertFalse(ok)
        self.assertIn('longterm_write_pin: pass', detail)
        # The module did not find the wrong fix on the wrong-fix kernel.
        self.assertFalse(probe_checks.judge(False, 'wrongfix', module('pass'),
                                            fake_summary(False))[0])

    def test_the_tables_must_agree_cell_for_cell(self):
        # The probe saw memfd's write go slow where the module saw it fast.
        s = fake_summary(False)
        next(c for c in s['table'] if c['backing'] == 'memfd'
             and c['access'] == 'write')['fast'] = 0
        ok, detail = probe_checks.judge(False, 'pass', module('pass'), s)
        self.assertFalse(ok)
        self.assertIn('memfd write: module fast (512/512), probe slow (0/16)', detail)
        # A probe without its table (no -t, or it skipped): nothing compared.
        s = fake_summary(False)
        s['table'] = s['table'][:4]
        ok, detail = probe_checks.judge(False, 'pass', module('pass'), s)
        self.assertFalse(ok)
        self.assertIn('4 cells judged by both', detail)

    def test_real_tables_agree(self):
        # Module and probe on the same Debian series (fixtures of both).
        data = Path(__file__).resolve().parents[1] / 'data'
        for series, probe_run, both in (('6.1', 'debian-6.1.0-57', 14),
                                        ('6.12', 'debian-6.12.118', 21),
                                        ('7.3', 'debian-7.3.4', 21)):
            with self.subTest(series):
                mod = json.loads((data / 'real' / f'table-debian-{series}.summary.json')
                                 .read_text())
                res = probe.parse((data / 'probe' / f'{probe_run}-table.txt').read_text())
                self.assertEqual(probe.table_agreement(mod, {'table': res.table}),
                                 (both, []))
        # The fixed kernel's probe against the buggy kernel's module: the
        # bug's two cells differ.
        mod = json.loads((data / 'real' / 'table-debian-6.12.summary.json').read_text())
        res = probe.parse((data / 'probe' / 'debian-7.3.4-table.txt').read_text())
        both, differ = probe.table_agreement(mod, {'table': res.table})
        self.assertEqual([d.split(':')[0] for d in differ], ['shadow read', 'shadow write'])

    def test_no_verdict_from_the_probe(self):
        self.assertFalse(probe_checks.judge(False, 'pass', module('pass'),
                                            fake_summary(None))[0])
        self.assertFalse(probe_checks.judge(False, 'wrongfix', module('wrongfix'),
                                            fake_summary(None))[0])


if __name__ == '__main__':
    unittest.main()
