"""Unit tests for gupnm.check.matrix (the expectations about one real-kernel run)."""

import copy
import io
import json
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm import cli  # noqa: E402
from gupnm.check import matrix  # noqa: E402
from gupnm.guest import vmrun  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402
from gupnm.parse.status import parse_status  # noqa: E402
from gupnm.parse.tap import PRE_65, parse_tap, summarize  # noqa: E402
from gupnm.prepare.kernels import GUP_TEST_BUILTIN, GUP_TEST_RUNNERS  # noqa: E402

REAL = Path(__file__).resolve().parents[1] / 'data' / 'real'

# Check names, as assertions() spells them.
RAN = 'the guest ran the test to the end'
SPLAT = 'no kernel splat (panic, Oops, BUG, WARNING, KASAN, lockdep, kmemleak, leak)'
SHADOW_BUG = 'driver read/write via GUP-fast: 0/N (bug present)'
SHADOW_FIXED = 'driver read/write via GUP-fast: N/N'
NAMES_BUG = "the failure names the bug ('GUP-fast rejects NULL-mapping order-0 folios')"
LONGTERM = ("the long-term writable pin of the driver's pages took the path the kernel version "
            'calls for (slow since 6.5)')
WRONGFIX = ("the long-term writable pin of the driver's pages went through GUP-fast "
            '(the wrong fix)')
NAMES_WRONGFIX = ("the failure names the wrong fix ('FOLL_LONGTERM|FOLL_WRITE pin of "
                  "NULL-mapping folios went through GUP-fast')")
ANON = 'row anon: read and write N/N'
THP = 'row thp: read and write N/N'
HUGETLB = 'row hugetlb: read and write N/N'
MEMFD = 'row memfd: read and write N/N'
FILE = 'row file: read and write N/N'
SECRETMEM = 'row secretmem: read and write 0/N (refused)'
LT_ANON = 'row anon: long-term writable pin N/N'
LT_THP = 'row thp: long-term writable pin N/N'
LT_HUGETLB = 'row hugetlb: long-term writable pin N/N'
LT_MEMFD = 'row memfd: long-term writable pin N/N'
LT_FILE = 'row file: long-term writable pin as the kernel version calls for'
LT_SECRETMEM = 'row secretmem: long-term writable pin 0/N'
ROWS = [ANON, THP, HUGETLB, MEMFD, FILE, SECRETMEM,
        LT_ANON, LT_THP, LT_HUGETLB, LT_MEMFD, LT_FILE, LT_SECRETMEM]
TABLE = 'every case of the table reported (21 verdicts)'
JUDGED = 'every cell judged: none skipped'
OTHERS_BUG = 'no other case fails than verdict_driver_read, verdict_driver_write'
OTHERS_WRONGFIX = 'no other case fails than verdict_driver_longterm_write'
OTHERS = 'no other case fails'
EXIT1 = 'test exit status 1'
EXIT0 = 'test exit status 0'
PRE65_LT = ("before 6.5: the long-term writable pin of the driver's pages went through "
            'GUP-fast, and the runner marked that XFAIL')
PRE65_PASS = "the runner's verdict: PASS (the regression is absent)"
DRIVER = 'the driver unloads after the test'
BUILT_IN = 'gup_test is built in: no module loaded or unloaded'
MEMFREE = 'free memory back within 16 MiB after rmmod'
MEMFREE_BUILT_IN = 'free memory back within 16 MiB after the test'
MEMFREE_DEBUG = 'free memory back within 64 MiB after rmmod'
STRESS = 'stress program: malformed-input and race cases all pass (35 cases)'
BENCH = 'benchmark measured shadow and anon (non-zero medians: a real clocksource)'
PAGE_OWNER = ('no user page (anon, shmem) left allocated by the test or the stress '
              'program after they exited (page_owner)')
VMTESTS_BUG = 'run_vmtests.sh -t gup_test ran it and reported not ok'


def load_real(release='6.12'):
    """A real run of the table-driven test and the stress program on Debian
    6.12.118 (bug present), 6.1 (before the regression and before the
    long-term check: file's and shadow's long-term writable pins go fast
    there) or 7.3 (the fix)."""
    summary = json.loads((REAL / f'table-debian-{release}.summary.json').read_text())
    tap_text = parse_status((REAL / f'table-debian-{release}.status.log').read_text()).tap
    return summary, tap_text


def as_fixed(summary, tap_text):
    """The 6.12 run as a 6.12 kernel with the fix reports it (measured on
    source:debian-6.12:all): shadow N/N, plain pins fast, long-term slow."""
    s = copy.deepcopy(summary)
    for v in s['verdicts']:
        if v['backing'] == 'shadow' and v['access'] in ('read', 'write'):
            v['fast'], v['tries'] = v['total'], 1
    for c in s['cases']:
        c['status'] = 'pass'
    s['exit_status'] = 0
    return s, tap_text.replace('GUP-fast rejects', 'GUP-fast (was) rejecting')


def as_wrongfix(summary, tap_text):
    """... and as a kernel whose fix lets every NULL mapping through."""
    s, tap_text = as_fixed(summary, tap_text)
    v = next(v for v in s['verdicts'] if v['backing'] == 'shadow'
             and v['access'] == 'longterm_write')
    v['fast'], v['tries'] = 512, 10
    next(c for c in s['cases'] if c['name'] == 'verdict_shadow_longterm_write')['status'] = 'fail'
    s['exit_status'] = 1
    s['diagnosis'] = 'wrongfix'
    return s, tap_text + ('# FAIL: FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went '
                          'through GUP-fast: 512/512 shadow pages via GUP-fast (longterm_write)\n')


def failing(checks):
    return [name for name, ok, _ in checks if not ok]


def by_name(checks):
    out = {}
    for name, ok, detail in checks:
        assert name not in out, f'duplicate check name {name!r}'
        out[name] = (ok, detail)
    return out


