"""Unit tests for gupnm.report.expect: the expectations file, its matching
and precedence, and real runs' summaries compared with Debian's file."""

import argparse
import copy
import json
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE.parent))

from gupnm.host import UsageError  # noqa: E402
from gupnm.report import expect, junit, schema  # noqa: E402

REAL = HERE / 'data' / 'real'


def real(name: str) -> dict:
    return json.loads((REAL / f'{name}.summary.json').read_text())


def rules(text: str) -> expect.Expectations:
    return expect.Expectations('t.txt', expect.parse(text, 't.txt'))


class KernelMatchTest(unittest.TestCase):

    def test_series_version_range_glob(self):
        m = expect.kernel_matches
        self.assertTrue(m('6.12', '6.12.118+deb12-amd64'))
        self.assertFalse(m('6.1', '6.12.118+deb12-amd64'))
        self.assertTrue(m('6.1', '6.1.0-57-amd64'))
        self.assertTrue(m('6.12.118', '6.12.118+'))
        self.assertFalse(m('6.12.118', '6.12.117+deb13-amd64'))
        # Both ends included at the precision written.
        self.assertTrue(m('6.10..7.2', '7.2.13+deb14-amd64'))
        self.assertTrue(m('6.10..7.2', '6.10.0'))
        self.assertFalse(m('6.10..7.2', '7.3.4+deb13-amd64'))
        self.assertFalse(m('6.10..7.2', '6.9.12'))
        self.assertTrue(m('..6.4', '6.1.0-57-amd64'))
        self.assertFalse(m('..6.4', '6.5.0'))
        self.assertTrue(m('6.12.125..6.12', '6.12.125+deb13-amd64'))
        self.assertFalse(m('6.12.125..6.12', '6.12.124+deb13-amd64'))
        self.assertFalse(m('6.12.125..6.12', '6.13.1'))
        self.assertTrue(m('7.3..', '8.0.1'))
        self.assertTrue(m('*', None))
        self.assertTrue(m('*+deb13-*', '6.12.118+deb13-amd64'))
        self.assertFalse(m('*+deb13-*', '6.12.118+deb12-amd64'))
        self.assertTrue(m('6.12.118+deb12-amd64', '6.12.118+deb12-amd64'))
        self.assertFalse(m('6.12', None))


