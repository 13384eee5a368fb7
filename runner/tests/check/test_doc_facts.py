"""The documents' figures against the code (gupnm.check.doc_facts)."""
import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.check import doc_facts  # noqa: E402
from gupnm.check.doc_facts import Claim  # noqa: E402
from gupnm.check.tally import Tally  # noqa: E402

TEST_C = '''static const struct backing {
	const char *name;
} backings[] = {
	[ANON] = { "anon", NULL, MAP_PRIVATE, KPF_ANON, KPF_LARGE },
	[DRIVER] = { "driver", NULL, MAP_SHARED, 0,
		.refused = "GUP-fast rejects" },
};

static const char * const pin_names[] = { "read", "write", "longterm_write" };
'''
STRESS_C = '''static const struct abi_case abi_cases[] = {
	VERDICT("verdict_zero_size", EINVAL, v_zero_size, 0),
	OTHER("mmap_private", EINVAL, run_mmap_private),
};
static const struct { const char *name; } cases[] = {
	{ "race_fork_pin", race_fork_pin },
	{ "leak_anon", leak_anon },
	{ "leak_shadow", leak_shadow },
};
'''
PATCH = " 2 files changed, 38 insertions(+)\n"


def fake_repo(root: Path, docs: dict) -> Path:
    """A repository holding a 2-row test, 3 pins (6 cells), 4 stress cases,
    2 mutants, a 38-line kernel patch and @docs (name -> text)."""
    files = {str(doc_facts.TEST): TEST_C, str(doc_facts.STRESS): STRESS_C,
             "runner/gupnm/check/mutants/a.diff": "", "runner/gupnm/check/mutants/b.diff": "",
             "patches/upstream/0001-mm-x.patch": PATCH,
             str(doc_facts.LAYOUT): "MAX_LINES = 60\n",
             "README.md": "# x\n", **docs}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


class Facts(unittest.TestCase):
    def test_the_test_table(self):
        rows, pins = doc_facts.cell_table(TEST_C)
        self.assertEqual(rows, ["anon", "driver"])
        self.assertEqual(pins, ["read", "write", "longterm_write"])

    def test_a_fake_repository(self):
        with tempfile.TemporaryDirectory() as d:
            known = doc_facts.facts(fake_repo(Path(d), {}))
        self.assertEqual(
            {k: known[k] for k in ("rows", "pins", "cells", "own_results", "mutants",
                                   "stress_abi", "stress_race", "stress_leak",
                                   "stress_cases", "kernel_lines",
                                   "max_function_lines")},
            {"rows": 2, "pins": 3, "cells": 6, "own_results": 7, "mutants": 2,
             "stress_abi": 2, "stress_race": 1, "stress_leak": 2, "stress_cases": 5,
             "kernel_lines": 38, "max_function_lines": 60})

    def test_the_repository_itself(self):
        # Computed, not copied: the cells are its rows by its pins.
        known = doc_facts.facts()
        self.assertEqual(known["cells"], known["rows"] * known["pins"])
        self.assertEqual(known["own_results"], known["cells"] + 1)
        self.assertGreater(known["mutants"], 0)

    def test_no_table_is_an_error_not_zero(self):
        with self.assertRaisesRegex(ValueError, r"no array pin_names\[\]"):
            doc_facts.cell_table(TEST_C.replace("pin_names", "pins"))


