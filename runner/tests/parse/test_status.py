"""Unit tests for gupnm.parse.status (the guest's status-port protocol, runner/guest/init)."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.parse import tap  # noqa: E402
from gupnm.parse.status import GuestStatus, parse_status  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / 'data'
REAL = DATA / 'real'


def real(name: str) -> str:
    # Bytes, not read_text(): keep the \r\n the serial port wrote.
    return (REAL / name).read_bytes().decode(errors='replace')


class RealDebianStatusTest(unittest.TestCase):
    """The status port of a real boot of Debian's 6.12.117 kernel (CRLF, as QEMU wrote it)."""

    @classmethod
    def setUpClass(cls):
        cls.raw = real('debian-6.12.status.log')
        cls.st = parse_status(cls.raw)
        cls.tap = tap.parse_tap(cls.st.tap.splitlines())

    def test_fixture_is_crlf(self):
        # The point of using the real file: the serial port turns \n into \r\n.
        self.assertIn('\r\n', self.raw)

    def test_booted_exit_rmmod(self):
        self.assertTrue(self.st.booted)
        self.assertEqual(self.st.exit_code, 1)
        self.assertEqual(self.st.rmmod, 'ok')
        self.assertTrue(self.st.complete_tap)

    def test_times(self):
        self.assertEqual(self.st.times, {'init': 4.10, 'modprobe': 4.17, 'test': 4.24,
                                         'finished': 7.90})

    def test_tap_section_is_exact(self):
        self.assertTrue(self.st.tap.startswith('TAP version 13\n'))
        self.assertTrue(self.st.tap.endswith(
            '# Totals: pass:44 fail:2 xfail:0 xpass:0 skip:0 error:0\n'))
        self.assertNotIn('\r', self.st.tap)
        self.assertNotIn('GUPNM-', self.st.tap)
        # Between the BEGIN/END lines, nothing lost and nothing added.
        lines = self.raw.splitlines()
        begin, end = lines.index('GUPNM-TAP-BEGIN'), lines.index('GUPNM-TAP-END')
        self.assertEqual(self.st.tap.splitlines(), lines[begin + 1:end])

    def test_46_results_and_driver_verdict(self):
        self.assertEqual(self.tap.errors, [])
        self.assertEqual(self.tap.plan, 46)
        self.assertEqual(len(self.tap.results), 46)
        # The log says "shadow" (the test before v4): the row's name today.
        v = tap.driver_verdict(self.tap)
        self.assertEqual((v.backing, v.access, v.fast, v.total), ('driver', 'read', 0, 512))
        self.assertEqual(self.tap.verdicts[('driver', 'write')].fast, 0)
        self.assertTrue(tap.bug_present(self.tap))
        self.assertEqual([r.name for r in tap.failed_results(self.tap)],
                         ['verdict_shadow_read', 'verdict_shadow_write'])

    def test_dmesg_section(self):
        self.assertTrue(self.st.dmesg.startswith('[    0.000000] Linux version 6.12.117+deb12-amd64'))
        self.assertTrue(self.st.dmesg.endswith('\n'))
        self.assertNotIn('GUPNM-', self.st.dmesg)
        self.assertNotIn('\r', self.st.dmesg)
        self.assertIn('test_gup_fast: loading out-of-tree module taints kernel.', self.st.dmesg)

    def test_real_run_vmtests_status(self):
        # A real boot of source:debian-6.12:nofix, which runs run_vmtests.sh.
        st = parse_status(real('source-6.12-nofix.status.log'))
        self.assertTrue(st.booted)
        self.assertEqual((st.exit_code, st.rmmod, st.complete_tap), (1, 'ok', True))
        self.assertEqual(st.tap, real('source-6.12-nofix.run_vmtests.txt'))
        self.assertEqual(set(st.times), {'init', 'modprobe', 'test', 'finished'})


