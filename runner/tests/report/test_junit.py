"""Unit tests for gupnm.report.junit: junit.xml from real runs, checked against the
schema Jenkins' junit plugin reads (data/junit/jenkins-junit.xsd, through
gupnm.report.junit_xsd and python3-lxml), and the check itself shown to reject what
the schema forbids.

The runs: the Debian 6.12 boot replayed through vmrun.run() (the bug: both
shadow cases fail), Debian 7.3's test output (the fix: all pass), the
whole-test skip of a boot without the module, the probe's per-case skips on
7.3, and the source 6.12 nofix summary as it was recorded.
"""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from gupnm.check import contract  # noqa: E402
from gupnm.guest import vmrun  # noqa: E402
from gupnm.parse import tap  # noqa: E402
from gupnm.report import junit, junit_xsd, ktap, results  # noqa: E402
from guest import test_vmrun as tv  # noqa: E402

DATA, REAL = tv.DATA, tv.REAL
META = {'started': '2026-12-01T10:21:50+00:00', 'tool_version': '91f261d',
        'qemu_version': '7.2.19', 'host': {'name': 'vm', 'kernel': '6.18.44', 'cpus': 2,
                                             'os': 'Debian GNU/Linux 12 (bookworm)'}}


def section(text: str, begin: str, end: str) -> str:
    start = text.index(begin) + len(begin)
    return text[start:text.index(end, start)]


def summary_from(tap_text: str, *, exit_status: int, recorded: str | None = None) -> dict:
    """The summary the runner builds from @tap_text, with the run facts
    (spec, exit code, durations, ...) of the real run @recorded if given."""
    want = json.loads((REAL / recorded).read_text()) if recorded else {}
    kernel = want.get('kernel') or {'release': '6.12.117+deb12-amd64', 'source': {'kind': 'debian'}}
    s = results.build_summary(
        kernel_release=kernel['release'], kernel_source=kernel['source'], accel='tcg',
        vcpus=2, memory_mb=1024, cmdline='', tap=tap.parse_tap(tap_text.splitlines()),
        splats=[], exit_status=exit_status, durations=want.get('durations'))
    s.update(META)
    for key in ('spec', 'exit_code', 'outcome', 'command', 'problems', 'started', 'host',
                'tool_version'):
        if key in want:
            s[key] = want[key]
    return s


# A document the schema accepts.
GOOD = ('<testsuites><testsuite name="s" tests="1"><testcase name="c" classname="k.t">'
        '<skipped>why</skipped></testcase></testsuite></testsuites>')
_CHECKER: list[str | None] = []


def cannot_check() -> str | None:
    """Why junit.xml cannot be checked against the schema here (no lxml
    for this python nor for Debian's), None when it can; asked once."""
    if not _CHECKER:
        try:
            junit_xsd.errors(GOOD)
            _CHECKER.append(None)
        except junit_xsd.CannotCheck as err:
            _CHECKER.append(str(err))
    return _CHECKER[0]


def assert_valid(testcase: unittest.TestCase, xml) -> None:
    """@xml is valid against jenkins-junit.xsd: a subtest of @testcase,
    skipped with the reason where no python here has lxml (the rest of the
    test still runs: junit.xml's content does not need lxml)."""
    with testcase.subTest('valid against jenkins-junit.xsd'):
        why = cannot_check()
        if why:
            testcase.skipTest(f'schema not checked: {why}')
        testcase.assertEqual(junit_xsd.errors(xml), [])


def needs_checker(cls):
    """Skip @cls, tests of the schema check itself, where it cannot run."""
    return unittest.skipIf(cannot_check(), f'schema check unavailable: {cannot_check()}')(cls)


def check(testcase: unittest.TestCase, summary: dict) -> ET.Element:
    """junit.to_string(@summary), schema-checked; its <testsuite>."""
    text = junit.to_string(summary)
    assert_valid(testcase, text)
    return ET.fromstring(text).find('testsuite')


def cases(suite: ET.Element) -> dict:
    return {tc.get('name'): tc for tc in suite.findall('testcase')}


