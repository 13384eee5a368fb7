"""Unit tests for gupnm.parse.tap (TAP/KTAP parsing and the one-line verdict)."""

import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.parse import tap  # noqa: E402
from gupnm.parse.tap import BenchRow, Verdict, parse_tap, summarize  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / 'data'


def fixture(name: str) -> str:
    return (DATA / name).read_text(encoding='utf-8')


def recorded_today(summary: dict) -> dict:
    """A summary recorded by the runner before v4 of the test (data/real/),
    as the runner words it today: the driver row, which the test then
    called "shadow", under its name "driver" in the verdict line and the
    verdicts (result names stay the log's)."""
    out = dict(summary)
    if isinstance(out.get('verdict'), str):
        out['verdict'] = re.sub(r'^shadow (?=\d+/\d+ fast|longterm_write )', 'driver ',
                                out['verdict']).replace('(no shadow verdict)',
                                                        '(no driver verdict)')
    out['verdicts'] = [dict(v, backing=tap.row_name(v['backing']))
                       for v in summary.get('verdicts') or []]
    return out


class BugPresentRunTest(unittest.TestCase):
    """The stock Debian kernel: the driver's pages refused by GUP-fast (a
    log of the test before v4, which called the row "shadow")."""

    @classmethod
    def setUpClass(cls):
        cls.tap = parse_tap(fixture('bug_present.log').splitlines())

    def test_header(self):
        self.assertEqual(self.tap.version, 13)
        self.assertEqual(self.tap.plan, 5)
        self.assertIsNone(self.tap.skip_reason)
        self.assertFalse(self.tap.skipped)
        self.assertEqual(self.tap.errors, [])

    def test_results(self):
        got = [(r.number, r.name, r.status) for r in self.tap.results]
        self.assertEqual(got, [(1, 'verdict_shadow_read', 'fail'),
                               (2, 'verdict_anon_read', 'pass'),
                               (3, 'verdict_secretmem_read', 'skip'),
                               (4, 'live_pages_zero', 'pass'),
                               (5, 'bench', 'pass')])

    def test_skip_reason_of_result(self):
        r = self.tap.results[2]
        self.assertEqual(r.directive, 'SKIP')
        self.assertEqual(r.directive_reason, 'memfd_secret unavailable (CONFIG_SECRETMEM=n, '
                                             'or boot with secretmem.enable=1 on older kernels)')
        self.assertEqual(r.diagnostics, [])

    def test_diagnostics_attach_to_next_result(self):
        self.assertEqual(self.tap.results[0].diagnostics, [
            'gup_null_mapping: kernel 6.12.117+deb12-amd64, 2 CPUs, page size 4096, 512 pages per buffer',
            'verdict shadow read: 0/512 pages via GUP-fast (expected 512)',
            'FAIL: GUP-fast rejects NULL-mapping order-0 folios: 0/512 shadow pages via GUP-fast'])
        self.assertEqual(self.tap.results[3].diagnostics, ['live_pages: 0'])
        self.assertEqual(self.tap.trailing, ['Totals: pass:3 fail:1 xfail:0 xpass:0 skip:1 error:0'])

    def test_verdicts(self):
        # The row by its name today, whichever the log says.
        self.assertEqual(self.tap.verdicts, {
            ('driver', 'read'): Verdict('driver', 'read', 0, 512, 512),
            ('anon', 'read'): Verdict('anon', 'read', 512, 512, 512)})

    def test_bench(self):
        self.assertEqual(self.tap.bench, [BenchRow(1, 'shadow', 110.2, 120.5, 300.0),
                                          BenchRow(1, 'anon', 30.1, 33.0, 50.0),
                                          BenchRow(2, 'shadow', 151.9, 189.7, 412.6),
                                          BenchRow(2, 'anon', 31.4, 34.1, 63.2)])
        self.assertEqual(self.tap.bench_title,
                         'pin_user_pages_fast(FOLL_WRITE), 512 pages/thread, 3 reps x 10 iters, ns/page')
        self.assertEqual(self.tap.bench_ratios, {(1, 'shadow', 'anon'): 3.65,
                                                 (2, 'shadow', 'anon'): 5.56})

    def test_totals_and_counts(self):
        self.assertEqual(self.tap.totals, {'pass': 3, 'fail': 1, 'xfail': 0, 'xpass': 0,
                                           'skip': 1, 'error': 0})
        self.assertEqual(tap.counts(self.tap), {'pass': 3, 'fail': 1, 'skip': 1, 'xfail': 0,
                                                'timeout': 0, 'error': 0})

    def test_summary_line(self):
        self.assertEqual(summarize(self.tap), 'driver 0/512 fast \u2192 FAIL: GUP-fast rejects '
                                              'NULL-mapping order-0 folios (bug present)')
        self.assertIs(tap.bug_present(self.tap), True)