class SyntheticStatusTest(unittest.TestCase):

    def test_empty(self):
        st = parse_status('')
        self.assertEqual(st, GuestStatus())
        self.assertFalse(st.booted)
        self.assertIsNone(st.exit_code)
        self.assertIsNone(st.rmmod)
        self.assertEqual((st.tap, st.dmesg, st.complete_tap), ('', '', False))

    def test_booted_only(self):
        # Guest reached user space and then died: no exit status.
        st = parse_status('GUPNM-STATUS: booted\r\nGUPNM-TIME: init 1.5\r\n')
        self.assertTrue(st.booted)
        self.assertIsNone(st.exit_code)
        self.assertEqual(st.times, {'init': 1.5})

    def test_exit_statuses(self):
        for code in (0, 1, 3, 4, 127, -1):
            with self.subTest(code=code):
                st = parse_status(f'GUPNM-STATUS: booted\nGUPNM-EXIT: {code}\n')
                self.assertEqual(st.exit_code, code)

    def test_malformed_exit_ignored(self):
        st = parse_status('GUPNM-EXIT: \nGUPNM-EXIT: one\nGUPNM-EXIT: 1 2\n')
        self.assertIsNone(st.exit_code)

    def test_rmmod_failed(self):
        self.assertEqual(parse_status('GUPNM-RMMOD: failed\n').rmmod, 'failed')

    def test_protocol_lines_must_be_whole_lines(self):
        st = parse_status('junk GUPNM-STATUS: booted\n  GUPNM-EXIT: 0\nGUPNM-STATUS: booted now\n')
        self.assertFalse(st.booted)
        self.assertIsNone(st.exit_code)

    def test_tap_cut_short_keeps_what_arrived(self):
        st = parse_status('GUPNM-STATUS: booted\nGUPNM-TAP-BEGIN\nTAP version 13\n1..46\n'
                          'ok 1 verdict_shadow_read\n')
        self.assertFalse(st.complete_tap)
        self.assertEqual(st.tap, 'TAP version 13\n1..46\nok 1 verdict_shadow_read\n')
        self.assertIsNone(st.exit_code)

    def test_protocol_lines_inside_tap_are_tap(self):
        # The test's output is opaque: a line that looks like the protocol
        # inside the TAP section must not set the exit status.
        st = parse_status('GUPNM-TAP-BEGIN\nGUPNM-EXIT: 0\nGUPNM-RMMOD: ok\nGUPNM-TAP-END\n'
                          'GUPNM-EXIT: 1\n')
        self.assertEqual(st.exit_code, 1)
        self.assertIsNone(st.rmmod)
        self.assertEqual(st.tap, 'GUPNM-EXIT: 0\nGUPNM-RMMOD: ok\n')
        self.assertTrue(st.complete_tap)

    def test_crlf_and_lf_equivalent(self):
        text = ('GUPNM-STATUS: booted\nGUPNM-TIME: test 2.25\nGUPNM-TAP-BEGIN\nTAP version 13\n'
                '1..1\nok 1 x\nGUPNM-TAP-END\nGUPNM-DMESG-BEGIN\n[ 0.1] hi\nGUPNM-DMESG-END\n'
                'GUPNM-RMMOD: ok\nGUPNM-EXIT: 0\n')
        self.assertEqual(parse_status(text), parse_status(text.replace('\n', '\r\n')))
        st = parse_status(text)
        self.assertEqual(st.tap, 'TAP version 13\n1..1\nok 1 x\n')
        self.assertEqual(st.dmesg, '[ 0.1] hi\n')

    def test_order_of_init(self):
        # runner/guest/init order: RMMOD, TAP, DMESG, EXIT last.
        text = ('GUPNM-STATUS: booted\nGUPNM-RMMOD: ok\nGUPNM-TAP-BEGIN\nok 1 a\nGUPNM-TAP-END\n'
                'GUPNM-DMESG-BEGIN\nGUPNM-DMESG-END\nGUPNM-EXIT: 4\n')
        st = parse_status(text)
        self.assertEqual((st.booted, st.rmmod, st.exit_code, st.tap), (True, 'ok', 4, 'ok 1 a\n'))

    def test_memfree(self):
        st = parse_status('GUPNM-STATUS: booted\r\nGUPNM-MEMFREE: before 903112\r\n'
                          'GUPNM-RMMOD: ok\r\nGUPNM-MEMFREE: after 902480\r\nGUPNM-EXIT: 0\r\n')
        self.assertEqual(st.memfree_kb, {'before': 903112, 'after': 902480})
        # An empty awk result (no /proc/meminfo) is no number.
        self.assertEqual(parse_status('GUPNM-MEMFREE: before \n').memfree_kb, {})

    def test_bench_section_and_exit(self):
        # The benchmark program (bench/gup_fast_bench) after the test.
        st = parse_status('GUPNM-STATUS: booted\r\nGUPNM-TAP-BEGIN\r\nok 1 a\r\n'
                          'GUPNM-TAP-END\r\nGUPNM-BENCH-BEGIN\r\n'
                          '# bench ratio threads=1 shadow/anon=2.21\r\nok 1 bench\r\n'
                          'GUPNM-BENCH-END\r\nGUPNM-BENCH-EXIT: 0\r\nGUPNM-EXIT: 1\r\n')
        self.assertEqual((st.tap, st.bench, st.bench_exit, st.exit_code),
                         ('ok 1 a\n', '# bench ratio threads=1 shadow/anon=2.21\nok 1 bench\n',
                          0, 1))
        self.assertIsNone(parse_status('GUPNM-STATUS: booted\n').bench)

    def test_real_run_has_no_memfree(self):
        # The real runs predate GUPNM-MEMFREE.
        self.assertEqual(parse_status(real('debian-6.12.status.log')).memfree_kb, {})

    def test_time_values(self):
        st = parse_status('GUPNM-TIME: init 4.10\nGUPNM-TIME: modprobe 12\nGUPNM-TIME: bad x\n')
        self.assertEqual(st.times, {'init': 4.1, 'modprobe': 12.0})



class PageOwnerLineTest(unittest.TestCase):
    def test_page_owner_counts(self):
        st = parse_status("GUPNM-STATUS: booted\nGUPNM-PAGE-OWNER: 5 518\nGUPNM-EXIT: 1\n")
        self.assertEqual((st.page_owner_user, st.page_owner_other), (5, 518))

    def test_page_owner_absent(self):
        st = parse_status("GUPNM-STATUS: booted\nGUPNM-EXIT: 0\n")
        self.assertIsNone(st.page_owner_user)


class CrossCheckSectionTest(unittest.TestCase):
    def test_xcheck_output_and_exit(self):
        st = parse_status('GUPNM-STATUS: booted\nGUPNM-XCHECK-BEGIN\n'
                          '# PIN_FAST_BENCHMARK: Time: get:52 put:20 us\n'
                          'GUPNM-XCHECK-END\nGUPNM-XCHECK-EXIT: 0\nGUPNM-EXIT: 0\n')
        self.assertEqual(st.xcheck, '# PIN_FAST_BENCHMARK: Time: get:52 put:20 us\n')
        self.assertEqual((st.xcheck_exit, st.exit_code), (0, 0))
        self.assertIsNone(parse_status('GUPNM-EXIT: 0\n').xcheck)


if __name__ == '__main__':
    unittest.main()
