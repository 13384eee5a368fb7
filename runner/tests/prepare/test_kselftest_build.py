"""Unit tests for gupnm.prepare.kselftest_build: what a selftests build is
keyed by."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.prepare import kselftest_build  # noqa: E402


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          capture_output=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                               "PATH": "/usr/bin:/bin"}).stdout.strip()


def _commit(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "c")
    return _git(repo, "rev-parse", "HEAD")


class ContentKeyTest(unittest.TestCase):

    def test_kernels_differing_only_in_mm_gup_share_a_build(self):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            _git(repo, "init", "-q")
            tree = {"tools/testing/selftests/mm/gup_null_mapping.c": "int main;\n",
                    "mm/gup_test.h": "#define A 1\n", "mm/gup.c": "return true;\n",
                    "include/uapi/linux/a.h": "\n", "arch/x86/include/uapi/asm/b.h": "\n"}
            fixed = _commit(repo, tree)
            nofix = _commit(repo, {"mm/gup.c": "return false;\n"})
            test = _commit(repo, {"tools/testing/selftests/mm/gup_null_mapping.c": "int x;\n"})
            uapi = _commit(repo, {"mm/gup_test.h": "#define A 2\n"})
            key = kselftest_build.content_key
            self.assertEqual(key(repo, fixed), key(repo, nofix))
            self.assertNotEqual(key(repo, nofix), key(repo, test))
            self.assertNotEqual(key(repo, test), key(repo, uapi))
            # Another arch reads other uapi headers: never the same build.
            _commit(repo, {"arch/arm64/include/uapi/asm/c.h": "\n"})
            head = _git(repo, "rev-parse", "HEAD")
            self.assertNotEqual(key(repo, head, "arm64"), key(repo, head))
            self.assertRegex(key(repo, head), r"^[0-9a-f]{16}$")


if __name__ == "__main__":
    unittest.main()
