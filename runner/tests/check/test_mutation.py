"""Unit tests for gupnm.check.mutation (the mutants of gup_fast_folio_allowed())."""

import io
import re
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.check import matrix, mutation  # noqa: E402
from gupnm.prepare import source  # noqa: E402
from gupnm.host import UsageError  # noqa: E402


def summary(exit_status, failed=()):
    cases = [{"name": f"verdict_{b}_{c}", "status": "fail"
              if f"verdict_{b}_{c}" in failed else "pass"}
             for b in matrix.BACKINGS for c in matrix.CASES]
    return {"exit_status": exit_status, "cases": cases}


class MutantsTest(unittest.TestCase):
    def setUp(self):
        self.every = mutation.mutants()

    def test_one_per_decision_each_caught_by_real_cells(self):
        names = {m.name for m in self.every}
        self.assertEqual(names, {
            "longterm-write-unchecked", "secretmem-unchecked", "unchecked-refused",
            "hugetlb-refused", "null-mapping-refused", "null-mapping-allowed",
            "anon-refused", "secretmem-allowed", "shmem-refused", "file-allowed"})
        cells = {f"verdict_{b}_{c}" for b in matrix.BACKINGS for c in matrix.CASES}
        for m in self.every:
            with self.subTest(m.name):
                self.assertTrue(m.decision)
                self.assertTrue(m.caught_by)
                self.assertLessEqual(set(m.caught_by), cells)

    def test_each_is_one_small_edit_of_gup_fast_folio_allowed(self):
        for m in self.every:
            with self.subTest(m.name):
                text = (source.MUTANTS / f"{m.name}.diff").read_text()
                self.assertEqual(text.count("--- a/mm/gup.c"), 1)
                self.assertIn("gup_fast_folio_allowed", text)
                minus = re.findall(r"^-(?!--)", text, re.M)
                plus = re.findall(r"^\+(?!\+\+)", text, re.M)
                self.assertEqual((len(minus), len(plus)), (1, 1))

    def test_a_header_without_its_lines_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "x.diff").write_text("--- a/mm/gup.c\n")
            with self.assertRaisesRegex(ValueError, "Caught by"):
                mutation.mutants(Path(tmp))


class JudgeTest(unittest.TestCase):
    def setUp(self):
        self.m = next(m for m in mutation.mutants() if m.name == "anon-refused")

    def test_caught_in_its_cells(self):
        ok, _ = mutation.judge(summary(1, self.m.caught_by), self.m)
        self.assertTrue(ok)

    def test_failing_elsewhere_is_not_catching_it(self):
        ok, detail = mutation.judge(summary(1, ["verdict_driver_read"]), self.m)
        self.assertFalse(ok)
        self.assertIn("not failed: verdict_anon_read", detail)

    def test_the_driver_row_under_its_old_name(self):
        # A summary of the test before v4 names the row "shadow".
        m = next(m for m in mutation.mutants() if m.name == "null-mapping-refused")
        self.assertEqual(m.caught_by, ["verdict_driver_read", "verdict_driver_write"])
        old = summary(1, m.caught_by)
        for c in old["cases"]:
            c["name"] = c["name"].replace("verdict_driver_", "verdict_shadow_")
        self.assertTrue(mutation.judge(old, m)[0])

    def test_a_pass_misses_it(self):
        self.assertFalse(mutation.judge(summary(0), self.m)[0])

    def test_unmutated(self):
        self.assertTrue(mutation.judge(summary(0), None)[0])
        self.assertFalse(mutation.judge(summary(1, ["verdict_file_read"]), None)[0])
        self.assertFalse(mutation.judge(summary(1), None)[0])


