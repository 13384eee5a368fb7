"""The artifacts of a lab's kselftest job, built from the runner's pieces.

A lab deploys a kernel, a rootfs, the kernel's modules and the kselftest
tarball as separate files; LAVA's test shell then drives a shell on the
console. For lava/jobs/source-kselftest.yaml this module makes:

  rootfs.cpio      one newc archive (LAVA's `overlays` unpack and repack
                   it, so not a concatenation): static busybox,
                   runner/guest/lab-init as /init (mounts, then a root
                   shell on the console), bash, the kselftest guest's
                   programs (coreutils' timeout, which runner.sh needs;
                   make), and
                   what Linaro's kselftest.sh and parse-output.py run with
                   (python3 with the modules parse-output.py imports, GNU
                   split, perl with perl-base's library, /usr/bin/env), and
                   the libraries of the tarball's programs. Nothing of the
                   test: the tarball and the test definitions come as
                   overlays.
  modules.tar      lib/modules/<release>/ with depmod's files: the job
                   deploys one, but the series' gup_test is built into
                   the kernel (source.prepare), so it holds no gup_test.ko
                   (given one, extra/gup_test.ko).
  kselftest.tar.gz the tree's gen_tar tarball, as built.
  skipfile         kselftest.sh's SKIPFILE keeping only our test of mm.
"""
from __future__ import annotations

import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from ..guest import initramfs
from ..host import REPO, run
from ..prepare import kselftest_build
from . import kselftest_paths, linaro

LAB_INIT = REPO / "runner" / "guest" / "lab-init"
# Where the job's skipfile overlay puts it. kselftest.sh prefixes -S with
# its own directory, /lava-<job>/0/tests/<n>_<name>/automated/linux/
# kselftest here (seven levels below /), but the depth is the lab's: its
# lava_test_results_dir and the definition's index. Exactly seven `..`
# (what the job had) reach / only at that depth; LAVA's depth differs, the
# path misses and kselftest.sh silently skips nothing. `..` at / stays at
# /, so SKIPFILE_DEPTH of them reach / from any directory up to that deep.
SKIPFILE = "/opt/gupnm-lab/skipfile"
SKIPFILE_DEPTH = 64
SKIPFILE_ARG = "../" * SKIPFILE_DEPTH + SKIPFILE.lstrip("/")


@dataclass
class Artifacts:
    rootfs: Path
    modules: Path
    kselftest: Path
    skipfile: Path


def build(release: str, module: Path | None, built: kselftest_build.Built, td: Path,
          out: Path) -> Artifacts:
    """Every artifact of the job into @out (a scratch root under it)."""
    out.mkdir(parents=True, exist_ok=True)
    root = out / "rootfs-root"
    rootfs(root, built, td)
    cpio = initramfs.pack_tree(root, out / "rootfs.cpio")
    shutil.rmtree(root, ignore_errors=True)
    mods = modules_tar(release, module, out / "modules-root", out / "modules.tar")
    tarball = out / "kselftest.tar.gz"
    shutil.copy2(built.tarball, tarball)
    skip = out / "skipfile"
    skip.write_text(linaro.only_ours_skipfile(built.wrapper))
    return Artifacts(cpio, mods, tarball, skip)


def rootfs(root: Path, built: kselftest_build.Built, td: Path) -> None:
    """The lab rootfs laid out in @root."""
    initramfs.busybox_root(root)
    for d in ("root", os.path.dirname(SKIPFILE).lstrip("/"),
              linaro.KSELFTEST_PATH.strip("/")):
        (root / d).mkdir(parents=True, exist_ok=True)
    initramfs.copy_with_libs(Path(shutil.which("bash") or "/bin/bash"), root)
    for prog in kselftest_paths.GUEST_PROGRAMS:
        initramfs.copy_with_libs(prog, root)
    kselftest_paths.link_guest_programs(root)
    kselftest_paths.copy_selftest_libs(built, root)
    for path in kselftest_paths.linaro_root(root, td):
        copy_host_path(Path(path), root)
    shutil.copy2(LAB_INIT, root / "init")
    (root / "init").chmod(0o755)


def copy_host_path(path: Path, root: Path) -> None:
    """A host file or directory into @root at its own absolute path
    (links followed: the guest gets what the host would read)."""
    dest = root / str(path).lstrip("/")
    if dest.exists():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        shutil.copytree(path, dest, symlinks=False, dirs_exist_ok=True)
    elif path.exists():
        shutil.copy2(path, dest)


def modules_tar(release: str, module: Path | None, root: Path, out: Path) -> Path:
    """lib/modules/@release with gup_test.ko (none where gup_test is built
    in), depmod'ed, as a tar of paths relative to / (LAVA unpacks it at
    path /)."""
    if root.exists():
        shutil.rmtree(root)
    moddir = root / "lib" / "modules" / release
    (moddir / "extra").mkdir(parents=True)
    if module is not None:
        shutil.copy2(module, moddir / "extra" / "gup_test.ko")
    run(["depmod", "-b", root, release], what="depmod")
    with tarfile.open(out, "w") as tar:
        tar.add(root / "lib", arcname="lib",
                filter=lambda t: _owned_by_root(t))
    shutil.rmtree(root, ignore_errors=True)
    return out


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
