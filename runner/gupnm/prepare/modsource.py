"""The upstream files the module and the test build from: generated/.

generated/ (written by patchgen/gen-generated.sh, the one list of them)
holds mm/gup_test.[ch] as the upstream series leaves them and the
kselftest headers of the series' base tree, laid out as a sparse kernel
tree: every module build (on the host or in a build root) and every build
of the test binary starts from it, so no run needs a kernel source tree.
"""
from __future__ import annotations

from pathlib import Path

from ..host import REPO

# -I GENERATED gives <mm/gup_test.h>; its tools/testing/selftests/mm gives
# "../kselftest.h" and "vm_util.h", tools/testing/selftests "kselftest.h",
# include/uapi <linux/fs.h>.
GENERATED = REPO / "generated"

MODULE_INPUTS = ["oot/Kbuild", "oot/gup_test_compat.h", "oot/internal.h",
                 "oot/build-module.sh",
                 "generated/mm/gup_test.c", "generated/mm/gup_test.h"]


def gup_test_source() -> Path:
    """The folder holding gup_test.c and gup_test.h as the upstream series
    leaves them (generated/mm)."""
    return GENERATED / "mm"


def include_root() -> Path:
    """The include root of the test's <mm/gup_test.h>."""
    return GENERATED


def kselftest_tree() -> Path:
    """A sparse kernel tree holding tools/testing/selftests/kselftest.h."""
    return GENERATED


def selftest_includes(root: Path = GENERATED) -> list[Path]:
    """-I directories of the test: <mm/gup_test.h>, "kselftest.h" and
    "vm_util.h" of @root (generated/, or a kernel tree whose own test is
    built: its revision of the ABI, never this checkout's), and the base's
    <linux/fs.h> (before the system's older one)."""
    return [root, GENERATED / "include/uapi", root / "tools/testing/selftests",
            root / "tools/testing/selftests/mm"]


def selftest_libs(root: Path = GENERATED) -> list[Path]:
    """What the test links with, as the selftests/mm Makefile has it."""
    mm = root / "tools/testing/selftests/mm"
    return [mm / "vm_util.c", mm / "hugepage_settings.c"]
