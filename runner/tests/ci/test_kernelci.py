"""kernelci: KernelCI's command line, the budget and the row's problems."""
import unittest
from pathlib import Path
from unittest import mock

from gupnm.ci import kernelci, kselftest_paths

DATA = Path(__file__).resolve().parents[1] / "data" / "kselftest"


def _outcome(inner: str | None, rc: int = 0, *, wall: float = 120.0,
             timed_out: bool = False, cmdline: str | None = kernelci.APPEND,
             booted: str = "7.3.4+deb13-arm64") -> kernelci.Outcome:
    path = None
    if inner is not None:
        text = f"KSFT-PATH-BEGIN: kernelci\n{inner}KSFT-PATH-END: kernelci {rc} 40.0\n"
        path = kselftest_paths.split_paths(text)["kernelci"]
    return kernelci.Outcome("debian:7.3", "7.3.4+deb13-arm64", "mm:ksft_gup_test.sh",
                            path, 0, wall, timed_out, cmdline, booted, "", Path("/x"))


def _run(bug: bool) -> str:
    """A real 7.3 run_kselftest.sh output (tests/data), with the short-term
    shadow verdicts turned to failures when @bug (what a kernel without the
    fix gives)."""
    text = (DATA / "paths-v2-7.3.txt").read_text()
    body = kselftest_paths.split_paths(text)["tarball"].text
    if bug:
        for n, case in ((7, "verdict_shadow_read"), (8, "verdict_shadow_write")):
            line = f"# # ok {n} {case}\n"
            assert body.count(line) == 1, line
            body = body.replace(line, f"# # not ok {n} {case}\n")
    return body


class CommandLine(unittest.TestCase):
    def test_kernelci_args(self):
        self.assertIn("secretmem.enable kpti=off", kernelci.APPEND)
        self.assertNotIn("secretmem.enable=", kernelci.APPEND)

    def test_secretmem(self):
        self.assertTrue(kernelci.has_secretmem("console=ttyAMA0 secretmem.enable kpti=off"))
        self.assertTrue(kernelci.has_secretmem("secretmem.enable=1"))
        self.assertFalse(kernelci.has_secretmem("secretmem.enable=0 x"))
        self.assertFalse(kernelci.has_secretmem("nosecretmem.enablex"))
        self.assertFalse(kernelci.has_secretmem(None))

    def test_cmdline_of(self):
        con = "[    0.000000] Kernel command line: console=ttyAMA0 secretmem.enable\n"
        self.assertEqual(kernelci.cmdline_of(con), "console=ttyAMA0 secretmem.enable")
        self.assertIsNone(kernelci.cmdline_of("no banner"))


class Problems(unittest.TestCase):
    def test_fixed_kernel_passes(self):
        self.assertEqual(kernelci.problems(_outcome(_run(False)), bug=False), [])

    def test_over_budget(self):
        bad = kernelci.problems(_outcome(_run(False), wall=601.0), bug=False)
        self.assertTrue(any("over KernelCI's budget: 601 s" in b for b in bad))
        bad = kernelci.problems(_outcome(None, wall=600.0, timed_out=True), bug=False)
        self.assertTrue(any("budget" in b for b in bad))
        self.assertTrue(any("never started" in b for b in bad))

    def test_smaller_budget(self):
        o = _outcome(_run(False), wall=6.0)
        o.budget = 5.0
        bad = kernelci.problems(o, bug=False)
        self.assertTrue(any("times out at 5 s" in b for b in bad))

    def test_no_secretmem_or_wrong_kernel(self):
        bad = kernelci.problems(_outcome(_run(False), cmdline="console=ttyAMA0",
                                         booted="6.12.118+deb13-arm64"), bug=False)
        self.assertTrue(any("secretmem.enable" in b for b in bad))
        self.assertTrue(any("booted 6.12.118" in b for b in bad))

    def test_negative_control(self):
        """The no-fix row passes only when the driver verdicts fail (this log
        names the row "shadow", as the test did before v4); the
        fixed row fails on the no-fix output."""
        self.assertEqual(kernelci.problems(_outcome(_run(True), rc=0), bug=True), [])
        bad = kernelci.problems(_outcome(_run(False)), bug=True)
        self.assertTrue(any("verdict_shadow_read pass, expected fail" in b for b in bad))
        bad = kernelci.problems(_outcome(_run(True)), bug=False)
        self.assertTrue(any("verdict_shadow_write fail, expected pass" in b for b in bad))


EARLY_OOPS = ("[    0.412345] Oops: int3: 0000 [#1] PREEMPT SMP\n"
              "[    0.412400] Kernel panic - not syncing: Fatal exception\n")


class Again(unittest.TestCase):
    def test_died_before_test(self):
        died = _outcome(None, wall=3.0)
        died.console = EARLY_OOPS
        self.assertTrue(kernelci.died_before_test(died))
        ran = _outcome(_run(False))
        ran.console = "GUPNM-TEST-BEGIN\n" + "[   9.0] Oops: late\n"
        self.assertFalse(kernelci.died_before_test(ran))
        killed = _outcome(None, wall=600.0, timed_out=True)
        killed.console = EARLY_OOPS
        self.assertFalse(kernelci.died_before_test(killed))

    def test_booted_again_once(self):
        died = _outcome(None, wall=3.0)
        died.console = EARLY_OOPS
        good = _outcome(_run(False))
        with mock.patch.object(kernelci, "run", side_effect=[died, good]) as run, \
                mock.patch.object(kernelci, "progress"):
            o, notes = kernelci.run_again_if_died("debian:7.3", Path("/a"), Path("/b"))
        self.assertIs(o, good)
        self.assertEqual(run.call_args_list[1][0][1], Path("/b"))
        self.assertIn("died before the test", notes[0])
        with mock.patch.object(kernelci, "run", side_effect=[good]):
            self.assertEqual(kernelci.run_again_if_died("debian:7.3", Path("/a"),
                                                        Path("/b"))[1], [])


class Record(unittest.TestCase):
    def test_record(self):
        r = kernelci.record(_outcome(_run(True), rc=0, wall=12.34))
        self.assertEqual(r["boot_to_result_s"], 12.3)
        self.assertEqual(r["job_timeout_s"], 600.0)
        self.assertEqual(r["results"]["mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read"],
                         "fail")
        self.assertTrue(all("gup_null_mapping" in n for n in r["results"]))


if __name__ == "__main__":
    unittest.main()
