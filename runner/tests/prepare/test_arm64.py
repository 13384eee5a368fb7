"""Unit tests for the arm64 guest: cross compiler choice, kbuild arguments,
the QEMU command, the guest's command line, foreign packages in apt's lists.

No compiler, apt or QEMU runs: shutil.which and subprocess are mocked.
"""

import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.check import arm64_checks  # noqa: E402
from gupnm.guest import qemu  # noqa: E402
from gupnm.prepare import apt, arm64, debian  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402

# CONFIG_CC_VERSION_TEXT of the real kernels: 6.12 cross-built by Debian,
# 6.1 built natively on an arm64 buildd.
CC_612 = "aarch64-linux-gnu-gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0"
CC_61 = "gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0"


def _gcc(version: str):
    done = subprocess.CompletedProcess([], 0, stdout=version + "\n", stderr="")
    return mock.patch.object(subprocess, "run", return_value=done)


class CrossCompilerTest(unittest.TestCase):
    def test_both_spellings_give_the_cross_gcc_of_that_major(self):
        with mock.patch("shutil.which", return_value="/usr/bin/x"), _gcc("12.2.0"):
            self.assertEqual(arm64.cross_compiler(CC_612), "aarch64-linux-gnu-gcc-12")
            self.assertEqual(arm64.cross_compiler(CC_61), "aarch64-linux-gnu-gcc-12")

    def test_missing_cross_compiler_says_what_to_install(self):
        with mock.patch("shutil.which", return_value=None):
            with self.assertRaisesRegex(RunnerError, "apt-get install gcc-14-aarch64"):
                arm64.cross_compiler("aarch64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0")

    def test_other_upstream_version_refused(self):
        with mock.patch("shutil.which", return_value="/usr/bin/x"), _gcc("12.3.0"):
            with self.assertRaisesRegex(RunnerError, "is gcc 12.3.0"):
                arm64.cross_compiler(CC_612)

    def test_not_gcc_refused(self):
        with self.assertRaisesRegex(RunnerError, "only gcc-N"):
            arm64.cross_compiler("Debian clang version 16.0.6")

    def test_kbuild_args_name_the_cross_toolchain_for_every_debian_layout(self):
        with mock.patch("shutil.which", return_value="/usr/bin/x"), _gcc("12.2.0"):
            args = arm64.kbuild_args(CC_61)
        self.assertEqual(args, ["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-",
                                "DEB_HOST_ARCH=arm64",
                                "DEB_HOST_GNU_TYPE=aarch64-linux-gnu"])