class OtherFixturesTest(unittest.TestCase):

    def test_pass_run(self):
        t = parse_tap(fixture('pass.log').splitlines())
        self.assertEqual(t.errors, [])
        self.assertEqual([r.status for r in t.results], ['pass'] * 5)
        self.assertEqual(t.verdicts[('secretmem', 'read')], Verdict('secretmem', 'read', 0, 512, 0))
        self.assertEqual(summarize(t), 'driver 512/512 fast \u2192 PASS: GUP-fast takes '
                                       'NULL-mapping order-0 folios')
        self.assertIs(tap.bug_present(t), False)

    def test_whole_test_skip(self):
        t = parse_tap(fixture('whole_skip.log').splitlines())
        self.assertEqual((t.version, t.plan, t.results, t.errors), (13, 0, [], []))
        self.assertTrue(t.skipped)
        reason = ('/sys/kernel/debug/test_gup_fast/shadow: No such file or directory '
                  '(is CONFIG_TEST_GUP_FAST enabled and the module loaded?)')
        self.assertEqual(t.skip_reason, reason)
        self.assertEqual(summarize(t), 'SKIP: ' + reason)
        self.assertIsNone(tap.bug_present(t))

    def test_crlf_timestamped_tap_interleaved_with_kernel_lines(self):
        raw = (DATA / 'interleaved_timestamps.log').read_bytes().decode('utf-8')
        self.assertIn('\r\n', raw)
        t = parse_tap(raw)  # a single string, CRLF line ends
        self.assertEqual(t.errors, [])
        self.assertEqual([r.name for r in t.results],
                         ['verdict_shadow_read', 'verdict_anon_read', 'verdict_secretmem_read',
                          'live_pages_zero', 'bench'])
        self.assertEqual(t.results[0].diagnostics[1:], [
            'verdict shadow read: 0/512 pages via GUP-fast (expected 512)',
            'FAIL: GUP-fast rejects NULL-mapping order-0 folios: 0/512 shadow pages via GUP-fast'])
        self.assertEqual(t.bench, [BenchRow(1, 'shadow', 109.7, 121.3, 288.4),
                                   BenchRow(1, 'anon', 29.8, 33.2, 51.7)])
        self.assertTrue(summarize(t).startswith('driver 0/512 fast \u2192 FAIL'))

    def test_console_without_tap(self):
        t = parse_tap(fixture('early_panic.log').splitlines())
        self.assertEqual((t.version, t.plan, t.results), (None, None, []))
        self.assertEqual(t.errors, ['no TAP output found'])
        self.assertEqual(summarize(t), 'ERROR: no TAP output found')


