"""Unit tests for gupnm.report.figures (parse, summarise, compare, table, plot).

Every sample below is built from the printf() formats of the real sources,
cited in a comment next to it: KSRC_6_12 and KSRC_7_3 are Debian's
linux-source-6.12 (6.12.118) and linux-source-7.3 (7.3.4) trees; the 6.1-era
formats (selftests/vm/, plain printf without kselftest's "# ") come from
torvalds/linux's tools/testing/selftests/vm/gup_test.c and the v6.1 patch
"selftests/vm: add test to measure MADV_UNMERGEABLE performance" (no 6.1
tree is unpacked here). kselftest.h's ksft_print_msg() prints "# " before
its text at each call (KSRC_6_12 tools/testing/selftests/kselftest.h:159-169).
No VM runs; gnuplot runs only in the test that makes a PNG.
"""

import math
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.report import figures  # noqa: E402
from gupnm.report.figures import Figure, HIGHER, LOWER  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / 'data'

# KSRC_6_12 and KSRC_7_3 tools/testing/selftests/mm/gup_test.c:66-71:
#   ksft_print_msg("%s: Time: get:%lld put:%lld us", cmd_to_str(cmd), ...);
#   if (gup.size != size) ksft_print_msg(", truncated (size: %lld)", gup.size);
#   ksft_print_msg("\n");
# and :88 ksft_test_result(!status, "ioctl status %d\n", status).
# Two threads (-j 2), two repeats (-r 2), console noise in between.
GUP_TEST_6_12 = """\
TAP version 13
1..2
# PIN_LONGTERM_BENCHMARK: Time: get:14391 put:512 us# 
[   12.345678] random: crng init done
# PIN_LONGTERM_BENCHMARK: Time: get:14402 put:509 us# 
# PIN_LONGTERM_BENCHMARK: Time: get:14388 put:515 us# 
ok 1 ioctl status 0
[   12.901234] hrtimer: interrupt took 5123456 ns
# PIN_LONGTERM_BENCHMARK: Time: get:14420 put:520 us# 
ok 2 ioctl status 0
# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0
"""

# The same lines nested by run_vmtests.sh / run_kselftest.sh ("# " again),
# one of them truncated (gup_test.c:70), behind printk time stamps.
GUP_TEST_NESTED = """\
# # PIN_FAST_BENCHMARK: Time: get:2210 put:340 us# 
[    9.100000] # # PIN_FAST_BENCHMARK: Time: get:2190 put:338 us# 
# # PIN_FAST_BENCHMARK: Time: get:900 put:120 us# , truncated (size: 1048576)# 
"""

# 6.1 era, torvalds/linux tools/testing/selftests/vm/gup_test.c (gup_thread):
#   printf("%s: Time: get:%lld put:%lld us", cmd_to_str(cmd), ...);
#   if (gup.size != size) printf(", truncated (size: %lld)", gup.size);
#   printf("\n");
GUP_TEST_6_1 = """\
GUP_FAST_BENCHMARK: Time: get:187 put:45 us
GUP_FAST_BENCHMARK: Time: get:190 put:44 us, truncated (size: 4096)
"""

# Before the 2020 rework that added cmd_to_str(): printf("Time: get:%lld put:%lld us").
GUP_TEST_OLD = "Time: get:14 put:3 us\n"

# KSRC_6_12 tools/testing/selftests/mm/ksm_tests.c:689-692 (ksm_unmerge_time, -D):
#   ksft_print_msg("Total size:    %lu MiB\n", ...);
#   ksft_print_msg("Total time:    %ld.%09ld s\n", ...);
#   ksft_print_msg("Average speed:  %.3f MiB/s\n", ...);
# and :935 ksft_test_result_report(ret, "%s\n", test_descr) ("KSM unmerge time", :921).
KSM_D_6_12 = """\
TAP version 13
1..1
# Total size:    2048 MiB
# Total time:    0.426545123 s
[   31.000001] kworker/u4:1: page allocation stalls for 10ms
# Average speed:  4801.367 MiB/s
ok 1 KSM unmerge time
# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0
"""

