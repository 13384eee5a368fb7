"""The pre-6.5 rule on a real run of the selftest on Debian 6.1.0-57."""
import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.parse import tap  # noqa: E402
from gupnm.report import results  # noqa: E402
from parse.test_tap import recorded_today  # noqa: E402

REAL = Path(__file__).resolve().parents[1] / 'data' / 'real'


def summary_for(release: str, exit_status: int = 1) -> dict:
    text = (REAL / 'v2-debian-6.1.tap.txt').read_text()
    return results.build_summary(
        kernel_release=release, kernel_source={}, accel='tcg', vcpus=2,
        memory_mb=1024, cmdline='', tap=tap.parse_tap(text.splitlines()),
        splats=[], exit_status=exit_status)


class Pre65Test(unittest.TestCase):
    def test_before_6_5_the_long_term_pin_through_gup_fast_is_xfail(self):
        s = summary_for('6.1.0-57-amd64')
        self.assertEqual(s['outcome'], 'pass')
        self.assertEqual(s['diagnosis'], 'pass')
        self.assertEqual(s['exit_status'], 1)          # what the test said
        lt = [c for c in s['cases'] if c['name'] == 'verdict_shadow_longterm_write']  # v2's name
        self.assertEqual(lt[0]['status'], 'xfail')
        self.assertIn('before 6.5', s['notes'][0])
        self.assertEqual(results.exit_code(s['outcome']), results.EXIT_PASS)

    def test_the_recorded_summary_said_the_same(self):
        # The driver row was "shadow" then: "driver" in today's words.
        want = recorded_today(json.loads((REAL / 'v2-debian-6.1.summary.json').read_text()))
        got = summary_for(want['kernel']['release'])
        got['cases'] = [{k: v for k, v in c.items() if k != 'diagnostics'}
                        for c in got['cases']]      # not kept when it was recorded
        for key in ('outcome', 'diagnosis', 'cases', 'verdicts', 'notes'):
            self.assertEqual(got[key], want[key], key)

    def test_from_6_5_on_it_is_a_wrong_fix(self):
        for release in ('6.5.0', '6.12.117+deb12-amd64', '7.3.4+deb13-amd64'):
            s = summary_for(release)
            self.assertEqual(s['outcome'], 'fail', release)
            self.assertEqual(s['diagnosis'], 'wrongfix', release)
            self.assertNotIn('notes', s)

    def test_other_failures_stay_failures(self):
        text = (REAL / 'v2-debian-6.1.tap.txt').read_text().replace(
            'ok 1 verdict_anon_read', 'not ok 1 verdict_anon_read')
        s = results.build_summary(
            kernel_release='6.1.0-57-amd64', kernel_source={}, accel='tcg', vcpus=2,
            memory_mb=1024, cmdline='', tap=tap.parse_tap(text.splitlines()),
            splats=[], exit_status=1)
        self.assertEqual(s['outcome'], 'fail')


if __name__ == '__main__':
    unittest.main()