class BugKernelTest(tv.VmFake, unittest.TestCase):
    """The real Debian 6.12 boot, replayed through vmrun.run(): its junit.xml."""

    def setUp(self):
        super().setUp()
        want = json.loads((REAL / 'debian-6.12.summary.json').read_text())
        self.boot_seconds = want['durations']['boot_and_test']
        self.boots.append((tv.raw(REAL / 'debian-6.12.console.log'),
                           tv.raw(REAL / 'debian-6.12.status.log'), 0))
        vmrun.run(*tv.run_args(tv._prep(source=want['kernel']['source'])), self.outdir,
                  durations={'prepare': want['durations']['prepare']}, meta=META)
        data = (self.outdir / 'junit.xml').read_bytes()
        assert_valid(self, data)
        self.suite = ET.fromstring(data).find('testsuite')
        self.summary = json.loads((self.outdir / 'summary.json').read_text())

    def test_failed_cases_carry_message_and_diagnostic_lines(self):
        # 45 of the 46 TAP results, the runner; the benchmark's (no -t) is
        # no testcase: its figures are properties.
        self.assertEqual((self.suite.get('tests'), self.suite.get('failures'),
                          self.suite.get('errors'), self.suite.get('skipped')),
                         ('46', '2', '0', '0'))
        # The test before v4 called the row shadow: the case has today's name.
        failure = cases(self.suite)['verdict_driver_read'].find('failure')
        self.assertEqual(failure.get('message'), 'FAIL: GUP-fast rejects NULL-mapping '
                         'order-0 folios: 0/512 shadow pages via GUP-fast')
        self.assertEqual(failure.get('type'), 'fail')
        self.assertEqual(failure.text.splitlines()[-4:], [
            '# verdict shadow read: 0/512 pages via GUP-fast (expected 512)',
            '# verdict_shadow_read: first mismatch at page 0: verdict byte 0, expected 1',
            '# FAIL: GUP-fast rejects NULL-mapping order-0 folios: 0/512 shadow pages via GUP-fast',
            'not ok 1 verdict_shadow_read'])
        self.assertIn('# verdict shadow write: 0/512',
                      cases(self.suite)['verdict_driver_write'].find('failure').text)
        self.assertEqual(cases(self.suite)['verdict_driver_write'].find('system-out').text,
                         'recorded as: verdict_shadow_write')
        self.assertIsNone(cases(self.suite)['verdict_anon_read'].find('failure'))

    def test_classname_is_the_same_for_every_kernel(self):
        names = {tc.get('classname') for tc in self.suite.findall('testcase')}
        # Neither the spec nor the release (issue 48): they are properties.
        self.assertEqual(names, {'selftests.mm.gup_null_mapping', 'gupnm'})
        props = {p.get('name'): p.get('value') for p in self.suite.iter('property')}
        self.assertEqual(props['kernel.release'], '6.12.117+deb12-amd64')
        self.assertEqual(props['spec'], 'debian:6.12')
        self.assertEqual(props['kernel.arch'], 'amd64')

    def test_bench_figures_are_properties_not_a_case(self):
        self.assertNotIn('bench', cases(self.suite))
        props = {p.get('name'): p.get('value') for p in self.suite.iter('property')}
        row = self.summary['bench'][0]
        self.assertEqual(props[f"bench.threads={row['threads']}.{row['backing']}.median_ns"],
                         str(row['median']))
        ratio = self.summary['bench_ratio'][0]
        self.assertEqual(props[f"bench.threads={ratio['threads']}.ratio"],
                         str(ratio['shadow_anon_ratio']))

    def test_times_are_the_measured_ones_only(self):
        self.assertEqual(self.suite.get('time'), f"{self.summary['durations']['total']:.3f}")
        self.assertEqual(cases(self.suite)['runner'].get('time'), '10.401')
        # No TAP case has a time: none was measured.
        self.assertEqual([tc.get('name') for tc in self.suite.findall('testcase')
                          if tc.get('time') is not None], ['runner'])
        self.assertEqual(self.suite.get('timestamp'), META['started'])
        self.assertEqual(self.suite.get('hostname'), 'vm')


