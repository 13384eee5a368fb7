"""Tests of gupnm.check.docs_short: which commands boot a kernel, their short
forms, where each runs (make check's budget), how a run is judged."""

import re
import tempfile
import time
import unittest
from pathlib import Path

from gupnm.check import docs_commands as dc
from gupnm.check import docs_short as ds
from gupnm.check.tally import Tally


def cmd(text, kind="run", comment=""):
    c = dc.Command("README.md", 1, text, comment, kind)
    c.expect = dc.expectation(comment)
    return c


class BootsTest(unittest.TestCase):
    def test_what_boots(self):
        for text in ("make run", "make run KERNEL=debian:6.1", "make compare REPEAT=3",
                     "make repro-ksm", "/usr/bin/time make survey",
                     "runner/gupnm-run run --kernel debian:7.3",
                     "runner/gupnm-run compare --a debian:6.1 --b debian:7.3"):
            with self.subTest(text=text):
                self.assertTrue(ds.boots(cmd(text)))

    def test_what_does_not(self):
        # The checks are checks of their own; the host run boots nothing;
        # usage lines and guest steps are docs_commands' "not run".
        for c in (cmd("make check", "long"), cmd("make check-kernelci-arm64"),
                  cmd("runner/gupnm-run run --kernel host"), cmd("runner/gupnm-run kernels"),
                  cmd("mkdir -p /tmp/x"), cmd("runner/gupnm-run run --kernel SPEC", "usage"),
                  cmd("cd runner && python3 -m gupnm.check.kernelci_checks --budget 4")):
            with self.subTest(text=c.text):
                self.assertFalse(ds.boots(c))


class ShortenTest(unittest.TestCase):
    def test_command_sizes_and_repeats(self):
        self.assertEqual(ds.short_command("gup_test -HL -m 512 -n 512 -r 5"),
                         "gup_test -HL -m 32 -n 512 -r 2")
        self.assertEqual(ds.short_command("gup_test -u -m 1024 -n 1 -r 20"),
                         "gup_test -u -m 32 -n 1 -r 2")
        self.assertEqual(ds.short_command("ksm_tests -D -s 256"), "ksm_tests -D -s 32")
        self.assertEqual(ds.short_command("gup_test -a -m 8"), "gup_test -a -m 8")

    def test_test_args(self):
        self.assertEqual(ds.short_test_args("-r 100 -i 1 1 2 4 8"), "-r 5 -i 1 1 2")
        self.assertEqual(ds.short_test_args("-c 512 1 2"), "-c 512 1 2")
        self.assertEqual(ds.short_test_args("-p 1024 -r 3"), "-p 1024 -r 3")

    def test_a_whole_line(self):
        line = ("python3 runner/gupnm-run compare --a source:debian-6.12 --b "
                "source:debian-7.3 --repeat 5 --memory 1536 --command "
                "'gup_test -HL -m 512 -n 512 -r 5' --test-args \"-r 100 -i 1 1 2 4 8\"")
        self.assertEqual(ds.shorten(line), (
            "python3 runner/gupnm-run compare --a source:debian-6.12 --b "
            "source:debian-7.3 --repeat 1 --memory 1536 --command "
            "'gup_test -HL -m 32 -n 512 -r 2' --test-args \"-r 5 -i 1 1 2\""))

    def test_survey_takes_one_series(self):
        self.assertIn("survey --series 6.1 --newest --arch amd64",
                      ds.shorten("python3 runner/gupnm-run survey --arch amd64"))

    def test_make_expands_with_make_n(self):
        # The real Makefile: each recipe line in a subshell, stopping at the
        # first that fails, as make does.
        text = ds.expand("make repro-longterm")
        lines = ds.one_line(text).split(" || exit $? ")
        self.assertEqual(len(lines), 2)
        for line in lines:
            self.assertRegex(line, r"^\( python3 runner/gupnm-run compare .* \)( \|\| exit \$\?)?$")
        self.assertEqual(ds.expand("runner/gupnm-run run --kernel x"),
                         "runner/gupnm-run run --kernel x")
        with self.assertRaises(ValueError):
            ds.expand("make no-such-target")


