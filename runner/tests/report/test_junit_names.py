"""Issue 48: a verdict's testcase name and classname are the same on every
path (run, parse, kselftest, lava) and for every kernel; the benchmark is
no testcase that cannot fail; a run that died keeps its cases and ends its
runner case with the console's tail.

The data: the real Debian 6.12 summary (the row called shadow, before v4),
run_kselftest.sh's output of a 7.3 tree (tests/data/kselftest), LAVA's
recorded results of the lab job on 7.3 (tests/data/lava).
"""

import json
import shutil
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from gupnm import testargs  # noqa: E402
from gupnm.ci import lab, lava  # noqa: E402
from gupnm.parse import tap  # noqa: E402
from gupnm.report import junit  # noqa: E402
from report import test_junit  # noqa: E402
from tests.test_cli import call  # noqa: E402

DATA = HERE / 'data'
REAL = DATA / 'real'


def suite_of(text: str) -> ET.Element:
    return ET.fromstring(text).find('testsuite')


def ids(suite: ET.Element) -> dict:
    """testcase name -> classname."""
    return {tc.get('name'): tc.get('classname') for tc in suite.findall('testcase')}


def real_summary() -> dict:
    return json.loads((REAL / 'debian-6.12.summary.json').read_text())


def lab_summary(pairs, command) -> dict:
    return lab.summary(spec='source:debian-7.3:all', code=0, verdict='PASS', problems=[],
                       cases=pairs, release='7.3.4+', booted='7.3.4+',
                       source={'kind': 'source'}, memory_mb=2048, cmdline='',
                       exit_status=0, command=command, splats=[], durations={'total': 1.0},
                       notes=[], meta={}, attempts=1, files={})


class CaseIdTest(unittest.TestCase):

    def test_every_paths_name_for_one_verdict(self):
        for name in ('verdict_driver_read', 'verdict_shadow_read',
                     'mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read',
                     'mm_run_vmtests_sh_gup_null_mapping_verdict_driver_read',
                     'selftests_mm_gup_null_mapping_verdict_driver_read'):
            self.assertEqual(tap.case_id(name), 'verdict_driver_read', name)

    def test_the_tests_own_line_and_others(self):
        self.assertEqual(tap.case_id('mm_ksft_gup_test_sh_gup_null_mapping'), 'gup_null_mapping')
        self.assertEqual(tap.case_id('verdict_anon_longterm_write'), 'verdict_anon_longterm_write')
        self.assertEqual(tap.case_id('bench'), 'bench')
        self.assertEqual(tap.case_id('packet_tx_ring'), 'packet_tx_ring')


class SamePathsTest(unittest.TestCase):
    """One verdict, four paths: one (classname, name)."""

    WANT = ('verdict_driver_read', 'selftests.mm.gup_null_mapping')

    def test_run(self):
        got = ids(suite_of(junit.to_string(real_summary())))
        self.assertEqual(got[self.WANT[0]], self.WANT[1])

    def test_parse_of_run_kselftest_output_and_of_a_lava_log(self):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        text = (DATA / 'kselftest' / 'run_kselftest-7.3.txt').read_text()
        lava_log = tmp / 'lava-run.log'
        lava_log.write_text(''.join(json.dumps({'dt': 't', 'lvl': 'target', 'msg': line}) + '\n'
                                    for line in text.splitlines()))
        for log in (DATA / 'kselftest' / 'run_kselftest-7.3.txt', lava_log):
            with self.subTest(log=log.name):
                out = tmp / f'{log.name}.xml'
                rc, stdout, _ = call(['parse', str(log), '--junit', str(out)])
                self.assertEqual(rc, 1)             # verdict_shadow_write failed
                self.assertIn(f'junit:   {out}\n', stdout)
                xml = out.read_text()
                test_junit.assert_valid(self, xml)
                got = ids(suite_of(xml))
                self.assertEqual(got[self.WANT[0]], self.WANT[1])
                self.assertEqual(got['verdict_driver_write'], self.WANT[1])

    def test_kselftest_and_lava_summaries(self):
        results = (DATA / 'lava' / 'lab-7.3-all.results.log').read_text()
        r = lava.LavaRun('source-kselftest', 'source:debian-7.3:all', '7.3.4+',
                         lava.parse_results(results), 0, 1.0, Path('/nonexistent'))
        pairs = [(c.case, c.result) for c in r.ours()]
        self.assertIn(('mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read', 'pass'),
                      pairs)
        for command in ('./run_kselftest.sh -t mm:ksft_gup_test.sh',
                        'lava-run --device device.yaml (rendered from qemu-tcg.jinja2) '
                        'source-kselftest.yaml',
                        "cd /opt/td/automated/linux/kselftest && ./kselftest.sh -c ''"):
            with self.subTest(command=command):
                suite = suite_of(junit.to_string(lab_summary(pairs, command)))
                got = ids(suite)
                self.assertEqual(got[self.WANT[0]], self.WANT[1])
                self.assertEqual(got['gup_null_mapping'], self.WANT[1])   # its exit status
                tc = [t for t in suite.findall('testcase') if t.get('name') == self.WANT[0]][0]
                self.assertEqual(tc.find('system-out').text, 'recorded as: '
                                 'mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read')

    def test_another_upload_of_the_kernel_keeps_the_ids(self):
        s = real_summary()
        before = ids(suite_of(junit.to_string(s)))
        s['kernel']['release'] = s['kernel']['booted_release'] = '6.12.118+deb13-amd64'
        s['kernel']['source']['version'] = '6.12.118-1'
        after_suite = suite_of(junit.to_string(s))
        self.assertEqual(ids(after_suite), before)
        props = {p.get('name'): p.get('value') for p in after_suite.iter('property')}
        self.assertEqual(props['kernel.release'], '6.12.118+deb13-amd64')
        self.assertEqual(props['kernel.package_version'], '6.12.118-1')


