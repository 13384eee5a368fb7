"""The series' gup_test source: mm/gup_test.[ch] as the upstream series leaves them.

Every module build (on the host or in a build root) and every build of the
test binary starts from this one copy, cached by the content of its inputs.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ..host import REPO, cache_dir, locked, owner_tag
from . import apt

MODULE_INPUTS = ["oot/Kbuild", "oot/gup_test_compat.h", "oot/build-module.sh",
                 "oot/gup_test-source.sh", "patchgen/upstream/steps",
                 "patchgen/upstream/base",
                 *[f"patchgen/upstream/edits/{p.name}" for p in
                   sorted((REPO / "patchgen/upstream/edits").glob("*.diff"))]]


def gup_test_source() -> Path:
    """mm/gup_test.[ch] as the upstream series leaves them (cached by the
    series' content): gup_test.c and gup_test.h, and include/mm/gup_test.h
    for the selftest's <mm/gup_test.h>."""
    h = hashlib.sha256()
    for name in MODULE_INPUTS:
        h.update((REPO / name).read_bytes())
    out = cache_dir() / "gup_test-source" / h.hexdigest()[:20]
    with locked(cache_dir() / "locks" / f"gup_test-source-{out.name}.lock"):
        if not (out / "include/mm/gup_test.h").exists() or \
                not selftest_libs(out)[0].exists():
            tmp = Path(tempfile.mkdtemp(prefix=f".src-{owner_tag()}-",
                                        dir=_mkdir(out.parent)))
            try:
                # A download failing there is one line naming the archive.
                apt.fetch([REPO / "oot/gup_test-source.sh", tmp], what="gup_test source")
                (tmp / "include/mm").mkdir(parents=True)
                shutil.copy2(tmp / "gup_test.h", tmp / "include/mm/gup_test.h")
                tmp.chmod(0o755)        # mkdtemp's 0700: readable by every user
                shutil.rmtree(out, ignore_errors=True)
                os.replace(tmp, out)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    return out


def selftest_includes(src: Path) -> list[Path]:
    """-I directories of the test, in @src (gup_test_source()): <mm/gup_test.h>,
    "kselftest.h" and "vm_util.h", and the base's <linux/fs.h>, which comes
    before the system's older one."""
    return [src / "include", src / "uapi", src / "selftests", src / "selftests/mm"]


def selftest_libs(src: Path) -> list[Path]:
    """What the test links with, as the selftests/mm Makefile has it."""
    return [src / "selftests/mm/vm_util.c"]


def _mkdir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p
