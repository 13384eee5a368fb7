"""The userland an arm64 guest needs to run the kselftest tarball.

run_kselftest.sh and kselftest/runner.sh run under busybox sh, but
run_vmtests.sh says #!/bin/bash, runner.sh wants /usr/bin/timeout
--foreground (busybox's has no --foreground), and the selftests are linked
against glibc, libcap, libnuma and liburing: all arm64 programs, which the
amd64 host cannot run (no ldd). They come from Debian's arm64 packages of
the suite the selftests were built against (kselftest_build.ARM64_SUITE),
extracted into a cached root with mmdebstrap --variant=extract (nothing
runs, so no emulation), and each ELF's libraries are found by its NEEDED
entries (readelf, which reads any architecture) within that root.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ..host import RunnerError
from . import chroot
from .kselftest_build import ARM64_SUITE

USERLAND_PACKAGES = ["bash", "coreutils", "libcap2", "libnuma1", "liburing2"]
# Programs from the root, at the guest path they are called by.
PROGRAMS = {"usr/bin/bash": "bin/bash", "usr/bin/timeout": "usr/bin/timeout"}
LIBDIRS = ("usr/lib/aarch64-linux-gnu", "lib/aarch64-linux-gnu")
# Where the guest's loader looks first (the runner's root has a real /lib).
GUEST_LIBDIR = "lib/aarch64-linux-gnu"
LOADER = "lib/ld-linux-aarch64.so.1"


def userland_root() -> Path:
    """Debian's arm64 bash, coreutils and the selftests' libraries, extracted."""
    return chroot.root_with(ARM64_SUITE, USERLAND_PACKAGES,
                            name=f"{ARM64_SUITE}-userland-arm64",
                            what=f"{ARM64_SUITE}'s arm64 bash, coreutils and "
                                 "libraries (extracted, not installed)",
                            arches=("arm64",), variant="extract")


def parse_needed(readelf_dynamic: str) -> list[str]:
    """The NEEDED sonames in `readelf -d` output (empty: static)."""
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf_dynamic)


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def needed(elf: Path) -> list[str]:
    proc = subprocess.run(["readelf", "-d", str(elf)], capture_output=True, text=True)
    if proc.returncode:
        raise RunnerError(f"readelf -d {elf} failed: {proc.stderr.strip()}")
    return parse_needed(proc.stdout)


def find_lib(root: Path, soname: str) -> Path:
    for d in LIBDIRS:
        cand = root / d / soname
        if cand.exists():
            return cand
    raise RunnerError(f"{soname} is not in {root} ({', '.join(LIBDIRS)}): add "
                      "its Debian package to kselftest_arm64.USERLAND_PACKAGES")


def closure(root: Path, elves: list[Path]) -> dict[str, Path]:
    """soname -> file in @root, for every library @elves need, transitively."""
    found: dict[str, Path] = {}
    todo = [n for e in elves for n in needed(e)]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found[name] = find_lib(root, name)
        todo += needed(found[name])
    return found


def install(dest: Path, elves: list[Path]) -> list[str]:
    """Into the guest root @dest: PROGRAMS, and the libraries they and
    @elves (arm64 binaries elsewhere, e.g. the tarball's) need, with the
    loader. Returned: the sonames copied."""
    root = userland_root()
    progs = [root / src for src in PROGRAMS]
    for src, dst in PROGRAMS.items():
        target = dest / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / src, target)
    libs = closure(root, progs + elves)
    loader_name = os.path.basename(LOADER)
    libs.setdefault(loader_name, find_lib(root, loader_name))
    libdir = dest / GUEST_LIBDIR
    libdir.mkdir(parents=True, exist_ok=True)
    for soname, path in libs.items():
        shutil.copy2(os.path.realpath(path), libdir / soname)
    loader = dest / LOADER
    if not loader.exists():
        loader.symlink_to(f"aarch64-linux-gnu/{os.path.basename(LOADER)}")
    return sorted(libs)