class RealSummaryTest(unittest.TestCase):
    """The summaries the runner wrote for real boots of Debian 6.12.117 (bug
    present) and 6.1 (pass), each with the stress program."""

    @classmethod
    def setUpClass(cls):
        cls.summary, cls.tap_text = load_real()

    def test_bug_expected_all_ok(self):
        checks = matrix.assertions(self.summary, self.tap_text, expect="bug")
        self.assertEqual(failing(checks), [])
        self.assertEqual([n for n, _, _ in checks],
                         [RAN, SPLAT, SHADOW_BUG, NAMES_BUG, LONGTERM, *ROWS,
                          TABLE, JUDGED, OTHERS_BUG, EXIT1, DRIVER, MEMFREE, STRESS, BENCH])

    def test_bool_bug_is_the_old_spelling(self):
        self.assertEqual(matrix.assertions(self.summary, self.tap_text, bug=True),
                         matrix.assertions(self.summary, self.tap_text, expect="bug"))
        with self.assertRaises(ValueError):
            matrix.assertions(self.summary, self.tap_text, expect="fixed")

    def test_debian_6_1_passes_with_the_long_term_pins_fast(self):
        summary, tap_text = load_real('6.1')
        checks = matrix.assertions(summary, tap_text, expect="pre65")
        self.assertEqual(failing(checks), [])
        d = by_name(checks)
        self.assertEqual(d[PRE65_LT][1], 'longterm_write 512/512 (expected 512)')
        self.assertEqual(d[LT_FILE][1], 'longterm_write 512/512 (expected 512)')
        self.assertEqual(summary['notes'], [
            f'verdict_shadow_longterm_write: XFAIL: {PRE_65}',
            f'verdict_file_longterm_write: XFAIL: {PRE_65}'])
        # Taken for a kernel from 6.5 on, the long-term pin is wrong; taken
        # for a wrong fix, it fails on the naming (the runner expected
        # GUP-fast there: no long-term check before 6.5, nothing wrong).
        self.assertEqual(failing(matrix.assertions(summary, tap_text, expect="pass")),
                         [LONGTERM, EXIT0])
        self.assertEqual(failing(matrix.assertions(summary, tap_text, expect="wrongfix")),
                         [WRONGFIX, NAMES_WRONGFIX])

    def test_details_name_what_was_seen(self):
        d = by_name(matrix.assertions(self.summary, self.tap_text, expect="bug"))
        self.assertEqual(d[SHADOW_BUG][1], 'read 0/512 (expected 512), '
                                           'write 0/512 (expected 512)')
        self.assertEqual(d[LONGTERM][1], 'longterm_write 0/512 (expected 0)')
        self.assertEqual(d[ANON][1], 'read 512/512 (expected 512), write 512/512 (expected 512)')
        self.assertEqual(d[SECRETMEM][1], 'read 0/512 (expected 0), write 0/512 (expected 0)')
        # The log's "shadow" cases, by today's names.
        self.assertEqual(d[OTHERS_BUG][1], 'failed: verdict_driver_read, verdict_driver_write')
        self.assertEqual(d[EXIT1][1], 'got 1')
        self.assertEqual(d[DRIVER][1], 'rmmod: ok')

    def test_fixed_shape_passes_and_fails_as_bug(self):
        s, tap_text = as_fixed(self.summary, self.tap_text)
        self.assertEqual(failing(matrix.assertions(s, tap_text, expect="pass")), [])
        self.assertEqual(failing(matrix.assertions(s, tap_text, expect="bug")),
                         [SHADOW_BUG, NAMES_BUG, EXIT1])
        self.assertEqual(failing(matrix.assertions(s, tap_text, expect="wrongfix")),
                         [WRONGFIX, NAMES_WRONGFIX, EXIT1])

    def test_wrongfix_shape(self):
        s, tap_text = as_wrongfix(self.summary, self.tap_text)
        checks = matrix.assertions(s, tap_text, expect="wrongfix")
        self.assertEqual(failing(checks), [])
        self.assertEqual([n for n, _, _ in checks][2:6],
                         [SHADOW_FIXED, WRONGFIX, NAMES_WRONGFIX, ANON])
        self.assertIn(OTHERS_WRONGFIX, [n for n, _, _ in checks])
        # The real fix's expectation catches it, by name.
        self.assertEqual(failing(matrix.assertions(s, tap_text, expect="pass")),
                         [LONGTERM, OTHERS, EXIT0])
        # A wrong fix that the test failed to name is not accepted.
        s['diagnosis'] = 'other'
        self.assertEqual(failing(matrix.assertions(s, tap_text, expect="wrongfix")),
                         [NAMES_WRONGFIX])

    def test_debug_mode(self):
        s = copy.deepcopy(self.summary)
        s['page_owner'] = {'user_pages': 0, 'other_pages': 3}
        checks = matrix.assertions(s, self.tap_text, expect="bug", debug=True)
        self.assertEqual(failing(checks), [])
        names = [n for n, _, _ in checks]
        self.assertNotIn(BENCH, names)
        self.assertIn(MEMFREE_DEBUG, names)
        self.assertIn(PAGE_OWNER, names)

    def test_the_v4_names_are_judged_alike(self):
        # v4 of the test calls the row "driver" and prints no witness line.
        s = copy.deepcopy(self.summary)
        for v in s['verdicts']:
            v['backing'] = v['backing'].replace('shadow', 'driver')
        for c in s['cases']:
            c['name'] = c['name'].replace('verdict_shadow_', 'verdict_driver_')
        tap_text = self.tap_text.replace('verdict_shadow_', 'verdict_driver_').replace(
            'verdict shadow ', 'verdict driver ').replace('witness: proven', '')
        for expect in ('bug', 'pass', 'wrongfix'):
            with self.subTest(expect=expect):
                self.assertEqual([c[:2] for c in matrix.assertions(s, tap_text, expect)],
                                 [c[:2] for c in matrix.assertions(self.summary,
                                                                   self.tap_text, expect)])

    def test_gup_test_built_in(self):
        # v4 of the series: a source tree's gup_test built in, nothing to
        # load or unload; free memory is compared across the test alone.
        s = copy.deepcopy(self.summary)
        s['gup_test'] = {'kind': 'built in', 'module': None, 'why': 'x'}
        s['rmmod'] = None
        checks = by_name(matrix.assertions(s, self.tap_text, expect="bug"))
        self.assertNotIn(DRIVER, checks)
        self.assertNotIn(MEMFREE, checks)
        self.assertEqual((checks[BUILT_IN][0], checks[MEMFREE_BUILT_IN][0]), (True, True))
        s['rmmod'] = 'ok'                 # something was unloaded: not built in
        self.assertEqual(failing(matrix.assertions(s, self.tap_text, expect="bug")), [BUILT_IN])
        # Said by the kernel's source alone (Prepared.source["gup_test"]).
        del s['gup_test']
        s['rmmod'] = None
        s['kernel']['source']['gup_test'] = 'built in'
        self.assertEqual(failing(matrix.assertions(s, self.tap_text, expect="bug")), [])
        s['kernel']['source']['gup_test'] = "the runner's module (out of tree)"
        self.assertEqual(failing(matrix.assertions(s, self.tap_text, expect="bug")), [DRIVER])

    def test_input_not_mutated(self):
        before = copy.deepcopy(self.summary)
        matrix.assertions(self.summary, self.tap_text, expect="bug", debug=True)
        matrix.assertions(self.summary, self.tap_text, expect="pass")
        self.assertEqual(self.summary, before)


