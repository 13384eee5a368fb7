"""Unit tests for gupnm.survey: which kernels a survey runs, how rows read."""
from __future__ import annotations

import argparse
import json
import unittest
from pathlib import Path
from unittest import mock

from gupnm import probe, survey
from gupnm.report import expect
from gupnm.prepare import debian
from gupnm.host import RunnerError, UsageError


def offer(rel, headers=True, flavour="amd64", suites=("trixie",)):
    return debian.Offered(rel, flavour, f"linux-image-{rel}-unsigned", rel + "-1",
                          list(suites), "unsigned", headers)


class NewestPerSeriesTest(unittest.TestCase):

    def test_one_per_series_and_flavour_newest_wins(self):
        offers = [offer("6.1.0-9-amd64"), offer("6.1.0-57-amd64"),
                  offer("6.12.117+deb13-amd64"), offer("6.12.118+deb13-amd64"),
                  offer("6.12.118+deb13-cloud-amd64", flavour="cloud-amd64"),
                  offer("7.1.13+deb13-amd64", headers=False)]
        got = survey.newest_per_series(offers, ["amd64"])
        self.assertEqual([o.release for o in got],
                         ["6.1.0-57-amd64", "6.12.118+deb13-amd64", "7.1.13+deb13-amd64"])
        got = survey.newest_per_series(offers, ["amd64", "cloud-amd64"])
        self.assertIn("6.12.118+deb13-cloud-amd64", [o.release for o in got])

    def test_row_from_summary(self):
        summary = {"verdict": "FAIL: shadow", "verdicts": [
            {"backing": "shadow", "access": "write", "fast": 0, "total": 512}],
            "bench_ratio": [{"threads": 1, "shadow_anon_ratio": 3.661}]}
        row = survey._row(offer("6.12.118+deb13-amd64"), summary, 1)
        self.assertEqual((row["shadow"], row["ratio"], row["exit_status"]),
                         ("0/512", 3.66, 1))

    def test_row_from_a_v4_summary(self):
        # v4 of the test names the row "driver"; the row's key stays "shadow".
        summary = {"verdict": "driver 0/512 fast", "verdicts": [
            {"backing": "driver", "access": "write", "fast": 0, "total": 512}],
            "cases": [{"name": "verdict_driver_write", "status": "fail"}]}
        row = survey._row(offer("6.12.118+deb13-amd64"), summary, 1)
        self.assertEqual((row["shadow"], row["table"], row["other_failures"]),
                         ("0/512", "driver ?-?", []))

    def test_row_table_from_real_runs(self):
        real = Path(__file__).resolve().parent / "data" / "real"
        want = {"6.1": "anon rwL, thp rwL, hugetlb rwL, memfd rwL, file rwL, driver rwL, "
                       "secretmem ---",
                "6.12": "anon rwL, thp rwL, hugetlb rwL, memfd rwL, file rw-, driver ---, "
                        "secretmem ---",
                "7.3": "anon rwL, thp rwL, hugetlb rwL, memfd rwL, file rw-, driver rw-, "
                       "secretmem ---"}
        for release, table in want.items():
            with self.subTest(release):
                s = json.loads((real / f"table-debian-{release}.summary.json").read_text())
                row = survey._row(offer("6.12.118+deb13-amd64"), s, s["exit_status"])
                self.assertEqual(row["table"], table)
                self.assertEqual(row["other_failures"], [])
                self.assertIn(table, survey.table([survey._judged(row)]))

    def test_probe_row_table_from_real_runs(self):
        # The probe's table (-t) on Debian kernels booted by the runner, the
        # headerless 6.19 and 7.1 among them: the module's table where both
        # ran; 6.1's io_uring pins under the mmap_lock, so its long-term
        # column is not judged (?) and the row says the probe cannot see it.
        data = Path(__file__).resolve().parent / "data" / "probe"
        bug = ("anon rwL, thp rwL, hugetlb rwL, memfd rwL, file rw-, driver ---, "
               "secretmem ---")
        want = {"debian-6.1.0-57": "anon rw?, thp rw?, hugetlb rw?, memfd rw?, file rw?, "
                                   "driver rw?, secretmem --?",
                "debian-6.12.118": bug, "debian-6.19.14": bug, "debian-7.1.13": bug,
                "debian-7.3.4": "anon rwL, thp rwL, hugetlb rwL, memfd rwL, file rw-, "
                                "driver rw-, secretmem ---"}
        for name, table in want.items():
            with self.subTest(name):
                res = probe.parse((data / f"{name}-table.txt").read_text())
                self.assertEqual(res.errors, [])
                row = survey._probe_row(offer("7.1.13+deb13-amd64", headers=False).to_json(), res,
                                        Path("/r/p"))
                self.assertEqual(row["table"], table)
                self.assertEqual(row["other_failures"], [])
                self.assertEqual(probe.cannot_see(res) is None, "6.1.0" not in name)

    def test_probe_row_a_wrong_fix_is_an_other_failure(self):
        # 7.3's run with the long-term pin of a shadow page gone fast, as
        # the wrong fix does (the module's :wrongfix): not the bug's cells.
        data = Path(__file__).resolve().parent / "data" / "probe"
        text = (data / "debian-7.3.4-table.txt").read_text()
        text = text.replace("# table shadow longterm_write: 0/16", "# table shadow "
                            "longterm_write: 16/16").replace(
            "ok 26 table_shadow_longterm_write", "not ok 26 table_shadow_longterm_write")
        res = probe.parse(text + "GUPNM-PROBE-EXIT: 1\n")
        self.assertEqual(res.errors, [])
        row = survey._probe_row(offer("7.3.4+deb13-amd64").to_json(), res, Path("/r/p"))
        self.assertIn("driver rwL", row["table"])      # the probe's "shadow" row
        self.assertEqual(row["other_failures"], ["table_shadow_longterm_write"])
        self.assertIs(row["bug_present"], False)
        self.assertEqual(row["exit_status"], probe.EXIT_FAIL)

    def test_table_marks_partial_and_unjudged_cells(self):
        s = {"verdicts": [{"backing": "thp", "access": "read", "fast": 3, "total": 512},
                          {"backing": "thp", "access": "write", "fast": 512, "total": 512}],
             "cases": [{"name": "verdict_thp_longterm_write", "status": "fail"}]}
        row = survey._row(offer("6.12.118+deb13-amd64"), s, 1)
        self.assertEqual(row["table"], "thp ~w?")
        self.assertEqual(row["other_failures"], ["verdict_thp_longterm_write"])
        self.assertIsNone(survey.fast_table({}))

    def test_flavours_option(self):
        self.assertEqual(survey._flavours("amd64, cloud-amd64"), ["amd64", "cloud-amd64"])
        with self.assertRaises(UsageError):
            survey._flavours(" , ")


