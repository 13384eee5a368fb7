"""lava's lab-built artifacts: the image's release, the modules' one
release, the tarball's test, refusals before anything is built."""
import io
import lzma
import tarfile
import tempfile
import unittest
from pathlib import Path

from gupnm.ci import lava_byo
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


def _bzimage(path: Path, release: str) -> Path:
    data = bytearray(0x1000)
    data[0x202:0x206] = b"HdrS"
    ptr = 0x400
    data[0x20E:0x210] = (ptr - 0x200).to_bytes(2, "little")
    text = f"{release} (builder@host) #1 SMP\0".encode()
    data[ptr:ptr + len(text)] = text
    path.write_bytes(bytes(data))
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

    def tearDown(self):
        self.tmp.cleanup()

    def test_releases(self):
        self.assertEqual(lava_byo.image_release(self.vmlinux), "7.3.4+")
        self.assertEqual(lava_byo.image_release(_bzimage(self.d / "bz", "7.3.9")),
                         "7.3.9")
        self.assertEqual(lava_byo.modules_release(self.mods), "7.3.4+")

    def test_all_given(self):
        b = lava_byo.check(self.vmlinux, self.mods, self.tarball)
        self.assertEqual((b.release, b.wrapper), ("7.3.4+", "mm:ksft_gup_test.sh"))
        self.assertTrue(b.label().startswith("kernel-image:"))

    def test_nothing_given(self):
        self.assertIsNone(lava_byo.check(None, None, None))

    def test_refusals(self):
        other = _tar(self.d / "o.tar", ["lib/modules/6.1.0/modules.dep"])
        two = _tar(self.d / "two.tar", ["lib/modules/a/x", "lib/modules/b/x"])
        no_test = _tar(self.d / "nt.tar.gz", ["./run_kselftest.sh", "./mm/gup_test"], "w:gz")
        (self.d / "junk").write_text("not a tar")
        for args, why in (((self.vmlinux, None, None), "go together"),
                          ((None, self.mods, self.tarball), "go together"),
                          ((self.d / "nope", None, self.tarball), "no such file"),
                          ((self.d / "junk", None, self.tarball), "no `Linux version`"),
                          ((self.vmlinux, other, self.tarball), "are for 6.1.0"),
                          ((self.vmlinux, two, self.tarball), "holds 2"),
                          ((self.vmlinux, self.d / "junk", self.tarball), "not a tar"),
                          ((self.vmlinux, None, no_test), "no mm/gup_null_mapping")):
            with self.assertRaisesRegex(UsageError, why):
                lava_byo.check(*args)

    def test_modules_folder(self):
        (self.d / "inst" / "lib" / "modules" / "7.3.4+").mkdir(parents=True)
        self.assertEqual(lava_byo.modules_release(self.d / "inst"), "7.3.4+")
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
