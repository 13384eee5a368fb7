"""The lab job on artifacts a lab built: `gupnm-run lava source-kselftest
--kernel IMAGE [--modules MODULES] --kselftest TARBALL`.

IMAGE: the kernel QEMU boots with -kernel (vmlinux, or a bzImage).
MODULES: the kernel's modules as the lab ships them, a tar (plain, .gz,
.xz or .bz2) or a directory, holding lib/modules/<release>/ (what
`make modules_install INSTALL_MOD_PATH=X` writes under X); without it the
runner's own depmod'ed, module-free tree of the image's release (the
series builds gup_test in). TARBALL: `make gen_tar`'s kselftest tarball,
with mm/gup_null_mapping in it. Everything is checked before anything is
built (UsageError, exit 2), by the same checks as `gupnm-run kselftest`'s
(kselftest_own.check): the files exist, the modules hold the image's
release, the tarball holds our test; and the modules hold lib/modules/ at
their top, since the job unpacks them at /.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..host import UsageError
from ..prepare import kselftest_build
from . import kselftest_own

OPEN = {b"\x1f\x8b": gzip.open, b"\xfd7zXZ": lzma.open, b"BZh": bz2.open}


@dataclass
class Byo:
    image: Path
    modules: Path | None
    tarball: Path
    release: str
    wrapper: str

    def label(self) -> str:
        return f"kernel-image:{self.image}"


def check(image: Path | None, modules: Path | None,
          tarball: Path | None) -> Byo | None:
    """The lab's artifacts, checked as `gupnm-run kselftest` checks them
    (kselftest_own.check: the image's release, the modules', the tarball's
    test), and laid out as the job deploys them; None when none was given."""
    if image is None and modules is None and tarball is None:
        return None
    if image is None or tarball is None:
        raise UsageError("--kernel and --kselftest go together "
                         "(--modules is optional): the lab job needs a kernel "
                         "and the tarball")
    release, wrapper = kselftest_own.check(image, modules, tarball,
                                           tops=("", "kselftest/"))
    if modules is not None and not _installed(modules):
        raise UsageError(f"--modules {modules}: the job unpacks it at /, so it must "
                         "hold lib/modules/<release>/ at its top: give the "
                         "INSTALL_MOD_PATH folder of `make modules_install` or its tar")
    return Byo(image.resolve(), modules.resolve() if modules else None,
               tarball.resolve(), release, wrapper)


def _installed(modules: Path) -> bool:
    """Does @modules hold lib/modules/ at its top, as modules_install lays it out?"""
    if modules.is_dir():
        return (modules / "lib" / "modules").is_dir()
    return any(n.removeprefix("./").startswith("lib/modules/")
               for n in kselftest_own.tar_names(modules))


def built(b: Byo, scratch: Path) -> kselftest_build.Built:
    """A Built for labroot: the tarball unpacked in @scratch as the install
    tree (its programs' libraries go into the rootfs)."""
    install = scratch / "install"
    install.mkdir(parents=True, exist_ok=True)
    with tarfile.open(b.tarball, "r:*") as tar:
        tar.extractall(install, filter="tar")
    return kselftest_build.Built(commit="lab-built", tree=scratch / "no-tree",
                                 install=install, tarball=b.tarball,
                                 wrapper=b.wrapper, run_tests_args=[],
                                 extra_cflags="", log=scratch / "no-log")


def modules_tar(modules: Path, out: Path) -> Path:
    """The modules as the uncompressed tar the job deploys at /."""
    if modules.is_dir():
        with tarfile.open(out, "w") as tar:
            tar.add(modules / "lib", arcname="lib")
        return out
    with open(modules, "rb") as f:
        head = f.read(6)
    opener = next((o for magic, o in OPEN.items() if head.startswith(magic)), None)
    if opener is None:
        shutil.copy2(modules, out)
    else:
        with opener(modules, "rb") as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return out


def scratch(parent: Path) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=".byo-", dir=parent))
