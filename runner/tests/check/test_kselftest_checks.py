"""What make check's Linaro rows expect of each kernel of the tree."""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.check import doc_facts, kselftest_checks  # noqa: E402

# gup_null_mapping's names in Linaro's result.txt, as parse-output.py wrote
# them on 7.3 in a real guest (TST_CMDFILES=mm).
PREFIX = "mm_ksft_gup_test_sh_gup_null_mapping_"
NAMES = [PREFIX + n for n in (
    "verdict_shadow_read", "verdict_shadow_write", "verdict_shadow_longterm_write",
    "verdict_anon_read", "verdict_memfd_write", "verdict_secretmem_read")] + \
    ["mm_ksft_gup_test_sh_gup_null_mapping"]


class ExpectedFailures(unittest.TestCase):
    def test_the_fix_fails_nothing(self):
        self.assertEqual(kselftest_checks.expected_failures(
            "source:debian-7.3:all", NAMES), set())

    def test_the_bug_fails_the_short_term_driver_verdicts(self):
        self.assertEqual(kselftest_checks.expected_failures(
            "source:debian-7.3:nofix", NAMES),
            {PREFIX + "verdict_shadow_read", PREFIX + "verdict_shadow_write"})

    def test_the_wrong_fix_fails_the_long_term_writable_pin(self):
        self.assertEqual(kselftest_checks.expected_failures(
            "source:debian-7.3:wrongfix", NAMES),
            {PREFIX + "verdict_shadow_longterm_write"})

    def test_the_v4_names(self):
        # The row "driver" since v4 of the test ("shadow" above).
        names = [n.replace("verdict_shadow_", "verdict_driver_") for n in NAMES]
        self.assertEqual(kselftest_checks.expected_failures(
            "source:debian-7.3:nofix", names),
            {PREFIX + "verdict_driver_read", PREFIX + "verdict_driver_write"})
        self.assertEqual(kselftest_checks.expected_failures(
            "source:debian-7.3:wrongfix", names),
            {PREFIX + "verdict_driver_longterm_write"})
        self.assertEqual(kselftest_checks.expected_failures(
            "source:debian-7.3:all", names), set())


class OwnCount(unittest.TestCase):
    """The kselftest and Linaro rows: gup_null_mapping's flat results are
    one per cell of its table and one for its line, the documents' figure."""

    def test_the_tables_count_passes(self):
        want = doc_facts.facts()["own_results"]
        self.assertEqual(kselftest_checks.own_count_problem(want), "")

    def test_a_real_run_of_the_test_before_v4_is_miscounted(self):
        # A recorded run of the three paths: 12 verdicts and the test's line.
        from gupnm.ci import kselftest_paths
        text = (Path(__file__).resolve().parents[1] / "data" / "kselftest"
                / "paths-v2-7.3.txt").read_text()
        for p in kselftest_paths.split_paths(text).values():
            ours = len(kselftest_paths.own_results(p.flat))
            self.assertEqual(ours, 13)
            self.assertIn("gave 13 flat results", kselftest_checks.own_count_problem(ours))

    def test_a_result_missing_or_extra_is_named(self):
        want = doc_facts.facts()["own_results"]
        for ours in (want - 1, want + 1, 13):
            why = kselftest_checks.own_count_problem(ours)
            self.assertIn(f"gave {ours} flat results, its table {want}", why)


if __name__ == "__main__":
    unittest.main()