class RealRunsTest(unittest.TestCase):

    def test_fixed_kernel_all_pass(self):
        con = (REAL / 'v2-bench-debian-7.3.console.log').read_text()
        s = summary_from(section(con, 'GUPNM-TEST-BEGIN\n', 'GUPNM-TEST-END'),
                         recorded='v2-bench-debian-7.3.summary.json', exit_status=0)
        suite = check(self, s)
        self.assertEqual((suite.get('tests'), suite.get('failures'), suite.get('errors'),
                          suite.get('skipped'), suite.get('time')),
                         ('13', '0', '0', '0', '41.095'))
        self.assertEqual([tc for tc in suite.iter() if tc.tag in ('failure', 'error', 'skipped')],
                         [])
        self.assertEqual(cases(suite)['verdict_driver_read'].get('classname'),
                         'selftests.mm.gup_null_mapping')

    def test_whole_skip_gives_its_reason_as_text(self):
        log = (DATA / 'whole_skip.log').read_text()
        s = summary_from(log[log.index('TAP version'):log.index('gupnm-init: gup_null_mapping exited')],
                         exit_status=4)
        s.update(spec='debian:6.12', exit_code=4)
        suite = check(self, s)
        skipped = cases(suite)['gup_null_mapping'].find('skipped')
        self.assertEqual(skipped.attrib, {})         # the schema allows no attribute
        self.assertTrue(skipped.text.startswith('/sys/kernel/debug/test_gup_fast/shadow: '
                                                'No such file or directory'))
        self.assertEqual((suite.get('tests'), suite.get('skipped')), ('2', '1'))

    def test_case_skip_gives_its_reason_as_text(self):
        # The probe's TAP from a real Debian 7.3 guest: two cases skipped.
        s = summary_from((DATA / 'probe' / 'debian-7.3.4.txt').read_text(),
                         recorded='v2-bench-debian-7.3.summary.json', exit_status=0)
        suite = check(self, s)
        self.assertEqual(suite.get('skipped'), '2')
        self.assertEqual(cases(suite)['kcov_area'].find('skipped').text,
                         '/sys/kernel/debug/kcov: No such file or directory (CONFIG_KCOV off '
                         'or debugfs not mounted; the probe mounts nothing)')

    def test_recorded_source_summary_without_diagnostics(self):
        s = json.loads((REAL / 'source-6.12-nofix.summary.json').read_text())
        suite = check(self, s)
        tc = cases(suite)['verdict_driver_read']
        self.assertEqual(tc.get('classname'), 'selftests.mm.gup_null_mapping')
        self.assertEqual(tc.find('failure').text, 'not ok 1 verdict_shadow_read')
        self.assertEqual(suite.get('time'), '155.051')      # the steps' sum: no total then

    def test_source_kernels_of_one_tree_are_told_apart_by_their_suites(self):
        # fix and nofix are both 6.12.117+: the same cases, in suites whose
        # name and properties say the spec.
        nofix = json.loads((REAL / 'source-6.12-nofix.summary.json').read_text())
        fix = copy.deepcopy(nofix)
        fix['spec'], fix['kernel']['source']['selection'] = 'source:debian-6.12:all', 'all'
        self.assertEqual(fix['kernel']['release'], nofix['kernel']['release'])
        suites = [check(self, s) for s in (fix, nofix)]
        ids = [{(tc.get('classname'), tc.get('name')) for tc in s.iter('testcase')}
               for s in suites]
        self.assertEqual(ids[0], ids[1])
        self.assertNotEqual(suites[0].get('name'), suites[1].get('name'))
        props = [{p.get('name'): p.get('value') for p in s.iter('property')} for s in suites]
        self.assertEqual((props[0]['kernel.selection'], props[1]['kernel.selection']),
                         ('all', 'nofix'))