class PlacementTest(unittest.TestCase):
    def test_make_check_runs_the_amd64_forms(self):
        # Issue 33: a change that breaks any of them fails CI, --command,
        # --config selftests, other kernels and the survey included.
        for line in ("runner/gupnm-run run --kernel debian:6.1",
                     "runner/gupnm-run run --kernel debian:sid",
                     "runner/gupnm-run compare --a source:debian-6.12 --b source:debian-7.3 "
                     "--command 'gup_test -u -m 32'",
                     "runner/gupnm-run compare --a source:debian-6.12:nofix --b "
                     "source:debian-6.12:all --config selftests",
                     "for a in amd64 arm64; do runner/gupnm-run survey --series 6.1 "
                     "--newest --arch $a; done"):
            with self.subTest(line=line):
                self.assertEqual(ds.placement(line)[0], "check")

    def test_unpacked_packages_go_to_make_check_docs_short(self):
        # Issue 47: make check's own-image rows boot image: and debs: from
        # the same packages; the blocks' unpacking is check-docs-short's.
        for line in ("runner/gupnm-run run --kernel image:$B/vmlinux:$B",
                     "runner/gupnm-run run --kernel debs:/tmp/debsdir"):
            with self.subTest(line=line):
                where, said = ds.placement(line)
                self.assertEqual(where, "docs")
                self.assertIn("own-image", said)

    def test_arm64_forms_go_to_make_check_arm64(self):
        for line in ("runner/gupnm-run run --arch arm64 --kernel source:debian-6.12:nofix",
                     "runner/gupnm-run run --arch arm64 --kernel debian:6.1"):
            with self.subTest(line=line):
                where, said = ds.placement(line)
                self.assertEqual(where, "arm64")
                self.assertIn("check-arm64", said)


class RealDocsTest(unittest.TestCase):
    def setUp(self):
        self.forms = ds.short_forms(dc.collect(ds.ROOT))

    def test_every_reproduction_has_a_short_form_in_make_check(self):
        repro = {f.cmd.text: f for f in self.forms if "repro-" in f.cmd.text}
        self.assertEqual(set(repro), {"make repro-longterm", "make repro-gup-fast",
                                      "make repro-ksm"})
        for f in repro.values():
            self.assertEqual(f.where, "check")
            self.assertNotRegex(f.text, r"--repeat [^1]|-m (?!32\b)\d+|-s (?!32\b)\d+")

    def test_every_document_command_is_in_one_check(self):
        where = {f.where for f in self.forms}
        self.assertEqual(where, {"check", "arm64", "docs"})
        self.assertIn("make run", [f.cmd.text for f in self.forms if f.where == "check"])
        for f in self.forms:
            self.assertEqual(f.where == "arm64", "--arch arm64" in f.text, f.text)
            self.assertEqual(f.where == "docs", f.cmd.where.startswith("docs/own-kernel.md"),
                             f.text)

    def test_one_per_short_form(self):
        texts = [f.text for f in self.forms]
        self.assertEqual(len(texts), len(set(texts)))

    def test_a_block_keeps_its_setup_lines(self):
        f = next(f for f in self.forms if "image:$B/vmlinux:$B" in f.text)
        self.assertEqual([s.text.split("=")[0] for s in f.setup], ["B"])


class RunTest(unittest.TestCase):
    def test_exit_2_where_a_figure_is_promised_fails(self):
        s = ds.Short(cmd("make compare"), "exit 2", [], "check", "")
        with tempfile.TemporaryDirectory() as tmp:
            t = Tally()
            ds.run(t, [s], Path(tmp))
        self.assertEqual((t.passed, t.failed), (0, 1))

    def test_the_documents_expectation(self):
        s = ds.Short(cmd("make run KERNEL=debian:sid", comment="FAIL"),
                     "echo 'make run: runner/gupnm-run exited 1' >&2; exit 1", [], "check", "")
        with tempfile.TemporaryDirectory() as tmp:
            t = Tally()
            ds.run(t, [s], Path(tmp))
        self.assertEqual((t.passed, t.failed), (1, 0))

    def test_setup_lines_share_the_shell(self):
        s = ds.Short(cmd("runner/gupnm-run run --kernel image:$B/vmlinux:$B"),
                     'bash -c \'test "$B" = /x\'', [cmd("B=/x")], "check", "")
        with tempfile.TemporaryDirectory() as tmp:
            rc, _, _ = ds.run_one(s, Path(tmp) / "log", 30)
        self.assertEqual(rc, 0)

    def test_a_timeout_kills_the_whole_process_group(self):
        with tempfile.TemporaryDirectory() as tmp:
            pidfile = Path(tmp) / "pid"
            s = ds.Short(cmd("make run"), f"sleep 300 & echo $! >{pidfile}; wait", [],
                         "check", "")
            started = time.monotonic()
            rc, _, _ = ds.run_one(s, Path(tmp) / "log", 1)
            self.assertIsNone(rc)
            self.assertLess(time.monotonic() - started, 30)
            child = Path(f"/proc/{int(pidfile.read_text())}/stat")
            time.sleep(0.2)
            # Gone, or a zombie its new parent has not reaped yet.
            self.assertTrue(not child.exists() or child.read_text().split()[2] == "Z")
            self.assertRegex(ds.verdict(s, rc, "", 1), re.escape("timed out after 1 s"))


if __name__ == "__main__":
    unittest.main()