class LineFormatTest(unittest.TestCase):

    def test_short_console_timestamps_are_stripped(self):
        t = parse_tap(['[    1.234] TAP version 13', '[    1.235] 1..1',
                       '[    1.236] # verdict shadow write: 3/4 pages via GUP-fast (expected 4)',
                       '[    1.237] not ok 1 verdict_shadow_write'])
        self.assertEqual(t.errors, [])
        self.assertEqual(t.verdicts[('driver', 'write')], Verdict('driver', 'write', 3, 4, 4))
        self.assertEqual(summarize(t), 'driver 3/4 fast \u2192 FAIL: GUP-fast rejects '
                                       'NULL-mapping order-0 folios (bug present)')

    def test_printk_caller_and_syslog_level(self):
        self.assertEqual(tap.split_timestamp('<6>[    2.500000][    T1] ok 1 x'), (2.5, 'ok 1 x'))
        self.assertEqual(tap.split_timestamp('ok 1 x'), (None, 'ok 1 x'))

    def test_prefix_taken_from_version_line(self):
        t = parse_tap(['guest| TAP version 13', 'guest| 1..2', 'ok 9 not_ours',
                       'guest| ok 1 first', 'guest| not ok 2 second'])
        self.assertEqual([(r.number, r.name, r.status) for r in t.results],
                         [(1, 'first', 'pass'), (2, 'second', 'fail')])
        self.assertEqual(t.errors, [])

    def test_lines_before_version_ignored(self):
        t = parse_tap(['ok 7 something_printed_earlier', 'TAP version 13', '1..1', 'ok 1 a'])
        self.assertEqual([r.name for r in t.results], ['a'])
        self.assertEqual(t.errors, [])

    def test_ktap_version_and_nested_lines_ignored(self):
        t = parse_tap(['KTAP version 1', '1..1', '    KTAP version 1', '    1..2',
                       '    ok 1 sub_a', '    ok 2 sub_b', 'ok 1 parent'])
        self.assertEqual(t.version, 1)
        self.assertEqual([r.name for r in t.results], ['parent'])
        self.assertEqual(t.errors, [])

    def test_directives(self):
        t = parse_tap(['TAP version 13', '1..8',
                       'ok 1 - dashed name',
                       'ok 2 # SKIP no reason name',
                       'ok 3 known_bad # XFAIL expected on 6.8',
                       'not ok 4 todo_one # TODO later',
                       'not ok 5 slow # TIMEOUT 180 seconds',
                       'not ok 6 broken # ERROR setup failed',
                       'ok 7 surprise # XPASS',
                       'not ok 8 selftests: mm: gup_null_mapping # exit=1'])
        got = [(r.name, r.status, r.directive, r.directive_reason) for r in t.results]
        self.assertEqual(got, [
            ('dashed name', 'pass', None, None),
            ('', 'skip', 'SKIP', 'no reason name'),
            ('known_bad', 'xfail', 'XFAIL', 'expected on 6.8'),
            ('todo_one', 'xfail', 'TODO', 'later'),
            ('slow', 'timeout', 'TIMEOUT', '180 seconds'),
            ('broken', 'error', 'ERROR', 'setup failed'),
            ('surprise', 'fail', 'XPASS', None),
            ('selftests: mm: gup_null_mapping', 'fail', None, 'exit=1')])
        self.assertEqual(t.errors, [])

    def test_verdict_lines_must_match_exactly(self):
        t = parse_tap(['TAP version 13', '1..1',
                       '# verdict shadow read: 0/512 pages via GUP-fast',
                       '# verdict shadow exec: 0/512 pages via GUP-fast (expected 512)',
                       '# verdicts anon read: 1/512 pages via GUP-fast (expected 512)',
                       '# verdict anon read: 7/512 pages via GUP-fast (expected 512)',
                       'ok 1 x'])
        self.assertEqual(list(t.verdicts), [('anon', 'read')])
        self.assertEqual(t.verdicts[('anon', 'read')].fast, 7)

    def test_bench_header_title_ratio_are_not_rows(self):
        t = parse_tap(['TAP version 13', '1..1',
                       '# bench: pin_user_pages_fast(FOLL_WRITE), 512 pages/thread',
                       '# bench threads  backing      min   median      max',
                       '# bench ratio threads=1 shadow/anon=3.65',
                       '# bench       8   shadow     74.0     80.1     99.9',
                       'ok 1 bench'])
        self.assertEqual(t.bench, [BenchRow(8, 'shadow', 74.0, 80.1, 99.9)])
        self.assertEqual(t.bench_title, 'pin_user_pages_fast(FOLL_WRITE), 512 pages/thread')
        self.assertEqual(t.bench_ratios, {(1, 'shadow', 'anon'): 3.65})

    def test_is_tap_line(self):
        for line in ('TAP version 13', '1..5', 'ok 3 race_bug_fixed', 'not ok 1 x', '# diag', 'Bail out! x'):
            self.assertTrue(tap.is_tap_line(line), line)
        for line in ('#PF: supervisor read access in kernel mode', 'okay', 'BUG: KASAN: x', ''):
            self.assertFalse(tap.is_tap_line(line), line)