class MutationTest(unittest.TestCase):
    """Each corruption of the real summary flips exactly the check it concerns."""

    @classmethod
    def setUpClass(cls):
        cls.base, cls.tap_text = load_real()

    def setUp(self):
        self.s = copy.deepcopy(self.base)

    def fails(self, expect="bug", tap_text=None, **kw):
        return failing(matrix.assertions(self.s, self.tap_text if tap_text is None else tap_text,
                                         expect, **kw))

    def verdict(self, backing, access):
        return next(v for v in self.s['verdicts']
                    if v['backing'] == backing and v['access'] == access)

    def case(self, name):
        return next(c for c in self.s['cases'] if c['name'] == name)

    def test_drop_control_verdict(self):
        self.s['verdicts'].remove(self.verdict('memfd', 'write'))
        self.assertEqual(self.fails(), [MEMFD])
        self.s['verdicts'].remove(self.verdict('hugetlb', 'longterm_write'))
        self.assertEqual(self.fails(), [MEMFD, LT_HUGETLB])
        d = by_name(matrix.assertions(self.s, self.tap_text, "bug"))
        self.assertEqual(d[MEMFD][1], 'no verdict line for memfd write')

    def test_drop_shadow_verdict(self):
        self.s['verdicts'].remove(self.verdict('shadow', 'write'))
        self.assertEqual(self.fails(), [SHADOW_BUG])

    def test_long_term_pin_went_fast_on_a_bug_kernel(self):
        self.verdict('shadow', 'longterm_write')['fast'] = 512
        self.assertEqual(self.fails(), [LONGTERM])

    def test_long_term_case_failed(self):
        self.case('verdict_shadow_longterm_write')['status'] = 'fail'
        self.assertEqual(self.fails(), [LONGTERM, OTHERS_BUG])

    def test_long_term_case_skipped(self):
        self.case('verdict_shadow_longterm_write')['status'] = 'skip'
        self.s['verdicts'].remove(self.verdict('shadow', 'longterm_write'))
        self.assertEqual(self.fails(), [LONGTERM, JUDGED])

    def test_no_witness_line_asked(self):
        # v4 of the test prints no "witness: proven" line.
        self.assertEqual(self.fails(tap_text=self.tap_text.replace('witness: proven', '')), [])

    def test_a_skipped_row_is_not_judged(self):
        for c in ('read', 'write', 'longterm_write'):
            self.case(f'verdict_hugetlb_{c}').update(status='skip', reason='no free huge page')
            self.s['verdicts'].remove(self.verdict('hugetlb', c))
        self.assertEqual(self.fails(), [HUGETLB, LT_HUGETLB, JUDGED])
        # Pages over 32 MiB are no excuse: 64K-page kernels map an mTHP.
        for c in ('read', 'write', 'longterm_write'):
            self.case(f'verdict_hugetlb_{c}')['reason'] = 'every huge page maps more than 32 MiB here'
        self.assertEqual(self.fails(), [HUGETLB, LT_HUGETLB, JUDGED])

    def test_file_long_term_pin_fast_from_6_5(self):
        self.verdict('file', 'longterm_write')['fast'] = 512
        self.case('verdict_file_longterm_write')['status'] = 'fail'
        self.assertEqual(self.fails(), [LT_FILE, OTHERS_BUG])

    def test_splat(self):
        self.s['splats'] = [{'kind': 'WARNING', 'line': 1, 'excerpt': 'WARNING: at mm/gup.c'}]
        self.assertEqual(self.fails(), [SPLAT])

    def test_problems(self):
        self.s['problems'] = ['timed out after 300 s']
        self.assertEqual(self.fails(), [RAN])

    def test_wrong_exit_status(self):
        self.s['exit_status'] = 0
        self.assertEqual(self.fails(), [EXIT1])

    def test_rmmod_failed(self):
        self.s['rmmod'] = 'failed'
        self.assertEqual(self.fails(), [DRIVER])

    def test_memfree_tolerance(self):
        for delta, ok in ((16384, True), (16385, False), (0, True), (-4096, True)):
            with self.subTest(delta=delta):
                self.s['memfree_delta_kb'] = delta
                self.assertEqual(self.fails(), [] if ok else [MEMFREE])

    def test_memfree_missing(self):
        del self.s['memfree_delta_kb']
        self.assertEqual(self.fails(), [MEMFREE])

    def test_secretmem_taken_by_gup_fast(self):
        self.verdict('secretmem', 'read')['fast'] = 1
        self.assertEqual(self.fails(), [SECRETMEM])

    def test_secretmem_long_term_pin_taken(self):
        self.verdict('secretmem', 'longterm_write')['fast'] = 512
        self.case('verdict_secretmem_longterm_write')['status'] = 'fail'
        self.assertEqual(self.fails(), [LT_SECRETMEM, OTHERS_BUG])

    def test_anon_partially_refused(self):
        self.verdict('anon', 'read')['fast'] = 511
        self.assertEqual(self.fails(), [ANON])

    def test_control_with_zero_pages(self):
        v = self.verdict('anon', 'write')
        v['fast'] = v['total'] = 0
        self.assertEqual(self.fails(), [ANON])

    def test_gated_controls_skip_everything(self):
        # GUP-fast unavailable: no verdict line at all, every case skipped.
        self.s['verdicts'] = []
        for c in self.s['cases']:
            c['status'] = 'skip'
        self.assertEqual(self.fails(), [SHADOW_BUG, NAMES_BUG, LONGTERM, *ROWS, JUDGED])

    def test_shadow_partially_fast(self):
        self.verdict('shadow', 'read')['fast'] = 1
        self.assertEqual(self.fails(), [SHADOW_BUG])

    def test_case_missing_from_table(self):
        self.s['cases'] = [c for c in self.s['cases'] if c['name'] != 'verdict_memfd_read']
        self.assertEqual(self.fails(), [TABLE])

    def test_other_case_fails(self):
        self.case('verdict_anon_longterm_write')['status'] = 'fail'
        self.assertEqual(self.fails(), [LT_ANON, OTHERS_BUG])

    def test_no_results_at_all(self):
        self.s['cases'] = []
        self.assertEqual(self.fails(), ['the test printed results'])

    def test_bug_message_missing_from_tap(self):
        self.assertEqual(self.fails(tap_text='not ok 7 verdict_shadow_read'), [NAMES_BUG])

    def test_no_bench(self):
        self.s['bench'] = []
        self.assertEqual(self.fails(), [BENCH])

    def test_bench_zero_median(self):
        self.s['bench'][0]['median'] = 0.0
        self.assertEqual(self.fails(), [BENCH])

    def test_stress_case_fails(self):
        next(c for c in self.s['stress']['cases']
             if c['name'] == 'race_kill_verdict')['status'] = 'fail'
        self.s['stress']['exit'] = 1
        self.assertEqual(self.fails(), [STRESS])
        d = by_name(matrix.assertions(self.s, self.tap_text, "bug"))
        self.assertIn('not passing: race_kill_verdict', d[STRESS][1])

    def test_stress_not_run_is_not_asked(self):
        del self.s['stress']
        self.assertNotIn(STRESS, [n for n, _, _ in matrix.assertions(self.s, self.tap_text, "bug")])

    def test_stress_died(self):
        self.s['stress'].update(exit=None, cases=[])
        self.assertEqual(self.fails(), ['stress program: malformed-input and race cases all '
                                        'pass (0 cases)'])

    def test_run_vmtests_outer(self):
        self.s['run_vmtests'] = {'outer': 'FAIL: gup_null_mapping'}
        self.assertEqual(self.fails(), [])
        self.s['run_vmtests'] = {'outer': 'PASS: 1 passed, 0 skipped (no shadow verdict)'}
        self.assertEqual(self.fails(), [VMTESTS_BUG])

    def test_empty_summary(self):
        # Nothing at all: the run check and 'printed results' fail, the
        # per-case checks are not repeated, none raises.
        checks = matrix.assertions({}, '', expect="bug")
        self.assertEqual([n for n, ok, _ in checks if ok], [SPLAT])
        self.assertEqual([n for n, ok, _ in checks if not ok],
                         ['the guest ran the test to the end', 'the test printed results'])


