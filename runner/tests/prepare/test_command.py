"""Unit tests for gupnm.prepare.command (--command: what a selftests/mm program needs)."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import command  # noqa: E402
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
        # CONFIG_GUP_TEST is not an option it needs: gup_test_server says who
        # serves it (the kernel's own, else the runner's module).
        self.assertEqual([o for o, _ in n.config], ["CONFIG_HUGETLBFS"])
        self.assertTrue(n.gup_test)
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
        self.assertFalse(n.gup_test)
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
        self.config.write_text("# CONFIG_HUGETLBFS is not set\n# CONFIG_GUP_TEST is not set\n")
        n = command.needs(command.parse("gup_test -H -m 64"))
        with self.assertRaisesRegex(UsageError, "CONFIG_HUGETLBFS.*source:debian-6.12"):
            command.check_kernel(n, self.config, "6.12.117+deb12-amd64", "debian:6.12")

    def test_gup_test_unset_is_not_a_missing_option(self):
        # Issue 33: the 6.12 selftests variant leaves CONFIG_GUP_TEST off
        # (the runner's module serves it); that is no reason to refuse.
        self.config.write_text("CONFIG_HUGETLBFS=y\n# CONFIG_GUP_TEST is not set\n")
        n = command.needs(command.parse("gup_test -HL -m 512 -n 512 -r 5"))
        command.check_kernel(n, self.config, "6.12.118", "source:debian-6.12")

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


class ServerTest(unittest.TestCase):
    """gup_test_server: built in, else the runner's module."""
    BASE = "CONFIG_MODULES=y\nCONFIG_DEBUG_FS=y\n"
    KO = Path("/cache/modules/x/gup_test.ko")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.config = Path(self.tmp.name) / ".config"

    def tearDown(self):
        self.tmp.cleanup()

    def server(self, text, module=KO, **kw):
        self.config.write_text(self.BASE + text)
        return command.gup_test_server(self.config, module, "6.12.118",
                                       "source:debian-6.12", **kw)

    def test_built_in_loads_nothing(self):
        s = self.server("CONFIG_GUP_TEST=y\n")
        self.assertEqual((s.kind, s.module), (command.BUILTIN, None))
        self.assertIn("CONFIG_GUP_TEST=y", s.why)

    def test_runners_module_when_the_option_is_off(self):
        # source:debian-6.12 --config selftests, and every Debian kernel.
        s = self.server("# CONFIG_GUP_TEST is not set\n")
        self.assertEqual((s.kind, s.module), (command.RUNNERS, self.KO))
        self.assertIn("CONFIG_GUP_TEST is not set", s.why)

    def test_runners_module_when_the_kernels_is_not_at_hand(self):
        s = self.server("CONFIG_GUP_TEST=m\n")
        self.assertEqual(s.kind, command.RUNNERS)
        self.assertIn("not at hand", s.why)

    def test_runners_module_without_a_config(self):
        # image:KERNEL:MODULE_TREE: no headers, no .config.
        s = command.gup_test_server(None, self.KO, "6.12.118", "image:a:b")
        self.assertEqual((s.kind, s.module), (command.RUNNERS, self.KO))
        self.assertIn(".config is not available", s.why)

    def test_neither_names_both(self):
        self.config.write_text("# CONFIG_GUP_TEST is not set\n# CONFIG_DEBUG_FS is not set\n"
                               "CONFIG_MODULES=y\n")
        with self.assertRaises(UsageError) as cm:
            command.gup_test_server(self.config, self.KO, "6.12.118",
                                    "source:debian-6.12")
        said = str(cm.exception)
        self.assertIn("kernel's own gup_test (CONFIG_GUP_TEST is not set", said)
        self.assertIn("runner's module (it needs CONFIG_DEBUG_FS", said)

    def test_neither_without_a_module(self):
        with self.assertRaisesRegex(UsageError, "none was built for it"):
            self.server("# CONFIG_GUP_TEST is not set\n", module=None)

    def test_not_required_is_none(self):
        self.config.write_text("# CONFIG_GUP_TEST is not set\n")     # no MODULES
        self.assertIsNone(command.gup_test_server(
            self.config, self.KO, "6.1", "debian:6.1", "ksm_tests",
            required=False))


if __name__ == "__main__":
    unittest.main()