class StructureErrorTest(unittest.TestCase):

    def test_duplicate_names(self):
        t = parse_tap(['TAP version 13', '1..2', 'ok 1 same', 'ok 2 same'])
        self.assertEqual(t.errors, ["duplicate result name 'same' (results 1 and 2)"])

    def test_out_of_order_numbers(self):
        t = parse_tap(['TAP version 13', '1..3', 'ok 1 a', 'ok 3 c', 'ok 2 b'])
        self.assertEqual(t.errors, ['result 3 (c) out of order, expected 2',
                                    'result 2 (b) out of order, expected 4'])

    def test_count_differs_from_plan(self):
        t = parse_tap(['TAP version 13', '1..5', 'ok 1 a', 'not ok 2 b'])
        self.assertEqual(t.errors, ['planned 5 results, got 2'])

    def test_missing_plan(self):
        t = parse_tap(['TAP version 13', 'ok 1 a'])
        self.assertEqual(t.errors, ['missing plan'])
        self.assertEqual(summarize(t), 'ERROR: missing plan')

    def test_trailing_plan_is_fine(self):
        t = parse_tap(['TAP version 13', 'ok 1 a', 'ok 2 b', '1..2'])
        self.assertEqual((t.plan, t.errors), (2, []))

    def test_duplicate_plan_and_version(self):
        t = parse_tap(['TAP version 13', '1..1', 'TAP version 13', '1..1', 'ok 1 a'])
        self.assertEqual(t.errors, ['unexpected second version line at line 3',
                                    'duplicate plan at line 4'])

    def test_bail_out(self):
        t = parse_tap(['TAP version 13', '1..3', 'ok 1 a', 'Bail out! cannot open debugfs'])
        self.assertEqual(t.bail_out, 'cannot open debugfs')
        self.assertEqual(t.errors, ['Bail out! cannot open debugfs', 'planned 3 results, got 1'])
        self.assertEqual(summarize(t), 'ERROR: Bail out! cannot open debugfs (+1 more)')

    def test_totals_mismatch(self):
        t = parse_tap(['TAP version 13', '1..2', 'ok 1 a', 'ok 2 b',
                       '# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:1 error:0'])
        self.assertEqual(t.errors, ['Totals line says pass:1, results have 2',
                                    'Totals line says skip:1, results have 0'])

    def test_duplicate_verdict(self):
        t = parse_tap(['TAP version 13', '1..1',
                       '# verdict shadow read: 0/8 pages via GUP-fast (expected 8)',
                       '# verdict shadow read: 8/8 pages via GUP-fast (expected 8)', 'ok 1 a'])
        self.assertEqual(t.errors, ['duplicate verdict for driver read'])