# KSRC_7_3 tools/testing/selftests/mm/ksm_tests.c:702-734 (ksm_cow_time, -C):
#   ksft_print_msg("Total size:    %lu MiB\n\n", ...);
#   ksft_print_msg("Not merged pages:\n");
#   ksft_print_msg("Total time:     %ld.%09ld s\n", ...);
#   ksft_print_msg("Average speed:  %.3f MiB/s\n\n", ...);
#   ksft_print_msg("Merged pages:\n");  then time and speed again.
KSM_C_7_3 = """\
TAP version 13
1..1
# Total size:    15 MiB

# Not merged pages:
# Total time:     0.000812345 s
# Average speed:  9232.123 MiB/s

# Merged pages:
# Total time:     0.004512345 s
# Average speed:  1662.011 MiB/s
ok 1 KSM COW time
"""

# KSRC_6_12 ksm_tests.c:584-585 and 603-606 (ksm_merge_hugepages_time, -H),
# with -d's ksm_print_sysfs() lines (:116-124), which are not figures.
KSM_H_6_12 = """\
# Number of normal pages:    0
# Number of huge pages:    64
pages_shared      : 1
pages_sharing     : 32767
full_scans        : 3
# Total size:    128 MiB
# Total time:    1.500000000 s
# Average speed:  85.333 MiB/s
ok 1 KSM merge time with huge pages
"""

# 6.1: the -D patch (v6.1, "selftests/vm: add test to measure MADV_UNMERGEABLE
# performance") printed the same strings with printf(), no "# ".
KSM_D_6_1 = """\
Total size:    2048 MiB
Total time:    0.390100000 s
Average speed:  5250.000 MiB/s
"""

# -M prints no figure (KSRC_6_12 ksm_tests.c check_ksm_merge + :935).
KSM_M_6_12 = "TAP version 13\n1..1\nok 1 KSM merging\n"

# gup_null_mapping (this repository's selftest), as printed before the
# p90/CV columns: the real console log runner/tests/data/real/
# debian-6.12.console.log:429-436, from run_bench()'s
# ksft_print_msg("bench %7s  %7s %8s %8s %8s\n", "threads", "backing", "min",
# "median", "max"), bench_one()'s "bench %7lu  %7s %8.1f %8.1f %8.1f\n" rows and
# "bench ratio threads=%lu shadow/anon=%.2f\n" (gup_null_mapping.c:476, 450, 483
# at commit cc681dc).
NULL_MAPPING_OLD = (DATA / 'real' / 'debian-6.12.console.log').read_text()

# gup_null_mapping.c with the p90/CV columns (a colleague's change, working
# tree of this session: lines 504, 554, 561): run_bench()'s header
#   ksft_print_msg("bench %7s  %7s %8s %8s %8s %8s %6s\n", "threads", "backing",
#                  "min", "median", "p90", "max", "cv");
# bench_one()'s rows
#   ksft_print_msg("bench %7lu  %7s %8.1f %8.1f %8.1f %8.1f %5.1f%%%s\n", ..., " noisy" or "");
# and the ratio ksft_print_msg("bench ratio threads=%lu shadow/anon=%.2f\n", ...).
NULL_MAPPING_NEW = """\
# bench: pin_user_pages_fast(FOLL_WRITE), 512 pages/thread, 512 pages/call
# bench threads  backing      min   median      p90      max     cv
# bench       1   shadow    629.6    730.4    900.0   2536.7  12.3%
# bench       1     anon    268.9    319.6    350.2   1019.7  55.0% noisy
# bench ratio threads=1 shadow/anon=2.29
[    7.000000] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable
# bench       4   shadow   1200.0   1500.5   1800.0   9000.0  20.1%
# bench       4     anon    300.0    310.0    330.0    900.0   8.0%
# bench ratio threads=4 shadow/anon=4.84
ok 46 bench
"""


def names(figs):
    return [f.name for f in figs]


