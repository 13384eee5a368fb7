"""labroot: the lab job's artifacts; linaro.git_copy: the repository
LAVA's `from: git` clones."""
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.ci import labroot, linaro


class ModulesTar(unittest.TestCase):
    def test_layout_and_owner(self):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)
        ko = d / "gup_test.ko"
        ko.write_bytes(b"\x7fELF module")

        def depmod(cmd, what):
            self.assertEqual(cmd[:2], ["depmod", "-b"])
            (Path(cmd[2]) / "lib/modules/7.3.4+/modules.dep").write_text(
                "extra/gup_test.ko:\n")
        with mock.patch.object(labroot, "run", side_effect=depmod):
            out = labroot.modules_tar("7.3.4+", ko, d / "root", d / "modules.tar")
        with tarfile.open(out) as tar:
            members = {m.name: m for m in tar.getmembers()}
        self.assertIn("lib/modules/7.3.4+/extra/gup_test.ko", members)
        self.assertIn("lib/modules/7.3.4+/modules.dep", members)
        self.assertTrue(all(m.uid == 0 and m.gid == 0 for m in members.values()))
        self.assertFalse((d / "root").exists())

    def test_no_module_where_gup_test_is_built_in(self):
        # source-kselftest (v4 of the series): gup_test built into the
        # kernel; the job still deploys a modules.tar, with no gup_test.ko.
        d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, d)

        def depmod(cmd, what):
            (Path(cmd[2]) / "lib/modules/7.3.4+/modules.dep").write_text("")
        with mock.patch.object(labroot, "run", side_effect=depmod):
            out = labroot.modules_tar("7.3.4+", None, d / "root", d / "modules.tar")
        with tarfile.open(out) as tar:
            names = set(tar.getnames())
        self.assertIn("lib/modules/7.3.4+/modules.dep", names)
        self.assertFalse(any(n.endswith(".ko") for n in names), names)


class CopyHostPath(unittest.TestCase):
    def test_file_and_directory_at_their_own_path(self):
        src = Path(tempfile.mkdtemp())
        root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, src)
        self.addCleanup(shutil.rmtree, root)
        (src / "d").mkdir()
        (src / "d" / "m.py").write_text("x = 1\n")
        (src / "link.py").symlink_to(src / "d" / "m.py")
        labroot.copy_host_path(src / "d", root)
        labroot.copy_host_path(src / "link.py", root)
        self.assertEqual((root / str(src).lstrip("/") / "d" / "m.py").read_text(), "x = 1\n")
        copied = root / str(src).lstrip("/") / "link.py"
        self.assertFalse(copied.is_symlink())
        self.assertEqual(copied.read_text(), "x = 1\n")


@unittest.skipUnless(shutil.which("git"), "git not installed")
class GitCopy(unittest.TestCase):
    def setUp(self):
        self.cache = Path(tempfile.mkdtemp())
        self.td = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.cache)
        self.addCleanup(shutil.rmtree, self.td)
        (self.td / "automated/linux/kselftest").mkdir(parents=True)
        (self.td / "automated/linux/kselftest/kselftest.yaml").write_text("metadata: {}\n")
        (self.td / ".git").mkdir()           # a checkout's own is left out
        (self.td / ".git" / "HEAD").write_text("ref: x\n")

    def copy(self):
        with mock.patch.dict(os.environ, {"GUPNM_CACHE": str(self.cache)}):
            return linaro.git_copy(self.td)

    def test_one_commit_of_the_files_as_they_are(self):
        repo = self.copy()
        files = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True,
                               text=True, check=True).stdout.split()
        self.assertEqual(files, ["automated/linux/kselftest/kselftest.yaml"])
        self.assertEqual((repo / files[0]).read_text(), "metadata: {}\n")
        self.assertEqual(subprocess.run(["git", "-C", str(repo), "status", "--porcelain"],
                                        capture_output=True, text=True).stdout, "")
        self.assertEqual(self.copy(), repo)

    def test_a_changed_checkout_gets_its_own_copy(self):
        first = self.copy()
        (self.td / "automated/linux/kselftest/kselftest.yaml").write_text("metadata: 2\n")
        self.assertNotEqual(self.copy(), first)


class Skipfile(unittest.TestCase):
    def test_only_ours_of_mm(self):
        import re
        text = linaro.only_ours_skipfile("mm:ksft_gup_test.sh")
        rx = [line for line in text.splitlines() if not line.startswith("#")]
        self.assertEqual(len(rx), 1)
        self.assertTrue(re.fullmatch(rx[0], "mm:ksft_cow.sh"))
        self.assertIsNone(re.fullmatch(rx[0], "mm:ksft_gup_test.sh"))


if __name__ == "__main__":
    unittest.main()