class CheckTest(unittest.TestCase):
    """check() with matrix.boot mocked: a boot per mutant (and the
    unmutated tree unless given), each labelled with its config variant."""

    def setUp(self):
        self.every = mutation.mutants()

    def check(self, unmutated=None, missed=(), **kw):
        boots, records = [], []

        def fake_boot(t, label, spec, args, outdir, run_one):
            boots.append((label, spec, args.config, args.stress, args.test_args,
                          outdir.parent.name, outdir.name))
            name = spec.rsplit(":mutant-", 1)[-1]
            m = next((m for m in self.every if m.name == name), None)
            caught = () if m is None or name in missed else m.caught_by
            return SimpleNamespace(summary=summary(1 if m else 0, caught))

        t = SimpleNamespace(record=lambda name, ok, detail="": records.append((name, ok)))
        with mock.patch.object(matrix, "boot", side_effect=fake_boot), \
                redirect_stdout(io.StringIO()) as out:
            mutation.check(t, unmutated, **kw)
        return boots, records, out.getvalue()

    def test_notrace_labels(self):
        boots, records, out = self.check(config="notrace")
        where = " (--config notrace)"
        self.assertEqual([b[0] for b in boots],
                         [f"mutation: unmutated{where}"]
                         + [f"mutation {m.name}{where}" for m in self.every])
        self.assertEqual([b[1] for b in boots], [f"{mutation.SPEC}:all"]
                         + [f"{mutation.SPEC}:mutant-{m.name}" for m in self.every])
        self.assertEqual({b[2:5] for b in boots}, {("notrace", None, mutation.TEST_ARGS)})
        self.assertEqual(len({b[5] for b in boots}), 1)
        self.assertTrue(boots[0][5].startswith("check-mutants-notrace-"))
        self.assertEqual([b[6] for b in boots], ["all"] + [m.name for m in self.every])
        self.assertEqual(records, [
            (f"mutation: the test passes on {mutation.SPEC}:all{where}, unmutated", True)] + [
            (f"mutation {m.name}{where} ({m.decision}): the test fails, in "
             + ", ".join(m.caught_by), True) for m in self.every])
        self.assertIn(f"# mutation score{where}: {len(self.every)} of {len(self.every)} "
                      "mutants", out)

    def test_default_labels_name_no_config(self):
        boots, records, out = self.check()
        self.assertEqual({b[2] for b in boots}, {"default"})
        self.assertTrue(boots[0][5].startswith("check-mutants-default-"))
        self.assertEqual(boots[0][0], "mutation: unmutated")
        self.assertFalse([n for n, _ in records if "--config" in n])
        self.assertIn(f"# mutation score: {len(self.every)} of", out)

    def test_an_unmutated_run_given_is_not_booted_again(self):
        boots, records, _ = self.check(summary(0), config="notrace")
        self.assertEqual([b[1] for b in boots],
                         [f"{mutation.SPEC}:mutant-{m.name}" for m in self.every])
        self.assertEqual(records[0], (f"mutation: the test passes on {mutation.SPEC}:all "
                                      "(--config notrace), unmutated", True))
        # The matrix's row failed: not a pass to build the score on.
        _, records, _ = self.check(summary(1, ["verdict_anon_read"]), config="notrace")
        self.assertFalse(records[0][1])

    def test_a_mutant_missed_is_named(self):
        _, records, out = self.check(missed=("anon-refused",), config="notrace")
        m = next(m for m in self.every if m.name == "anon-refused")
        self.assertEqual([n for n, ok in records if not ok],
                         [f"mutation anon-refused (--config notrace) ({m.decision}): the test "
                          "fails, in " + ", ".join(m.caught_by)])
        self.assertIn(f"score (--config notrace): {len(self.every) - 1} of", out)


class SelectionTest(unittest.TestCase):
    def test_mutant_selection(self):
        self.assertEqual(source.mutant_of("mutant-anon-refused"),
                         source.MUTANTS / "anon-refused.diff")
        self.assertIsNone(source.mutant_of("all"))
        with self.assertRaisesRegex(UsageError, "no mutant 'nope'.*anon-refused"):
            source.mutant_of("mutant-nope")

    def test_a_mutant_is_the_whole_series(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            (d / "series").write_text("0001-a.patch\n0002-b.patch\n")
            self.assertEqual(source.series("mutant-anon-refused", d),
                             source.series("all", d))


if __name__ == "__main__":
    unittest.main()