class ParseGupTestTest(unittest.TestCase):

    def test_6_12_repeats_kept_in_order(self):
        figs = figures.parse('gup_test', GUP_TEST_6_12)
        self.assertEqual(names(figs), ['PIN_LONGTERM get_us', 'PIN_LONGTERM put_us'] * 4)
        self.assertEqual([f.value for f in figs if f.name.endswith('get_us')],
                         [14391.0, 14402.0, 14388.0, 14420.0])
        self.assertTrue(all(f.unit == 'us' and f.better == LOWER for f in figs))

    def test_nested_prefixes_timestamps_and_truncated(self):
        figs = figures.parse('gup_test', GUP_TEST_NESTED)
        self.assertEqual([(f.name, f.value) for f in figs], [
            ('PIN_FAST get_us', 2210.0), ('PIN_FAST put_us', 340.0),
            ('PIN_FAST get_us', 2190.0), ('PIN_FAST put_us', 338.0),
            ('PIN_FAST get_us (truncated)', 900.0), ('PIN_FAST put_us (truncated)', 120.0)])

    def test_6_1_printf_format(self):
        figs = figures.parse('gup_test', GUP_TEST_6_1)
        self.assertEqual([(f.name, f.value) for f in figs], [
            ('GUP_FAST get_us', 187.0), ('GUP_FAST put_us', 45.0),
            ('GUP_FAST get_us (truncated)', 190.0), ('GUP_FAST put_us (truncated)', 44.0)])

    def test_pre_5_11_format_has_no_benchmark_name(self):
        self.assertEqual(figures.parse('gup_test', GUP_TEST_OLD),
                         [Figure('get_us', 14.0, 'us', LOWER), Figure('put_us', 3.0, 'us', LOWER)])

    def test_program_may_be_a_path(self):
        self.assertEqual(len(figures.parse('./gup_test', GUP_TEST_OLD)), 2)

    def test_line_split_by_the_console_is_lost_not_misread(self):
        text = '# PIN_FAST_BENCHMARK: Time: get:12[    3.100000] virtio: foo\nput:3 us# \n'
        self.assertEqual(figures.parse('gup_test', text), [])

    def test_non_benchmark_commands_print_no_figure(self):
        # gup_test.c:81: ksft_print_msg("%s: done\n", cmd_to_str(cmd)) for -U/-b/-c.
        text = '# GUP_BASIC_TEST: done\nok 1 ioctl status 0\n'
        self.assertEqual(figures.parse('gup_test', text), [])


class ParseKsmTestsTest(unittest.TestCase):

    def test_unmerge_time_6_12(self):
        self.assertEqual(figures.parse('ksm_tests', KSM_D_6_12), [
            Figure('time', 0.426545123, 's', LOWER),
            Figure('speed', 4801.367, 'MiB/s', HIGHER)])

    def test_cow_sections_7_3(self):
        figs = figures.parse('ksm_tests', KSM_C_7_3)
        self.assertEqual([(f.name, f.value, f.unit, f.better) for f in figs], [
            ('not_merged time', 0.000812345, 's', LOWER),
            ('not_merged speed', 9232.123, 'MiB/s', HIGHER),
            ('merged time', 0.004512345, 's', LOWER),
            ('merged speed', 1662.011, 'MiB/s', HIGHER)])

    def test_hugepages_and_debug_lines_are_not_figures(self):
        self.assertEqual(names(figures.parse('ksm_tests', KSM_H_6_12)), ['time', 'speed'])

    def test_6_1_printf_format(self):
        figs = figures.parse('ksm_tests', KSM_D_6_1)
        self.assertEqual([(f.name, f.value) for f in figs], [('time', 0.3901), ('speed', 5250.0)])

    def test_merge_check_has_no_figures(self):
        self.assertEqual(figures.parse('ksm_tests', KSM_M_6_12), [])


