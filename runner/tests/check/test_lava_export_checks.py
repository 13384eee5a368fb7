"""make check's exported-job rows: which runs export, what counts as the
same verdict, the deeper device, the served folder."""
import shutil
import tempfile
import unittest
import urllib.request
from pathlib import Path
from unittest import mock

from gupnm.check import lava_export_checks as lec
from gupnm.ci import lava, lava_device


def _run(cases, rc=0):
    return lava.LavaRun("debian-module", "debian:7.3", "7.3", [
        lava.Case(d, c, r) for d, c, r in cases], rc, 1.0, Path("/nonexistent"))


PASS = [("gup_null_mapping", "verdict_driver_read", "pass"),
        ("gup_null_mapping", "verdict_anon_read", "pass"), ("lava", "job", "pass")]


class Rows(unittest.TestCase):
    def test_only_the_named_rows_export(self):
        self.assertIsNone(lec.plan("debian-module", "debian:6.12"))
        self.assertIsNone(lec.plan("source-kselftest", "source:debian-7.3:nofix"))

    def test_debian_row_plans_an_http_export(self):
        p = lec.plan("debian-module", "debian:7.3")
        try:
            self.assertRegex(p.export.base_url, r"^http://127\.0\.0\.1:\d+$")
            self.assertIsNone(p.byo)
            self.assertFalse(p.deep)
        finally:
            p.tmp.rmdir()

    def test_lab_row_takes_the_lab_built_artifacts(self):
        with mock.patch.object(lec, "lab_byo", return_value="byo") as byo:
            p = lec.plan("source-kselftest", lec.LAB_SPEC)
        p.tmp.rmdir()
        byo.assert_called_once_with(lec.LAB_SPEC)
        self.assertEqual((p.byo, p.deep), ("byo", True))


class CheckLavaHook(unittest.TestCase):
    """kselftest_checks.check_lava: the exporting rows pass their export
    (and the lab row the lab-built artifacts) to the run, then add the
    exported job's row; the others export nothing."""

    def rows(self, job, spec):
        from gupnm.check import kselftest_checks
        t = mock.Mock()
        r = _run(PASS)
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(lec, "lab_byo", return_value="byo"), \
                mock.patch.object(lec, "twin") as twin, \
                mock.patch.object(kselftest_checks, "_outdir", return_value=Path(d)), \
                mock.patch.object(lava, "run_again_if_died",
                                  return_value=(r, [])) as run:
            kselftest_checks.check_lava(t, job, spec, False)
        return run.call_args.kwargs, twin, t

    def test_lab_row_exports_on_the_lab_built_artifacts(self):
        kw, twin, t = self.rows("source-kselftest", lec.LAB_SPEC)
        self.addCleanup(shutil.rmtree, kw["export"].dir.parent, True)
        self.assertEqual(kw["byo"], "byo")
        self.assertRegex(kw["export"].base_url, r"^http://127\.0\.0\.1:\d+$")
        twin.assert_called_once()
        self.assertIn("--kernel", t.record.call_args_list[0].args[0])

    def test_other_rows_export_nothing(self):
        kw, twin, _ = self.rows("debian-module", "debian:6.12")
        self.assertEqual((kw["export"], kw["byo"]), (None, None))
        twin.assert_not_called()


class SameVerdict(unittest.TestCase):
    def test_same(self):
        self.assertEqual(lec._differences(_run(PASS), _run(PASS)), [])

    def test_a_different_case_or_verdict_is_named(self):
        bug = [("gup_null_mapping", "verdict_driver_read", "fail")] + PASS[1:]
        bad = lec._differences(_run(PASS), _run(bug))
        self.assertTrue(any(b.startswith("exit 1 ") for b in bad), bad)
        self.assertIn("the exported job's cases differ from the runner's own", bad)

    def test_a_job_error_of_the_export_is_not_the_same(self):
        bad = lec._differences(_run(PASS), _run(PASS[:2] + [("lava", "job", "fail")], rc=1))
        self.assertTrue(any(b.startswith("exit 3") for b in bad), bad)

    def test_no_results_at_all_is_not_agreement(self):
        self.assertIn("no case of ours recorded", lec._differences(_run([]), _run([])))


class Served(unittest.TestCase):
    def test_serves_the_folder_and_stops(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "kernel").write_text("k")
            port = lec._port()
            s = lec.Served(Path(d), port)
            try:
                got = urllib.request.urlopen(f"http://127.0.0.1:{port}/kernel").read()
            finally:
                s.stop()
            self.assertEqual(got, b"k")
            self.assertIsNotNone(s.proc.returncode)


@unittest.skipUnless(lava.available() is None and lava_device.cached_types(),
                     "lava-dispatcher or lava-server's cached device types missing")
class DeepDevice(unittest.TestCase):
    def test_results_dir_deeper_than_lavas(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(lava_device, "device_types", return_value=lava_device.cached_types()):
            out = lec._deep_device(lava.JOBS["debian-module"], Path(d))
            self.assertIn(f"lava_test_results_dir: {lec.DEEP_RESULTS}", out.read_text())


if __name__ == "__main__":
    unittest.main()
