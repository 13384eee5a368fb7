"""Unit tests for the run's reports: the JSON Schema (gupnm.report.schema and
runner/summary.schema.json), JUnit XML (gupnm.report.junit) and KTAP (gupnm.report.ktap).

Every summary the runner produces in the unit tests -- a real boot replayed,
a pass, a whole skip, a timeout, an interruption, a host error -- is
validated against the schema file, and its junit.xml against
jenkins-junit.xsd.
"""

import copy
import json
import shutil
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm.guest import vmrun  # noqa: E402
from gupnm.parse import tap  # noqa: E402
from gupnm.report import junit, ktap, results, schema  # noqa: E402
from guest import test_vmrun as tv  # noqa: E402
from report import test_junit as tj  # noqa: E402

REAL, _prep, mini_console, mini_status, raw = (tv.REAL, tv._prep, tv.mini_console,
                                                tv.mini_status, tv.raw)

META = {'started': '2026-11-30T15:00:00+00:00', 'tool_version': 'a428d9a-dirty',
        'qemu_version': '7.2.19', 'host': {'name': 'h', 'kernel': '6.1.0', 'cpus': 2,
                                             'os': 'Debian GNU/Linux 12 (bookworm)'}}


class ProducedSummaries(tv.VmFake, unittest.TestCase):
    """vmrun.run() with QEMU faked (RunTest's set-up), each summary validated."""

    def produce(self, boots, prep=None, **opts):
        self.boots += boots
        out = vmrun.run(*tv.run_args(prep, bench=self.tmp / 'gup_fast_bench', **opts),
                        self.outdir,
                        durations={'prepare': 1.0}, meta=META)
        on_disk = json.loads((self.outdir / 'summary.json').read_text())
        self.assertEqual(on_disk, out.summary)
        self.assertEqual(schema.errors(on_disk), [])
        tj.assert_valid(self, (self.outdir / 'junit.xml').read_bytes())
        return out

    def test_real_boot(self):
        out = self.produce([(raw(REAL / 'debian-6.12.console.log'),
                             raw(REAL / 'debian-6.12.status.log'), 0)])
        self.assertEqual(out.exit_code, 1)
        suite = ET.parse(self.outdir / 'junit.xml').getroot().find('testsuite')
        # 46 TAP results but the benchmark's (its figures are properties),
        # and the runner case.
        self.assertEqual((suite.get('tests'), suite.get('failures'), suite.get('errors')),
                         ('46', '2', '0'))
        text = (self.outdir / 'ktap.txt').read_text()
        self.assertTrue(text.startswith('KTAP version 1\n1..1\n  KTAP version 1\n'))
        self.assertIn('\n  1..46\n  not ok 1 verdict_shadow_read\n', text)
        self.assertTrue(text.endswith('\nnot ok 1 gup_null_mapping\n'))
        # The KTAP file is itself valid TAP to our parser, nested level aside.
        outer = tap.parse_tap(text.splitlines())
        self.assertEqual((outer.plan, outer.errors, [r.status for r in outer.results]),
                         (1, [], ['fail']))

    def test_pass_skip_timeout(self):
        self.assertEqual(self.produce([(mini_console(), mini_status(), 0)]).exit_code, 0)
        skip = 'TAP version 13\n1..0 # SKIP no module\n'
        shutil.rmtree(self.outdir)
        out = self.produce([(mini_console(tap_text=skip),
                             mini_status(exit_code=4, tap_text=skip), 0)])
        self.assertEqual(out.exit_code, 4)
        self.assertIn('ok 1 gup_null_mapping # SKIP no module', (self.outdir / 'ktap.txt').read_text())
        suite = ET.parse(self.outdir / 'junit.xml').getroot().find('testsuite')
        self.assertEqual(suite.get('skipped'), '1')
        shutil.rmtree(self.outdir)
        out = self.produce([('[    0.1] Linux version 6.12.117+deb12-amd64\n', '', None)], timeout=1)
        self.assertEqual(out.exit_code, 3)
        suite = ET.parse(self.outdir / 'junit.xml').getroot().find('testsuite')
        self.assertEqual(suite.get('errors'), '1')
        runner = [tc for tc in suite if tc.get('name') == 'runner'][0]
        self.assertEqual(runner.find('error').get('message'), 'timed out after 1 s')
        self.assertIn('# ERROR timed out after 1 s', (self.outdir / 'ktap.txt').read_text())


class StubSummaryTest(unittest.TestCase):

    def test_stub_is_valid(self):
        for code, outcome in ((2, 'error'), (3, 'error'), (130, 'interrupted')):
            s = results.stub_summary(spec='debian:6.12', exit_code=code, outcome=outcome,
                                     problems=['x'], vcpus=2, memory_mb=1024,
                                     durations={'total': 1.5})
            s.update(META)
            s['files'] = dict(vmrun.REPORT_FILES)
            self.assertEqual(schema.errors(s), [])
            self.assertIn('not ok 1 gup_null_mapping # ERROR', ktap.to_string(s))
            tj.assert_valid(self, junit.to_string(s))


class SchemaValidatorTest(unittest.TestCase):
    """The validator finds what the schema forbids."""

    def setUp(self):
        self.good = json.loads((REAL / 'debian-6.12.summary.json').read_text())
        self.good.update(META, files=dict(vmrun.REPORT_FILES))

    def test_real_summary_fixtures_are_valid_once_run_facts_are_added(self):
        self.assertEqual(schema.errors(self.good), [])

    def test_errors(self):
        cases = [
            (lambda s: s.pop('exit_code'), "required key 'exit_code' missing"),
            (lambda s: s.update(undocumented=1), "key 'undocumented' is not in the schema"),
            (lambda s: s.update(outcome='maybe'), "$.outcome: 'maybe' is not one of"),
            (lambda s: s['vm'].update(vcpus=0), '$.vm.vcpus: 0 is below 1'),
            (lambda s: s['cases'][0].update(status='ok'), "$.cases[0].status: 'ok'"),
            (lambda s: s['durations'].update(boot='fast'), '$.durations.boot'),
            (lambda s: s.update(schema=1), '$.schema: 1 is not 2'),
            (lambda s: s['kernel'].update(release=5), '$.kernel.release: 5 is not of type'),
        ]
        for change, message in cases:
            with self.subTest(message=message):
                s = copy.deepcopy(self.good)
                change(s)
                errs = schema.errors(s)
                self.assertTrue(any(message in e for e in errs), errs)

    def test_schema_file_is_json_schema_shaped(self):
        sch = schema.load()
        self.assertEqual(sch['$schema'], 'https://json-schema.org/draft/2020-12/schema')
        self.assertEqual(sch['properties']['schema']['const'], results.SCHEMA)
        # Every key the runner writes is documented (additionalProperties false).
        self.assertIs(sch['additionalProperties'], False)


if __name__ == '__main__':
    unittest.main()