class ParseGupNullMappingTest(unittest.TestCase):

    def test_real_console_log_old_columns(self):
        figs = figures.parse('gup_null_mapping', NULL_MAPPING_OLD)
        self.assertEqual([(f.name, f.value, f.unit) for f in figs], [
            ('shadow median@1', 730.4, 'ns/page'), ('anon median@1', 319.6, 'ns/page'),
            ('shadow median@2', 745.8, 'ns/page'), ('anon median@2', 304.3, 'ns/page'),
            ('shadow/anon@1', 2.29, 'ratio'), ('shadow/anon@2', 2.45, 'ratio')])
        self.assertTrue(all(f.better == LOWER for f in figs))

    def test_real_status_log_nested_and_ratio_interleaved(self):
        text = (DATA / 'real' / 'table-debian-6.1.status.log').read_text()
        figs = figures.parse('gup_null_mapping', text)
        self.assertEqual(names(figs), ['shadow median@1', 'anon median@1', 'shadow/anon@1',
                                       'shadow median@2', 'anon median@2', 'shadow/anon@2'])
        self.assertEqual(figs[0].value, 125.0)     # line 97: shadow median@1

    def test_inf_ratio_is_not_a_figure(self):
        # runner/tests/data/real/source-6.12-nofix.status.log:86-90: medians 0.0, ratio inf.
        text = (DATA / 'real' / 'source-6.12-nofix.status.log').read_text()
        figs = figures.parse('gup_null_mapping', text)
        self.assertEqual([(f.name, f.value) for f in figs],
                         [('shadow median@1', 0.0), ('anon median@1', 0.0)])

    def test_columns_found_by_header_names(self):
        figs = figures.parse('gup_null_mapping', NULL_MAPPING_NEW)
        self.assertEqual([(f.name, f.value) for f in figs], [
            ('shadow median@1', 730.4), ('anon median@1', 319.6), ('shadow/anon@1', 2.29),
            ('shadow median@4', 1500.5), ('anon median@4', 310.0), ('shadow/anon@4', 4.84)])

    def test_rows_without_header_only_in_the_old_layout(self):
        new_rows = '\n'.join(line for line in NULL_MAPPING_NEW.splitlines()
                             if 'backing' not in line)
        self.assertEqual(names(figures.parse('gup_null_mapping', new_rows)),
                         ['shadow/anon@1', 'shadow/anon@4'])
        self.assertEqual(figures.parse('gup_null_mapping', '# bench  8  shadow  1.0 2.0 3.0\n'),
                         [Figure('shadow median@8', 2.0, 'ns/page', LOWER)])


class ParseGenericTest(unittest.TestCase):

    def test_time_and_rate_lines_only(self):
        text = """\
TAP version 13
# Elapsed: 1.5 ms
# Throughput: 100.5 MB/s
pages_shared      : 5
Total size:    15 MiB
Runs: 20
[    1.200000] Freeing unused kernel image memory: 1234 s
[    1.300000] sched_clock: Marking stable: 2 s
# race_kill_bench: 20 killed, 0 finished first, max kill-to-reap 13.1 ms
Time: 3 s
ok 1 foo
"""
        self.assertEqual(figures.parse('foo', text), [
            Figure('Elapsed', 1.5, 'ms', LOWER), Figure('Throughput', 100.5, 'MB/s', HIGHER),
            Figure('Time', 3.0, 's', LOWER)])

    def test_known_formats_are_not_guessed_for_other_programs(self):
        self.assertEqual(figures.parse('run_vmtests.sh', GUP_TEST_6_12), [])
        self.assertEqual(figures.parse('cow', NULL_MAPPING_NEW), [])


class ParseGarbageTest(unittest.TestCase):

    def test_empty_and_garbage(self):
        garbage = ('\x00\xff\ufffd###\n#\n# \n\r\n:::: 12 us\nbench ratio threads=x\n'
                   'Time: get:-1 put:2 us\n')
        for program in ('gup_test', 'ksm_tests', 'gup_null_mapping', 'foo'):
            for text in ('', '\n\n', garbage):
                with self.subTest(program=program, text=text[:10]):
                    self.assertEqual(figures.parse(program, text), [])

    def test_other_programs_output(self):
        self.assertEqual(figures.parse('gup_test', KSM_D_6_12), [])
        self.assertEqual(figures.parse('ksm_tests', GUP_TEST_6_12), [])
        self.assertEqual(figures.parse('gup_null_mapping', GUP_TEST_6_12 + KSM_D_6_12), [])


def fig(name, value, unit='us', better=LOWER):
    return Figure(name, value, unit, better)


