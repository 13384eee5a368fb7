"""lava: job rendering, lava-run's result lines, the expectations."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

try:
    import yaml
except ImportError:          # python3-yaml comes with lava-dispatcher
    yaml = None

from gupnm.ci import kselftest_paths, labroot, lava, linaro
from gupnm.host import RunnerError
from gupnm.parse import console

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
        self.assertEqual(lava.problems(r, bug=True), [])
        self.assertIn("verdict_shadow_read: fail, expected pass",
                      lava.problems(r, bug=False))

    def test_wrong_fix_expectations(self):
        # The bug kernel's results judged as a wrong fix's: its shadow
        # read/write failures are not the long-term pin's.
        r = _run(lava.parse_results(JSON_LINES))
        bad = lava.problems(r, bug=True,
                            failing=lambda n: n.endswith("verdict_shadow_longterm_write"))
        self.assertIn("verdict_shadow_read: fail, expected pass", bad)

    def test_exit_zero_is_not_a_verdict(self):
        r = _run([lava.Case("lava", "job", "pass")])
        bad = lava.problems(r, bug=False)
        self.assertTrue(any("no result" in b for b in bad))

    def test_job_error(self):
        r = _run([lava.Case("lava", "job", "fail")], rc=1)
        bad = lava.problems(r, bug=False)
        self.assertTrue(any("exited 1" in b for b in bad))


class Jobs(unittest.TestCase):
    VALUES = {"ARTIFACTS": "file:///x/art", "JOB_NAME": "job", "TEST_DEFINITIONS": "/x/td",
              "TEST_DEFINITIONS_REVISION": "0" * 40,
              "SKIPFILE_ARG": labroot.SKIPFILE_ARG}

    def test_every_job_renders(self):
        for name, path in lava.JOBS.items():
            text = lava.render(path, dict(self.VALUES, JOB_NAME=f"job {name}"))
            self.assertIn('url: "file:///x/art/kernel"', text)
            self.assertIn("secretmem.enable=1", text)
            self.assertNotRegex(text, r"@[A-Z_]+@")
            self.assertNotIn("enable-kvm", text)

    def test_missing_placeholder(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "j.yaml").write_text("job_name: x\n")
            with self.assertRaises(RunnerError):
                lava.render(Path(d) / "j.yaml", self.VALUES)

    def test_a_placeholder_without_a_value(self):
        values = {k: v for k, v in self.VALUES.items() if k != "TEST_DEFINITIONS"}
        with self.assertRaisesRegex(RunnerError, "@TEST_DEFINITIONS@"):
            lava.render(lava.JOBS["source-kselftest"], values)

    @unittest.skipUnless(lava.available() is None, "lava-dispatcher not installed")
    def test_lava_schema(self):
        ok, out = lava.validate([*lava.JOBS.values()])
        self.assertTrue(ok, out)

    @unittest.skipUnless(lava.available() is None, "lava-dispatcher not installed")
    def test_lava_schema_refuses_a_broken_job(self):
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d) / "bad.yaml"
            bad.write_text(lava.JOBS["source-kselftest"].read_text()
                           .replace("from: git", "from: svn"))
            ok, out = lava.validate([bad])
        self.assertFalse(ok, out)

    def test_monitor_patterns_wait_for_the_whole_name(self):
        # LAVA matches on the console stream as it arrives: a name cut
        # short by the serial line's chunking must not match yet.
        m = re.search(r"^\s*pattern: '(.*)'$",
                      lava.JOBS["debian-module"].read_text(), re.M)
        rx = re.compile(m.group(1).replace("''", "'"))
        self.assertIsNone(rx.search("not ok 8 verdi"))
        got = rx.search("not ok 8 verdict_shadow_write\r\n")
        self.assertEqual(got.group("test_case_id"), "verdict_shadow_write")
        self.assertEqual(got.group("result"), "not ok")


@unittest.skipIf(yaml is None, "python3-yaml not installed (lava-dispatcher brings it)")
class LabJob(unittest.TestCase):
    """lava/jobs/source-kselftest.yaml: Linaro's kselftest.yaml in LAVA's
    test shell, with the artifacts labroot.py makes."""

    def setUp(self):
        self.job = yaml.safe_load(lava.render(lava.JOBS["source-kselftest"], Jobs.VALUES))

    def action(self, name):
        return next(a[name] for a in self.job["actions"] if name in a)

    def test_linaro_definition_unmodified_from_git(self):
        d = self.action("test")["definitions"][0]
        self.assertEqual((d["from"], d["repository"], d["path"], d["name"]),
                         ("git", "/x/td", "automated/linux/kselftest/kselftest.yaml",
                          "kselftest-mm"))
        # Pinned: a full clone, which git's dumb HTTP (a plain web server) serves.
        self.assertEqual(d["revision"], "0" * 40)
        self.assertEqual(lava.SUITES["source-kselftest"], "0_" + d["name"])
        self.assertEqual(d["parameters"]["TST_CMDFILES"], "mm")
        # kselftest.yaml's default SKIPFILE "" makes kselftest.sh wget "".
        self.assertTrue(d["parameters"]["SKIPFILE"])

    def test_skipfile_reaches_the_overlay(self):
        # kselftest.sh prefixes its own directory, seven levels below / in
        # this LAVA's layout; a lab's lava_test_results_dir puts it deeper
        # (or shallower): the path must land on the overlay at every depth.
        d = self.action("test")["definitions"][0]
        tail = "0/tests/0_kselftest-mm/automated/linux/kselftest"
        for results_dir in ("/lava-1", "/var/lib/lava-1", "/a/b/c/d/e/f/g/h/lava-1", "/"):
            here = os.path.join(results_dir, tail)
            self.assertEqual(os.path.normpath(os.path.join(
                here, d["parameters"]["SKIPFILE"])), labroot.SKIPFILE, here)
        self.assertEqual(d["parameters"]["SKIPFILE"], labroot.SKIPFILE_ARG)
        overlays = self.action("deploy")["images"]["ramdisk"]["overlays"]
        self.assertEqual(overlays["skipfile"]["path"], labroot.SKIPFILE)
        self.assertEqual(overlays["kselftest"]["path"],
                         d["parameters"]["KSELFTEST_PATH"])
        self.assertIs(overlays["lava"], True)

    def test_kernel_definition_is_the_splat_suite(self):
        d = self.action("test")["definitions"][1]
        self.assertEqual(lava.KERNEL_SUITE, "1_" + d["name"])
        self.assertIn(f"lava-test-case {lava.SPLAT_CASE}", " ".join(
            d["repository"]["run"]["steps"]))


def _splat_step() -> str:
    job = yaml.safe_load(lava.render(lava.JOBS["source-kselftest"], Jobs.VALUES))
    test = next(a["test"] for a in job["actions"] if "test" in a)
    return "\n".join(test["definitions"][1]["repository"]["run"]["steps"])


@unittest.skipIf(yaml is None, "python3-yaml not installed (lava-dispatcher brings it)")
class SplatCase(unittest.TestCase):
    """The job's kernel-splat step run by sh with dmesg and lava-test-case
    stubbed: it must fail on every report console.py finds, and pass on a
    clean log with splat-like words in it."""

    def result_of(self, dmesg: str) -> str:
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        (d / "log").write_text(dmesg)
        for name, body in (("dmesg", f'cat "{d}/log"'),
                           ("lava-test-case", f'echo "$1 $3" >"{d}/result"')):
            (d / name).write_text(f"#!/bin/sh\n{body}\n")
            (d / name).chmod(0o755)
        step = _splat_step().replace("/tmp/gupnm-dmesg.txt", str(d / "dmesg.txt"))
        subprocess.run(["sh", "-e", "-c", step], env=dict(os.environ, PATH=f"{d}:/usr/bin:/bin"),
                       check=True, capture_output=True)
        return (d / "result").read_text().strip()

    def test_clean(self):
        self.assertEqual(self.result_of(
            "[    0.1] kasan: KernelAddressSanitizer initialized\n"
            "[    1.0] gup_test: BUG_ON(x) would be wrong\n"
            "[    2.0] race_bug_fixed ok\n"), f"{lava.SPLAT_CASE} pass")

    def test_every_report_console_finds(self):
        for line in ("WARNING: CPU: 1 PID: 9 at mm/gup.c:10 f+0x1/0x2",
                     "BUG: unable to handle page fault for address: 0",
                     "Oops: general protection fault, probably for non-canonical",
                     "kernel BUG at mm/gup.c:42!",
                     "BUG: KASAN: use-after-free in x",
                     "UBSAN: shift-out-of-bounds in x",
                     "Kernel panic - not syncing: Fatal exception",
                     "INFO: task gup:9 blocked for more than 120 seconds.",
                     "possible circular locking dependency detected",
                     "unreferenced object 0xffff888003 (size 64):"):
            for text in (f"[   12.345678] {line}\n", f"{line}\n"):
                self.assertTrue(console.find_splats(text), text)
                self.assertEqual(self.result_of(text), f"{lava.SPLAT_CASE} fail", text)


@unittest.skipIf(yaml is None, "python3-yaml not installed (lava-dispatcher brings it)")
class NegativeControl(unittest.TestCase):
    """make check's splat negative control: its step goes before the
    check, the job stays valid, and the check then fails."""

    def edited(self):
        from gupnm.check import kselftest_checks
        text = lava.render(lava.JOBS["source-kselftest"], Jobs.VALUES)
        self.assertIn(lava.SPLAT_STEP, text)
        return text.replace(lava.SPLAT_STEP, kselftest_checks.SPLAT_INJECT + lava.SPLAT_STEP)

    def test_the_injected_warning_fails_the_case(self):
        job = yaml.safe_load(self.edited())
        test = next(a["test"] for a in job["actions"] if "test" in a)
        steps = test["definitions"][1]["repository"]["run"]["steps"]
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        # The kernel takes the <level> prefix off what /dev/kmsg is given.
        for name, body in (("dmesg", f"sed 's/^<[0-9]>/[    9.000000] /' \"{d}/kmsg\""),
                           ("lava-test-case", f'echo "$1 $3" >"{d}/result"')):
            (d / name).write_text(f"#!/bin/sh\n{body}\n")
            (d / name).chmod(0o755)
        script = "\n".join(steps).replace("/dev/kmsg", str(d / "kmsg")).replace(
            "/tmp/gupnm-dmesg.txt", str(d / "dmesg.txt"))
        subprocess.run(["sh", "-e", "-c", script], check=True, capture_output=True,
                       env=dict(os.environ, PATH=f"{d}:/usr/bin:/bin"))
        self.assertEqual((d / "result").read_text().strip(), f"{lava.SPLAT_CASE} fail")

    @unittest.skipUnless(lava.available() is None, "lava-dispatcher not installed")
    def test_the_edited_job_passes_the_schema(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "job.yaml").write_text(self.edited())
            ok, out = lava.validate([Path(d) / "job.yaml"])
        self.assertTrue(ok, out)


class SpecProblem(unittest.TestCase):
    def test_the_lab_job_needs_linaros_checkout_before_anything_is_built(self):
        with mock.patch.dict(os.environ, {"GUPNM_LINARO": "/nonexistent"}):
            why = lava.spec_problem("source-kselftest", "source:debian-7.3:all")
        self.assertIn("test-definitions not found at /nonexistent", why)

    def test_debian_kernels_are_not_the_lab_jobs(self):
        with mock.patch.object(linaro, "locate", return_value=Path("/td")):
            why = lava.spec_problem("source-kselftest", "debian:7.3")
        self.assertIn("source kernel's tree", why)


class LabProblems(unittest.TestCase):
    """lava.problems on the lab job's results (a real run on the fix)."""

    def run_with(self, change=None):
        data = Path(__file__).resolve().parents[1] / "data/lava/lab-7.3-all.results.log"
        cases = []
        for c in lava.parse_results(data.read_text()):
            result = (change or {}).get(c.case, c.result)
            if result is not None:
                cases.append(lava.Case(c.definition, c.case, result))
        return lava.LavaRun("source-kselftest", "source:debian-7.3:all", "7.3.4+",
                            cases, 0, 30.0, Path("/nonexistent"))

    def test_fix(self):
        r = self.run_with()
        self.assertEqual(lava.problems(r, bug=False), [])
        self.assertGreater(len(r.skipped_by_skipfile()), 0)
        self.assertTrue(all(kselftest_paths.is_ours(c.case) for c in r.ours()))

    def test_the_fix_judged_as_a_bug_kernel_fails(self):
        bad = lava.problems(self.run_with(), bug=True)
        self.assertIn("mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read: pass, "
                      "expected fail", bad)
        self.assertIn(f"{lava.EXIT_CASE}: pass, expected fail", bad)

    def test_exit_status_case_follows_the_verdicts(self):
        shadow = {n: "fail" for n in (
            "mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read",
            "mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_write")}
        self.assertEqual(lava.problems(self.run_with(
            {**shadow, lava.EXIT_CASE: "fail"}), bug=True), [])
        self.assertIn(f"{lava.EXIT_CASE}: pass, expected fail",
                      lava.problems(self.run_with(shadow), bug=True))

    def test_lab_cases_required(self):
        self.assertTrue(any("not recorded" in p for p in lava.problems(
            self.run_with({lava.SPLAT_CASE: None}), bug=False)))
        self.assertTrue(any(lava.SPLAT_CASE in p for p in lava.problems(
            self.run_with({lava.SPLAT_CASE: "fail"}), bug=False)))
        self.assertTrue(any("exit status" in p for p in lava.problems(
            self.run_with({lava.EXIT_CASE: None}), bug=False)))


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