class KernelIdTest(unittest.TestCase):

    def test_ids(self):
        rows = [
            ({'spec': 'debian:6.12', 'kernel': {'source': {'kind': 'debian'}}},
             'debian-6.12.amd64'),
            ({'spec': 'debian:6.12.117+deb12-arm64',
              'kernel': {'source': {'kind': 'debian', 'arch': 'arm64'}}},
             'debian-6.12.117+deb12-arm64.arm64'),
            ({'spec': 'source:debian-6.12:nofix',
              'kernel': {'source': {'kind': 'source', 'arch': 'arm64', 'config': 'arm64-64k'}}},
             'source-debian-6.12-nofix-arm64-64k.arm64'),
            ({'spec': 'source:/root/src/linux-7.3/:wrongfix',
              'kernel': {'source': {'kind': 'source', 'config': 'selftests'}}},
             'source-linux-7.3-wrongfix-selftests.amd64'),
            ({'spec': 'image:/a/b/vmlinuz:/a/b/build',
              'kernel': {'release': '6.12.0-rc1+', 'source': {'kind': 'image'}}},
             'image-6.12.0-rc1+.amd64'),
            ({'kernel': {'release': None, 'source': {}}}, 'unknown-kernel.amd64'),
            # The release the guest booted, else the one expected, after the
            # spec, unless the spec names it.
            ({'spec': 'debian:bookworm-security',
              'kernel': {'release': '6.12.117+deb12-amd64',
                         'booted_release': '6.12.118+deb12-amd64', 'source': {}}},
             'debian-bookworm-security-6.12.118+deb12-amd64.amd64'),
            ({'spec': 'debian:bookworm-security',
              'kernel': {'release': '6.12.117+deb12-amd64', 'booted_release': None,
                         'source': {}}},
             'debian-bookworm-security-6.12.117+deb12-amd64.amd64'),
            ({'spec': 'debian:6.12.117+deb12-amd64',
              'kernel': {'release': '6.12.117+deb12-amd64', 'source': {}}},
             'debian-6.12.117+deb12-amd64.amd64'),
            ({'spec': 'source:debian-6.12:all',
              'kernel': {'release': '6.12.117+', 'source': {'config': 'debug'}}},
             'source-debian-6.12-all-debug-6.12.117+.amd64'),
        ]
        for summary, want in rows:
            with self.subTest(want=want):
                self.assertEqual(junit.kernel_id(summary), want)

    def test_test_name(self):
        for command, want in ((None, 'gup_null_mapping'), ('./gup_null_mapping', 'gup_null_mapping'),
                              ('bash ./run_vmtests.sh -t gup_test', 'gup_null_mapping'),
                              ('./gup_longterm', 'gup_longterm'),
                              ('./ksm_tests -D -s 256', 'ksm_tests')):
            self.assertEqual(junit.test_name({'command': command}), want, command)


class RunnerCaseTest(unittest.TestCase):

    def test_host_errors_and_interruptions(self):
        for code, outcome in ((2, 'error'), (3, 'error'), (130, 'interrupted')):
            s = results.stub_summary(spec='debian:6.12', exit_code=code, outcome=outcome,
                                     problems=['timed out after 300 s'], vcpus=2,
                                     memory_mb=1024, durations={'total': 1.5})
            suite = check(self, s)
            error = cases(suite)['runner'].find('error')
            self.assertEqual(error.get('message'), 'timed out after 300 s')
            self.assertEqual((suite.get('tests'), suite.get('errors'), suite.get('time')),
                             ('1', '1', '1.500'))
            self.assertIsNone(cases(suite)['runner'].get('time'))   # no boot was timed

    def test_splat_and_characters_xml_cannot_carry(self):
        s = json.loads((REAL / 'debian-6.12.summary.json').read_text())
        s['splats'] = [{'kind': 'warning', 'line': 12,
                        'excerpt': 'WARNING: CPU: 0 PID: 1 at mm/gup.c:1\x1b[0m\x00'}]
        s['cases'][0]['diagnostics'] = ['colour \x1b[31mred\x1b[0m', 'nul \x00']
        suite = check(self, s)
        self.assertIn('mm/gup.c:1\\x1b[0m\\x00', cases(suite)['runner'].find('error').text)
        self.assertIn('# colour \\x1b[31mred', cases(suite)['verdict_driver_read']
                      .find('failure').text)

    def test_xfail_passes_with_its_lines(self):
        s = json.loads((REAL / 'v2-debian-6.1.summary.json').read_text())
        suite = check(self, s)
        xfail = [c for c in s['cases'] if c['status'] == 'xfail'][0]
        tc = cases(suite)[tap.case_id(xfail['name'])]
        self.assertIsNone(tc.find('failure'))
        self.assertIn('# XFAIL', tc.find('system-out').text)