class PageOwnerTest(unittest.TestCase):
    """Debug runs: user pages left allocated (page_owner) must be 0."""

    def verdict(self, page_owner):
        summary, tap_text = load_real()
        if page_owner is not None:
            summary['page_owner'] = page_owner
        return {n: ok for n, ok, _ in matrix.assertions(summary, tap_text, "bug", debug=True)}

    def test_clean(self):
        self.assertTrue(self.verdict({'user_pages': 0, 'other_pages': 612})[PAGE_OWNER])

    def test_leak(self):
        # Five anon/shmem pages kept by a skipped put_page() (seen on a real
        # debug kernel with the leak injected).
        self.assertFalse(self.verdict({'user_pages': 5, 'other_pages': 518})[PAGE_OWNER])

    def test_not_reported(self):
        self.assertFalse(self.verdict(None)[PAGE_OWNER])

    def test_not_checked_outside_debug(self):
        summary, tap_text = load_real()
        names = [n for n, _, _ in matrix.assertions(summary, tap_text, "bug")]
        self.assertNotIn(PAGE_OWNER, names)


class MatrixTableTest(unittest.TestCase):

    def test_specs_parse(self):
        from gupnm.prepare import kernels
        for spec, expect in matrix.MATRIX + matrix.DEBUG_MATRIX:
            with self.subTest(spec=spec):
                kernels.parse_spec(spec)
                self.assertIn(expect, ("pass", "bug", "wrongfix", "pre65"))
        # The fix is what flips the verdict: on both trees, the reverted fix
        # and the wrong fix stay in the matrix as negative controls.
        for tree in ("debian-6.12", "debian-7.3"):
            self.assertIn((f"source:{tree}:nofix", "bug"), matrix.MATRIX)
            self.assertIn((f"source:{tree}:all", "pass"), matrix.MATRIX)
            self.assertIn((f"source:{tree}:wrongfix", "wrongfix"), matrix.MATRIX)

    def test_args_fit_cli_options(self):
        args = matrix._args('debug', matrix.DEBUG_TEST_ARGS)
        self.assertEqual(cli._options(args), vmrun.VmOptions(
            accel='auto', vcpus=2, memory_mb=1536, append='page_owner=on', timeout=900,
            retries=2))
        asked = cli._asked('source:debian-6.12', args)
        self.assertEqual((asked.config, asked.test_args, asked.stress),
                         ('debug', '-B', '-p 32 -R 1000'))
        args = matrix._args('default', '')
        asked = cli._asked('source:debian-6.12', args)
        self.assertEqual((cli._options(args).timeout, asked.config, asked.test_args,
                          asked.stress), (300, 'default', '', ''))

    def test_stress_once_per_driver_build(self):
        # Every Debian kernel and every tree's :all run it; a tree's negative
        # controls (mm/gup.c changed only) share :all's driver and skip it.
        stressed = {spec for spec, _ in matrix.MATRIX
                    if matrix.stress_args(spec, 'default') is not None}
        self.assertEqual(stressed, {'debian:6.1', 'debian:6.12', 'debian:7.3',
                                    'source:debian-6.12:all', 'source:debian-7.3:all'})
        self.assertEqual(matrix.stress_args('source:debian-6.12:all', 'debug'), '-p 32 -R 1000')
        self.assertIsNone(matrix.stress_args('source:debian-7.3:mutant-anonslow', 'default'))
        self.assertIsNone(matrix._args('default', '', 'source:debian-6.12:nofix').stress)


class FakeTally:
    def __init__(self):
        self.records = []
        self.details = {}

    def record(self, name, ok, detail=''):
        self.records.append((name, ok))
        self.details[name] = detail
        return ok

    def failed(self):
        return [n for n, ok in self.records if not ok]


class RunMatrixTest(unittest.TestCase):
    """_run() with run_one mocked: one 'prepared and booted' check plus the assertions."""

    def test_run_matrix(self):
        summary, tap_text = load_real()

        def fake_run_one(spec, args, outdir):
            if spec.startswith('source:'):
                raise RunnerError('kernel build failed')
            return vmrun.RunOutcome(summary, 1, outdir, tap_text)

        t = FakeTally()
        with mock.patch.object(cli, 'run_one', side_effect=fake_run_one) as run_one, \
                redirect_stdout(io.StringIO()) as out:
            matrix.run_matrix(t)
        specs = [c.args[0] for c in run_one.call_args_list]
        self.assertEqual(specs, [s for s, _ in matrix.MATRIX])
        # No test arguments: every kernel runs the test directly.
        self.assertTrue(all(c.args[1].test_args == '' for c in run_one.call_args_list))
        bad = [n for n, ok in t.records if not ok]
        # The bug-present run given to every kernel fails exactly the rows
        # that expect a pass; the source kernels fail to build.
        want = []
        for spec, expect in matrix.MATRIX:
            if spec.startswith('source:'):
                want.append(f'vm {spec}: prepared and booted')
            elif expect == 'pass':
                want += [f'vm {spec}: {SHADOW_FIXED}',
                         f'vm {spec}: {OTHERS}', f'vm {spec}: {EXIT0}']
            elif expect == 'pre65':
                want += [f'vm {spec}: {SHADOW_FIXED}',
                         f'vm {spec}: {PRE65_LT}', f'vm {spec}: {OTHERS}',
                         f'vm {spec}: {PRE65_PASS}']
        self.assertEqual(bad, want)
        self.assertIn(('vm debian:6.12: prepared and booted', True), t.records)
        self.assertIn('# vm debian:6.12: shadow 0/512 fast', out.getvalue())

    def test_run_debug_is_direct_with_debug_args(self):
        summary, tap_text = load_real()
        seen = []

        def fake_run_one(spec, args, outdir):
            seen.append((spec, args.config, args.test_args, args.timeout))
            return vmrun.RunOutcome(summary, 1, outdir, tap_text)

        t = FakeTally()
        with mock.patch.object(cli, 'run_one', side_effect=fake_run_one), \
                redirect_stdout(io.StringIO()):
            matrix.run_debug(t)
        # Test arguments make vmrun run the binary directly (test_vmrun).
        self.assertEqual(seen, [(s, 'debug', '-B', 900) for s, _ in matrix.DEBUG_MATRIX])
        self.assertTrue(all(n.startswith('vm source:debian-6.12:') and '(debug)' in n
                            for n, _ in t.records))



NO_MADVISE = 'no madvise() here (CONFIG_ADVISE_SYSCALLS)'


def without_madvise(summary):
    """@summary as v4 of the test reports it on a kernel without madvise()
    (--config thp-always): THP set to "never", the thp row's cells skipped
    naming why, and no verdict line for them (run_cell() asks nothing)."""
    s = copy.deepcopy(summary)
    s['verdicts'] = [v for v in s['verdicts'] if v['backing'] != 'thp']
    for c in s['cases']:
        if c['name'].startswith('verdict_thp_'):
            s['counts'][c['status']] -= 1
            s['counts']['skip'] += 1
            c.update(status='skip', reason=NO_MADVISE)
    return s


