"""Tests of gupnm.check.docs_commands: what counts as a command, what it
expects, how a run is judged."""

import subprocess
import tempfile
import unittest
from pathlib import Path

from gupnm.check import docs_commands as dc

DOC = """# Title

Text.

    make run KERNEL=debian:6.1      # PASS (long-term pin XFAIL)
    make run KERNEL=debian:sid      # FAIL, no fix yet

    runner/gupnm-run run --kernel image:VMLINUZ:DIR
    K=$(ls -d /tmp)
    runner/gupnm-run run --kernel image:$K/vmlinux:$K \\
        --stress=
    # verdict: FAIL
    # exit 2, 1.0 s

- a list item

    for d in a b; do
        echo $d
    done
    mm_ksft_gup_test_sh_gup_null_mapping: pass
"""


class ParseTest(unittest.TestCase):
    def setUp(self):
        self.cmds = [c for start, lines in dc.blocks(DOC)
                     for c in dc.commands("x.md", start, lines)]

    def test_blocks_keep_line_numbers_across_blank_lines(self):
        where = {c.text.split()[0] + str(c.line) for c in self.cmds}
        self.assertIn("make5", where)
        self.assertIn("runner/gupnm-run8", where)
        self.assertIn("for17", where)

    def test_expectations_from_comments(self):
        by_line = {c.line: c for c in self.cmds}
        self.assertEqual(by_line[5].expect, 0, "PASS, XFAIL is not FAIL")
        self.assertEqual(by_line[6].expect, 1)
        self.assertEqual(by_line[10].expect, 2, "exit N on the next comment lines wins")
        self.assertIsNone(by_line[9].expect)

    def test_continuation_and_loops_are_one_command(self):
        by_line = {c.line: c for c in self.cmds}
        self.assertEqual(by_line[10].text,
                         "runner/gupnm-run run --kernel image:$K/vmlinux:$K --stress=")
        self.assertEqual(by_line[17].text.splitlines()[-1], "done")

    def test_kinds(self):
        kinds = {c.line: c.kind for c in self.cmds}
        self.assertEqual(kinds[8], "usage")
        self.assertEqual(kinds[9], "run")
        self.assertEqual(kinds[20], "output")
        self.assertEqual(dc._kind("/usr/bin/time make survey"), "long")
        self.assertEqual(dc._kind("make check"), "long")
        self.assertEqual(dc._kind("make run KERNEL=debian:7.3"), "run")
        self.assertEqual(dc._kind("insmod gup_test.ko"), "guest")
        self.assertEqual(dc._kind("make compare A=SPEC B=SPEC"), "usage")


class OnceTest(unittest.TestCase):
    def test_a_long_command_in_two_documents_runs_once(self):
        a = [dc.Command("README.md", 9, "make bench-fix", kind="long")]
        b = [dc.Command("docs/b.md", 3, "make bench-fix", kind="long"),
             dc.Command("docs/b.md", 4, "make run", kind="run")]
        plan = dc.once([a, b])
        self.assertEqual([c.kind for blk in plan for c in blk], ["long", "repeat", "run"])
        self.assertIn("README.md:9", dc.not_run(b[0])["why"])


class JudgeTest(unittest.TestCase):
    def cmd(self, text, expect=None):
        return dc.Command("x.md", 1, text, expect=expect)

    def test_make_counts_the_runner_code_it_prints(self):
        out = "make run: runner/gupnm-run exited 1 (make exits 2; ...)"
        self.assertIsNone(dc.judge(self.cmd("make run KERNEL=x", 1), 2, out))
        self.assertIn("exit 1, the document says 0",
                      dc.judge(self.cmd("make run KERNEL=x", 0), 2, out))

    def test_a_verdict_without_expectation_is_0_or_1(self):
        self.assertIsNone(dc.judge(self.cmd("make run"), 2,
                                   "runner/gupnm-run exited 1"))
        self.assertIsNotNone(dc.judge(self.cmd("make run"), 2,
                                      "runner/gupnm-run exited 3"))
        self.assertIsNotNone(dc.judge(self.cmd("runner/gupnm-run run --kernel x"), 2, ""))

    def test_other_commands_must_exit_0(self):
        self.assertIsNone(dc.judge(self.cmd("mkdir -p /tmp/x"), 0, ""))
        self.assertIsNotNone(dc.judge(self.cmd("make compare"), 2, ""))
        self.assertIsNotNone(dc.judge(self.cmd("git -C x am y"), 128, ""))


class RunBlockTest(unittest.TestCase):
    def test_a_block_shares_its_shell_and_each_command_is_judged(self):
        cmds = [dc.Command("x.md", 1, "K=$(echo hi)"),
                dc.Command("x.md", 2, "test \"$K\" = hi"),
                dc.Command("x.md", 3, "false"),
                dc.Command("x.md", 4, "mkdir /nonexistent/x", expect=2)]
        with tempfile.TemporaryDirectory() as d:
            rows = dc.run_block(cmds, Path(d), Path(d) / "log", {"PATH": "/usr/bin:/bin"})
        self.assertEqual([r["result"] for r in rows], ["pass", "pass", "fail", "fail"])
        self.assertEqual(rows[3]["why"], "exit 1, the document says 2")


class RealDocsTest(unittest.TestCase):
    """The real README and docs: every command-looking line is classified."""

    def test_every_block_line_is_a_command_or_output(self):
        for block in dc.collect():
            for c in block:
                self.assertIn(c.kind, ("run", "long", "usage", "guest"), c.where)

    def test_the_readme_two_commands_are_there(self):
        texts = [c.text for b in dc.collect() for c in b if c.doc == "README.md"]
        self.assertIn("make run", texts)
        self.assertIn("make check", texts)

    def test_list_runs_nothing(self):
        out = subprocess.run(["python3", "-m", "gupnm.check.docs_commands", "--list"],
                             cwd=dc.ROOT / "runner", capture_output=True, text=True,
                             check=True).stdout
        self.assertIn("README.md:", out)


if __name__ == "__main__":
    unittest.main()
