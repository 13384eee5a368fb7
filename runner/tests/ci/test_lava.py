"""lava: job rendering, lava-run's result lines, the expectations."""
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from gupnm.ci import lava
from gupnm.host import RunnerError

JSON_LINES = """\
{"dt": "2026-11-30T16:04:08", "lvl": "results", "msg": {"case": "validate", "definition": "lava", "result": "pass"}}
{"dt": "2026-11-30T16:04:25", "lvl": "target", "msg": "ok 9 verdict_shadow_read"}
{"dt": "2026-11-30T16:04:25", "lvl": "results", "msg": {"case": "verdict_shadow_read", "definition": "gup_null_mapping", "level": "3.1", "result": "fail"}}
{"dt": "2026-11-30T16:04:25", "lvl": "results", "msg": {"case": "verdict_shadow_longterm_write", "definition": "gup_null_mapping", "result": "pass"}}
{"dt": "2026-11-30T16:04:25", "lvl": "results", "msg": {"case": "verdict_anon_read", "definition": "gup_null_mapping", "result": "pass"}}
{"dt": "2026-11-30T16:04:26", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}}
"""
YAML_LINE = ("- {dt: '2026-11-30T16:04:25', lvl: results, msg: {case: verdict_anon_read, "
             "definition: gup_null_mapping, level: '3.1', result: pass}}\n")


def _run(cases, rc=0):
    return lava.LavaRun("debian-module", "debian:6.12", "6.12", cases, rc, 1.0,
                        Path("/nonexistent"))


class Results(unittest.TestCase):
    def test_json_lines(self):
        cases = lava.parse_results(JSON_LINES)
        self.assertEqual([(c.definition, c.case, c.result) for c in cases], [
            ("lava", "validate", "pass"),
            ("gup_null_mapping", "verdict_shadow_read", "fail"),
            ("gup_null_mapping", "verdict_shadow_longterm_write", "pass"),
            ("gup_null_mapping", "verdict_anon_read", "pass"),
            ("lava", "job", "pass")])

    def test_yaml_flow_line(self):
        cases = lava.parse_results(YAML_LINE)
        self.assertEqual([(c.definition, c.case, c.result) for c in cases],
                         [("gup_null_mapping", "verdict_anon_read", "pass")])

    def test_bug_kernel_expectations(self):
        r = _run(lava.parse_results(JSON_LINES))
        self.assertEqual(lava.problems(r, "gup_null_mapping", bug=True), [])
        self.assertIn("verdict_shadow_read: fail, expected pass",
                      lava.problems(r, "gup_null_mapping", bug=False))

    def test_wrong_fix_expectations(self):
        # The bug kernel's results judged as a wrong fix's: its shadow
        # read/write failures are not the long-term pin's.
        r = _run(lava.parse_results(JSON_LINES))
        bad = lava.problems(r, "gup_null_mapping", bug=True,
                            failing=lambda n: n.endswith("verdict_shadow_longterm_write"))
        self.assertIn("verdict_shadow_read: fail, expected pass", bad)

    def test_exit_zero_is_not_a_verdict(self):
        r = _run([lava.Case("lava", "job", "pass")])
        bad = lava.problems(r, "gup_null_mapping", bug=False)
        self.assertTrue(any("no result" in b for b in bad))

    def test_job_error(self):
        r = _run([lava.Case("lava", "job", "fail")], rc=1)
        bad = lava.problems(r, "gup_null_mapping", bug=False)
        self.assertTrue(any("exited 1" in b for b in bad))


class Jobs(unittest.TestCase):
    def test_every_job_renders(self):
        for name, path in lava.JOBS.items():
            text = lava.render(path, Path("/x/art"), f"job {name}")
            self.assertIn("url: file:///x/art/kernel", text)
            self.assertIn("secretmem.enable=1", text)
            self.assertNotIn("@", text.split("job_name")[1].splitlines()[0])
            self.assertNotIn("enable-kvm", text)

    def test_missing_placeholder(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "j.yaml").write_text("job_name: x\n")
            with self.assertRaises(RunnerError):
                lava.render(Path(d) / "j.yaml", Path("/a"), "n")

    @unittest.skipUnless(lava.available() is None, "lava-dispatcher not installed")
    def test_lava_schema(self):
        ok, out = lava.validate([*lava.JOBS.values()])
        self.assertTrue(ok, out)

    def test_monitor_patterns_wait_for_the_whole_name(self):
        # LAVA matches on the console stream as it arrives: a name cut
        # short by the serial line's chunking must not match yet.
        for path in lava.JOBS.values():
            m = re.search(r"^\s*pattern: '(.*)'$", path.read_text(), re.M)
            rx = re.compile(m.group(1).replace("''", "'"))
            prefix = "# # " if "kselftest" in path.name else ""
            self.assertIsNone(rx.search(prefix + "not ok 8 verdi"))
            got = rx.search(prefix + "not ok 8 verdict_shadow_write\r\n")
            self.assertEqual(got.group("test_case_id"), "verdict_shadow_write")
            self.assertEqual(got.group("result"), "not ok")

    def test_device_is_tcg(self):
        text = lava.DEVICE.read_text()
        self.assertIn("available_architectures", text)
        self.assertIn("-accel tcg", text)
        self.assertNotIn("- -enable-kvm", text)


if __name__ == "__main__":
    unittest.main()


class EarlyDeath(unittest.TestCase):
    """lava-run's log of a real Debian 7.3 boot under two-vCPU TCG that
    Oopsed in early-boot text patching (the lines that matter kept)."""

    def run_of(self, text):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        (d / "lava-run.log").write_text(text)
        return lava.LavaRun("debian-module", "debian:7.3", "7.3.4+deb13-amd64",
                            [], 1, 6.0, d)

    def test_an_oops_before_init_is_named(self):
        text = (Path(__file__).resolve().parents[1] / "data/lava/early-oops-7.3.log").read_text()
        self.assertEqual(lava.died_before_user_space(self.run_of(text)),
                         "Oops: int3: 0000 [#1] SMP NOPTI")

    def test_a_guest_that_ran_init_did_not_die_early(self):
        text = (Path(__file__).resolve().parents[1] / "data/lava/early-oops-7.3.log").read_text()
        text += '{"lvl": "target", "msg": "[    2.1] Run /init as init process"}\n'
        self.assertIsNone(lava.died_before_user_space(self.run_of(text)))
        self.assertIsNone(lava.died_before_user_space(self.run_of("")))
