"""Unit tests for gupnm.report.stats."""

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.report import stats  # noqa: E402


class DescriptiveTest(unittest.TestCase):

    def test_median_odd_and_even(self):
        self.assertEqual(stats.median([300.0, 110.2, 120.5]), 120.5)
        self.assertEqual(stats.median([4.0, 1.0, 3.0, 2.0]), 2.5)
        self.assertEqual(stats.median([7]), 7.0)

    def test_min_max_mean(self):
        values = [110.2, 120.5, 300.0, 33.0]
        self.assertEqual(stats.minimum(values), 33.0)
        self.assertEqual(stats.maximum(values), 300.0)
        self.assertAlmostEqual(stats.mean(values), 140.925)

    def test_describe(self):
        s = stats.describe(iter([5, 1, 3, 2]))
        self.assertEqual(s, stats.Summary(n=4, min=1.0, median=2.5, max=5.0, mean=2.75))

    def test_empty_input_raises(self):
        for fn in (stats.minimum, stats.maximum, stats.mean, stats.median, stats.describe):
            with self.subTest(fn=fn.__name__):
                with self.assertRaisesRegex(ValueError, 'empty input'):
                    fn([])

    def test_non_finite_and_non_numbers_raise(self):
        for bad in ([1.0, math.nan], [math.inf], [True, 2.0], ['3.0']):
            with self.subTest(bad=bad):
                with self.assertRaises(ValueError):
                    stats.median(bad)


class RatioTest(unittest.TestCase):

    def test_ratio(self):
        self.assertAlmostEqual(stats.ratio(120.5, 33.0), 3.6515, places=4)
        with self.assertRaisesRegex(ValueError, 'zero denominator'):
            stats.ratio(1.0, 0)

    def test_speedup(self):
        self.assertAlmostEqual(stats.speedup(187.0, 110.0), 1.7, places=6)
        with self.assertRaises(ValueError):
            stats.speedup(187.0, 0.0)
        with self.assertRaises(ValueError):
            stats.speedup(-1.0, 2.0)
        with self.assertRaises(ValueError):
            stats.speedup(math.nan, 2.0)


class FormatTableTest(unittest.TestCase):

    def test_numbers_right_text_left(self):
        text = stats.format_table([[1, 'shadow', 110.25, 120.5], [16, 'anon', 30.1, None]],
                                  ['threads', 'backing', 'min', 'median'])
        self.assertEqual(text.split('\n'), [
            'threads  backing    min  median',
            '-------  -------  -----  ------',
            '      1  shadow   110.2   120.5',
            '     16  anon      30.1       -',
        ])

    def test_numeric_strings_and_override(self):
        text = stats.format_table([['a', '3.65x'], ['bb', '12.00x']], ['k', 'speedup'])
        self.assertEqual(text.split('\n'), ['k   speedup', '--  -------', 'a     3.65x', 'bb   12.00x'])
        text = stats.format_table([['a', 1]], ['k', 'v'], right_align=[True, False])
        self.assertEqual(text.split('\n'), ['k  v', '-  -', 'a  1'])

    def test_float_format_and_bool_is_text(self):
        text = stats.format_table([[True, 1.23456]], ['ok', 'x'], float_format='.3f')
        self.assertEqual(text.split('\n'), ['ok        x', '----  -----', 'True  1.235'])

    def test_row_width_mismatch(self):
        with self.assertRaisesRegex(ValueError, 'row 1 has 1 cells, expected 2'):
            stats.format_table([[1, 2], [3]], ['a', 'b'])

    def test_empty_rows(self):
        self.assertEqual(stats.format_table([], ['a', 'bb']).split('\n'), ['a  bb', '-  --'])


if __name__ == '__main__':
    unittest.main()
