"""make check: image:KERNEL:DIR as a QA engineer uses it (docs/own-kernel.md).

Bookworm's own 6.12 (built with the host's gcc-12) as Debian ships it:
its image, headers, -common and kbuild packages unpacked with dpkg-deb -x
into one folder give, through image:VMLINUZ:FOLDER, the verdict debian:
gives (exit 1, the bug); the image and headers alone are refused before
anything boots (exit 2), naming both missing packages. The same .debs as a
folder, debs:FOLDER (issue 48: no unpacking by hand), give the same verdict;
the image and headers .debs alone are exit 2 naming the other two.

Kernels built with a compiler this machine lacks (trixie's gcc-14, sid's
gcc-16), unpacked the same way: the module builds in a root of the kernel's
suite with FOLDER bound into it, and the run gives the verdict the series
carries (runner/expectations/debian.txt: 6.12 and 7.2 the bug, 7.3 the fix). The same
folder whose headers name a gcc-99 is exit 2 before anything boots.

Alone: cd runner && python3 -m gupnm.check.own_image
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..host import cache_dir
from ..prepare import debian
from ..report import expect
from .contract_run import BUG_MESSAGE, gupnm

# A Debian 6.12 whose module the bookworm host's own gcc-12 builds.
KERNEL = "bookworm-security"
# Kernels whose compiler the host lacks: trixie's newest 6.12 (the bug), trixie-
# backports' newest (7.3: the fix), sid's (gcc-16).
ROOT_KERNELS = ("trixie-security", "trixie-backports", "sid")
PASS_MESSAGE = "PASS: GUP-fast takes NULL-mapping order-0 folios"


def _unpack(debs: list[Path], dest: Path) -> None:
    dest.mkdir(parents=True)
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)


def check(t, tmp: Path) -> None:
    k = debian.fetch(KERNEL)
    image = k.image.relative_to(k.root)
    full, bare = tmp / "own-full", tmp / "own-bare"
    debs = debian.present_debs(k)      # dropped after the unpack: again
    _unpack(debs, full)
    r = gupnm(["run", "--kernel", f"image:{full / image}:{full}", "--results",
               str(tmp / "own-full-results")])
    s = r.summary or {}
    t.record(f"own image: {k.release}'s packages unpacked into one folder give "
             "the debian: verdict (exit 1, bug present)",
             r.rc == 1 and BUG_MESSAGE in (s.get("verdict") or "")
             and (s.get("kernel") or {}).get("booted_release") == k.release,
             r.detail())
    _unpack(_image_and_headers(k, debs), bare)
    r = gupnm(["run", "--kernel", f"image:{bare / image}:{bare}", "--results",
               str(tmp / "own-bare-results")], timeout=120)
    t.record("own image: headers without their -common and kbuild packages are "
             "exit 2 before anything boots, naming both",
             r.rc == 2 and "-common" in r.err and "linux-kbuild-" in r.err
             and r.seconds < 30, r.detail())
    check_debs(t, tmp, k, debs)
    folders = [check_root(t, tmp, suite) for suite in ROOT_KERNELS]
    check_no_root(t, tmp, *folders[0])


def _image_and_headers(k, debs: list[Path]) -> list[Path]:
    """@k's image and headers packages of @debs, without the -common and
    kbuild ones they need."""
    return [d for d in debs if d.name.startswith(
        (f"{k.offered.image_pkg}_", f"linux-headers-{k.release}_"))]


def check_debs(t, tmp: Path, k, debs: list[Path]) -> None:
    """The same packages as a folder of .debs (debs:DIR, nothing unpacked
    by hand): the debian: verdict; the image and headers alone: exit 2
    naming the -common and kbuild packages. One boot (the unpack cached
    by the .debs' sha256 after the first)."""
    folders = {}
    for name, keep in (("own-debs", debs), ("own-debs-bare", _image_and_headers(k, debs))):
        folders[name] = tmp / name
        folders[name].mkdir()
        for d in keep:
            (folders[name] / d.name).symlink_to(d)
    r = gupnm(["run", "--kernel", f"debs:{folders['own-debs']}", "--results",
               str(tmp / "own-debs-results")])
    s = r.summary or {}
    kern = s.get("kernel") or {}
    t.record(f"own debs: {k.release}'s .debs as one folder (debs:DIR) give the "
             "debian: verdict (exit 1, bug present)",
             r.rc == 1 and BUG_MESSAGE in (s.get("verdict") or "")
             and kern.get("booted_release") == k.release
             and (kern.get("source") or {}).get("kind") == "debs", r.detail())
    r = gupnm(["run", "--kernel", f"debs:{folders['own-debs-bare']}", "--results",
               str(tmp / "own-debs-bare-results")], timeout=120)
    t.record("own debs: a folder without the -common and kbuild .debs is exit 2 "
             "before anything boots, naming both",
             r.rc == 2 and "-common package" in r.err and "kbuild tools" in r.err
             and r.seconds < 30, r.detail())


def check_root(t, tmp: Path, suite: str) -> tuple[Path, Path]:
    """A kernel of @suite unpacked into one folder, through image:: its
    module built in a root of its suite, the verdict its series carries;
    (the folder, the image's path in it)."""
    k = debian.fetch(suite)
    folder = tmp / f"own-{suite}"
    image = k.image.relative_to(k.root)
    _unpack(debian.present_debs(k), folder)
    r = gupnm(["run", "--kernel", f"image:{folder / image}:{folder}", "--results",
               str(tmp / f"own-{suite}-results")])
    s = r.summary or {}
    kernel = s.get("kernel") or {}
    bug = expect.expects_bug(expect.default(), k.release)[0]
    base = debian.base_suite(k.offered.suites)
    want = (1, BUG_MESSAGE) if bug else (0, PASS_MESSAGE)
    t.record(f"own image: {suite}'s {k.release} unpacked into one folder: module "
             f"built in a {base} root, the verdict its series carries (exit "
             f"{want[0]})",
             r.rc == want[0] and want[1] in (s.get("verdict") or "")
             and kernel.get("booted_release") == k.release
             and (kernel.get("source") or {}).get("build_root", "").startswith(
                 f"{base} ("), r.detail())
    return folder, image


def check_no_root(t, tmp: Path, folder: Path, image: Path) -> None:
    """@folder's headers made to name gcc-99 (a copy of .config; the rest
    hard links): exit 2 before anything boots, naming it."""
    copy = tmp / "own-gcc99"
    subprocess.run(["cp", "-al", str(folder), str(copy)], check=True)
    config = next((copy / "usr/src").glob("linux-headers-*/.config"))
    text = re.sub(r'^CONFIG_CC_VERSION_TEXT=.*$', 'CONFIG_CC_VERSION_TEXT='
                  '"x86_64-linux-gnu-gcc-99 (Debian 99.1.0-1) 99.1.0"',
                  config.read_text(), flags=re.M)
    config.unlink()                     # not the hard-linked original
    config.write_text(text)
    r = gupnm(["run", "--kernel", f"image:{copy / image}:{copy}", "--results",
               str(tmp / "own-gcc99-results")], timeout=120)
    t.record("own image: headers naming a compiler no root provides (gcc-99) are "
             "exit 2 before anything boots, naming it",
             r.rc == 2 and "gcc-99" in r.err and "--method probe" in r.err
             and r.seconds < 60, r.detail())


def main() -> int:
    from .tally import Tally
    t = Tally()
    tmp = Path(tempfile.mkdtemp(prefix="own-image-", dir=cache_dir()))
    try:
        check(t, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