class BenchTest(unittest.TestCase):

    def summary(self, command: str, status: str = 'pass') -> dict:
        s = real_summary()
        s['bench_run'] = {'command': command, 'exit': 0, 'output': 'bench.txt'}
        bench = [c for c in s['cases'] if c['name'] == 'bench'][0]
        bench['status'] = status
        bench['reason'] = None if status == 'pass' else 'shadow/anon 3.4 > 2'
        return s

    def test_no_threshold_no_case(self):
        suite = suite_of(junit.to_string(self.summary('./gup_fast_bench -p 512')))
        self.assertNotIn('bench', ids(suite))
        self.assertIsNone(suite.find("testcase[@name='runner']/error"))

    def test_a_threshold_makes_it_a_case_that_can_fail(self):
        for command in ('./gup_fast_bench -t 2', './gup_fast_bench -Lt2 1 2',
                        './gup_fast_bench 1 -t 2'):
            with self.subTest(command=command):
                suite = suite_of(junit.to_string(self.summary(command, 'fail')))
                tc = suite.find("testcase[@name='bench']")
                self.assertEqual(tc.find('failure').get('message'), 'shadow/anon 3.4 > 2')
                self.assertEqual(suite.get('failures'), '3')

    def test_a_failed_benchmark_without_threshold_is_the_runners_error(self):
        suite = suite_of(junit.to_string(self.summary('./gup_fast_bench', 'fail')))
        self.assertNotIn('bench', ids(suite))
        error = suite.find("testcase[@name='runner']/error")
        self.assertEqual(error.get('message'), 'the benchmark failed: shadow/anon 3.4 > 2')
        self.assertEqual(suite.get('errors'), '1')

    def test_options_match_the_benchmarks_getopt_string(self):
        self.assertEqual(junit.BENCH_OPTS, testargs.getopt_string())


class DiedTest(unittest.TestCase):
    """The guest died during the test: the cases it printed stay, the runner
    case errors with the problem and the console's last lines."""

    def test_cases_kept_and_console_tail(self):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        s = real_summary()
        s['cases'] = s['cases'][:17]
        s.update(exit_code=3, outcome='error',
                 problems=['the guest died before the test finished'])
        console = [f'line {i}' for i in range(100)] + ['Kernel panic - not syncing: x']
        (tmp / 'console.log').write_text('\n'.join(console) + '\n')
        junit.write(tmp / 'junit.xml', s)
        xml = (tmp / 'junit.xml').read_text()
        test_junit.assert_valid(self, xml)
        suite = suite_of(xml)
        self.assertEqual(len(suite.findall('testcase')), 18)
        self.assertIn('verdict_driver_read', ids(suite))
        error = suite.find("testcase[@name='runner']/error")
        self.assertEqual(error.get('message'), 'the guest died before the test finished')
        self.assertTrue(error.text.endswith('\n'.join(console[-junit.CONSOLE_TAIL:])))
        self.assertIn("the console's last lines (console.log):\nline 71\n", error.text)

    def test_no_tail_when_the_run_went_right(self):
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        (tmp / 'console.log').write_text('boot\n')
        junit.write(tmp / 'junit.xml', real_summary())
        self.assertNotIn('<error', (tmp / 'junit.xml').read_text())


if __name__ == '__main__':
    unittest.main()