class SuiteRootCrossTest(unittest.TestCase):
    """trixie/sid arm64 kernels name gcc-14/gcc-16, which bookworm has no
    cross compiler for: the module is cross-built in a root of their suite."""
    CC_TRIXIE = "aarch64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0"

    def test_cross_package_of_the_kernels_gcc(self):
        self.assertEqual(arm64.cross_package(self.CC_TRIXIE), "gcc-14-aarch64-linux-gnu")
        self.assertEqual(arm64.cross_package(CC_61), "gcc-12-aarch64-linux-gnu")
        with self.assertRaisesRegex(RunnerError, "only gcc-N"):
            arm64.cross_package("Debian clang version 16.0.6")

    def test_host_can_cross_only_with_that_compiler(self):
        with mock.patch("shutil.which", return_value=None):
            self.assertFalse(arm64.host_can_cross(self.CC_TRIXIE))
        with mock.patch("shutil.which", return_value="/usr/bin/x"), _gcc("12.2.0"):
            self.assertTrue(arm64.host_can_cross(CC_612))

    def test_kbuild_args_unchecked_for_a_suite_root(self):
        with mock.patch("shutil.which", return_value=None):
            self.assertEqual(arm64.kbuild_args(self.CC_TRIXIE, check=False)[0], "ARCH=arm64")

    def test_module_built_in_the_suite_root_with_amd64_kbuild(self):
        from gupnm.prepare import kernels
        offered = debian.Offered("7.3.4+deb13-arm64", "arm64", "linux-binary-7.3.4+deb13-arm64",
                                 "7.3.4-1~bpo13+1", ["trixie-backports"], "binary", True, "arm64")
        dk = debian.DebianKernel("7.3.4+deb13-arm64", Path("/i"), Path("/k"), Path("/r"),
                                 ["linux-headers-7.3.4+deb13-arm64=7.3.4-1~bpo13+1",
                                  "linux-kbuild-7.3.4+deb13=7.3.4-1~bpo13+1"],
                                 offered, [Path("/d/linux-kbuild-7.3.4+deb13_7.3.4-1~bpo13+1_arm64.deb")])
        with mock.patch.object(arm64, "host_can_cross", return_value=False), \
                mock.patch.object(kernels.chroot, "root_for", return_value=Path("/root")) as root, \
                mock.patch.object(kernels.chroot, "install_headers"), \
                mock.patch.object(arm64, "host_kbuild") as kbuild, \
                mock.patch.object(kernels.chroot, "record") as record, \
                mock.patch.object(kernels.chroot, "build_module") as build:
            order = mock.Mock()
            order.attach_mock(kbuild, "kbuild")
            order.attach_mock(record, "record")
            kernels._cross_build(Path("/k"), Path("/t"), Path("/l"), dk, self.CC_TRIXIE)
        # The root's listing follows the amd64 kbuild tools unpacked over the
        # arm64 ones, else the next kernel takes the root for one cut short
        # and makes it again (each arm64 kernel of a survey did).
        self.assertEqual([c[0] for c in order.mock_calls], ["kbuild", "record"])
        record.assert_called_once_with(Path("/root"))
        root.assert_called_once_with("trixie", "gcc-14-aarch64-linux-gnu")
        versions = {"linux-headers-7.3.4+deb13-arm64": "7.3.4-1~bpo13+1",
                    "linux-kbuild-7.3.4+deb13": "7.3.4-1~bpo13+1"}
        kbuild.assert_called_once_with(list(versions), versions, Path("/root"))
        self.assertIn("CROSS_COMPILE=aarch64-linux-gnu-", build.call_args.args[4])


class QemuArm64Test(unittest.TestCase):
    def cmd(self, **kw):
        args = dict(accel="tcg", vcpus=2, memory_mb=1024,
                    append=qemu.base_append("arm64"), console=Path("/r/console.log"),
                    status=Path("/r/status.log"))
        args.update(kw)
        return qemu.arm64_command(Path("/k/Image"), Path("/r/i.cpio"), **args)

    def test_virt_tcg_with_the_status_port_on_pci_serial(self):
        cmd = self.cmd()
        self.assertEqual(cmd[0], "qemu-system-aarch64")
        self.assertEqual(cmd[cmd.index("-machine") + 1], "virt")
        self.assertEqual(cmd[cmd.index("-accel") + 1], "tcg")
        self.assertIn("-no-reboot", cmd)
        self.assertIn("file:/r/console.log", cmd)
        self.assertIn("file,id=status,path=/r/status.log", cmd)
        self.assertIn("pci-serial,chardev=status", cmd)
        self.assertEqual(cmd[cmd.index("-kernel") + 1], "/k/Image")

    def test_cpu_has_every_granule(self):
        # 16K and 64K pages need a CPU with those granules: cortex-a57 lacks 16K.
        self.assertTrue(self.cmd()[self.cmd().index("-cpu") + 1].startswith("max"))

    def test_kvm_and_numa_refused(self):
        with self.assertRaisesRegex(RunnerError, "TCG"):
            self.cmd(accel="kvm")
        with self.assertRaisesRegex(RunnerError, "NUMA"):
            self.cmd(numa=2)

    def test_command_line_names_console_and_status_port(self):
        words = qemu.base_append("arm64").split()
        self.assertIn("console=ttyAMA0", words)
        self.assertIn("GUPNM_STATUS=/dev/ttyS0", words)
        for word in ("panic=-1", "oops=panic", "secretmem.enable=1", "rdinit=/init"):
            self.assertIn(word, words)
        self.assertEqual(qemu.base_append(), qemu.BASE_APPEND)

    def test_guest_init_reads_the_status_port_from_its_environment(self):
        init = (Path(__file__).resolve().parents[2] / "guest" / "init").read_text()
        self.assertIn("status=${GUPNM_STATUS:-/dev/ttyS1}", init)