def probe_result(slow: bool, ratio=1.8):
    res = probe.ProbeResult(exit_status=1 if slow else 0, plan=1)
    res.verdicts = {"packet_tx_ring": {"slow": 8 if slow else 0, "pages": 8},
                    "bpf_ringbuf": {"slow": 2 if slow else 0, "pages": 2}}
    res.cost = {"producer": "packet_tx_ring", "ratio": ratio, "rounds": 9,
                "ratio_quartiles": [1.7, 1.9], "ns_per_call": 1, "control_ns_per_call": 1}
    return res


class Outcome:
    def __init__(self, code, summary):
        self.exit_code, self.summary, self.outdir = code, summary, Path("/r/m")


BUG = {"verdict": "shadow 0/512 fast", "bug_present": True, "verdicts": [
    {"backing": "shadow", "access": "write", "fast": 0, "total": 512}],
    "bench_ratio": [{"shadow_anon_ratio": 3.1}], "problems": []}


class SurveyOneTest(unittest.TestCase):
    """Every kernel gets a row with a method: the module where it judged
    the kernel, else the probe, saying why."""

    def never(self, o):
        raise AssertionError(f"not expected for {o.release}")

    def test_headers_and_a_verdict_is_the_module(self):
        row = survey.survey_one(offer("6.12.118+deb13-amd64"),
                                lambda o: Outcome(1, BUG), self.never)
        row = survey._judged(row)
        self.assertEqual((row["method"], row["bug_present"], row["evidence"],
                          row["exit_status"], row["agrees"]),
                         ("module", True, "driver 0/512 fast", 1, True))

    def test_no_headers_is_the_probe_with_its_reason(self):
        row = survey.survey_one(offer("7.1.13+deb13-amd64", headers=False), self.never,
                                lambda o: (probe_result(True), Path("/r/p")))
        row = survey._judged(row)
        self.assertEqual((row["method"], row["bug_present"], row["evidence"],
                          row["ratio"], row["agrees"]),
                         ("probe", True, "2/2 producers slow", 1.8, True))
        self.assertIn("no headers in the archive", row["method_reason"])

    def test_module_that_cannot_be_built_falls_back_to_the_probe(self):
        def fail(o):
            raise RunnerError("aarch64-linux-gnu-gcc-14 not found: the kernel...\nmore")
        row = survey.survey_one(offer("7.3.4+deb13-arm64", flavour="arm64"), fail,
                                lambda o: (probe_result(False, 0.9), Path("/r/p")))
        self.assertEqual((row["method"], row["bug_present"]), ("probe", False))
        self.assertEqual(row["method_reason"], "probe: the module could not be used: "
                         "aarch64-linux-gnu-gcc-14 not found: the kernel...")

    def test_a_download_failure_keeps_apts_reason(self):
        def fail(o):
            raise RunnerError("apt-get download linux-kbuild-6.1=6.1.170-3 failed (exit 100):\n"
                              "E: Version '6.1.170-3' for 'linux-kbuild-6.1' was not found")
        row = survey.survey_one(offer("6.1.0-47-amd64"), fail,
                                lambda o: (probe_result(False, 0.9), Path("/r/p")))
        self.assertEqual(row["method_reason"], "probe: the module could not be used: "
                         "apt-get download linux-kbuild-6.1=6.1.170-3 failed (exit 100): "
                         "E: Version '6.1.170-3' for 'linux-kbuild-6.1' was not found")

    def test_module_run_without_verdict_falls_back_and_keeps_its_code(self):
        dead = {"problems": ["the guest died"], "bug_present": None, "verdicts": []}
        row = survey.survey_one(offer("6.12.118+deb13-amd64"), lambda o: Outcome(3, dead),
                                lambda o: (probe_result(True), Path("/r/p")))
        self.assertEqual((row["method"], row["module_exit_status"]), ("probe", 3))
        self.assertIn("exit 3: the guest died", row["method_reason"])

    def test_module_failure_without_driver_verdict_falls_back(self):
        other = {"problems": [], "bug_present": None, "verdicts": [],
                 "verdict": "FAIL: other failure"}
        row = survey.survey_one(offer("6.12.118+deb13-amd64"), lambda o: Outcome(1, other),
                                lambda o: (probe_result(True), Path("/r/p")))
        self.assertEqual((row["method"], row["module_exit_status"], row["bug_present"]),
                         ("probe", 1, True))
        self.assertIn("no driver verdict: FAIL: other failure", row["method_reason"])

    def test_probe_failure_is_a_row_without_verdict(self):
        def fail(o):
            raise RunnerError("apt-get download failed")
        row = survey.survey_one(offer("7.1.13+deb13-amd64", headers=False), self.never, fail)
        self.assertEqual((row["exit_status"], row["bug_present"]), (3, None))
        self.assertEqual(survey.exit_status([survey._judged(row)]), 3)