class Problems(unittest.TestCase):
    def problems(self, text: str, claims=None, name="docs/page.md"):
        with tempfile.TemporaryDirectory() as d:
            repo = fake_repo(Path(d), {name: text, "docs/measured.md": "12 of 13 failed\n"})
            return doc_facts.problems(repo, claims=claims if claims is not None
                                      else doc_facts.GENERIC)

    def test_agreeing_figures_pass(self):
        self.assertEqual(self.problems(
            "The test has 6 cells, its 6 verdicts and 7 flat result names;\n"
            "2 mutants, 2 `abi_*` cases. The benchmark's 39 of 40 cells and\n"
            "the three 6.12 cells are other cells.\n"), [])

    def test_a_drifted_figure_names_page_line_and_the_code(self):
        out = self.problems("# t\n\nThe test has 21\ncells.\n")
        self.assertEqual(len(out), 1)
        self.assertRegex(out[0], r"^docs/page\.md:3: says '21\\ncells', the code "
                         r"gives cells = 6$")

    def test_a_run_figure_outside_the_log(self):
        for text in ("It said 3 of 13 failed.\n", "result.txt (95 lines)\n",
                     "13 results of gup_null_mapping pass\n", "`4 passed, 4\nfailed`\n",
                     "counted 65 names per path\n"):
            out = self.problems(text)
            self.assertEqual(len(out), 1, text)
            self.assertIn("is a run's figure: move it to docs/measured.md", out[0])

    def test_a_record_linking_the_log_stays(self):
        self.assertEqual(self.problems(
            "On 2026-12-01 it said 3 of 13 failed\n"
            "([measured](measured.md#x)).\n\n"
            "| run | result |\n|---|---|\n| [measured](measured.md) | `8 passed, 0 failed` |\n\n"
            "Example ([measured](measured.md)):\n\n    verdict: FAIL: 2 of 21 failed\n"), [])

    def test_a_record_does_not_excuse_a_figure_of_the_code(self):
        # "12 verdicts" beside a link to the log still says what the test
        # has: a record of an older test names it without the figure.
        out = self.problems("It had 12 verdicts ([measured](measured.md)).\n")
        self.assertEqual(len(out), 1)
        self.assertIn("says '12 verdicts', the code gives cells = 6", out[0])

    def test_a_table_row_is_its_own_block(self):
        out = self.problems("| a | [measured](measured.md) |\n| b | 3 of 13 failed |\n")
        self.assertEqual(len(out), 1)
        self.assertIn("page.md:2:", out[0])

    def test_comments_and_the_log_are_not_read(self):
        self.assertEqual(self.problems("<!-- 3 of 13 failed, 21 cells -->\n"), [])

    def test_a_sentence_claimed_by_page_must_stay(self):
        claims = (Claim(r"on 7\.3\.4 all (?P<n>\d+) pass", "cells", "README.md"),)
        out = self.problems("", claims)
        self.assertEqual(len(out), 1)
        self.assertIn("README.md: no longer says", out[0])
        self.assertEqual(self.problems("on 7.3.4 all 6 pass\n", claims, "README.md"), [])
        self.assertIn("the code gives cells = 6",
                      self.problems("on 7.3.4 all 21 pass\n", claims, "README.md")[0])

    def test_a_checked_sentence_may_hold_a_run_figure(self):
        claims = (Claim(r"FAIL: 2 of (?P<n>\d+) failed", "cells", "docs/page.md"),)
        self.assertEqual(self.problems("    FAIL: 2 of 6 failed\n", claims), [])

    def test_a_round_figure_within_its_tolerance(self):
        claims = (Claim(r"adds about (?P<n>\d+) lines", "kernel_lines", "docs/page.md",
                        0.05),)
        self.assertEqual(self.problems("adds about 39 lines\n", claims), [])
        self.assertEqual(len(self.problems("adds about 45 lines\n", claims)), 1)


class Timings(unittest.TestCase):
    """On every page a time or a size is dated, links the log, or is a limit."""

    def problems(self, text: str) -> list:
        return doc_facts.timing_problems("README.md", text)

    def test_an_undated_time_is_named(self):
        out = self.problems("# x\n\nA cold run takes 61.1 min and 150 MiB.\n")
        self.assertEqual([o.split(": ")[1] for o in out], ["'61.1 min' is a measurement without a date",
                                                          "'150 MiB' is a measurement without a date"])
        self.assertTrue(out[0].startswith("README.md:3:"))

    def test_dated_linked_or_a_limit_stays(self):
        self.assertEqual(self.problems(
            "A cold run took 61.1 min on 2026-12-07.\n\n"
            "The cache holds 150 MiB ([measured](measured.md)).\n\n"
            "Measured 2 December 2026: 19.3 s.\n\n"
            "A disk with under 1 MiB free, its timeout (900 s), `--timeout 7 s`,\n"
            "default 600 s.\n"), [])

    def test_a_table_row_takes_the_date_of_its_introduction(self):
        table = "| command | time |\n|---|---|\n| `make run` | 12.6 s |\n"
        self.assertEqual(self.problems("Measured 2026-12-07:\n\n" + table), [])
        self.assertEqual(len(self.problems("Measured today:\n\n" + table)), 1)

    def test_every_page_but_the_log(self):
        with tempfile.TemporaryDirectory() as d:
            repo = fake_repo(Path(d), {"docs/other.md": "It took 5 s.\n",
                                       "README.md": "It took 5 s.\n",
                                       "docs/measured.md": "It took 5 s.\n"})
            out = doc_facts.problems(repo, claims=())
        self.assertEqual(sorted(o.split(":")[0] for o in out), ["README.md", "docs/other.md"])


class Check(unittest.TestCase):
    def setUp(self):
        quiet = contextlib.redirect_stdout(io.StringIO())
        quiet.__enter__()
        self.addCleanup(quiet.__exit__, None, None, None)

    def test_the_row_fails_on_drift_and_names_the_figures(self):
        with tempfile.TemporaryDirectory() as d:
            repo = fake_repo(Path(d), {"docs/page.md": "3 of 13 failed\n"})
            t = Tally()
            doc_facts.check(t, repo, claims=())
            self.assertEqual((t.passed, t.failed), (0, 1))
            (repo / "docs/page.md").write_text("6 cells\n")
            doc_facts.check(t, repo, claims=())
            self.assertEqual((t.passed, t.failed), (1, 1))

    def test_an_unreadable_table_fails_the_row(self):
        with tempfile.TemporaryDirectory() as d:
            repo = fake_repo(Path(d), {})
            (repo / doc_facts.TEST).unlink()
            t = Tally()
            doc_facts.check(t, repo, claims=())
            self.assertEqual(t.failed, 1)

    def test_the_documents_agree_with_the_code(self):
        # What make check's row asks, on this repository's own documents.
        self.assertEqual(doc_facts.problems(), [])


if __name__ == "__main__":
    unittest.main()
