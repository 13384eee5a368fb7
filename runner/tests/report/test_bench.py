"""Unit tests for the benchmark's output as the runner reads it:
the rows with p90, cv and the noisy flag, the parameters stated by the
``bench:`` lines (flags, pages per call, warm-up, pinning), the summary,
the comparison and the report, and the test's own printf formats."""

import json
import re
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm import cli  # noqa: E402
from gupnm.guest import vmrun  # noqa: E402
from gupnm.parse import tap  # noqa: E402
from gupnm.report import results, schema  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402
from gupnm.parse.tap import BenchRow, parse_tap  # noqa: E402
from parse.test_tap import recorded_today  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / 'data'
# The benchmark left the selftest for a program of its own (series v2).
BENCH = Path(__file__).resolve().parents[3] / 'bench/gup_fast_bench.c'
CMDLINE = 'console=ttyS0,115200 panic=-1 oops=panic rdinit=/init'


def summary_of(text, accel='tcg'):
    return results.build_summary(
        kernel_release='6.12.117+deb12-amd64', kernel_source={'kind': 'debian'}, accel=accel,
        vcpus=2, memory_mb=1024, cmdline=CMDLINE, tap=parse_tap(text), splats=[],
        exit_status=0)


def full(summary, **extra):
    """@summary with the keys vmrun.run() adds (from a real run), for the schema."""
    real = json.loads((DATA / 'real' / 'debian-6.12.summary.json').read_text())
    meta = {'started': '2026-11-30T15:00:00+00:00', 'tool_version': None,
            'qemu_version': '7.2.19', 'files': dict(vmrun.REPORT_FILES),
            'host': {'name': 'h', 'kernel': '6.1.0', 'cpus': 2, 'os': None}}
    return {**real, **meta, **summary, 'kernel': real['kernel'], **extra}


LONGTERM = (DATA / 'bench_longterm.tap').read_text()


class ParseTest(unittest.TestCase):

    def setUp(self):
        self.tap = parse_tap(LONGTERM)

    def test_rows(self):
        self.assertEqual(self.tap.errors, [])
        self.assertEqual(self.tap.bench, [
            BenchRow(1, 'shadow', 401.2, 455.0, 812.6, 497.3, 14.2, False),
            BenchRow(1, 'anon', 168.4, 180.1, 1402.9, 199.0, 38.7, True),
            BenchRow(4, 'shadow', 1630.5, 1804.9, 3301.0, 2012.4, 17.9, False),
            BenchRow(4, 'anon', 350.2, 371.8, 655.1, 402.6, 12.0, False)])
        self.assertEqual(self.tap.bench_ratios, {(1, 'shadow', 'anon'): 2.53,
                                                 (4, 'shadow', 'anon'): 4.85})

    def test_parameters_and_title(self):
        self.assertEqual(tap.bench_params(self.tap), {
            'flags': 'FOLL_LONGTERM|FOLL_WRITE', 'longterm': True, 'pages': 512,
            'pages_per_call': 32, 'reps': 3, 'iters': 10, 'warmup': 1, 'pinned': True,
            'cpus': 2, 'noisy_cv': 25.0})
        self.assertEqual(self.tap.bench_title, 'pin_user_pages_fast(FOLL_LONGTERM|FOLL_WRITE), '
                                               '512 pages/thread, 32 pages/call')

    def test_title_stays_on_the_pin_call_line(self):
        t = parse_tap(['TAP version 13', '1..1',
                       '# bench: pin_user_pages_fast(FOLL_WRITE), 8 pages/thread, 8 pages/call',
                       '# bench: threads=1: Cannot allocate memory', 'not ok 1 bench'])
        self.assertEqual(t.bench_title,
                         'pin_user_pages_fast(FOLL_WRITE), 8 pages/thread, 8 pages/call')
        self.assertIs(tap.bench_params(t)['longterm'], False)
        self.assertIsNone(tap.bench_params(t)['pinned'])

    def test_row_shapes(self):
        def rows(line):
            return parse_tap(['TAP version 13', '1..1', line, 'ok 1 bench']).bench
        self.assertEqual(rows('# bench 2 anon 1 2 3 4 5.5%'),
                         [BenchRow(2, 'anon', 1.0, 2.0, 4.0, 3.0, 5.5, False)])
        self.assertEqual(rows('# bench 2 anon 1 2 3'), [BenchRow(2, 'anon', 1.0, 2.0, 3.0)])
        for bad in ('# bench 2 anon 1 2 3 4', '# bench 2 anon 1 2 3 4 5',
                    '# bench 2 anon 1 2 3 4 5% loud', '# bench 2 anon 1 2 3 noisy'):
            with self.subTest(line=bad):
                self.assertEqual(rows(bad), [])