class ParseTest(unittest.TestCase):

    def bad(self, text: str, words: str):
        with self.assertRaises(UsageError) as ctx:
            expect.parse(text, 'f.txt')
        self.assertIn(words, str(ctx.exception))

    def test_comments_blank_lines_and_reasons(self):
        r = expect.parse('# head\n\n6.12 verdict_driver_read fail  # the bug\n'
                         '* bench skip\n', 'f.txt')
        self.assertEqual([(x.kernel, x.cell, x.expect, x.reason, x.where) for x in r],
                         [('6.12', 'verdict_driver_read', 'fail', 'the bug', 'f.txt:3'),
                          ('*', 'bench', 'skip', '', 'f.txt:4')])

    def test_bad_lines_name_file_and_line(self):
        self.bad('6.12 verdict_driver_read fial\n', "f.txt:1: expectation 'fial'")
        self.bad('\n6.12 verdict_driver_read\n', 'f.txt:2: expected')
        self.bad('6.12 a b c\n', 'f.txt:1: expected')
        self.bad('6.12-7.2 verdict_driver_read fail\n', "f.txt:1: kernel '6.12-7.2'")
        self.bad('7.2..6.10 verdict_driver_read fail\n', 'f.txt:1: range')
        self.bad('.. verdict_driver_read fail\n', 'f.txt:1:')
        self.bad('6.12 verdict/driver fail\n', "f.txt:1: cell 'verdict/driver'")

    def test_load_and_arg(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / 'e.txt'
            f.write_text('* * pass\n')
            self.assertEqual(len(expect.load(f).rules), 1)
            f.write_text('* * maybe\n')
            with self.assertRaises(argparse.ArgumentTypeError) as ctx:
                expect.arg(str(f))
            self.assertIn(f'{f}:1:', str(ctx.exception))
            with self.assertRaises(UsageError) as ctx:
                expect.load(Path(tmp) / 'missing.txt')
            self.assertIn('missing.txt: cannot read it', str(ctx.exception))

    def test_the_default_file_parses(self):
        d = expect.default()
        self.assertEqual(d.path, 'runner/expectations/debian.txt')
        self.assertTrue(d.rules)


class PrecedenceTest(unittest.TestCase):

    def test_last_match_wins_and_no_match_is_pass(self):
        e = rules('6.10..7.2 verdict_driver_* fail\n'
                  '6.12.125..6.12 verdict_driver_* pass # backported\n')
        self.assertEqual(expect.expectation(e, '6.12.118+deb13-amd64',
                                            'verdict_driver_read')[0], 'fail')
        want, rule = expect.expectation(e, '6.12.125+deb13-amd64', 'verdict_driver_read')
        self.assertEqual((want, rule.where), ('pass', 't.txt:2'))
        self.assertEqual(expect.expectation(e, '7.3.4', 'verdict_driver_read'), ('pass', None))
        # The same lines the other way round: the general one wins.
        e = rules('6.12.125..6.12 verdict_driver_* pass\n6.10..7.2 verdict_driver_* fail\n')
        self.assertEqual(expect.expectation(e, '6.12.125+deb13-amd64',
                                            'verdict_driver_read')[0], 'fail')

    def test_debians_file_says_what_the_survey_measured(self):
        d = expect.default()
        bug = {rel: expect.expects_bug(d, rel)[0] for rel in (
            '6.1.0-57-amd64', '6.12.95+deb12-amd64', '6.12.118+deb13-amd64',
            '6.19.6+deb13-amd64', '7.1.13+deb13-amd64', '7.2.13+deb14-amd64',
            '7.3.4+deb13-amd64')}
        self.assertEqual(bug, {'6.1.0-57-amd64': False, '6.12.95+deb12-amd64': True,
                               '6.12.118+deb13-amd64': True, '6.19.6+deb13-amd64': True,
                               '7.1.13+deb13-amd64': True, '7.2.13+deb14-amd64': True,
                               '7.3.4+deb13-amd64': False})

    def test_cell_names(self):
        self.assertEqual(expect.cell_name('verdict_driver_read'), 'verdict_driver_read')
        self.assertEqual(expect.cell_name('verdict_shadow_write'), 'verdict_driver_write')
        self.assertEqual(expect.cell_name(
            'mm_ksft_gup_test_sh_gup_null_mapping_verdict_driver_read'), 'verdict_driver_read')
        self.assertIsNone(expect.cell_name('mm_ksft_gup_test_sh_gup_null_mapping'))
        self.assertIsNone(expect.cell_name('gup_null_mapping'))
        self.assertEqual(expect.cell_name('bench'), 'bench')


class JudgeTest(unittest.TestCase):

    def judge(self, name, exp=None, gating=True):
        s = real(name)
        code = expect.judge(s, exp or expect.default(), gating=gating)
        self.assertEqual(schema.errors(s), [])
        return code, s

    def test_debian_612_is_as_expected_with_two_known_failures(self):
        code, s = self.judge('table-debian-6.12')
        self.assertEqual((code, s['exit_code'], s['as_expected']), (0, 0, True))
        self.assertEqual(s['outcome'], 'fail')                 # the test's own word
        self.assertEqual(s['expected']['test_exit_code'], 1)
        self.assertEqual([c['name'] for c in s['expected']['cases']
                          if c['kind'] == 'known failure'],
                         ['verdict_shadow_read', 'verdict_shadow_write'])
        lines = expect.report_lines(s)
        self.assertEqual(lines[0], 'expect:  as expected (runner/expectations/debian.txt)')
        self.assertTrue(lines[1].startswith('known failure: verdict_shadow_read (expected: '
                                            'fail, runner/expectations/debian.txt:'))

    def test_612_with_the_fix_expected_is_a_new_failure(self):
        fixed = expect.Expectations('fixed.txt', expect.default().rules + expect.parse(
            '6.12 verdict_driver_* pass\n', 'fixed.txt'))
        code, s = self.judge('table-debian-6.12', fixed)
        self.assertEqual((code, s['as_expected']), (1, False))
        self.assertEqual(s['expected']['unexpected'], [
            'NEW FAILURE: verdict_shadow_read (expected: pass, fixed.txt:1; got fail)',
            'NEW FAILURE: verdict_shadow_write (expected: pass, fixed.txt:1; got fail)'])

    def test_a_fixed_kernel_expected_to_fail_is_an_unexpected_pass(self):
        code, s = self.judge('table-debian-7.3', rules('* verdict_driver_read fail\n'))
        self.assertEqual((code, s['as_expected']), (1, False))
        self.assertEqual(s['expected']['unexpected'], [
            'UNEXPECTED PASS: verdict_shadow_read (expected: fail, t.txt:1; got pass)'])  # the log's name, the rule's cell

    def test_61_xfails_are_the_files_failures(self):
        code, s = self.judge('table-debian-6.1')
        self.assertEqual((code, s['as_expected']), (0, True))
        code, s = self.judge('table-debian-6.1', rules(''))
        self.assertEqual((code, s['as_expected']), (1, False))
        self.assertIn('NEW FAILURE: verdict_file_longterm_write (expected: pass, '
                      'no rule matched; got fail)', s['expected']['unexpected'])

    def test_a_skip_where_a_pass_was_expected_is_a_difference(self):
        s = real('table-debian-7.3')
        s['cases'][3]['status'] = 'skip'
        self.assertEqual(expect.judge(s, expect.default(), gating=True), 1)
        self.assertEqual(s['expected']['unexpected'], [
            'UNEXPECTED SKIP: verdict_thp_read (expected: pass, no rule matched; got skip)'])
        self.assertEqual(expect.judge(s, rules('* verdict_thp_read skip\n'), gating=True), 0)

    def test_without_gating_the_code_stays(self):
        code, s = self.judge('table-debian-6.12', gating=False)
        self.assertEqual((code, s['exit_code'], s['as_expected']), (1, 1, True))
        self.assertIn('informational', expect.report_lines(s)[0])

    def test_a_splat_or_an_unexplained_failure_is_never_expected(self):
        s = real('table-debian-6.12')
        s['splats'] = [{'kind': 'warning', 'line': 7, 'excerpt': 'WARNING: at mm/gup.c'}]
        self.assertEqual(expect.judge(s, expect.default(), gating=True), 1)
        self.assertIn('the kernel complained (warning at console line 7)',
                      s['expected']['unexpected'][0])
        s = real('table-debian-7.3')
        s['exit_code'] = 1                          # e.g. the test bailed out
        self.assertEqual(expect.judge(s, expect.default(), gating=True), 1)
        self.assertTrue(s['expected']['unexpected'][0].startswith(
            'NEW FAILURE: the run failed without a failing cell'))

    def test_a_run_not_judged_keeps_its_code(self):
        for code in (2, 3, 4, 130):
            s = real('table-debian-6.12')
            s['exit_code'] = code
            self.assertEqual(expect.judge(s, expect.default(), gating=True), code)
            self.assertIsNone(s['as_expected'])
            self.assertIn('not compared', expect.report_lines(s)[0])

    def test_chosen(self):
        given = rules('')
        self.assertEqual(expect.chosen(given, 'source:debian-6.12:all'), (given, True))
        exp, gating = expect.chosen(None, 'debian:6.12')
        self.assertEqual((exp.path, gating), ('runner/expectations/debian.txt', False))
        self.assertEqual(expect.chosen(None, 'source:debian-6.12:all'), (None, False))
        s = real('source-6.12-nofix')
        self.assertEqual(expect.apply(s, None), 1)
        self.assertIsNone(s['expected'])


class JunitTest(unittest.TestCase):

    def cases(self, s):
        root = junit.build(s)
        return {tc.get('name'): tc for tc in root.iter('testcase')}

    def test_gated_known_failure_is_skipped_with_its_reason(self):
        s = real('table-debian-6.12')
        expect.judge(s, expect.default(), gating=True)
        tc = self.cases(s)['verdict_driver_read']
        self.assertIsNone(tc.find('failure'))
        self.assertTrue(tc.find('skipped').text.startswith('known failure (expected: fail'))

    def test_informational_keeps_the_failure(self):
        s = real('table-debian-6.12')
        expect.judge(s, expect.default(), gating=False)
        self.assertIsNotNone(self.cases(s)['verdict_driver_read'].find('failure'))

    def test_unexpected_pass_is_a_failure(self):
        s = real('table-debian-7.3')
        expect.judge(s, rules('7.3 verdict_driver_read fail\n'), gating=True)
        f = self.cases(copy.deepcopy(s))['verdict_driver_read'].find('failure')
        self.assertEqual(f.get('type'), 'unexpected pass')
        self.assertTrue(f.get('message').startswith('UNEXPECTED PASS (expected: fail, t.txt:1'))


if __name__ == '__main__':
    unittest.main()