def as_anonslow(summary, tap_text):
    """The fixed run as a kernel without madvise() whose GUP-fast refuses
    every anonymous folio reports it: anon read, write and long-term 0/N,
    those three cases fail; the thp row unjudged (without_madvise)."""
    s, tap_text = as_fixed(summary, tap_text)
    for v in s['verdicts']:
        if v['backing'] == 'anon':
            v['fast'], v['tries'] = 0, 10
    for c in s['cases']:
        if c['name'].startswith('verdict_anon_'):
            c['status'] = 'fail'
    s['exit_status'] = s['exit_code'] = 1
    return without_madvise(s), tap_text


class ThpSourceTest(unittest.TestCase):
    """THP "always" without madvise() on linux-source-7.3: the fix and the
    anonslow mutant (issue 32). v4 of the test sets THP "never" there and
    skips the thp row naming why (without_madvise)."""

    ANON0 = 'control anon read/write via GUP-fast: 0/N (order-0 anon refused)'
    FAILED = ('the failed cases are verdict_anon_longterm_write, verdict_anon_read, '
              'verdict_anon_write, no other')
    EXITS = 'test exit status 1, runner exit 1'
    RATIOS = "every benchmark cell's control was order-0 (a ratio each)"
    JUDGED = "every cell judged: none skipped but 3 this kernel's config hides"
    UNJUDGED = [f"verdict_thp_{c} unjudged, naming why ('{NO_MADVISE}')"
                for c in ('longterm_write', 'read', 'write')]

    @classmethod
    def setUpClass(cls):
        cls.summary, cls.tap = load_real()

    def fixed(self):
        s, tap = as_fixed(self.summary, self.tap)
        return without_madvise(s), tap

    def test_table(self):
        self.assertEqual(matrix.THP_SOURCE, [('source:debian-7.3:all', 'pass'),
                                             ('source:debian-7.3:anonslow', 'anonslow')])
        from gupnm.prepare import kconfig, kernels
        for spec, _ in matrix.THP_SOURCE:
            kernels.parse_spec(spec)
        self.assertIn(matrix.THP_SOURCE_CONFIG, kconfig.VARIANTS)
        self.assertEqual(matrix.NO_MADVISE, {f'verdict_thp_{c}': NO_MADVISE
                                             for c in matrix.CASES})

    def test_fixed_passes_with_a_ratio_per_cell(self):
        s, tap = self.fixed()
        s['bench_ratio'] = [{'threads': 1, 'shadow_anon_ratio': 1.0},
                            {'threads': 2, 'shadow_anon_ratio': 0.66}]
        checks = matrix.thp_source_assertions(s, tap, 'pass')
        self.assertEqual(failing(checks), [])
        names = [n for n, _, _ in checks]
        self.assertIn(self.RATIOS, names)
        # The thp row is named unjudged, its controls not asked.
        self.assertEqual([n for n in names if 'thp' in n or n.startswith('every cell')],
                         [self.JUDGED, *self.UNJUDGED])
        self.assertEqual(by_name(checks)[self.UNJUDGED[1]][1], f'skip: {NO_MADVISE}')
        # A cell whose control was a THP: refused, no ratio: not ok.
        s['bench_ratio'][1] = {'threads': 2, 'shadow_anon_ratio': None,
                               'refused': 'not order-0: shadow 0, anon 512 of 512 pages'}
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'pass')), [self.RATIOS])
        s['bench_ratio'] = []
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'pass')), [self.RATIOS])

    def test_fixed_with_the_thp_row_judged_is_not_ok(self):
        # The v3 shape: a THP asked for and judged where madvise() is absent.
        s, tap = as_fixed(self.summary, self.tap)
        s['bench_ratio'] = [{'threads': 1, 'shadow_anon_ratio': 1.0}]
        checks = matrix.thp_source_assertions(s, tap, 'pass')
        self.assertEqual(failing(checks), self.UNJUDGED)
        self.assertEqual(by_name(checks)[self.UNJUDGED[0]][1], 'pass: None')
        # Skipped for another reason: not what this config hides.
        s, tap = self.fixed()
        s['bench_ratio'] = [{'threads': 1, 'shadow_anon_ratio': 1.0}]
        for c in s['cases']:
            if c['name'] == 'verdict_thp_write':
                c['reason'] = 'no THP here (CONFIG_TRANSPARENT_HUGEPAGE)'
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'pass')),
                         [self.UNJUDGED[2]])

    def test_anonslow_fails_on_anon_only(self):
        s, tap = as_anonslow(self.summary, self.tap)
        checks = matrix.thp_source_assertions(s, tap, 'anonslow')
        self.assertEqual(failing(checks), [])
        self.assertEqual([n for n, _, _ in checks],
                         [RAN, SPLAT, self.ANON0, TABLE, self.JUDGED, *self.UNJUDGED,
                          self.FAILED, self.EXITS])

    def test_anonslow_passing_is_not_ok(self):
        # The bug: a THP anon control passes the mutant, exit 0.
        s, tap = self.fixed()
        s['exit_code'] = 0
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'anonslow')),
                         [self.ANON0, self.FAILED, self.EXITS])

    def test_anonslow_skipping_or_failing_more_is_not_ok(self):
        s, tap = as_anonslow(self.summary, self.tap)
        # The anon cases skipped (a premise), not failed.
        for c in s['cases']:
            if c['name'] == 'verdict_anon_write':
                c['status'] = 'skip'
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'anonslow')),
                         [self.JUDGED, self.FAILED])
        s, tap = as_anonslow(self.summary, self.tap)
        next(c for c in s['cases'] if c['name'] == 'verdict_shadow_read')['status'] = 'fail'
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'anonslow')),
                         [self.FAILED])
        # The v3 shape: the thp row judged, its long-term pin failed.
        s, tap = as_anonslow(self.summary, self.tap)
        next(c for c in s['cases']
             if c['name'] == 'verdict_thp_longterm_write').update(status='fail', reason=None)
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'anonslow')),
                         [self.UNJUDGED[0], self.FAILED])
        s, tap = as_anonslow(self.summary, self.tap)
        s['exit_code'] = 3
        s['problems'] = ['the guest died']
        self.assertEqual(failing(matrix.thp_source_assertions(s, tap, 'anonslow')),
                         [RAN, self.EXITS])

    def test_unknown_expectation(self):
        with self.assertRaises(ValueError):
            matrix.thp_source_assertions(self.summary, self.tap, 'bug')

    def test_run_thp_source_boots_both_with_the_config(self):
        s_fixed, tap = self.fixed()
        s_fixed['bench_ratio'] = [{'threads': 1, 'shadow_anon_ratio': 1.0}]
        s_slow, _ = as_anonslow(self.summary, self.tap)
        seen = []

        def fake_run_one(spec, args, outdir):
            seen.append((spec, args.config, args.test_args, outdir.name))
            s = dict(s_slow if spec.endswith(':anonslow') else s_fixed)
            if args.stress is None:       # the runner runs it only when asked
                s.pop('stress', None)
            return vmrun.RunOutcome(s, s['exit_status'], outdir, tap)

        t = FakeTally()
        with mock.patch.object(cli, 'run_one', side_effect=fake_run_one), \
                redirect_stdout(io.StringIO()):
            matrix.run_thp_source(t)
        self.assertEqual(seen, [('source:debian-7.3:all', 'thp-always', '',
                                 'source_debian-7.3_all'),
                                ('source:debian-7.3:anonslow', 'thp-always', '',
                                 'source_debian-7.3_anonslow')])
        self.assertEqual([n for n, ok in t.records if not ok], [])
        self.assertIn(('vm source:debian-7.3:anonslow (--config thp-always): ' + self.FAILED,
                       True), t.records)

    def test_checks_runs_it_after_thp_always(self):
        import inspect
        from gupnm.check import checks
        src = inspect.getsource(checks._vm_checks)
        self.assertLess(src.index('matrix.run_thp_always(t)'),
                        src.index('matrix.run_thp_source(t)'))