class SummariseTest(unittest.TestCase):

    def test_values_pooled_and_run_means_kept(self):
        runs = [[fig('get_us', 10), fig('put_us', 1), fig('get_us', 12)],
                [fig('get_us', 14), fig('put_us', 3)]]
        s = figures.summarise(runs)
        self.assertEqual(list(s), ['get_us', 'put_us'])
        g = s['get_us']
        self.assertEqual((g.n, g.mean, g.min, g.max), (3, 12.0, 10.0, 14.0))
        self.assertAlmostEqual(g.stddev, 2.0)
        self.assertEqual(g.values, (10.0, 12.0, 14.0))
        self.assertEqual(g.run_means, (11.0, 14.0))
        self.assertAlmostEqual(s['put_us'].stddev, math.sqrt(2))

    def test_single_value_has_zero_sd(self):
        s = figures.summarise([[fig('time', 0.5, 's')]])['time']
        self.assertEqual((s.n, s.mean, s.stddev, s.run_means), (1, 0.5, 0.0, (0.5,)))

    def test_runs_without_figures(self):
        self.assertEqual(figures.summarise([]), {})
        self.assertEqual(figures.summarise([[], []]), {})
        s = figures.summarise([[], [fig('x', 2)], [fig('x', 4)]])['x']
        self.assertEqual(s.run_means, (2.0, 4.0))

    def test_one_name_two_units_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "'speed'"):
            figures.summarise([[fig('speed', 1, 'MiB/s', HIGHER)], [fig('speed', 1, 's')]])

    def test_real_parse_feeds_summarise(self):
        s = figures.summarise([figures.parse('gup_test', GUP_TEST_6_12)])
        self.assertEqual(s['PIN_LONGTERM get_us'].n, 4)
        self.assertAlmostEqual(s['PIN_LONGTERM get_us'].mean, 14400.25)


