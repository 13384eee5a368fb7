"""Unit tests for gupnm.testargs: the test's arguments checked on the host."""

import re
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import testargs  # noqa: E402
from gupnm.host import UsageError  # noqa: E402


def check(text, vcpus=2, **kw):
    return testargs.check(text, vcpus=vcpus, **kw)


class RulesMatchTheSourceTest(unittest.TestCase):
    """The table follows bench/gup_fast_bench.c: a change there shows here."""

    def test_every_getopt_letter_has_a_rule_and_back(self):
        self.assertEqual(set(testargs.getopt_string().replace(':', '')), set(testargs.RULES))

    def test_value_options_are_the_ones_with_values(self):
        opts = testargs.getopt_string()
        with_value = {c for i, c in enumerate(opts) if c != ':' and opts[i + 1:i + 2] == ':'}
        self.assertEqual(with_value, {k for k, r in testargs.RULES.items()
                                      if r.kind in ('int', 'ratio')})

    def test_every_limit_is_defined(self):
        c = testargs.constants(testargs.BENCH)
        for rule in testargs.RULES.values():
            if rule.limit:
                self.assertIn(rule.limit, c)
        for name in (testargs.THREADS_LIMIT, testargs.THREAD_COUNTS_LIMIT,
                     testargs.SAMPLES_LIMIT):
            self.assertIn(name, c)

    def test_the_rules_name_the_limits_parse_args_uses(self):
        text = testargs.BENCH.read_text()
        body = text[text.index('static void parse_args('):]
        for letter, rule in testargs.RULES.items():
            if rule.kind in ('int', 'ratio'):
                # The option's branch names its limit within a few lines.
                m = re.search(rf"'{letter}'[^']{{0,200}}?\b(\w*MAX\w*)\b", body)
                self.assertIsNotNone(m, letter)
                self.assertEqual(m.group(1), rule.limit, letter)


class CheckTest(unittest.TestCase):

    def test_good(self):
        for text in ('', '-p 512 -r 5 -i 20 1 2', '-B', '-Bp8', '-p8', '-t 1.5', '-t .5',
                     '1 2 -p 3', '-- 1 2', '-B -p 32', '-t 3e2', '-t +5', '-t 0x10',
                     '-c 32 1 2 4', '-L', '-Lc32', '-c 4096 -p 8', '-c1', '-V 25 -L',
                     '-V1000', '-L -c 512 -t 2 1 2 4 8'):
            with self.subTest(text=text):
                self.assertEqual(check(text), text.split())

    def test_bad(self):
        cases = {
            '-p -5': "-p '-5': expected an integer in 1..65536",
            '-p 999999999': "-p '999999999': expected an integer in 1..65536",
            '-p 0': 'expected an integer in 1..',
            '-p 5x': 'expected an integer',
            '-p': '-p needs a value',
            '-h': "only prints the benchmark's help",
            '-x': 'unknown option -x',
            '-B -: x': 'unknown option -:',
            '-t 0': "-t '0': expected a number above 0",
            '-t nan': 'expected a number above 0',
            '-t -1': 'expected a number above 0',
            '-t 1_0': 'expected a number above 0',
            '-t 2e6': 'up to 1000000',
            '0': "thread count '0'",
            'two': "thread count 'two'",
            '1025': "thread count '1025'",
            ' '.join(['1'] * 33): 'too many thread counts (33): at most 32',
            '-r 1000 -i 65536 1': 'exceeds 16777216 samples',
            '-p 70000': "-p '70000': expected an integer in 1..65536",
            '-c 0': "-c '0': expected an integer in 1..4096",
            '-c 4097': "-c '4097': expected an integer in 1..4096",
            '-c 32x': "-c '32x': expected an integer",
            '-c -1': "-c '-1': expected an integer",
            '-L -c': '-c needs a value',
            '-V 0': "-V '0': expected an integer in 1..1000",
            '-V 1001': "-V '1001': expected an integer in 1..1000",
            '-V 2.5': "-V '2.5': expected an integer",
            '-L5': 'unknown option -5',
        }
        for text, message in cases.items():
            with self.subTest(text=text):
                with self.assertRaises(UsageError) as cm:
                    check(text)
                self.assertIn(message, str(cm.exception))
                self.assertIn('bad --test-args', str(cm.exception))

    def test_default_threads_follow_the_vcpus(self):
        # 1 2 4 ... below the CPU count, then the CPU count: 1000 reps x
        # 65536 iterations fit no thread count; 100 x 65536 fit up to 2.
        check('-r 100 -i 65536', vcpus=2)
        with self.assertRaisesRegex(UsageError, '4 threads x 100 reps'):
            check('-r 100 -i 65536', vcpus=4)

    def test_a_source_without_getopt_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / 't.c'
            src.write_text('int main(void) { return 0; }\n')
            with self.assertRaisesRegex(UsageError, 'cannot find the getopt'):
                check('', source=src)

    def test_new_option_without_a_rule_passes_unchecked(self):
        real = testargs.BENCH.read_text()
        opts = testargs.getopt_string()

        def with_getopt(s):
            return real.replace(f'"{opts}"', f'"{s}"')
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / 't.c'
            src.write_text(with_getopt(opts + 'Z:'))
            self.assertEqual(check('-Z whatever', source=src), ['-Z', 'whatever'])
            src.write_text(with_getopt(opts.replace('B', '')))
            with self.assertRaisesRegex(UsageError, 'unknown option -B'):
                check('-B', source=src)

    def test_c_numbers(self):
        self.assertEqual(testargs._c_number('262144U'), 262144)
        self.assertEqual(testargs._c_number('(16UL * 1024 * 1024)'), 16 * 1024 * 1024)
        self.assertEqual(testargs._c_number('1000000.0'), 1e6)
        with self.assertRaises(ValueError):
            testargs._c_number('sizeof(long)')


class BenchParamsTest(unittest.TestCase):
    """What the gup_test cross-check reads of the test's arguments."""

    def test_defaults_and_options(self):
        self.assertEqual(testargs.bench_params(''),
                         {'pages': 512, 'pages_per_call': 512, 'reps': 3, 'iters': 10,
                          'longterm': False, 'no_bench': False})
        got = testargs.bench_params('-L -V 30 -p 1024 -c 32 1 2')
        self.assertEqual((got['pages'], got['pages_per_call'], got['longterm']),
                         (1024, 32, True))
        self.assertEqual(testargs.bench_params('-p 100 -c 4000')['pages_per_call'], 100)
        self.assertTrue(testargs.bench_params('-B')['no_bench'])
        got = testargs.bench_params('-r 100 -i 1 1 2')
        self.assertEqual((got['reps'], got['iters']), (100, 1))

    def test_every_option_the_test_takes_is_read(self):
        # Each option of the C getopt string parses (none raises).
        for letter in testargs.getopt_string().replace(':', ''):
            value = ' 5' if testargs.getopt_string().find(letter + ':') >= 0 else ''
            testargs.bench_params(f'-{letter}{value}')


if __name__ == '__main__':
    unittest.main()
