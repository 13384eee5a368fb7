"""tapflat: nested kselftest TAP flattened to CI names."""
import unittest
from pathlib import Path

from gupnm.ci import tapflat

DATA = Path(__file__).resolve().parents[1] / "data" / "kselftest"


class Flatten(unittest.TestCase):
    def test_three_levels(self):
        flat = tapflat.flatten((DATA / "run_kselftest-7.3.txt").read_text())
        got = [(f.name, f.result) for f in flat]
        top = "mm_ksft_gup_fast_sh"
        mid = top + "_gup_null_mapping"
        self.assertEqual(got, [
            (top, "fail"), (mid, "fail"),
            (mid + "_verdict_shadow_read", "pass"),
            (mid + "_verdict_shadow_write", "fail"),
            (mid + "_verdict_anon_read", "pass"),
            (mid + "_bench", "skip")])
        self.assertEqual(tapflat.duplicates(flat), [])

    def test_slug(self):
        self.assertEqual(tapflat.slug("selftests: mm: run_vmtests.sh"),
                         "mm_run_vmtests_sh")
        self.assertEqual(tapflat.slug("./gup_null_mapping"), "gup_null_mapping")

    def test_duplicates_are_reported_not_renamed(self):
        text = "ok 1 a\nok 2 a\nok 3 b\n"
        flat = tapflat.flatten(text)
        self.assertEqual([f.name for f in flat], ["a", "a", "b"])
        self.assertEqual(tapflat.duplicates(flat), ["a"])

    def test_orphans_without_parent_line_are_kept(self):
        # The runner died before printing its own result.
        flat = tapflat.flatten("# ok 1 x\n# not ok 2 y\n")
        self.assertEqual([(f.name, f.result) for f in flat],
                         [("x", "pass"), ("y", "fail")])


if __name__ == "__main__":
    unittest.main()
