"""Unit tests for gupnm.report.results (summary JSON, comparison table)."""

import json
import math
import os
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.report import results  # noqa: E402
from gupnm.parse.console import find_splats  # noqa: E402
from gupnm.report.results import (SummaryError, build_summary, compare, format_compare,  # noqa: E402
                                  load_summary, write_summary)
from gupnm.parse.tap import parse_tap  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / 'data'
CMDLINE = 'console=ttyS0,115200 panic=-1 oops=panic rdinit=/init gupnm.test=gup_null_mapping'


def summary_for(name, release, source, exit_status, **kw):
    text = (DATA / name).read_text(encoding='utf-8')
    args = dict(kernel_release=release, kernel_source=source, accel='tcg', vcpus=2, memory_mb=1024,
                cmdline=CMDLINE, tap=parse_tap(text.splitlines()), splats=find_splats(text),
                exit_status=exit_status, durations={'boot': 3.1234, 'test': 4.0})
    args.update(kw)
    return build_summary(**args)


DEBIAN = {'kind': 'debian-package', 'package': 'linux-image-6.12.117+deb12-amd64',
          'version': '6.12.117-1~deb12u1'}
FIXED = {'kind': 'built', 'base': 'debian-6.12.117', 'patches': ['0001-mm-gup-fix.patch']}


class BuildSummaryTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.bug = summary_for('bug_present.log', '6.12.117+deb12-amd64', DEBIAN, 1)
        cls.fixed = summary_for('pass.log', '6.12.117-gupnm-fix', FIXED, 0)

    def test_keys(self):
        self.assertEqual(set(self.bug), {
            'schema', 'kernel', 'vm', 'exit_status', 'verdict', 'outcome', 'bug_present', 'diagnosis',
            'counts',
            'skip_reason', 'cases', 'verdicts', 'bench_title', 'bench_params', 'bench',
            'bench_ratio', 'splats', 'tap_errors', 'durations', 'expected', 'as_expected'})
        self.assertEqual(self.bug['schema'], 2)

    def test_kernel_and_vm(self):
        self.assertEqual(self.bug['kernel'], {'release': '6.12.117+deb12-amd64', 'source': DEBIAN})
        self.assertEqual(self.bug['vm'], {'accel': 'tcg', 'vcpus': 2, 'memory_mb': 1024, 'cmdline': CMDLINE})
        self.assertEqual(self.bug['durations'], {'boot': 3.123, 'test': 4.0})

    def test_verdict_counts_cases(self):
        self.assertEqual(self.bug['verdict'], 'driver 0/512 fast \u2192 FAIL: GUP-fast rejects '
                                              'NULL-mapping order-0 folios (bug present)')
        self.assertEqual(self.bug['outcome'], 'fail')
        self.assertIs(self.bug['bug_present'], True)
        # Left for report/expect.judge (test_expect.py).
        self.assertEqual((self.bug['expected'], self.bug['as_expected']), (None, None))
        self.assertEqual(self.bug['counts'], {'pass': 3, 'fail': 1, 'skip': 1, 'xfail': 0,
                                              'timeout': 0, 'error': 0, 'total': 5})
        self.assertEqual(self.bug['cases'][0], {
            'number': 1, 'name': 'verdict_shadow_read', 'status': 'fail', 'reason': None,
            'diagnostics': ['gup_null_mapping: kernel 6.12.117+deb12-amd64, 2 CPUs, page size '
                            '4096, 512 pages per buffer',
                            'verdict shadow read: 0/512 pages via GUP-fast (expected 512)',
                            'FAIL: GUP-fast rejects NULL-mapping order-0 folios: 0/512 shadow '
                            'pages via GUP-fast']})
        self.assertEqual(self.bug['cases'][2]['status'], 'skip')
        self.assertTrue(self.bug['cases'][2]['reason'].startswith('memfd_secret unavailable'))
        # The log's "shadow" row by its name today; the case keeps the log's name.
        self.assertEqual(self.bug['verdicts'], [
            {'backing': 'driver', 'access': 'read', 'fast': 0, 'total': 512, 'expected': 512},
            {'backing': 'anon', 'access': 'read', 'fast': 512, 'total': 512, 'expected': 512}])
        self.assertEqual(self.bug['splats'], [])
        self.assertEqual(self.bug['tap_errors'], [])

    def test_bench_and_speedup(self):
        # A test without p90/cv gives the rows it gave before: no new keys.
        self.assertEqual(self.bug['bench'][0], {'threads': 1, 'backing': 'shadow', 'min': 110.2,
                                                'median': 120.5, 'max': 300.0})
        self.assertEqual(len(self.bug['bench']), 4)
        self.assertEqual(self.bug['bench_ratio'], [
            {'threads': 1, 'shadow_median': 120.5, 'anon_median': 33.0, 'shadow_anon_ratio': 3.652},
            {'threads': 2, 'shadow_median': 189.7, 'anon_median': 34.1, 'shadow_anon_ratio': 5.563}])

    def test_bench_params_of_an_older_test(self):
        self.assertEqual(self.bug['bench_params'], {
            'flags': 'FOLL_WRITE', 'longterm': False, 'pages': 512, 'pages_per_call': None,
            'reps': 3, 'iters': 10, 'warmup': None, 'pinned': None, 'cpus': None,
            'noisy_cv': None})
        no_bench = summary_for('whole_skip.log', 'x', FIXED, 4)
        self.assertIsNone(no_bench['bench_params'])

    def test_fixed_kernel(self):
        self.assertEqual(self.fixed['outcome'], 'pass')
        self.assertIs(self.fixed['bug_present'], False)
        self.assertEqual(self.fixed['bench_ratio'][0]['shadow_anon_ratio'], 1.033)

    def test_splats_make_a_passing_run_fail(self):
        s = summary_for('kasan_report.log', '6.12.117-gupnm-debug', FIXED, 0)
        self.assertTrue(s['verdict'].startswith('driver 512/512 fast \u2192 PASS'))
        self.assertEqual(s['outcome'], 'fail')
        self.assertEqual([(x['kind'], x['line']) for x in s['splats']], [('kasan', 105)])
        self.assertTrue(s['splats'][0]['excerpt'].startswith('BUG: KASAN: slab-use-after-free'))

    def test_whole_skip_and_early_death(self):
        s = summary_for('whole_skip.log', '6.12.117+deb12-amd64', DEBIAN, 4)
        self.assertEqual((s['outcome'], s['counts']['total'], s['as_expected']), ('skip', 0, None))
        self.assertTrue(s['skip_reason'].startswith('/sys/kernel/debug/test_gup_fast/shadow'))
        s = summary_for('early_panic.log', '6.12.117+deb12-amd64', DEBIAN, None)
        self.assertEqual(s['outcome'], 'fail')
        self.assertEqual([x['kind'] for x in s['splats']], ['oops', 'panic'])
        self.assertEqual(s['tap_errors'], ['no TAP output found'])

    def test_exit_status_mismatch_is_error(self):
        s = summary_for('pass.log', 'x', FIXED, 1)
        self.assertEqual(s['outcome'], 'error')

    def test_validation(self):
        for bad in ({'accel': 'hvf'}, {'vcpus': 0}, {'memory_mb': '1024'},
                    {'durations': {'boot': -1}}, {'durations': {'boot': math.nan}}):
            with self.subTest(bad=bad):
                with self.assertRaises(ValueError):
                    summary_for('pass.log', 'x', FIXED, 0, **bad)
        with self.assertRaisesRegex(ValueError, 'exit_status'):
            summary_for('pass.log', 'x', FIXED, '0')


class WriteLoadTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.summary = summary_for('bug_present.log', '6.12.117+deb12-amd64', DEBIAN, 1)

    def tearDown(self):
        self.tmp.cleanup()

    def test_round_trip_sorted_indented(self):
        path = self.dir / 'runs' / 'summary.json'
        write_summary(path, self.summary)
        self.assertEqual(load_summary(path), self.summary)
        text = path.read_text(encoding='utf-8')
        self.assertTrue(text.startswith('{\n  "as_expected": null,\n  "bench": [\n'))
        self.assertTrue(text.endswith('}\n'))
        self.assertEqual(text, json.dumps(self.summary, sort_keys=True, indent=2) + '\n')
        self.assertEqual(os.listdir(path.parent), ['summary.json'])

    def test_failed_write_keeps_old_file(self):
        path = self.dir / 'summary.json'
        write_summary(path, self.summary)
        bad = dict(self.summary, durations={'boot': math.nan})
        with self.assertRaises(ValueError):
            write_summary(path, bad)
        self.assertEqual(load_summary(path)['durations'], self.summary['durations'])
        self.assertEqual(os.listdir(self.dir), ['summary.json'])

    def test_crash_during_write_keeps_old_file(self):
        path = self.dir / 'summary.json'
        write_summary(path, self.summary)
        before = path.read_bytes()
        newer = dict(self.summary, verdict='something else')
        with mock.patch('os.fsync', side_effect=OSError(28, 'No space left on device')):
            with self.assertRaises(OSError):
                write_summary(path, newer)
        self.assertEqual(path.read_bytes(), before)
        self.assertEqual(os.listdir(self.dir), ['summary.json'])
        write_summary(path, newer)
        self.assertEqual(load_summary(path)['verdict'], 'something else')

    def test_load_errors(self):
        with self.assertRaisesRegex(SummaryError, 'summary file not found'):
            load_summary(self.dir / 'missing.json')
        broken = self.dir / 'broken.json'
        broken.write_text('{"schema": 1,\n  "kernel": }\n')
        with self.assertRaisesRegex(SummaryError, r'invalid JSON at line 2 column 13'):
            load_summary(broken)
        listing = self.dir / 'list.json'
        listing.write_text('[1, 2]')
        with self.assertRaisesRegex(SummaryError, 'top level is list'):
            load_summary(listing)
        old = self.dir / 'old.json'
        old.write_text('{"schema": 0}')
        with self.assertRaisesRegex(SummaryError, 'unsupported summary schema 0'):
            load_summary(old)
        self.assertTrue(issubclass(SummaryError, ValueError))


class CompareTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.a = summary_for('bug_present.log', '6.12.117+deb12-amd64', DEBIAN, 1)
        cls.b = summary_for('pass.log', '6.12.117-gupnm-fix', FIXED, 0)

    SETUP = 'pin_user_pages_fast(FOLL_WRITE), 512 pages/thread, emulated (TCG)'

    def test_rows(self):
        rows = compare(self.a, self.b)
        self.assertEqual([{k: r[k] for k in ('threads', 'a_shadow', 'a_anon', 'b_shadow',
                                             'b_anon', 'speedup')} for r in rows], [
            {'threads': 1, 'a_shadow': 120.5, 'a_anon': 33.0, 'b_shadow': 34.0, 'b_anon': 32.9,
             'speedup': 3.544},
            {'threads': 2, 'a_shadow': 189.7, 'a_anon': 34.1, 'b_shadow': 35.2, 'b_anon': 33.6,
             'speedup': 5.389}])
        self.assertEqual(rows[0], {
            **rows[0], 'a_ratio': 3.652, 'b_ratio': 1.033, 'anon_ratio': 1.003,
            'a_shadow_cv': None, 'a_anon_cv': None, 'b_shadow_noisy': None,
            'a_accel': 'tcg', 'b_accel': 'tcg', 'a_setup': self.SETUP, 'b_setup': self.SETUP})

    def test_missing_thread_count(self):
        b = dict(self.b, bench=[r for r in self.b['bench'] if r['threads'] == 1])
        rows = compare(self.a, b)
        self.assertEqual({k: v for k, v in rows[1].items() if k.startswith('b_') or
                          k in ('threads', 'speedup', 'anon_ratio')}, {
            'threads': 2, 'b_shadow': None, 'b_anon': None, 'b_shadow_cv': None,
            'b_anon_cv': None, 'b_shadow_noisy': None, 'b_anon_noisy': None,
            'b_ratio': None, 'speedup': None, 'anon_ratio': None, 'b_accel': 'tcg',
            'b_setup': self.SETUP})
        self.assertEqual((rows[1]['a_shadow'], rows[1]['a_ratio']), (189.7, 5.563))

    def test_rows_without_run_details(self):
        # Summary-like dicts with only bench rows (medians over runs) compare too.
        rows = compare({'bench': self.a['bench']}, {'bench': self.b['bench']})
        self.assertEqual([r['speedup'] for r in rows], [3.544, 5.389])
        self.assertEqual((rows[0]['a_accel'], rows[0]['a_setup']), (None, None))
        self.assertNotIn('emulated', format_compare(rows, 'A', 'B'))

    def test_format(self):
        text = format_compare(compare(self.a, self.b), 'debian', 'fixed')
        self.assertEqual(text.split('\n'), [
            'threads  debian shadow  debian anon  debian ratio  fixed shadow  fixed anon'
            '  fixed ratio  speedup  anon debian/fixed',
            '-------  -------------  -----------  ------------  ------------  ----------'
            '  -----------  -------  -----------------',
            '      1          120.5         33.0          3.65          34.0        32.9'
            '         1.03    3.54x               1.00',
            '      2          189.7         34.1          5.56          35.2        33.6'
            '         1.05    5.39x               1.01',
            'ratio: shadow/anon on that kernel; speedup: debian shadow / fixed shadow; '
            'anon debian/fixed: the control, about 1 when only the shadow path changed',
            f'debian, fixed: {self.SETUP}',
            'emulated (TCG): absolute ns/page drift between runs; compare the ratios inside '
            'each run'])

    def test_compare_after_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            write_summary(Path(d) / 'a.json', self.a)
            write_summary(Path(d) / 'b.json', self.b)
            rows = compare(load_summary(Path(d) / 'a.json'), load_summary(Path(d) / 'b.json'))
        self.assertEqual([r['speedup'] for r in rows], [3.544, 5.389])

    def test_bench_ratios_helper(self):
        self.assertEqual(results.bench_ratios([{'threads': 4, 'backing': 'shadow', 'median': 90.0},
                                               {'threads': 4, 'backing': 'anon', 'median': 0.0}]),
                         [{'threads': 4, 'shadow_median': 90.0, 'anon_median': 0.0,
                           'shadow_anon_ratio': None}])
        self.assertEqual(results.bench_ratios([
            {'threads': 1, 'backing': 'shadow', 'median': 90.0, 'noisy': False},
            {'threads': 1, 'backing': 'anon', 'median': 30.0, 'noisy': True}]),
            [{'threads': 1, 'shadow_median': 90.0, 'anon_median': 30.0,
              'shadow_anon_ratio': 3.0, 'noisy': True}])


if __name__ == '__main__':
    unittest.main()
