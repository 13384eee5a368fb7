"""gupnm-run parse --json / --results: a saved log's summary.json,
junit.xml and ktap.txt, valid by the schema, as parse judged the log."""
from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from gupnm.report import logsummary, schema
from tests.test_cli import call

DATA = Path(__file__).resolve().parent.parent / 'data'
LINARO = DATA / 'kselftest' / 'linaro-kselftest.sh-7.3-nofix.log'
RUN_KSELFTEST = DATA / 'kselftest' / 'run_kselftest-7.3.txt'
CONSOLE = DATA / 'real' / 'debian-6.12.console.log'


class ParseReportsTest(unittest.TestCase):
    def test_linaro_log_json_on_stdout(self):
        """Linaro's kselftest.sh output (run_kselftest.sh's nested TAP, then
        parse-output.py's result lines): the bug, exit 1, JSON alone on
        stdout."""
        rc, out, err = call(['parse', str(LINARO), '--json'])
        self.assertEqual(rc, 1)
        s = json.loads(out)
        self.assertEqual(schema.errors(s), [])
        self.assertTrue(s['bug_present'])
        self.assertEqual(s['exit_code'], 1)
        self.assertEqual(s['outcome'], 'fail')
        failed = [c['name'] for c in s['cases'] if c['status'] == 'fail']
        self.assertEqual(failed, ['verdict_driver_read', 'verdict_driver_write'])
        self.assertIn('verdict: driver 0/512 fast', err)

    def test_results_folder_has_the_three_reports(self):
        with tempfile.TemporaryDirectory(prefix='gupnm-test-parse-') as tmp:
            outdir = Path(tmp) / 'r'
            rc, out, _ = call(['parse', str(RUN_KSELFTEST), '--results', str(outdir)])
            self.assertEqual(rc, 1)
            for name in ('summary.json', 'junit.xml', 'ktap.txt'):
                self.assertTrue((outdir / name).is_file(), name)
            s = json.loads((outdir / 'summary.json').read_text())
            self.assertEqual(schema.errors(s), [])
            self.assertEqual(s['spec'], f'log:{RUN_KSELFTEST}')
            self.assertIn('<testsuites', (outdir / 'junit.xml').read_text())
            self.assertIn('not ok', (outdir / 'ktap.txt').read_text())
            rc, _, err = call(['parse', str(RUN_KSELFTEST), '--results', str(outdir)])
            self.assertEqual(rc, 2)         # a folder that holds a run already
            self.assertIn('already holds a run', err)

    def test_vm_facts_from_the_console(self):
        raw = CONSOLE.read_text(errors='replace')
        vcpus, memory = logsummary.vm_facts(raw)
        self.assertGreaterEqual(vcpus, 1)
        self.assertGreater(memory, 64)
        self.assertEqual(logsummary.vm_facts('no boot lines'), (None, None))
        rc, out, _ = call(['parse', str(CONSOLE), '--json'])
        s = json.loads(out)
        self.assertEqual(s['vm']['vcpus'], vcpus)
        self.assertEqual(s['exit_code'], rc)
        self.assertEqual(schema.errors(s), [])

    def test_without_vm_facts_a_note_says_so(self):
        rc, out, _ = call(['parse', str(LINARO), '--json'])
        notes = json.loads(out)['notes']
        self.assertTrue(any('not in the log' in n for n in notes), notes)


class ResultLinesTest(unittest.TestCase):
    """A log with only parse-output.py's result.txt lines or LAVA's
    testcase signals: the bug is a failure (exit 1); a pass there has no
    verdict lines to back it (exit 3)."""
    NAME = 'mm_ksft_gup_test_sh_gup_null_mapping'

    def write(self, lines):
        tmp = tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False)
        self.addCleanup(Path(tmp.name).unlink)
        tmp.write(''.join(line + '\n' for line in lines))
        tmp.close()
        return tmp.name

    def test_result_txt_with_the_bug(self):
        f = self.write([f'{self.NAME}_verdict_driver_read fail',
                        f'{self.NAME}_verdict_driver_write fail',
                        f'{self.NAME}_verdict_anon_read pass', f'{self.NAME} fail',
                        'mm_ksft_gup_test_sh_gup_test__u__n_1 pass'])
        rc, out, _ = call(['parse', f, '--json'])
        s = json.loads(out)
        self.assertEqual(rc, 1)
        self.assertEqual([c['name'] for c in s['cases']],
                         ['verdict_driver_read', 'verdict_driver_write', 'verdict_anon_read'])

    def test_lava_signals_passing_are_not_a_pass(self):
        f = self.write([f'<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={self.NAME}_verdict_driver_read RESULT=pass>',
                        f'<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={self.NAME}_verdict_driver_write RESULT=pass>'])
        rc, out, _ = call(['parse', f])
        self.assertEqual(rc, 3)
        self.assertIn("lacks the test's own driver verdict", out)

    def test_other_results_alone_are_no_tap(self):
        from gupnm.ci import linaro
        self.assertIsNone(linaro.tap_of_results('mm_ksft_gup_test_sh_gup_test pass\n'))
        tap = linaro.tap_of_results(f'{self.NAME}_verdict_x skip\n')
        self.assertIn('ok 1 verdict_x # SKIP', tap)


if __name__ == '__main__':
    unittest.main()