class UnjudgedTest(unittest.TestCase):
    """_check_judged(): every cell judged but those a kernel's config hides
    (name -> what the skip reason must say), each skipped naming why."""

    HIDDEN = {'verdict_hugetlb_read': 'no free huge page',
              'verdict_hugetlb_write': 'no free huge page'}
    NONE = 'every cell judged: none skipped'
    BUT = "every cell judged: none skipped but 2 this kernel's config hides"
    READ = "verdict_hugetlb_read unjudged, naming why ('no free huge page')"
    WRITE = "verdict_hugetlb_write unjudged, naming why ('no free huge page')"

    def setUp(self):
        self.s = {'cases': [{'name': f'verdict_{b}_{c}', 'status': 'pass', 'reason': None}
                            for b in matrix.BACKINGS for c in matrix.CASES]}

    def case(self, name):
        return next(c for c in self.s['cases'] if c['name'] == name)

    def judged(self, unjudged=None):
        out = matrix._Checks()
        matrix._check_judged(out, self.s, unjudged)
        return list(out)

    def skip(self, name, reason):
        self.case(name).update(status='skip', reason=reason)

    def test_nothing_hidden_nothing_skipped(self):
        self.assertEqual(self.judged(), [(self.NONE, True, '')])
        self.assertEqual(self.judged({}), [(self.NONE, True, '')])

    def test_skipped_as_named_is_ok(self):
        self.skip('verdict_hugetlb_read', 'no free huge page could be reserved')
        self.skip('verdict_hugetlb_write', 'no free huge page could be reserved')
        self.assertEqual([c[:2] for c in self.judged(self.HIDDEN)],
                         [(self.BUT, True), (self.READ, True), (self.WRITE, True)])
        self.assertEqual(self.judged(self.HIDDEN)[1][2],
                         'skip: no free huge page could be reserved')

    def test_a_hidden_cell_judged_is_not_ok(self):
        self.skip('verdict_hugetlb_read', 'no free huge page could be reserved')
        checks = self.judged(self.HIDDEN)
        self.assertEqual(failing(checks), [self.WRITE])
        self.assertEqual(checks[2][2], 'pass: None')
        # Failed is no better than passed: it was asked.
        self.case('verdict_hugetlb_write')['status'] = 'fail'
        self.assertEqual(failing(self.judged(self.HIDDEN)), [self.WRITE])

    def test_skipped_with_another_reason_is_not_ok(self):
        self.skip('verdict_hugetlb_read', 'no free huge page could be reserved')
        self.skip('verdict_hugetlb_write', 'GUP_FAST_VERDICT: EOPNOTSUPP')
        checks = self.judged(self.HIDDEN)
        self.assertEqual(failing(checks), [self.WRITE])
        self.assertEqual(checks[2][2], 'skip: GUP_FAST_VERDICT: EOPNOTSUPP')
        self.skip('verdict_hugetlb_write', None)
        self.assertEqual(failing(self.judged(self.HIDDEN)), [self.WRITE])

    def test_a_hidden_cell_missing_is_not_ok(self):
        self.skip('verdict_hugetlb_read', 'no free huge page')
        self.s['cases'].remove(self.case('verdict_hugetlb_write'))
        checks = self.judged(self.HIDDEN)
        self.assertEqual(failing(checks), [self.WRITE])
        self.assertEqual(checks[2][2], 'None: None')

    def test_other_cells_skipped_are_still_not_ok(self):
        for name in self.HIDDEN:
            self.skip(name, 'no free huge page')
        self.skip('verdict_memfd_read', 'memfd pages not as needed')
        checks = self.judged(self.HIDDEN)
        self.assertEqual(failing(checks), [self.BUT])
        self.assertEqual(checks[0][2], 'verdict_memfd_read (memfd pages not as needed)')

    def test_assertions_pass_it_on(self):
        # A real run with the hugetlb row skipped (no verdict lines): judged
        # as hidden, neither the row's controls nor the skip fail it.
        s, tap_text = load_real()
        s['verdicts'] = [v for v in s['verdicts'] if v['backing'] != 'hugetlb']
        for c in s['cases']:
            if c['name'].startswith('verdict_hugetlb_'):
                c.update(status='skip', reason='no free huge page could be reserved')
        self.assertEqual(failing(matrix.assertions(s, tap_text, 'bug')),
                         [HUGETLB, LT_HUGETLB, JUDGED])
        hidden = {f'verdict_hugetlb_{c}': 'no free huge page' for c in matrix.CASES}
        checks = matrix.assertions(s, tap_text, 'bug', unjudged=hidden)
        self.assertEqual(failing(checks), [])
        names = [n for n, _, _ in checks]
        self.assertNotIn(HUGETLB, names)
        self.assertNotIn(LT_HUGETLB, names)
        self.assertIn("every cell judged: none skipped but 3 this kernel's config hides", names)


def as_builtin(summary):
    """@summary as the series' built-in gup_test serves it (v4 on a
    source tree): nothing loaded or unloaded."""
    s = copy.deepcopy(summary)
    s['gup_test'] = {'kind': GUP_TEST_BUILTIN, 'module': None, 'why': 'built in'}
    s['rmmod'] = None
    return s


def as_runners(summary):
    """... and as the runner's out-of-tree module serves it."""
    s = copy.deepcopy(summary)
    s['gup_test'] = {'kind': GUP_TEST_RUNNERS, 'module': '/x/gup_test.ko', 'why': 'oot'}
    s['rmmod'] = 'ok'
    return s


