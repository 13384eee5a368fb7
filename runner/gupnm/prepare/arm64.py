"""What an arm64 guest needs on an amd64 host: cross tools and a busybox.

Debian's arm64 header packages carry kbuild tools (fixdep, modpost, ...)
built for arm64, which an amd64 host cannot run: the amd64 linux-kbuild
package of the same version is unpacked over them (host_kbuild). The
module is then cross-built with the cross compiler of the gcc the kernel
names (CONFIG_CC_VERSION_TEXT: "aarch64-linux-gnu-gcc-12 (...)" or, for a
natively built 6.1, "gcc-12 (...)"): on the host when it has it
(bookworm's gcc-12), else in a root of the kernel's own suite with
gcc-N-aarch64-linux-gnu (trixie: gcc-14, sid: gcc-16; chroot.py), the arm64
headers and the amd64 kbuild unpacked inside it. The static test is built
with the host's cross compiler. The guest's busybox is Debian's busybox-static for arm64,
fetched through the runner's own apt lists and cached by content.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..host import RunnerError, cache_dir, locked, progress, run
from . import apt
from .debs import verified

ARCH = "arm64"
TRIPLET = "aarch64-linux-gnu"
CROSS = f"{TRIPLET}-"
# What an arm64 run needs on the host beyond the x86 tools (hosttools.ensure_tools).
TOOLS = {"qemu-system-aarch64": "qemu-system-arm",
         f"{CROSS}gcc": "crossbuild-essential-arm64",
         f"{CROSS}gcc-12": "crossbuild-essential-arm64"}


def host_kbuild(pkgs: list[str], versions: dict[str, str] | str,
                root: Path) -> list[Path]:
    """Unpack the amd64 linux-kbuild-* packages among @pkgs over @root, each
    at its version in @versions (or all at one version).

    Debian's headers link scripts/ and tools/ into linux-kbuild; this
    replaces its arm64 programs by amd64 ones of the same version.
    """
    debs = []
    for pkg in pkgs:
        if not pkg.startswith("linux-kbuild-"):
            continue
        version = versions if isinstance(versions, str) else versions[pkg]
        deb = verified(apt.download(pkg, version, cache_dir() / "debs", "amd64"),
                       pkg, version, "amd64")
        run(["dpkg-deb", "-x", deb, root], what=f"dpkg-deb -x {deb.name}")
        debs.append(deb)
    if not debs:
        raise RunnerError(f"no linux-kbuild package among {' '.join(pkgs)}: "
                          "cannot cross-build a module for this arm64 kernel")
    return debs


def cross_compiler(cc_text: str) -> str:
    """The host's cross compiler for a kernel's CONFIG_CC_VERSION_TEXT.

    The kernel's gcc-N must be the host's aarch64-linux-gnu-gcc-N of the
    same upstream version (Debian revisions may differ: the cross package
    is rebuilt separately); anything else is refused with what to install.
    """
    m = re.match(r"(?:\S+-)?gcc-(\d+) \(.*\) (\S+)$", cc_text.strip())
    if not m:
        raise RunnerError(f"cannot tell the compiler of this arm64 kernel from "
                          f"'{cc_text}' (CONFIG_CC_VERSION_TEXT): only gcc-N "
                          "is supported")
    major, version = m.groups()
    cmd = f"{CROSS}gcc-{major}"
    if not shutil.which(cmd):
        raise RunnerError(f"{cmd} not found: the kernel was built with gcc-{major} "
                          f"({cc_text}); apt-get install gcc-{major}-{TRIPLET} "
                          "(crossbuild-essential-arm64 has bookworm's gcc-12)")
    out = subprocess.run([cmd, "-dumpfullversion"], capture_output=True,
                         text=True).stdout.strip()
    if out != version:
        raise RunnerError(f"{cmd} is gcc {out}, but the kernel was built with "
                          f"{cc_text}: install the cross compiler of the kernel's "
                          f"suite, or pick a kernel built with gcc {out}")
    return cmd


def kbuild_args(cc_text: str, *, check: bool = True) -> list[str]:
    """make arguments that cross-build a module against Debian arm64 headers
    (@check: the host must have the kernel's cross compiler; off for a
    build in a root of the kernel's suite, which has it).

    Debian's .kernelvariables sets CC to $(CROSS_COMPILE)gcc-N and, on a
    natively built kernel (6.1), overrides CROSS_COMPILE with
    $(DEB_HOST_GNU_TYPE)- whenever the build and host architectures differ:
    both are named, so every version ends up with aarch64-linux-gnu-gcc-N.
    """
    if check:
        cross_compiler(cc_text)
    return [f"ARCH={ARCH}", f"CROSS_COMPILE={CROSS}",
            f"DEB_HOST_ARCH={ARCH}", f"DEB_HOST_GNU_TYPE={TRIPLET}"]


def host_can_cross(cc_text: str) -> bool:
    """True when the host has the cross compiler of the kernel's gcc."""
    try:
        cross_compiler(cc_text)
        return True
    except RunnerError:
        return False


def cross_package(cc_text: str) -> str:
    """Debian's cross compiler package for a kernel's gcc-N:
    gcc-N-aarch64-linux-gnu (trixie: gcc-14, sid: gcc-16)."""
    m = re.match(r"(?:\S+-)?gcc-(\d+) ", cc_text.strip())
    if not m:
        raise RunnerError(f"cannot tell the compiler of this arm64 kernel from "
                          f"'{cc_text}' (CONFIG_CC_VERSION_TEXT): only gcc-N "
                          "is supported")
    return f"gcc-{m.group(1)}-{TRIPLET}"


def selftest_cc() -> str:
    """The cross compiler for the static test (libc6-dev-arm64-cross)."""
    cmd = f"{CROSS}gcc"
    if not shutil.which(cmd):
        raise RunnerError(f"{cmd} not found: apt-get install crossbuild-essential-arm64")
    return cmd


BUSYBOX_PKG = "busybox-static"


def busybox() -> Path:
    """Debian's static busybox for arm64 (the runner's apt lists, bookworm's
    version first), extracted once and cached by the package's SHA256."""
    offers = [o for o in apt.madison([f"{BUSYBOX_PKG}:{ARCH}"], ARCH)
              if o.arch == ARCH]
    if not offers:
        raise RunnerError(f"the runner's apt lists offer no {BUSYBOX_PKG}:{ARCH}: "
                          "run runner/debian-apt.sh --refresh")
    pick = next((o for o in offers if o.suite == "bookworm"), offers[0])
    sha = apt.field(BUSYBOX_PKG, pick.version, "SHA256", ARCH)
    key = hashlib.sha256(f"{pick.version}\0{sha}".encode()).hexdigest()[:16]
    out = cache_dir() / "busybox" / f"{ARCH}-{key}" / "busybox"
    if out.exists():
        return out
    with locked(cache_dir() / "locks" / f"busybox-{ARCH}-{key}.lock"):
        if out.exists():
            return out
        deb = verified(apt.download(BUSYBOX_PKG, pick.version, cache_dir() / "debs", ARCH),
                       BUSYBOX_PKG, pick.version, ARCH)
        progress(f"taking /bin/busybox out of {deb.name}")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=out.parent))
        try:
            run(["dpkg-deb", "-x", deb, tmp], what=f"dpkg-deb -x {deb.name}")
            found = tmp / "bin" / "busybox"
            if not found.exists():
                raise RunnerError(f"{deb} holds no /bin/busybox; remove it and retry")
            os.replace(found, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out