@needs_checker
class ContractCheckTest(unittest.TestCase):
    """make check's contract rows check the junit.xml of each real run."""

    def test_expect_checks_junit_xml(self):
        tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-junit-'))
        self.addCleanup(shutil.rmtree, tmp, True)
        s = json.loads((REAL / 'debian-6.12.summary.json').read_text())
        s.update(META, files=dict(vmrun.REPORT_FILES), exit_code=1)
        results.write_summary(tmp / 'summary.json', s)
        ktap.write(tmp / 'ktap.txt', s)
        junit.write(tmp / 'junit.xml', s)
        run = contract.Run(['gupnm-run'], 1, '', '', 1.0, tmp)
        ok, detail = contract._expect(run, 1, outcome='fail')
        self.assertTrue(ok, detail)
        (tmp / 'junit.xml').write_text(junit.to_string(s).replace(' tests="46"', ''))
        ok, detail = contract._expect(run, 1, outcome='fail')
        self.assertFalse(ok)
        self.assertIn("junit.xml breaks jenkins-junit.xsd: line 3: Element 'testsuite': "
                      "The attribute 'tests' is required", detail)


class ValidatorTest(unittest.TestCase):
    """The check fails documents the schema forbids."""

    GOOD = GOOD

    @unittest.skipIf(cannot_check(), f'schema check unavailable: {cannot_check()}')
    def test_good(self):
        self.assertEqual(junit_xsd.errors(self.GOOD), [])

    @unittest.skipIf(cannot_check(), f'schema check unavailable: {cannot_check()}')
    def test_rejects(self):
        rows = [
            # What junit.py wrote before: a message attribute on <skipped>.
            (self.GOOD.replace('<skipped>why</skipped>', '<skipped message="why" />'),
             "attribute 'message' is not allowed"),
            (self.GOOD.replace(' tests="1"', ''), "attribute 'tests' is required"),
            (self.GOOD.replace('<skipped>why</skipped>',
                               '<failure message="m">x</failure><skipped>why</skipped>'),
             "Element 'skipped': This element is not expected"),
            (self.GOOD.replace('<testsuites>', '<testsuites skipped="1">'),
             "attribute 'skipped' is not allowed"),
            (self.GOOD.replace('</testsuites>', ''), 'not well-formed XML'),
        ]
        for doc, message in rows:
            with self.subTest(message=message):
                errs = junit_xsd.errors(doc)
                self.assertTrue(any(message in e for e in errs), errs)

    def test_through_debians_python(self):
        """The path taken when this python cannot import lxml (pyenv, venv)."""
        if not os.access(junit_xsd.SYSTEM_PYTHON, os.X_OK):
            self.skipTest(f'no {junit_xsd.SYSTEM_PYTHON} here')
        if subprocess.run([junit_xsd.SYSTEM_PYTHON, '-c', 'import lxml.etree'],
                          capture_output=True).returncode:
            self.skipTest(f'{junit_xsd.SYSTEM_PYTHON} cannot import lxml '
                          '(apt-get install python3-lxml)')
        with mock.patch.object(junit_xsd, '_have_lxml', return_value=False), \
                mock.patch.object(junit_xsd.sys, 'executable', '/opt/other/python3'):
            self.assertEqual(junit_xsd.errors(self.GOOD), [])
            errs = junit_xsd.errors(self.GOOD.replace(' tests="1"', ''))
        self.assertEqual(len(errs), 1)
        self.assertIn("attribute 'tests' is required", errs[0])

    def test_cannot_check_says_what_to_install(self):
        with mock.patch.object(junit_xsd, '_have_lxml', return_value=False), \
                mock.patch.object(junit_xsd, 'SYSTEM_PYTHON', '/nonexistent/python3'):
            with self.assertRaisesRegex(junit_xsd.CannotCheck, 'apt-get install python3-lxml'):
                junit_xsd.errors(self.GOOD)


if __name__ == '__main__':
    unittest.main()
