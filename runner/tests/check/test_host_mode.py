"""Tests of gupnm.check.host_mode: what it reads back from a guest."""

import unittest

from gupnm.check import host_mode

OUT = """[    2.1] boot noise
@@host-mode rc=1
@@host-mode json
{"spec": "host", "kernel": {"release": "6.12.117+deb12-amd64",
 "source": {"kind": "host", "method": "module", "method_reason": "module: headers are in /x"}}}
@@host-mode end
@@host-mode diff
@@host-mode end
@@host-mode err
[  1.0s] host mode on ...
@@host-mode end
"""


class ParseTest(unittest.TestCase):
    def test_rc_json_and_an_empty_diff(self):
        got = host_mode.parse(OUT)
        self.assertEqual(got["rc"], 1)
        self.assertEqual(got["diff"], "")
        self.assertEqual(host_mode.method_of(got["json"]),
                         ("module", "module: headers are in /x"))

    def test_a_probe_summary_and_a_changed_setting(self):
        out = ("@@host-mode rc=1\n@@host-mode json\n"
               '{"method": "probe", "method_reason": "probe: lockdown=integrity"}\n'
               "@@host-mode end\n@@host-mode diff\n< /proc/sys/vm/nr_hugepages:0\n"
               "> /proc/sys/vm/nr_hugepages:8\n@@host-mode end\n")
        got = host_mode.parse(out)
        self.assertEqual(host_mode.method_of(got["json"]),
                         ("probe", "probe: lockdown=integrity"))
        self.assertIn("nr_hugepages", got["diff"])

    def test_a_guest_that_said_nothing(self):
        got = host_mode.parse("Kernel panic")
        self.assertEqual((got["rc"], got["json"], got["diff"]), (None, None, None))

    def test_every_case_expects_a_method_and_a_reason(self):
        for case in host_mode.CASES:
            self.assertIn(case.method, ("module", "probe"))
            self.assertTrue(case.reason)


if __name__ == "__main__":
    unittest.main()