class TheTestPrintsWhatTheRunnerReads(unittest.TestCase):
    """The printf formats of run_bench() and bench_one(), read from the
    test's source and filled in, give lines the runner reads: a change of
    format there shows here."""

    @staticmethod
    def formats():
        text = BENCH.read_text()
        body = text[text.index('static bool bench_one('):text.index('static void __noreturn')]
        return re.findall(r'ksft_print_msg\(\s*"(bench[^"]*)\\n"', body)

    @staticmethod
    def printf(fmt, *args):
        return '# ' + re.sub(r'%(\d*)l([ud])', r'%\1\2', fmt) % args

    def test_formats(self):
        args = {'bench: pin_user_pages_fast(': ('FOLL_LONGTERM|FOLL_WRITE', 64, 16),
                'bench: %lu reps': (5, 20), 'bench: %d usable': (4, 4),
                'bench: ns/page': (30,), 'bench %7s': ('threads', 'backing', 'min', 'median',
                                                       'p90', 'max', 'cv')}
        fmts = self.formats()
        lines = ['TAP version 13', '1..1']
        for start, values in args.items():
            fmt = next((f for f in fmts if f.startswith(start)), None)
            self.assertIsNotNone(fmt, start)
            lines.append(self.printf(fmt, *values))
        row = next(f for f in fmts if f.startswith('bench %7lu '))
        lines += [self.printf(row, 3, 'shadow', 1.0, 2.0, 3.0, 40.0, 33.3, ' noisy'),
                  self.printf(row, 3, 'anon', 1.0, 2.0, 3.0, 4.0, 1.25, ''), 'ok 1 bench']
        t = parse_tap(lines)
        self.assertEqual(t.errors, [])
        self.assertEqual(t.bench, [BenchRow(3, 'shadow', 1.0, 2.0, 40.0, 3.0, 33.3, True),
                                   BenchRow(3, 'anon', 1.0, 2.0, 4.0, 3.0, 1.2, False)])
        self.assertEqual(tap.bench_params(t), {
            'flags': 'FOLL_LONGTERM|FOLL_WRITE', 'longterm': True, 'pages': 64,
            'pages_per_call': 16, 'reps': 5, 'iters': 20, 'warmup': 1, 'pinned': True,
            'cpus': 4, 'noisy_cv': 30.0})
        self.assertEqual(t.bench_title, 'pin_user_pages_fast(FOLL_LONGTERM|FOLL_WRITE), '
                                        '64 pages/thread, 16 pages/call')


class SummaryTest(unittest.TestCase):

    def setUp(self):
        self.s = summary_of(LONGTERM)

    def test_rows_ratios_params(self):
        self.assertEqual(self.s['bench'][1], {
            'threads': 1, 'backing': 'anon', 'min': 168.4, 'median': 180.1, 'p90': 199.0,
            'max': 1402.9, 'cv': 38.7, 'noisy': True})
        self.assertEqual([(r['threads'], r['shadow_anon_ratio'], r['noisy'])
                          for r in self.s['bench_ratio']], [(1, 2.526, True), (4, 4.854, False)])
        self.assertIs(self.s['bench_params']['longterm'], True)
        self.assertEqual(self.s['bench_params']['pages_per_call'], 32)

    def test_schema(self):
        self.assertEqual(schema.errors(full(self.s)), [])
        old = summary_of((DATA / 'bug_present.log').read_text())
        self.assertEqual(schema.errors(full(old)), [])
        self.assertEqual(schema.errors(full(self.s, bench_params=None)), [])
        bad = full(self.s)
        bad['bench_params'] = {**bad['bench_params'], 'pages_per_call': 0}
        bad['bench'] = [{**bad['bench'][0], 'noisy': 'yes'}]
        self.assertEqual(schema.errors(bad), [
            "$.bench[0].noisy: 'yes' is not of type boolean",
            '$.bench_params.pages_per_call: 0 is below 1'])