class OotCompareTest(unittest.TestCase):
    """run_oot_compare() with run_one mocked: the series' gup_test built out
    of tree (--config oot) against 7.3 gives the built-in row's table."""

    LABEL = 'vm source:debian-7.3:all (--config oot: the series\' gup_test out of tree)'
    KINDS = (f"{LABEL}: the matrix's row asked the built-in gup_test, this one "
             "the runner's module")
    SAME = f'{LABEL}: the same 21-cell table as the built-in gup_test'

    @classmethod
    def setUpClass(cls):
        cls.summary, cls.tap = load_real('7.3')

    def compare(self, builtin, oot):
        seen = []

        def fake_run_one(spec, args, outdir):
            seen.append((spec, args.config, args.stress, outdir.name.startswith('check-oot-')))
            return vmrun.RunOutcome(oot, oot['exit_code'], outdir, self.tap)

        t = FakeTally()
        with mock.patch.object(cli, 'run_one', side_effect=fake_run_one), \
                redirect_stdout(io.StringIO()):
            matrix.run_oot_compare(t, builtin)
        self.assertEqual(seen, [('source:debian-7.3:all', 'oot', '', True)])
        return t

    def test_table(self):
        self.assertEqual(matrix.OOT_COMPARE, ('source:debian-7.3:all', 'oot'))
        from gupnm.prepare import kconfig
        self.assertIn(matrix.OOT_COMPARE[1], kconfig.VARIANTS)
        self.assertIn((matrix.OOT_COMPARE[0], 'pass'), matrix.MATRIX)
        table = matrix.table(self.summary)
        self.assertEqual(len(table), 21)
        self.assertEqual(table[('shadow', 'longterm_write')], (0, 512))
        self.assertEqual(matrix.table(None), {})

    def test_the_same_table_is_ok(self):
        t = self.compare(as_builtin(self.summary), as_runners(self.summary))
        self.assertEqual(t.failed(), [])
        self.assertIn((self.KINDS, True), t.records)
        self.assertIn((self.SAME, True), t.records)
        self.assertIn((f'{self.LABEL}: {SHADOW_FIXED}', True), t.records)
        self.assertIn((f'{self.LABEL}: {DRIVER}', True), t.records)
        self.assertEqual(t.details[self.SAME], '')

    def test_one_cell_differing_is_not_ok(self):
        builtin = as_builtin(self.summary)
        v = next(v for v in builtin['verdicts']
                 if v['backing'] == 'memfd' and v['access'] == 'write')
        v['fast'] = 511
        t = self.compare(builtin, as_runners(self.summary))
        self.assertEqual(t.failed(), [self.SAME])
        self.assertEqual(t.details[self.SAME], 'memfd write: (511, 512) vs (512, 512)')

    def test_a_cell_missing_is_not_ok(self):
        oot = as_runners(self.summary)
        oot['verdicts'] = [v for v in oot['verdicts']
                           if (v['backing'], v['access']) != ('anon', 'read')]
        t = self.compare(as_builtin(self.summary), oot)
        self.assertIn(self.SAME, t.failed())
        self.assertEqual(t.details[self.SAME], 'anon read: (512, 512) vs None')
        # The built-in row short of a cell: 20 cells are no table either.
        builtin = as_builtin(self.summary)
        builtin['verdicts'] = oot['verdicts']
        oot = copy.deepcopy(builtin)
        oot.update(gup_test=as_runners(self.summary)['gup_test'], rmmod='ok')
        t = self.compare(builtin, oot)
        self.assertEqual(t.failed(), [f'{self.LABEL}: {ANON}',
                                      f'{self.LABEL}: the same 20-cell table as the '
                                      'built-in gup_test'])

    def test_wrong_gup_test_kinds_are_not_ok(self):
        for builtin, oot in ((as_runners(self.summary), as_runners(self.summary)),
                             (as_builtin(self.summary), as_builtin(self.summary)),
                             (as_runners(self.summary), as_builtin(self.summary)),
                             (self.summary, as_runners(self.summary))):
            with self.subTest(builtin=builtin.get('gup_test'), oot=oot.get('gup_test')):
                t = self.compare(builtin, oot)
                self.assertIn(self.KINDS, t.failed())
                self.assertNotIn(self.SAME, t.failed())
        t = self.compare(as_runners(self.summary), as_builtin(self.summary))
        self.assertEqual(t.details[self.KINDS], f'answered by: {GUP_TEST_RUNNERS}; '
                                                f'{GUP_TEST_BUILTIN}')

    def test_no_built_in_row_is_not_ok(self):
        # The matrix's row did not boot: nothing to compare with.
        t = self.compare(None, as_runners(self.summary))
        self.assertEqual(t.failed(), [self.KINDS, f'{self.LABEL}: the same 0-cell table as '
                                                  'the built-in gup_test'])

    def test_the_oot_run_must_pass(self):
        oot = as_runners(self.summary)
        oot['exit_status'] = 1
        t = self.compare(as_builtin(self.summary), oot)
        self.assertEqual(t.failed(), [f'{self.LABEL}: {EXIT0}'])

    def test_not_prepared(self):
        t = FakeTally()
        with mock.patch.object(cli, 'run_one', side_effect=RunnerError('build failed')), \
                redirect_stdout(io.StringIO()):
            matrix.run_oot_compare(t, as_builtin(self.summary))
        self.assertEqual(t.records, [(f'{self.LABEL}: prepared and booted', False)])

    def test_checks_runs_it_after_the_matrix(self):
        import inspect
        from gupnm.check import checks
        src = inspect.getsource(checks._vm_checks)
        self.assertIn('matrix.run_oot_compare(t, module_runs.get("source:debian-7.3:all"))',
                      src)
        self.assertLess(src.index('matrix.run_matrix(t)'), src.index('matrix.run_oot_compare('))


EOPNOTSUPP = 'GUP_FAST_VERDICT: EOPNOTSUPP'


def eopnotsupp_run(exit_code=3):
    """A v4 run on 6.12 --config notrace through the runner's module: every
    cell skipped with EOPNOTSUPP, no verdict line, the verdict as the
    runner words it (tap.summarize)."""
    lines = ['TAP version 13', f'1..{len(matrix.BACKINGS) * len(matrix.CASES)}']
    cases = []
    for b in matrix.BACKINGS:
        for c in matrix.CASES:
            name = f'verdict_{b}_{c}'
            lines.append(f'ok {len(cases) + 1} {name} # SKIP {EOPNOTSUPP}')
            cases.append({'name': name, 'number': len(cases) + 1, 'status': 'skip',
                          'reason': EOPNOTSUPP, 'diagnostics': []})
    summary = {'cases': cases, 'verdicts': [], 'exit_status': 0, 'exit_code': exit_code,
               'verdict': summarize(parse_tap(lines)), 'problems': [],
               'splats': [], 'gup_test': {'kind': GUP_TEST_RUNNERS}}
    return summary, '\n'.join(lines) + '\n'


