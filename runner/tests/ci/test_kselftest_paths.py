"""kselftest_paths: the guest's output cut per path, and the expectations."""
import tempfile
import unittest
from pathlib import Path

from gupnm.ci import kselftest_paths
from gupnm.prepare import kselftest_build

DATA = Path(__file__).resolve().parents[1] / "data" / "kselftest"


def _guest(inner: str, rc: int) -> str:
    return f"KSFT-PATH-BEGIN: install\n{inner}KSFT-PATH-END: install {rc} 3.5\n"


class Paths(unittest.TestCase):
    def test_split_and_verdicts(self):
        text = _guest((DATA / "run_kselftest-7.3.txt").read_text(), 1)
        text += "KSFT-PATH-BEGIN: tarball\n# partial\n"
        paths = kselftest_paths.split_paths(text)
        self.assertEqual(sorted(paths), ["install", "tarball"])
        inst = paths["install"]
        self.assertEqual((inst.exit_status, inst.seconds), (1, 3.5))
        self.assertIsNone(paths["tarball"].exit_status)
        bad = kselftest_paths.verdict_problems(inst, "mm:ksft_gup_fast.sh", bug=False)
        self.assertTrue(any("verdict_shadow_write fail" in b for b in bad))
        self.assertTrue(any("exit status 1, expected 0" in b for b in bad))

    def test_bug_pattern(self):
        # The driver row: "driver" since v4 of the test, "shadow" before.
        for row in ("driver", "shadow"):
            with self.subTest(row=row):
                self.assertTrue(kselftest_paths.is_driver(f"x_verdict_{row}_read"))
                self.assertTrue(kselftest_paths.is_driver(f"verdict_{row}_write"))
                self.assertFalse(kselftest_paths.is_driver(f"verdict_{row}_longterm_write"))
        self.assertFalse(kselftest_paths.is_driver("verdict_anon_read"))
        self.assertFalse(kselftest_paths.is_driver("verdict_drivers_read"))

    def test_the_v4_names_judged_as_the_old_ones(self):
        text = _guest((DATA / "run_kselftest-7.3.txt").read_text(), 1)
        v4 = text.replace("verdict_shadow_", "verdict_driver_").replace(
            "verdict shadow ", "verdict driver ")
        old, new = (kselftest_paths.split_paths(t)["install"] for t in (text, v4))
        for bug in (False, True):
            self.assertEqual(
                kselftest_paths.verdict_problems(new, "mm:ksft_gup_fast.sh", bug=bug),
                [p.replace("verdict_shadow_", "verdict_driver_") for p in
                 kselftest_paths.verdict_problems(old, "mm:ksft_gup_fast.sh", bug=bug)])

    def test_wrapper(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            self.assertEqual(kselftest_build.wrapper_of(tmp),
                             ("mm:run_vmtests.sh", []))
            (tmp / "ksft_gup_test.sh").write_text("")
            self.assertEqual(kselftest_build.wrapper_of(tmp),
                             ("mm:ksft_gup_test.sh", ["TEST_PROGS=ksft_gup_test.sh"]))

    def test_khugepaged_slip_either_quotes(self):
        rx = kselftest_build.KSFT_SKIP_SLIP
        self.assertTrue(rx.search("khugepaged.c:1195:24: error: \u2018KSFT_SKIP\u2019 "
                                  "undeclared (first use in this function)"))
        self.assertTrue(rx.search("khugepaged.c:9:1: error: 'KSFT_SKIP' undeclared"))
        self.assertFalse(rx.search("cow.c:9:1: error: 'KSFT_SKIP' undeclared"))


if __name__ == "__main__":
    unittest.main()


class GupTestCategoryTest(unittest.TestCase):
    """The real three paths of the gup_test category on the upstream
    series' 7.3 kernel: upstream's gup_longterm gives result names that
    collide once flattened; only gup_null_mapping's are judged."""

    def test_real_paths_judge_our_results_only(self):
        text = (Path(__file__).resolve().parents[1] / 'data/kselftest/paths-v2-7.3.txt').read_text()
        paths = kselftest_paths.split_paths(text)
        self.assertEqual(sorted(paths), ['install', 'run_tests', 'tarball'])
        for p in paths.values():
            self.assertTrue(kselftest_paths.tapflat.duplicates(p.flat))
            ours = kselftest_paths.own_results(p.flat)
            self.assertEqual(len(ours), 13)
            self.assertFalse(kselftest_paths.tapflat.duplicates(ours))
            self.assertEqual(kselftest_paths.verdict_problems(
                p, 'mm:ksft_gup_test.sh', bug=False), [])
