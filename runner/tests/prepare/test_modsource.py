"""Unit tests for gupnm.prepare.modsource: generated/ is the one source of
the upstream files a run builds from, and patchgen/gen-generated.sh's list
is what it holds."""

import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.host import REPO  # noqa: E402
from gupnm.prepare import modsource  # noqa: E402

SCRIPT = REPO / "patchgen/gen-generated.sh"


def listed() -> list[str]:
    """The FILES=( ... ) list of patchgen/gen-generated.sh."""
    m = re.search(r"^FILES=\(\n(.*?)^\)", SCRIPT.read_text(), re.M | re.S)
    return [line.strip() for line in m.group(1).splitlines() if line.strip()]


class GeneratedTest(unittest.TestCase):

    def test_folder_holds_the_scripts_list_and_its_readme(self):
        files = sorted(str(p.relative_to(modsource.GENERATED))
                       for p in modsource.GENERATED.rglob("*") if p.is_file())
        self.assertEqual(files, sorted([*listed(), "README"]))

    def test_readme_says_where_each_file_came_from(self):
        readme = (modsource.GENERATED / "README").read_text()
        self.assertIn("patchgen/gen-generated.sh", readme.splitlines()[0])
        for name in listed():
            self.assertRegex(readme, rf"(?m)^{re.escape(name)}: linux-source-")

    def test_module_and_test_inputs_are_in_it(self):
        for name in modsource.MODULE_INPUTS:
            self.assertTrue((REPO / name).is_file(), name)
        self.assertTrue((modsource.gup_test_source() / "gup_test.c").is_file())
        self.assertTrue((modsource.include_root() / "mm/gup_test.h").is_file())
        self.assertTrue((modsource.kselftest_tree()
                         / "tools/testing/selftests/kselftest.h").is_file())

    def test_make_patches_regenerates_it(self):
        recipe = (REPO / "Makefile").read_text().split("\npatches:\n", 1)[1]
        self.assertIn("patchgen/gen-generated.sh", recipe.split("\n\n", 1)[0])


if __name__ == "__main__":
    unittest.main()
