"""The arm64 guest's userland for the kselftest tarball: NEEDED entries,
their closure within the extracted root, the build roots' cache keys, and
make run on the host or in the arm64 build root.

No readelf, mmdebstrap or make runs: the calls are mocked.
"""
import hashlib
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.host import RunnerError
from gupnm.prepare import chroot, kselftest_arm64, kselftest_build

READELF_BASH = """
Dynamic section at offset 0x10d0f0 contains 27 entries:
  Tag        Type                         Name/Value
 0x0000000000000001 (NEEDED)             Shared library: [libtinfo.so.6]
 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]
 0x0000000000000001 (NEEDED)             Shared library: [ld-linux-aarch64.so.1]
 0x000000000000000c (INIT)               0x2e3d8
"""


class Needed(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(kselftest_arm64.parse_needed(READELF_BASH),
                         ["libtinfo.so.6", "libc.so.6", "ld-linux-aarch64.so.1"])
        self.assertEqual(kselftest_arm64.parse_needed("There is no dynamic section"), [])

    def test_closure_and_missing(self):
        deps = {"prog": ["liba.so.1"], "liba.so.1": ["libc.so.6"], "libc.so.6": []}
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            libdir = root / kselftest_arm64.LIBDIRS[0]
            libdir.mkdir(parents=True)
            for name in ("liba.so.1", "libc.so.6"):
                (libdir / name).write_text("")
            with mock.patch.object(kselftest_arm64, "needed",
                                   side_effect=lambda p: deps[Path(p).name]):
                got = kselftest_arm64.closure(root, [root / "prog"])
                self.assertEqual(sorted(got), ["liba.so.1", "libc.so.6"])
                deps["prog"] = ["libnone.so.3"]
                with self.assertRaisesRegex(RunnerError, "libnone.so.3 is not in"):
                    kselftest_arm64.closure(root, [root / "prog"])

    def test_is_elf(self):
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "x"
            f.write_bytes(b"\x7fELF\x02")
            self.assertTrue(kselftest_arm64.is_elf(f))
            f.write_text("#!/bin/sh\n")
            self.assertFalse(kselftest_arm64.is_elf(f))


class Roots(unittest.TestCase):
    def test_root_for_keeps_its_cache_key(self):
        """root_for's roots made before root_with existed are found again."""
        words = ["trixie", "gcc-14", *chroot.BUILD_PACKAGES, chroot.MIRROR]
        key = hashlib.sha256(" ".join(words).encode()).hexdigest()[:12]
        with tempfile.TemporaryDirectory() as d:
            ready = Path(d) / "chroots" / f"trixie-gcc-14-{key}"
            ready.mkdir(parents=True)
            (ready / ".gupnm-ready").write_text("")
            with mock.patch.object(chroot, "cache_dir", return_value=Path(d)), \
                    mock.patch.object(chroot, "run") as run:
                self.assertEqual(chroot.root_for("trixie", "gcc-14"), ready)
                run.assert_not_called()

    def test_root_with_arches_and_variant(self):
        with tempfile.TemporaryDirectory() as d:
            with mock.patch.object(chroot, "cache_dir", return_value=Path(d)), \
                    mock.patch.object(chroot, "ensure_tools"), \
                    mock.patch.object(chroot, "run") as run:
                run.side_effect = lambda cmd, **kw: Path(cmd[-2]).mkdir()
                root = chroot.root_with("trixie", ["bash"], name="u", what="w",
                                        arches=("arm64",), variant="extract")
            cmd = run.call_args[0][0]
            self.assertIn("--variant=extract", cmd)
            self.assertIn("--architectures=arm64", cmd)
            self.assertIn("--include=bash", cmd)
            self.assertTrue((root / ".gupnm-ready").exists())
            self.assertTrue(root.name.startswith("u-"))


class Make(unittest.TestCase):
    def test_host_for_amd64(self):
        runner, args = kselftest_build._maker("amd64", Path("/tmp/x"))
        self.assertIs(runner, kselftest_build.run)
        self.assertEqual(args, [])

    def test_arm64_in_root(self):
        with mock.patch.object(chroot, "root_with", return_value=Path("/r")) as rw, \
                mock.patch.object(kselftest_build, "run") as run:
            runner, args = kselftest_build._maker("arm64", Path("/c/ks"))
            runner(["make", "-C", "/c/ks/tree"], log=None)
        self.assertEqual(args, kselftest_build.ARM64_MAKE_ARGS)
        self.assertEqual(rw.call_args.kwargs["arches"], ("amd64", "arm64"))
        script = run.call_args[0][0][-1]
        self.assertIn('mount --bind "/c/ks" "/r/c/ks"', script)
        self.assertIn('exec chroot "/r" make -C /c/ks/tree', script)


if __name__ == "__main__":
    unittest.main()