class ExitStatusTest(unittest.TestCase):
    def row(self, release, bug, exp=None):
        return survey._judged({"release": release, "bug_present": bug, "verdict": ""}, exp)

    def test_findings_are_not_failures(self):
        self.assertEqual(survey.exit_status([self.row("6.12.118+deb12-amd64", True),
                                             self.row("7.3.4+deb13-amd64", False)]), 0)

    def test_mismatch_is_1_and_marked(self):
        rows = [self.row("6.1.0-57-amd64", True)]
        self.assertEqual(survey.exit_status(rows), 1)
        self.assertIn("MISMATCH: expected no bug, no rule: pass", survey._word(rows[0]))

    def test_no_verdict_is_3(self):
        self.assertEqual(survey.exit_status([self.row("6.1.0-57-amd64", None)]), 3)

    def test_expectations_come_from_the_file(self):
        # The day Debian backports the fix to 6.12, a line says so: no code.
        debian_txt = expect.default()
        fixed = expect.Expectations("x.txt", debian_txt.rules + expect.parse(
            "6.12.125..6.12  verdict_driver_*  pass  # backported", "fixed.txt"))
        row = self.row("6.12.125+deb13-amd64", False, fixed)
        self.assertEqual((row["agrees"], row["expected_by"]), (True, "fixed.txt:1"))
        row = self.row("6.12.125+deb13-amd64", True, fixed)
        self.assertIn("MISMATCH: expected no bug, fixed.txt:1", survey._word(row))
        row = self.row("6.12.118+deb13-amd64", True, fixed)
        rule = expect.expectation(debian_txt, row["release"], "verdict_driver_read")[1]
        self.assertEqual((row["agrees"], row["expected_by"]), (True, rule.where))
        self.assertTrue(rule.where.startswith("runner/expectations/debian.txt:"))


class PickTest(unittest.TestCase):
    OFFERS = [offer("6.1.0-56-amd64"), offer("6.1.0-57-amd64"),
              offer("7.1.13+deb13-amd64", headers=False),
              offer("7.1.13+deb13-cloud-amd64", flavour="cloud-amd64")]

    def args(self, **kw):
        base = dict(arch="amd64", flavours=None, series="", newest=False)
        base.update(kw)
        return argparse.Namespace(**base)

    def test_every_kernel_of_the_plain_flavour(self):
        with mock.patch.object(debian, "catalogue", return_value=self.OFFERS):
            got = [o.release for o in survey.pick(self.args())]
        self.assertEqual(got, ["6.1.0-56-amd64", "6.1.0-57-amd64", "7.1.13+deb13-amd64"])

    def test_series_and_newest(self):
        with mock.patch.object(debian, "catalogue", return_value=self.OFFERS):
            got = [o.release for o in survey.pick(self.args(series="6.1", newest=True))]
            self.assertEqual(got, ["6.1.0-57-amd64"])
            with self.assertRaisesRegex(UsageError, "no amd64 kernel matches"):
                survey.pick(self.args(series="5.10"))


if __name__ == "__main__":
    unittest.main()