class ForeignPackagesTest(unittest.TestCase):
    def test_madison_name_loses_its_arch_suffix(self):
        text = ("linux-headers-6.12.117+deb12-arm64:arm64 | 6.12.117-1~deb12u1 | "
                "http://deb.debian.org/debian-security bookworm-security/main arm64 Packages\n")
        self.assertEqual(apt.parse_madison(text), [apt.Offer(
            "linux-headers-6.12.117+deb12-arm64", "6.12.117-1~deb12u1",
            "bookworm-security", "arm64")])

    def test_arm64_flavours(self):
        names = ["linux-image-6.12.117+deb12-arm64-unsigned",
                 "linux-image-6.12.117+deb12-arm64-16k-unsigned",
                 "linux-image-6.1.0-57-arm64-unsigned",
                 "linux-image-6.12.117+deb12-arm64-dbg",
                 "linux-image-6.12.117+deb12-amd64-unsigned"]
        self.assertEqual(sorted(debian.image_names(names, "arm64")),
                         ["6.1.0-57-arm64", "6.12.117+deb12-arm64",
                          "6.12.117+deb12-arm64-16k"])


class SourceConfigTest(unittest.TestCase):
    def test_64k_fragment_has_pages_console_and_status_port(self):
        from gupnm.prepare import kconfig
        opts = kconfig.parse((kconfig.CONFIGS / "arm64-64k.config").read_text())
        for name in ("CONFIG_ARM64_64K_PAGES", "CONFIG_SERIAL_AMBA_PL011_CONSOLE",
                     "CONFIG_SERIAL_8250_PCI", "CONFIG_PCI_HOST_GENERIC",
                     "CONFIG_SECRETMEM", "CONFIG_PROC_PAGE_MONITOR",
                     # the table's thp, hugetlb and long-term pin cells
                     "CONFIG_TRANSPARENT_HUGEPAGE", "CONFIG_HUGETLBFS", "CONFIG_FTRACE"):
            self.assertEqual(opts.get(name), "y", name)


class ChecksTest(unittest.TestCase):
    def test_sizes_from_the_test_header(self):
        tap = ("TAP version 13\n# page size 65536, THP 32768 KiB, huge page 2048 KiB, "
               "512-page buffers\n")
        self.assertEqual(arm64_checks.sizes(tap), (65536, 32768, 2048))
        self.assertIsNone(arm64_checks.sizes("TAP version 13\n1..13\n"))
        # The header before the mTHP fallback named the PMD: not these sizes.
        self.assertIsNone(arm64_checks.sizes(
            "# page size 4096, PMD 2048 KiB, huge page 2048 KiB, 512-page buffers\n"))

    def test_rows_are_three_debian_kernels_and_the_64k_pair(self):
        self.assertEqual([(s, ps) for s, _, ps, *_ in arm64_checks.ARM64_MATRIX], [
            ("debian:6.1", 4096), ("debian:6.12.117+deb12-arm64", 4096),
            ("debian:6.12.117+deb12-arm64-16k", 16384),
            ("source:debian-6.12:nofix", 65536),
            ("source:debian-6.12:all", 65536)])

    def test_64k_rows_map_an_mthp_and_a_cont_pte_huge_page(self):
        for spec, _, ps, thp, huge in arm64_checks.ARM64_MATRIX:
            # Every THP and huge page fits the test's 32 MiB buffers.
            self.assertLessEqual(max(thp, huge), 32 * 1024, spec)
            if ps == 65536:
                # the smallest anonymous mTHP (order 2), a 2 MiB cont-PTE page
                self.assertEqual((thp, huge), (256, 2048), spec)

    def test_expectations_follow_the_x86_matrix(self):
        # A kernel's verdict does not depend on the architecture: the arm64
        # row of a version expects what the x86 row of that version does
        # (6.1 is "pre65" on both: its long-term writable pin goes fast).
        from gupnm.check import matrix
        x86 = dict(matrix.MATRIX)
        for spec, expect, *_ in arm64_checks.ARM64_MATRIX:
            same = "debian:6.12" if spec.startswith("debian:6.12.") else spec
            self.assertEqual(expect, x86[same], spec)

if __name__ == "__main__":
    unittest.main()