class TDistributionTest(unittest.TestCase):

    def test_closed_forms(self):
        for t in (0.0, 0.5, 1.0, 3.0, 12.706, 100.0):
            with self.subTest(t=t):
                # df=1 (Cauchy) and df=2 have closed forms.
                self.assertAlmostEqual(figures.t_two_sided_p(t, 1), 1 - 2 / math.pi * math.atan(t),
                                       places=10)
                self.assertAlmostEqual(figures.t_two_sided_p(t, 2), 1 - t / math.sqrt(2 + t * t),
                                       places=10)

    def test_table_critical_values(self):
        for t, df in ((2.776, 4), (2.228, 10), (2.042, 30), (1.960, 1e7)):
            with self.subTest(df=df):
                self.assertAlmostEqual(figures.t_two_sided_p(t, df), 0.05, places=3)

    def test_welch_statistic_and_df(self):
        t, df, p = figures.welch([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
        self.assertAlmostEqual(t, 3 / math.sqrt(2.5))
        self.assertAlmostEqual(df, 6.25 / 1.0625)
        self.assertTrue(0.05 < p < 0.2)
        self.assertIsNone(figures.welch([1], [1, 2]))


def stats_of(runs_values, name='get_us', unit='us', better=LOWER):
    return figures.summarise([[Figure(name, v, unit, better) for v in run] for run in runs_values])


class CompareTest(unittest.TestCase):

    def test_clear_difference_lower_is_better(self):
        a = stats_of([[100], [101], [99], [100], [102]])
        b = stats_of([[80], [81], [79], [80], [82]])
        (row,) = figures.compare(a, b)
        self.assertEqual(row['basis'], 'runs')
        self.assertTrue(row['significant'])
        self.assertEqual(row['better_on'], 'b')
        self.assertAlmostEqual(row['ratio'], 80.4 / 100.4)
        self.assertAlmostEqual(row['change_pct'], (80.4 / 100.4 - 1) * 100)
        self.assertLess(row['p_value'], 1e-6)
        self.assertEqual((row['a_n'], row['a_runs'], row['b_n'], row['b_runs']), (5, 5, 5, 5))

    def test_unclear_difference_is_noise(self):
        a = stats_of([[100], [110], [90]])
        b = stats_of([[104], [114], [94]])
        (row,) = figures.compare(a, b)
        self.assertFalse(row['significant'])
        self.assertIsNone(row['better_on'])
        self.assertGreater(row['p_value'], 0.05)

    def test_higher_is_better(self):
        a = stats_of([[5250, 5260], [5240]], 'speed', 'MiB/s', HIGHER)
        b = stats_of([[4800, 4790], [4810]], 'speed', 'MiB/s', HIGHER)
        (row,) = figures.compare(a, b)
        # one side has one value per run: run means 5255 and 5240 vs 4795 and 4810
        self.assertEqual(row['basis'], 'runs')
        self.assertTrue(row['significant'])
        self.assertEqual(row['better_on'], 'a')

    def test_repeats_inside_one_run_are_the_samples_when_one_run(self):
        a = stats_of([[14.91, 14.5, 15.3, 14.9, 15.0]])
        b = stats_of([[10.76, 10.6, 10.9, 10.8, 10.7]])
        (row,) = figures.compare(a, b)
        self.assertEqual(row['basis'], 'values')
        self.assertTrue(row['significant'])
        self.assertEqual(row['better_on'], 'b')

    def test_boot_noise_beats_repeat_noise(self):
        # Tight repeats, but the boots disagree: the run means decide.
        a = stats_of([[100, 100.1, 99.9], [120, 120.1, 119.9], [80, 80.1, 79.9]])
        b = stats_of([[105, 105.1, 104.9], [125, 125.1, 124.9], [85, 85.1, 84.9]])
        (row,) = figures.compare(a, b)
        self.assertEqual(row['basis'], 'runs')
        self.assertFalse(row['significant'])

    def test_one_sample_each_cannot_be_judged(self):
        (row,) = figures.compare(stats_of([[10]]), stats_of([[20]]))
        self.assertIsNone(row['significant'])
        self.assertIsNone(row['p_value'])
        self.assertIsNone(row['better_on'])
        self.assertEqual(row['ratio'], 2.0)

    def test_zero_variance(self):
        (row,) = figures.compare(stats_of([[10], [10]]), stats_of([[12], [12]]))
        self.assertTrue(row['significant'])
        self.assertEqual(row['better_on'], 'a')
        (row,) = figures.compare(stats_of([[10], [10]]), stats_of([[10], [10]]))
        self.assertFalse(row['significant'])

    def test_only_figures_on_both_sides_and_zero_a_mean(self):
        a = figures.summarise([[fig('x', 0), fig('only_a', 1)], [fig('x', 0)]])
        b = figures.summarise([[fig('x', 1), fig('only_b', 1)], [fig('x', 2)]])
        (row,) = figures.compare(a, b)
        self.assertEqual(row['name'], 'x')
        self.assertIsNone(row['ratio'])
        self.assertIsNone(row['change_pct'])

    def test_unit_mismatch_is_an_error(self):
        with self.assertRaises(ValueError):
            figures.compare(stats_of([[1]]), stats_of([[1]], unit='ms'))


def sample_rows():
    a = figures.summarise([[fig('PIN_LONGTERM get_us', v)] for v in (14391, 14450, 14300)]
                          + [[fig('speed', 5250.0, 'MiB/s', HIGHER)]])
    b = figures.summarise([[fig('PIN_LONGTERM get_us', v)] for v in (4867, 4900, 4850)]
                          + [[fig('speed', 4800.0, 'MiB/s', HIGHER)]])
    return figures.compare(a, b)


class FormatTableTest(unittest.TestCase):

    def test_table(self):
        text = figures.format_table(sample_rows(), 'debian:6.12', 'source:debian-7.3', False)
        lines = text.splitlines()
        self.assertEqual(lines[:2], ['A: debian:6.12', 'B: source:debian-7.3'])
        self.assertNotIn('TCG', text)
        header = next(line for line in lines if line.startswith('figure'))
        sep = lines[lines.index(header) + 1]
        self.assertTrue(set(sep) <= {'-', ' '})
        get_row = next(line for line in lines if line.startswith('PIN_LONGTERM get_us'))
        speed_row = next(line for line in lines if line.startswith('speed'))
        self.assertIn('14380 ± 76', get_row)
        self.assertIn('4872 ± 25', get_row)
        self.assertIn('B better', get_row)
        self.assertIn('-66.1%', get_row)
        self.assertIn('0.339', get_row)
        self.assertIn('3/3', get_row)
        self.assertIn('5250 ± 0', speed_row)
        self.assertIn('n/a (<2 samples)', speed_row)
        # fixed width: the B/A column ends at the same place on every row
        col = header.index('B/A') + len('B/A')
        self.assertEqual(get_row[col - 5:col], '0.339')
        self.assertEqual(speed_row[col - 5:col], '0.914')
        self.assertIn('Welch', text)

    def test_emulated_line(self):
        text = figures.format_table(sample_rows(), 'a', 'b', True)
        self.assertIn('QEMU TCG', text.splitlines()[0])
        self.assertIn('not hardware', text.splitlines()[0])

    def test_no_rows(self):
        text = figures.format_table([], 'a', 'b', False)
        self.assertIn('no figure printed on both kernels', text)

    def test_small_values_keep_digits(self):
        (row,) = figures.compare(stats_of([[0.4264], [0.4272]], 'time', 's'),
                                 stats_of([[0.3901], [0.3905]], 'time', 's'))
        text = figures.format_table([row], 'a', 'b', False)
        self.assertIn('0.4268 ± 0.0006', text)
        self.assertIn('A better' if row['better_on'] == 'a' else 'B better', text)


class PlotTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_skipped_without_gnuplot(self):
        with mock.patch.object(figures.shutil, 'which', return_value=None), \
                mock.patch.object(figures.subprocess, 'run',
                                  side_effect=AssertionError('must not run')):
            self.assertIsNone(figures.plot(sample_rows(), self.tmp, 'a', 'b', 't'))
        self.assertEqual(list(self.tmp.iterdir()), [])

    def test_nothing_to_draw(self):
        self.assertIsNone(figures.plot([], self.tmp, 'a', 'b', 't'))

    def test_gnuplot_failure_raises(self):
        done = subprocess.CompletedProcess([], 1, '', 'line 3: boom')
        with mock.patch.object(figures.shutil, 'which', return_value='/usr/bin/gnuplot'), \
                mock.patch.object(figures.subprocess, 'run', return_value=done):
            with self.assertRaisesRegex(figures.PlotError, 'boom'):
                figures.plot(sample_rows(), self.tmp, 'a', 'b', 't')

    def test_script_normalises_mixed_units_and_quotes_labels(self):
        done = subprocess.CompletedProcess([], 0, '', '')

        def fake_run(cmd, **kw):
            (self.tmp / 'figures.png').write_bytes(b'\x89PNG')
            return done
        with mock.patch.object(figures.shutil, 'which', return_value='/usr/bin/gnuplot'), \
                mock.patch.object(figures.subprocess, 'run', side_effect=fake_run):
            png = figures.plot(sample_rows(), self.tmp, "it's A", 'B "quoted"', 'gup vs ksm')
        self.assertEqual(png, self.tmp / 'figures.png')
        gp = (self.tmp / 'figures.gp').read_text()
        self.assertIn('pngcairo', gp)
        self.assertIn('noenhanced', gp)
        self.assertIn("'A: it''s A'", gp)
        self.assertIn('\'B: B "quoted"\'', gp)
        self.assertIn("units differ", gp)
        self.assertIn("relative to A's mean".replace("'", "''"), gp)
        dat = [line.split('\t') for line in (self.tmp / 'figures.dat').read_text().splitlines()]
        self.assertEqual(dat[0][0], 'PIN_LONGTERM get_us')
        self.assertEqual(float(dat[0][1]), 1.0)
        self.assertAlmostEqual(float(dat[0][3]), 4872.333333 / 14380.333333, places=5)
        self.assertEqual(float(dat[1][1]), 1.0)

    def test_same_unit_is_absolute(self):
        rows = [r for r in sample_rows() if r['unit'] == 'us']
        with mock.patch.object(figures.shutil, 'which', return_value='/usr/bin/gnuplot'), \
                mock.patch.object(figures.subprocess, 'run',
                                  return_value=subprocess.CompletedProcess([], 0, '', '')):
            with self.assertRaises(figures.PlotError):   # no PNG was written
                figures.plot(rows, self.tmp, 'a', 'b', 't')
        gp = (self.tmp / 'figures.gp').read_text()
        self.assertIn("set ylabel 'us'", gp)
        self.assertNotIn('units differ', gp)
        self.assertAlmostEqual(float((self.tmp / 'figures.dat').read_text().split('\t')[1]),
                               14380.333333, places=4)

    @unittest.skipIf(shutil.which('gnuplot') is None, 'gnuplot not installed')
    def test_png_made_with_gnuplot(self):
        png = figures.plot(sample_rows(), self.tmp / 'out', 'debian:6.12', 'debian:7.3',
                           'gup_test -HL -m 256 -n 512 (QEMU TCG, emulated)')
        self.assertEqual(png, self.tmp / 'out' / 'figures.png')
        data = png.read_bytes()
        self.assertEqual(data[:8], b'\x89PNG\r\n\x1a\n')
        self.assertGreater(len(data), 2000)


if __name__ == '__main__':
    unittest.main()