class SummarizeTest(unittest.TestCase):
    HEAD = ['TAP version 13', '1..3']

    def test_other_failure_with_shadow_fine(self):
        t = parse_tap(self.HEAD + ['# verdict shadow read: 512/512 pages via GUP-fast (expected 512)',
                                   'ok 1 verdict_shadow_read', 'not ok 2 live_pages_zero',
                                   'not ok 3 bench # TIMEOUT 30 seconds'])
        self.assertEqual(summarize(t), 'FAIL (other failure, not the regression): '
                                       'live_pages_zero, bench')
        self.assertEqual(tap.diagnosis(t), 'other')

    def test_wrong_fix_named(self):
        t = parse_tap(self.HEAD + [
            '# verdict shadow read: 512/512 pages via GUP-fast (expected 512, 1 try)',
            'ok 1 verdict_shadow_read',
            '# verdict shadow longterm_write: 512/512 pages via GUP-fast (expected 0, 10 tries)',
            '# FAIL: FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went through GUP-fast',
            'not ok 2 verdict_shadow_longterm_write', 'ok 3 bench'])
        self.assertEqual(t.verdicts[('driver', 'longterm_write')].tries, 10)
        self.assertEqual(tap.diagnosis(t), 'wrongfix')
        self.assertEqual(summarize(t), 'driver longterm_write 512/512 fast (expected 0) \u2192 '
                         'FAIL: wrong fix: FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios '
                         'went through GUP-fast')

    def test_secretmem_exposure_named(self):
        t = parse_tap(self.HEAD + [
            '# verdict shadow read: 512/512 pages via GUP-fast (expected 512, 1 try)',
            'ok 1 verdict_shadow_read',
            '# verdict secretmem read: 3/512 pages via GUP-fast (expected 0, 1 try)',
            'not ok 2 verdict_secretmem_read', 'ok 3 bench'])
        self.assertEqual(tap.diagnosis(t), 'secretmem')
        self.assertEqual(summarize(t), 'FAIL: secretmem exposure: secretmem read 3/512 fast; '
                                       'failed: verdict_secretmem_read')

    def test_regression_is_not_other(self):
        t = parse_tap(self.HEAD + [
            '# verdict shadow read: 0/512 pages via GUP-fast (expected 512, 10 tries)',
            'not ok 1 verdict_shadow_read', 'ok 2 a', 'ok 3 bench'])
        self.assertEqual(tap.diagnosis(t), 'regression')
        self.assertEqual(t.verdicts[('driver', 'read')].tries, 10)

    def test_bug_plus_other_failure(self):
        t = parse_tap(self.HEAD + ['# verdict shadow read: 0/512 pages via GUP-fast (expected 512)',
                                   'not ok 1 verdict_shadow_read', 'not ok 2 live_pages_zero', 'ok 3 bench'])
        self.assertEqual(summarize(t), 'driver 0/512 fast \u2192 FAIL: GUP-fast rejects NULL-mapping '
                                       'order-0 folios (bug present); also failed: live_pages_zero')

    def test_write_verdict_failure_preferred_over_passing_read(self):
        t = parse_tap(self.HEAD + ['# verdict shadow read: 512/512 pages via GUP-fast (expected 512)',
                                   'ok 1 verdict_shadow_read',
                                   '# verdict shadow write: 10/512 pages via GUP-fast (expected 512)',
                                   'not ok 2 verdict_shadow_write', 'ok 3 bench'])
        self.assertTrue(summarize(t).startswith('driver 10/512 fast \u2192 FAIL'))

    def test_incomplete_run_is_not_pass(self):
        t = parse_tap(self.HEAD + ['# verdict shadow read: 512/512 pages via GUP-fast (expected 512)',
                                   'ok 1 verdict_shadow_read'])
        self.assertEqual(summarize(t), 'ERROR: planned 3 results, got 1')

    def test_all_skipped_without_verdict(self):
        t = parse_tap(['TAP version 13', '1..1', 'ok 1 verdict_shadow_read # SKIP no debugfs'])
        self.assertEqual(summarize(t), 'NOT JUDGED: every cell skipped: verdict_shadow_read: no debugfs')

    def test_pass_without_driver_verdict(self):
        t = parse_tap(['TAP version 13', '1..2', 'ok 1 a', 'ok 2 b # SKIP x'])
        self.assertEqual(summarize(t), 'PASS: 1 passed, 1 skipped (no driver verdict; '
                                       'not judged: b: x)')
        t = parse_tap(['TAP version 13', '1..2', 'ok 1 a', 'ok 2 b'])
        self.assertEqual(summarize(t), 'PASS: 2 passed, 0 skipped (no driver verdict)')