class RealRunsTest(unittest.TestCase):
    """Two real runs on Debian 6.12.117 under TCG (bug present): the
    benchmark with -c 32, and with -L -c 32; their TAP gives the bench
    keys of the summary the runner wrote then, which the schema takes."""

    RUNS = {'bench-c32-debian-6.12': 'FOLL_WRITE',
            'bench-L-c32-debian-6.12': 'FOLL_LONGTERM|FOLL_WRITE'}

    def test_reproduced(self):
        for name, flags in self.RUNS.items():
            with self.subTest(run=name):
                real = json.loads((DATA / 'real' / f'{name}.summary.json').read_text())
                got = summary_of((DATA / 'real' / f'{name}.tap.txt').read_text())
                for key in ('bench_title', 'bench_params', 'bench', 'bench_ratio', 'verdict'):
                    self.assertEqual(got[key], recorded_today(real)[key], key)
                self.assertEqual(schema.errors(real), [])
                self.assertEqual(real['bench_params']['flags'], flags)
                self.assertEqual(real['bench_params']['pages_per_call'], 32)
                self.assertEqual([(b['threads'], b['backing']) for b in real['bench']],
                                 [(t, k) for t in (1, 2, 4) for k in ('shadow', 'anon')])
                self.assertTrue(all(b['min'] <= b['median'] <= b['p90'] <= b['max']
                                    for b in real['bench']))
                self.assertTrue(all(b['noisy'] == (b['cv'] > 25) for b in real['bench']))


class CompareAndReportTest(unittest.TestCase):

    def setUp(self):
        self.a = summary_of(LONGTERM)
        fixed = LONGTERM.replace('1804.9', '380.0').replace('455.0', '181.0')
        self.b = summary_of(fixed, accel='kvm')

    def test_compare_table_shows_cv_and_noisy(self):
        rows = results.compare(self.a, self.b)
        self.assertEqual((rows[0]['a_anon_cv'], rows[0]['a_anon_noisy'], rows[0]['a_accel'],
                          rows[0]['b_accel']), (38.7, True, 'tcg', 'kvm'))
        text = results.format_compare(rows, 'A', 'B').split('\n')
        self.assertEqual(text, [
            'threads      A shadow       A anon  A ratio     B shadow       B anon  B ratio'
            '  speedup  anon A/B',
            '-------  ------------  -----------  -------  -----------  -----------  -------'
            '  -------  --------',
            '      1   455.0 \u00b114%   180.1 \u00b139%*     2.53  181.0 \u00b114%   '
            '180.1 \u00b139%*     1.00    2.51x      1.00',
            '      4  1804.9 \u00b118%   371.8 \u00b112%      4.85  380.0 \u00b118%   '
            '371.8 \u00b112%      1.02    4.75x      1.00',
            'ratio: shadow/anon on that kernel; speedup: A shadow / B shadow; anon A/B: the '
            'control, about 1 when only the shadow path changed',
            '\u00b1: coefficient of variation (stddev/mean) of the cell\'s samples; *: noisy '
            '(above the test\'s threshold)',
            'A: pin_user_pages_fast(FOLL_LONGTERM|FOLL_WRITE), 512 pages/thread, 32 pages/call, '
            'emulated (TCG)',
            'B: pin_user_pages_fast(FOLL_LONGTERM|FOLL_WRITE), 512 pages/thread, 32 pages/call',
            'emulated (TCG): absolute ns/page drift between runs; compare the ratios inside '
            'each run'])

    def test_report(self):
        text = cli.bench_report(self.a).split('\n')
        self.assertEqual(text[:2], [
            'bench:   pin_user_pages_fast(FOLL_LONGTERM|FOLL_WRITE), 512 pages/thread, '
            '32 pages/call, ns/page, emulated (TCG)',
            '         3 reps x 10 iters after 1 warm-up pass; shadow and anon reps alternate; '
            'threads pinned round-robin to 2 CPUs'])
        self.assertEqual(text[2].split(), ['threads', 'backing', 'min', 'median', 'p90', 'max',
                                           'cv', '%', 'noisy'])
        self.assertEqual(text[5].split(), ['1', 'anon', '168.4', '180.1', '199.0', '1402.9',
                                           '38.7', 'noisy'])
        self.assertIn('         1 thread(s): shadow/anon ratio = 2.53 (noisy)', text)
        self.assertIn('         4 thread(s): shadow/anon ratio = 4.85', text)
        self.assertIn('noisy: cv above 25 %', text[-2])
        self.assertTrue(text[-1].startswith('         emulated (TCG)'))
        kvm = cli.bench_report(self.b)
        self.assertNotIn('emulated', kvm)

    def test_report_of_an_older_summary(self):
        old = summary_of((DATA / 'bug_present.log').read_text(), accel='kvm')
        text = cli.bench_report(old).split('\n')
        self.assertEqual(text[0], 'bench:   pin_user_pages_fast(FOLL_WRITE), 512 pages/thread, '
                                  '3 reps x 10 iters, ns/page')
        self.assertEqual(text[1], '         3 reps x 10 iters')
        self.assertEqual(text[2].split(), ['threads', 'backing', 'min', 'median', 'max'])

    def test_plot_title(self):
        rows = results.compare(self.a, self.b)
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(cli, 'ensure_tools'), \
                mock.patch.object(cli.subprocess, 'run') as run:
            png = cli.plot(rows, Path(d), 'debian:6.12', 'debian:7.3')
            script = (Path(d) / 'compare.gp').read_text()
        run.assert_called_once()
        self.assertEqual(png.name, 'compare.png')
        self.assertIn('set title "A: pin_user_pages_fast(FOLL_LONGTERM|FOLL_WRITE), 512 '
                      'pages/thread, 32 pages/call, emulated (TCG); B: pin_user_pages_fast('
                      'FOLL_LONGTERM|FOLL_WRITE), 512 pages/thread, 32 pages/call: median '
                      'ns/page"', script)
        both = results.compare(self.a, self.a)
        self.assertIn('set title "pin_user_pages_fast(FOLL_LONGTERM|FOLL_WRITE), 512 '
                      'pages/thread, 32 pages/call, emulated (TCG): median ns/page"',
                      self.plot_script(both))
        bare = [{k: v for k, v in r.items() if not k.endswith(('_setup',))} for r in both]
        self.assertIn('set title "pin_user_pages_fast(FOLL_WRITE): median ns/page\\n'
                      'A and B: emulated (TCG)"', self.plot_script(bare))

    @staticmethod
    def plot_script(rows):
        """The gnuplot script cli.plot writes for @rows (gnuplot not run)."""
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(cli, 'ensure_tools'), mock.patch.object(cli.subprocess, 'run'):
            cli.plot(rows, Path(d), 'a', 'b')
            return (Path(d) / 'compare.gp').read_text()

    def test_plot_without_gnuplot(self):
        with mock.patch.object(cli, 'ensure_tools', side_effect=RunnerError('no gnuplot')), \
                mock.patch.object(cli, 'progress'):
            self.assertIsNone(cli.plot([], Path('/nonexistent'), 'a', 'b'))


