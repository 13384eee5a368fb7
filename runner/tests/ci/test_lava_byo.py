"""lava's lab-built artifacts: checked as `gupnm-run kselftest` checks
them (kselftest_own.check), laid out as the job deploys them, refusals
before anything is built."""
import io
import lzma
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.ci import kselftest_own, lava_byo
from gupnm.host import UsageError


def _tar(path: Path, names: list[str], mode: str = "w") -> Path:
    with tarfile.open(path, mode) as tar:
        for n in names:
            info = tarfile.TarInfo(n)
            if n.endswith("/"):
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = 1
                tar.addfile(info, io.BytesIO(b"x"))
    return path


class Byo(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)
        self.vmlinux = self.d / "vmlinux"
        self.vmlinux.write_bytes(b"\x7fELF....Linux version 7.3.4+ (gcc 14) #1 ...")
        self.tarball = _tar(self.d / "k.tar.gz", ["./", "./run_kselftest.sh", "./mm/",
                                                  "./mm/ksft_gup_test.sh",
                                                  "./mm/gup_null_mapping"], "w:gz")
        self.mods = _tar(self.d / "m.tar.xz", ["lib/modules/7.3.4+/modules.dep"], "w:xz")
        # A stand-in image: no boot header to check, nothing to uncompress.
        for name in ("check_kernel", "uncompressed"):
            patcher = mock.patch.object(kselftest_own.vmlinux, name, return_value=None)
            patcher.start()
            self.addCleanup(patcher.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def test_all_given(self):
        b = lava_byo.check(self.vmlinux, self.mods, self.tarball)
        self.assertEqual((b.release, b.wrapper), ("7.3.4+", "mm:ksft_gup_test.sh"))
        self.assertTrue(b.label().startswith("kernel-image:"))

    def test_nothing_given(self):
        self.assertIsNone(lava_byo.check(None, None, None))

    def test_refusals(self):
        other = _tar(self.d / "o.tar", ["lib/modules/6.1.0/modules.dep"])
        bare = _tar(self.d / "bare.tar", ["7.3.4+/kernel/x.ko"])   # lib/modules/REL itself
        no_test = _tar(self.d / "nt.tar.gz", ["./run_kselftest.sh", "./mm/gup_test"], "w:gz")
        (self.d / "junk").write_text("not a tar")
        for args, why in (((self.vmlinux, None, None), "go together"),
                          ((None, self.mods, self.tarball), "go together"),
                          ((self.d / "nope", None, self.tarball), "does not exist"),
                          ((self.d / "junk", None, self.tarball), "no 'Linux version'"),
                          ((self.vmlinux, other, self.tarball), "holds no modules of 7.3.4"),
                          ((self.vmlinux, bare, self.tarball), "lib/modules/<release>/ at its top"),
                          ((self.vmlinux, self.d / "junk", self.tarball), "not a tarball"),
                          ((self.vmlinux, None, no_test), "no mm/gup_null_mapping")):
            with self.subTest(why=why), self.assertRaisesRegex(UsageError, why):
                lava_byo.check(*args)

    def test_a_tarball_wrapped_in_kselftest_is_the_jobs_not_the_guests(self):
        # Linaro's kselftest.sh finds run_kselftest.sh in kselftest/ too.
        wrapped = _tar(self.d / "w.tar.gz", ["kselftest/run_kselftest.sh",
                                             "kselftest/mm/gup_null_mapping"], "w:gz")
        self.assertEqual(lava_byo.check(self.vmlinux, None, wrapped).wrapper,
                         "mm:run_vmtests.sh")
        with self.assertRaisesRegex(UsageError, "no run_kselftest.sh"):
            kselftest_own.check(self.vmlinux, None, wrapped)

    def test_modules_folder(self):
        (self.d / "inst" / "lib" / "modules" / "7.3.4+").mkdir(parents=True)
        self.assertEqual(lava_byo.check(self.vmlinux, self.d / "inst", self.tarball).modules,
                         (self.d / "inst").resolve())
        out = lava_byo.modules_tar(self.d / "inst", self.d / "out.tar")
        with tarfile.open(out) as tar:
            self.assertIn("lib/modules/7.3.4+", tar.getnames())

    def test_compressed_modules_become_the_plain_tar_the_job_deploys(self):
        out = lava_byo.modules_tar(self.mods, self.d / "modules.tar")
        self.assertEqual(out.read_bytes(), lzma.open(self.mods).read())
        with tarfile.open(out, "r:") as tar:
            self.assertEqual(tar.getnames(), ["lib/modules/7.3.4+/modules.dep"])

    def test_built_unpacks_the_tarball(self):
        b = lava_byo.check(self.vmlinux, None, self.tarball)
        built = lava_byo.built(b, self.d / "scratch")
        self.assertTrue((built.install / "mm" / "gup_null_mapping").is_file())
        self.assertEqual((built.tarball, built.wrapper), (b.tarball, b.wrapper))


if __name__ == "__main__":
    unittest.main()
