"""make check: image:KERNEL:DIR as a QA engineer uses it (docs/own-kernel.md).

Bookworm's own 6.12 (built with the host's gcc-12) as Debian ships it:
its image, headers, -common and kbuild packages unpacked with dpkg-deb -x
into one folder give, through image:VMLINUZ:FOLDER, the verdict debian:
gives (exit 1, the bug); the image and headers alone are refused before
anything boots (exit 2), naming both missing packages.

Alone: cd runner && python3 -m gupnm.check.own_image
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..host import cache_dir
from ..prepare import debian
from .contract_run import BUG_MESSAGE, gupnm

# A Debian 6.12 whose module the bookworm host's own gcc-12 builds.
KERNEL = "bookworm-security"


def _unpack(debs: list[Path], dest: Path) -> None:
    dest.mkdir(parents=True)
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)


def check(t, tmp: Path) -> None:
    k = debian.fetch(KERNEL)
    image = k.image.relative_to(k.root)
    full, bare = tmp / "own-full", tmp / "own-bare"
    _unpack(k.debs, full)
    r = gupnm(["run", "--kernel", f"image:{full / image}:{full}", "--results",
               str(tmp / "own-full-results")])
    s = r.summary or {}
    t.record(f"own image: {k.release}'s packages unpacked into one folder give "
             "the debian: verdict (exit 1, bug present)",
             r.rc == 1 and BUG_MESSAGE in (s.get("verdict") or "")
             and (s.get("kernel") or {}).get("booted_release") == k.release,
             r.detail())
    _unpack([d for d in k.debs if d.name.startswith(
        (f"{k.offered.image_pkg}_", f"linux-headers-{k.release}_"))], bare)
    r = gupnm(["run", "--kernel", f"image:{bare / image}:{bare}", "--results",
               str(tmp / "own-bare-results")], timeout=120)
    t.record("own image: headers without their -common and kbuild packages are "
             "exit 2 before anything boots, naming both",
             r.rc == 2 and "-common" in r.err and "linux-kbuild-" in r.err
             and r.seconds < 30, r.detail())


def main() -> int:
    from .tally import Tally
    t = Tally()
    tmp = Path(tempfile.mkdtemp(prefix="own-image-", dir=cache_dir()))
    try:
        check(t, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