class V4OutputTest(unittest.TestCase):
    """The test's v4 output: the row "driver" (was "shadow"), a verdict line
    per judged cell, "# SKIP GUP_FAST_VERDICT: EOPNOTSUPP" for a cell the
    command cannot answer, a backing's reason for one the system lacks, no
    witness line, ksft_finished() (exit 0 with skips). data/v4_*.tap are
    written in the format of tools/testing/selftests/mm/gup_null_mapping.c
    (not boots): a kernel without THP and memfd_secret, and the bug."""

    NO_THP = 'no THP here (CONFIG_TRANSPARENT_HUGEPAGE)'
    NO_SECRETMEM = 'memfd_secret() is not available here'

    @staticmethod
    def v3_names(text: str) -> str:
        return text.replace('verdict driver ', 'verdict shadow ').replace(
            'verdict_driver_', 'verdict_shadow_')

    def test_pass_names_the_cells_not_judged(self):
        t = parse_tap(fixture('v4_pass_skips.tap'))
        self.assertEqual(t.errors, [])
        self.assertEqual(tap.counts(t)['pass'], 15)
        self.assertEqual(tap.counts(t)['skip'], 6)
        self.assertEqual(t.verdicts[('driver', 'longterm_write')],
                         Verdict('driver', 'longterm_write', 0, 512, 0, 1))
        self.assertEqual(tap.diagnosis(t), 'pass')
        self.assertEqual(summarize(t), (
            'driver 512/512 fast \u2192 PASS: GUP-fast takes NULL-mapping order-0 folios; '
            '15 passed, 6 skipped (not judged: verdict_thp_read, verdict_thp_write, '
            f'verdict_thp_longterm_write: {self.NO_THP}; verdict_secretmem_read, '
            'verdict_secretmem_write, verdict_secretmem_longterm_write: '
            f'{self.NO_SECRETMEM})'))
        self.assertEqual(tap.not_judged(t).count(';'), 1)

    def test_a_cell_the_command_cannot_answer(self):
        lines = fixture('v4_pass_skips.tap').replace(
            f'# SKIP {self.NO_THP}', '# SKIP GUP_FAST_VERDICT: EOPNOTSUPP').splitlines()
        lines = [line for line in lines
                 if not line.startswith('# verdict driver longterm_write')]
        lines = [line.replace('ok 18 verdict_driver_longterm_write',
                              'ok 18 verdict_driver_longterm_write # SKIP '
                              'GUP_FAST_VERDICT: EOPNOTSUPP') for line in lines]
        lines = [line.replace('skip:6', 'skip:7').replace('pass:15', 'pass:14')
                 for line in lines]
        t = parse_tap(lines)
        self.assertEqual(t.errors, [])
        self.assertNotIn(('driver', 'longterm_write'), t.verdicts)
        self.assertEqual(summarize(t), (
            'driver 512/512 fast \u2192 PASS: GUP-fast takes NULL-mapping order-0 folios; '
            '14 passed, 7 skipped (not judged: verdict_thp_read, verdict_thp_write, '
            'verdict_thp_longterm_write, verdict_driver_longterm_write: '
            'GUP_FAST_VERDICT: EOPNOTSUPP; verdict_secretmem_read, verdict_secretmem_write, '
            f'verdict_secretmem_longterm_write: {self.NO_SECRETMEM})'))

    def test_pass_without_the_drivers_verdict_names_the_skips(self):
        # The brief's form: counts, then what was not judged and why.
        t = parse_tap(['TAP version 13', '1..3',
                       '# verdict anon read: 512/512 pages via GUP-fast (expected 512, 1 try)',
                       'ok 1 verdict_anon_read',
                       'ok 2 verdict_driver_read # SKIP GUP_FAST_VERDICT: EOPNOTSUPP',
                       'ok 3 verdict_driver_longterm_write # SKIP GUP_FAST_VERDICT: EOPNOTSUPP'])
        self.assertEqual(summarize(t), (
            'PASS: 1 passed, 2 skipped (no driver verdict; not judged: verdict_driver_read, '
            'verdict_driver_longterm_write: GUP_FAST_VERDICT: EOPNOTSUPP)'))
        self.assertIsNone(tap.bug_present(t))

    def test_every_cell_skipped_is_a_skip_naming_them(self):
        # ksft_finished() exits 0 then; nothing was judged.
        lines = ['TAP version 13', '1..3'] + [
            f'ok {i} verdict_{b}_read # SKIP GUP_FAST_VERDICT: EOPNOTSUPP'
            for i, b in enumerate(('anon', 'memfd', 'driver'), 1)]
        t = parse_tap(lines)
        self.assertFalse(t.skipped)             # not a whole-test skip (1..0)
        self.assertTrue(tap.all_skipped(t))
        self.assertEqual(tap.diagnosis(t), 'skip')
        self.assertEqual(summarize(t), 'NOT JUDGED: every cell skipped: verdict_anon_read, verdict_memfd_read, '
                                       'verdict_driver_read: GUP_FAST_VERDICT: EOPNOTSUPP')

    def test_the_bug(self):
        t = parse_tap(fixture('v4_bug.tap'))
        self.assertEqual(t.errors, [])
        self.assertEqual(tap.diagnosis(t), 'regression')
        self.assertIs(tap.bug_present(t), True)
        self.assertEqual(summarize(t), 'driver 0/512 fast \u2192 FAIL: GUP-fast rejects '
                                       'NULL-mapping order-0 folios (bug present)')
        self.assertEqual([r.name for r in tap.failed_results(t)],
                         ['verdict_driver_read', 'verdict_driver_write'])

    def test_the_old_row_name_reads_the_same(self):
        for name in ('v4_bug.tap', 'v4_pass_skips.tap'):
            new = parse_tap(fixture(name))
            old = parse_tap(self.v3_names(fixture(name)))
            with self.subTest(log=name):
                self.assertIn('verdict_shadow_read', [r.name for r in old.results])
                self.assertEqual(old.verdicts, new.verdicts)
                self.assertEqual(summarize(old), summarize(new))
                self.assertEqual(tap.diagnosis(old), tap.diagnosis(new))

    def test_a_control_refused_is_another_failure(self):
        t = parse_tap(fixture('v4_bug.tap').replace(
            '# verdict anon read: 512/512 pages via GUP-fast (expected 512, 1 try)\n'
            'ok 1 verdict_anon_read',
            '# verdict anon read: 3/512 pages via GUP-fast (expected 512, 10 tries)\n'
            '# FAIL: GUP-fast refused these pages: gup_fast_folio_allowed() regressed\n'
            'not ok 1 verdict_anon_read').replace('pass:19 fail:2', 'pass:18 fail:3'))
        self.assertEqual(t.errors, [])
        self.assertEqual(summarize(t), 'driver 0/512 fast \u2192 FAIL: GUP-fast rejects '
                                       'NULL-mapping order-0 folios (bug present); also '
                                       'failed: verdict_anon_read')

    def test_a_forged_ok_is_caught_under_either_name(self):
        for row in ('driver', 'shadow'):
            t = parse_tap(['TAP version 13', '1..1',
                           f'# verdict {row} read: 0/512 pages via GUP-fast (expected 512, 1 try)',
                           f'ok 1 verdict_{row}_read'])
            with self.subTest(row=row):
                self.assertEqual(t.errors, [f'result 1 (verdict_{row}_read) is ok but its '
                                            'verdict line says 0/512 (expected 512)'])

    def test_before_6_5_under_either_name(self):
        for row in ('driver', 'shadow'):
            t = parse_tap(['TAP version 13', '1..1',
                           f'# verdict {row} longterm_write: 512/512 pages via GUP-fast '
                           '(expected 0, 10 tries)',
                           '# FAIL: FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios '
                           'went through GUP-fast',
                           f'not ok 1 verdict_{row}_longterm_write'])
            with self.subTest(row=row):
                self.assertEqual(tap.expect_pre65(t, '6.1.0-57-amd64'),
                                 [f'verdict_{row}_longterm_write'])
                self.assertEqual(t.results[0].status, 'xfail')

    def test_row_and_case_names(self):
        self.assertEqual((tap.row_name('shadow'), tap.row_name('driver'), tap.row_name('anon')),
                         ('driver', 'driver', 'anon'))
        for old, new in (('verdict_shadow_read', 'verdict_driver_read'),
                         ('verdict_shadow_longterm_write', 'verdict_driver_longterm_write'),
                         ('mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_write',
                          'mm_ksft_gup_test_sh_gup_null_mapping_verdict_driver_write'),
                         ('verdict_driver_read', 'verdict_driver_read'),
                         ('verdict_anon_read', 'verdict_anon_read'),
                         ('xverdict_shadow_read', 'xverdict_shadow_read')):
            self.assertEqual(tap.canonical_case(old), new)
        self.assertTrue(tap.is_driver_case('verdict_shadow_write', ('read', 'write')))
        self.assertTrue(tap.is_driver_case('gup_null_mapping_verdict_driver_read_dup1'))
        self.assertFalse(tap.is_driver_case('verdict_driver_longterm_write', ('read', 'write')))
        self.assertFalse(tap.is_driver_case('verdict_anon_read'))


if __name__ == '__main__':
    unittest.main()