if __name__ == '__main__':
    unittest.main()


class BenchProgramRealRunsTest(unittest.TestCase):
    """Summaries of real series-v2 runs (the test, then bench/gup_fast_bench
    with -r 10 1 2) on Debian 6.12 (the bug) and 7.3 (fixed): the matrix's
    benchmark check holds, and the ratio tells the kernels apart."""

    def test_matrix_benchmark_check_and_ratios(self):
        from gupnm.check import matrix
        for name, expect, low, high in (('v2-bench-debian-6.12', 'bug', 2.0, 4.0),
                                        ('v2-bench-debian-7.3', 'pass', 0.9, 1.1)):
            with self.subTest(name=name):
                s = json.loads((DATA / 'real' / f'{name}.summary.json').read_text())
                checks = {n: ok for n, ok, _ in matrix.assertions(s, '', expect)}
                bench = [ok for n, ok in checks.items() if n.startswith('benchmark measured')]
                self.assertEqual(bench, [True])
                self.assertEqual(s['bench_run']['command'], './gup_fast_bench -r 10 1 2')
                for r in s['bench_ratio']:
                    self.assertTrue(low <= r['shadow_anon_ratio'] <= high, r)



class RefusedRatioTest(unittest.TestCase):
    """A cell whose control was not order-0 has no ratio, and says why."""

    def test_the_benchmark_line_format_and_the_summary(self):
        text = BENCH.read_text()
        fmt = re.search(r'"(bench control threads=[^"]*)\\n"', text).group(1)
        why_args = (2, 0, 1024, 1024, '')
        line = TheTestPrintsWhatTheRunnerReads.printf(fmt, *why_args)
        t = parse_tap(LONGTERM + line + '\n')
        self.assertIn(2, t.bench_refused)
        self.assertIn('not order-0', t.bench_refused[2])
        s = summary_of(LONGTERM + line.replace('threads=2', 'threads=4') + '\n')
        by = {r['threads']: r for r in s['bench_ratio']}
        self.assertIsNone(by[4]['shadow_anon_ratio'])
        self.assertIn('anon 1024 of 1024', by[4]['refused'])
        self.assertIsNotNone(by[1]['shadow_anon_ratio'])      # the other cell keeps its ratio
        self.assertEqual(schema.errors(full(s)), [])