class NotraceTest(unittest.TestCase):
    """run_notrace() with boot mocked: 7.3's rows judged as the matrix
    judges them; 6.12's (the runner's module, no tracepoint to watch) every
    cell unjudged naming EOPNOTSUPP, never a pass; no CONFIG_TRACING in any
    kernel's .config."""

    CONFIG = ('#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 6.12.74 Kernel '
              'Configuration\n#\nCONFIG_MMU=y\n# CONFIG_FTRACE is not set\n'
              'CONFIG_TRACING_SUPPORT=y\n')
    NO_TRACING = 'the kernel has no CONFIG_TRACING'
    SKIPPED = 'every pin cell unjudged, naming EOPNOTSUPP'
    NEVER = 'never a pass: exit 3, the verdict naming what was not judged'

    @classmethod
    def setUpClass(cls):
        cls.bug, cls.tap = load_real()
        cls.fixed, _ = as_fixed(cls.bug, cls.tap)
        cls.wrongfix, cls.wrongfix_tap = as_wrongfix(cls.bug, cls.tap)

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.build = Path(tmp.name)
        (self.build / '.config').write_text(self.CONFIG)
        self.eop = eopnotsupp_run()

    def outcome(self, spec, args, outdir):
        """What each row's boot gives: 7.3's as expected, 6.12's eopnotsupp_run()."""
        s, tap_text = {'source:debian-7.3:all': (self.fixed, self.tap),
                       'source:debian-7.3:nofix': (self.bug, self.tap),
                       'source:debian-7.3:wrongfix': (self.wrongfix, self.wrongfix_tap)
                       }.get(spec, self.eop)
        s = copy.deepcopy(s)
        s.setdefault('kernel', {}).setdefault('source', {})['boot_image'] = \
            str(self.build / 'vmlinux')
        return vmrun.RunOutcome(s, s['exit_code'], outdir, tap_text)

    def run_notrace(self):
        seen = []

        def fake_boot(t, label, spec, args, outdir, run_one):
            seen.append((label, spec, args.config, args.stress, outdir.name))
            t.record(f'{label}: prepared and booted', True)
            return self.outcome(spec, args, outdir)

        t = FakeTally()
        with mock.patch.object(matrix, 'boot', side_effect=fake_boot):
            runs = matrix.run_notrace(t)
        return t, runs, seen

    @staticmethod
    def label(spec):
        return f'vm {spec} (--config notrace)'

    def test_table(self):
        from gupnm.prepare import kconfig, kernels
        self.assertIn('notrace', kconfig.VARIANTS)
        self.assertEqual({s.split(':')[1] for s, _ in matrix.NOTRACE},
                         {'debian-6.12', 'debian-7.3'})
        for spec, expect in matrix.NOTRACE:
            kernels.parse_spec(spec)
            self.assertEqual(expect == 'unjudged', spec.startswith('source:debian-6.12:'))
            if expect != 'unjudged':
                self.assertIn((spec, expect), matrix.MATRIX)

    def test_every_row_as_expected(self):
        t, runs, seen = self.run_notrace()
        self.assertEqual(t.failed(), [])
        self.assertEqual([s[1:] for s in seen],
                         [(spec, 'notrace', None, spec.replace(':', '_'))
                          for spec, _ in matrix.NOTRACE])
        self.assertEqual(list(runs), [spec for spec, _ in matrix.NOTRACE])
        for spec, expect in matrix.NOTRACE:
            label = self.label(spec)
            self.assertIn((f'{label}: {self.NO_TRACING}', True), t.records)
            rows = [n for n, _ in t.records if n.startswith(label + ': ')]
            if expect == 'unjudged':
                self.assertEqual(rows, [f'{label}: prepared and booted',
                                        f'{label}: {self.NO_TRACING}',
                                        f'{label}: {self.SKIPPED}', f'{label}: {self.NEVER}'])
            else:
                self.assertIn(f'{label}: {TABLE}', rows)
                self.assertNotIn(f'{label}: {self.SKIPPED}', rows)
        self.assertIn((f"{self.label('source:debian-7.3:nofix')}: {SHADOW_BUG}", True), t.records)
        self.assertIn((f"{self.label('source:debian-7.3:wrongfix')}: {WRONGFIX}", True),
                      t.records)
        self.assertIn('verdict_driver_read', self.eop[0]['verdict'])

    def unjudged_failures(self):
        t, _, _ = self.run_notrace()
        return t, [n.split(': ', 1)[1] for n in t.failed()
                   if n.startswith('vm source:debian-6.12:')]

    def test_a_pass_is_not_ok(self):
        self.eop[0]['exit_code'] = 0
        t, failed = self.unjudged_failures()
        self.assertEqual(failed, [self.NEVER] * 3)
        self.assertIn('exit 0: NOT JUDGED: every cell skipped: verdict_anon_read',
                      t.details[f"{self.label('source:debian-6.12:all')}: {self.NEVER}"])

    def test_a_verdict_not_naming_the_driver_is_not_ok(self):
        self.eop[0]['verdict'] = 'ERROR: the guest died'
        self.assertEqual(self.unjudged_failures()[1], [self.NEVER] * 3)
        # Named by a problem instead: ok.
        self.eop[0]['problems'] = ['not judged: verdict_driver_read']
        self.assertEqual(self.unjudged_failures()[1], [])

    def test_a_judged_cell_is_not_ok(self):
        c = next(c for c in self.eop[0]['cases'] if c['name'] == 'verdict_driver_read')
        c.update(status='pass', reason=None)
        t, failed = self.unjudged_failures()
        self.assertEqual(failed, [self.SKIPPED] * 3)
        self.assertEqual(t.details[f"{self.label('source:debian-6.12:nofix')}: {self.SKIPPED}"],
                         'not skipped: verdict_driver_read')
        # Skipped for another reason is not EOPNOTSUPP either.
        c.update(status='skip', reason='memfd_secret() is not available here')
        self.assertEqual(self.unjudged_failures()[1], [self.SKIPPED] * 3)

    def test_a_cell_missing_is_not_ok(self):
        self.eop[0]['cases'].pop()
        self.assertEqual(self.unjudged_failures()[1], [self.SKIPPED] * 3)

    def test_the_kernel_traced_is_not_ok(self):
        (self.build / '.config').write_text(self.CONFIG + 'CONFIG_TRACING=y\n')
        t, _, _ = self.run_notrace()
        self.assertEqual(t.failed(), [f'{self.label(s)}: {self.NO_TRACING}'
                                      for s, _ in matrix.NOTRACE])
        self.assertEqual(t.details[t.failed()[0]], str(self.build / '.config'))

    def test_no_config_is_not_ok(self):
        (self.build / '.config').unlink()
        t, _, _ = self.run_notrace()
        self.assertEqual(t.failed(), [f'{self.label(s)}: {self.NO_TRACING}'
                                      for s, _ in matrix.NOTRACE])

    def test_a_row_not_booted_is_left_out(self):
        def fake_boot(t, label, spec, args, outdir, run_one):
            t.record(f'{label}: prepared and booted', not spec.endswith(':wrongfix'))
            return None if spec.endswith(':wrongfix') else self.outcome(spec, args, outdir)

        t = FakeTally()
        with mock.patch.object(matrix, 'boot', side_effect=fake_boot):
            runs = matrix.run_notrace(t)
        self.assertEqual(sorted(runs), sorted(s for s, _ in matrix.NOTRACE
                                              if not s.endswith(':wrongfix')))
        self.assertEqual(t.failed(), [f'{self.label(s)}: prepared and booted'
                                      for s, _ in matrix.NOTRACE if s.endswith(':wrongfix')])

    def test_checks_runs_it_with_the_mutants(self):
        import inspect
        from gupnm.check import checks
        src = inspect.getsource(checks._main)
        self.assertIn('runs = matrix.run_notrace(t)', src)
        self.assertIn('mutation.check(t, runs.get("source:debian-7.3:all"), config="notrace")',
                      src)
        self.assertTrue(checks._parser().parse_args(['--notrace']).notrace)


if __name__ == '__main__':
    unittest.main()
