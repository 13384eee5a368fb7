"""Unit tests for gupnm.command (--command: what a selftests/mm program needs)."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import command  # noqa: E402
from gupnm.host import UsageError  # noqa: E402


class ParseTest(unittest.TestCase):
    def test_program_and_words(self):
        c = command.parse("./gup_test -HL -m 256 -n 512")
        self.assertEqual(c.program, "gup_test")
        self.assertEqual(c.args, ["-HL", "-m", "256", "-n", "512"])
        self.assertEqual(c.guest, "./gup_test -HL -m 256 -n 512")

    def test_refused(self):
        for bad in ("", "   ", "../gup_test", "/bin/sh -c x", "gup_test 'a b'",
                    "gup_test ;reboot", "gup_test $(x)", "gup_test 'unclosed"):
            with self.subTest(bad=bad), self.assertRaises(UsageError):
                command.parse(bad)


class NeedsTest(unittest.TestCase):
    def test_options_clustered_and_separate(self):
        c = command.parse("gup_test -HLm256 -n 512 -r 3")
        self.assertEqual(command.options(c),
                         {"H": "", "L": "", "m": "256", "n": "512", "r": "3"})

    def test_gup_test_hugetlb(self):
        n = command.needs(command.parse("gup_test -HL -m 255 -n 512"))
        self.assertEqual([o for o, _ in n.config], ["CONFIG_GUP_TEST", "CONFIG_HUGETLBFS"])
        self.assertEqual(n.append, ["hugepages=128"])      # 255 MiB in 2 MiB pages
        self.assertEqual(n.memory_mb, command.BASE_MEMORY_MB + 255)

    def test_gup_test_default_size_and_thp(self):
        n = command.needs(command.parse("gup_test -a -t"))
        self.assertIn("CONFIG_TRANSPARENT_HUGEPAGE", [o for o, _ in n.config])
        self.assertEqual(n.memory_mb, command.BASE_MEMORY_MB + 128)
        self.assertEqual(n.append, [])

    def test_ksm(self):
        n = command.needs(command.parse("ksm_tests -D -s 256"))
        self.assertEqual([o for o, _ in n.config], ["CONFIG_KSM"])
        self.assertEqual(n.memory_mb, command.BASE_MEMORY_MB + 256)

    def test_bad_size(self):
        with self.assertRaises(UsageError):
            command.needs(command.parse("gup_test -m lots"))

    def test_unknown_program_needs_nothing(self):
        n = command.needs(command.parse("cow"))
        self.assertEqual((n.config, n.append), ([], []))


class KernelTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.config = Path(self.tmp.name) / ".config"

    def tearDown(self):
        self.tmp.cleanup()

    def test_missing_option_named(self):
        self.config.write_text("CONFIG_HUGETLBFS=y\n# CONFIG_GUP_TEST is not set\n")
        n = command.needs(command.parse("gup_test -H -m 64"))
        with self.assertRaisesRegex(UsageError, "CONFIG_GUP_TEST.*source:debian-6.12"):
            command.check_kernel(n, self.config, "6.12.117+deb12-amd64", "debian:6.12")

    def test_present(self):
        self.config.write_text("CONFIG_GUP_TEST=y\nCONFIG_HUGETLBFS=y\n")
        n = command.needs(command.parse("gup_test -H -m 64"))
        command.check_kernel(n, self.config, "6.12", "source:debian-6.12")

    def test_no_config(self):
        n = command.needs(command.parse("ksm_tests -D"))
        with self.assertRaisesRegex(UsageError, "not available"):
            command.check_kernel(n, None, "x", "image:a:b")

    def test_memory(self):
        n = command.needs(command.parse("ksm_tests -D -s 2048"))
        with self.assertRaisesRegex(UsageError, "--memory 2432"):
            command.check_memory(n, 1024)
        command.check_memory(n, 4096)

    def test_binary(self):
        mm = Path(self.tmp.name)
        prog = mm / "gup_test"
        prog.write_text("")
        prog.chmod(0o755)
        self.assertEqual(command.binary(mm, command.parse("gup_test")), prog)
        with self.assertRaisesRegex(UsageError, "built: gup_test"):
            command.binary(mm, command.parse("ksm_tests"))


if __name__ == "__main__":
    unittest.main()
