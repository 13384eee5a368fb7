"""The lab job on artifacts a lab built: `gupnm-run lava source-kselftest
--kernel IMAGE [--modules MODULES] --kselftest TARBALL`.

IMAGE: the kernel QEMU boots with -kernel (vmlinux, or a bzImage).
MODULES: the kernel's modules as the lab ships them, a tar (plain, .gz,
.xz or .bz2) or a directory, holding lib/modules/<release>/ (what
`make modules_install INSTALL_MOD_PATH=X` writes under X); without it the
runner's own depmod'ed, module-free tree of the image's release (the
series builds gup_test in). TARBALL: `make gen_tar`'s kselftest tarball,
with mm/gup_null_mapping in it. Everything is checked before anything is
built (UsageError, exit 2): the files exist, the modules hold one release
and it is the image's, the tarball holds our test.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..host import UsageError
from ..prepare import kselftest_build

OPEN = {b"\x1f\x8b": gzip.open, b"\xfd7zXZ": lzma.open, b"BZh": bz2.open}
VERSION = re.compile(rb"Linux version (\S+) ")


@dataclass
class Byo:
    image: Path
    modules: Path | None
    tarball: Path
    release: str
    wrapper: str

    def label(self) -> str:
        return f"kernel-image:{self.image}"


def image_release(image: Path) -> str | None:
    """The release an image names: a bzImage's header version string, else
    the first `Linux version X ` in the file (vmlinux)."""
    data = image.read_bytes()
    if data[0x202:0x206] == b"HdrS":
        ptr = int.from_bytes(data[0x20E:0x210], "little") + 0x200
        m = re.match(rb"(\S+) ", data[ptr:ptr + 256])
        if m:
            return m.group(1).decode(errors="replace")
    m = VERSION.search(data)
    return m.group(1).decode(errors="replace") if m else None


def _members(path: Path) -> list[str]:
    if path.is_dir():
        return [str(p.relative_to(path)) for p in path.glob("lib/modules/*")]
    try:
        with tarfile.open(path, "r:*") as tar:
            return [m.name for m in tar.getmembers()]
    except (tarfile.TarError, OSError) as err:
        raise UsageError(f"--modules {path}: not a tar archive ({err}): give "
                         "the lab's modules tarball or its INSTALL_MOD_PATH folder")


def modules_release(path: Path) -> str:
    """The one release under lib/modules/ of @path."""
    rels = {m.group(1) for n in _members(path)
            if (m := re.match(r"(?:\./)?lib/modules/([^/]+)", n))}
    if len(rels) != 1:
        raise UsageError(f"--modules {path}: holds {len(rels) or 'no'} "
                         f"lib/modules/<release>/ ({', '.join(sorted(rels))}): "
                         "give one kernel's modules as modules_install lays them out")
    return rels.pop()


def tarball_wrapper(tarball: Path) -> str:
    """The collection:test pipelines run for the tarball's mm tests;
    UsageError unless gup_null_mapping is in it."""
    try:
        with tarfile.open(tarball, "r:*") as tar:
            names = {n.lstrip("./") for n in tar.getnames()}
    except (tarfile.TarError, OSError) as err:
        raise UsageError(f"--kselftest {tarball}: not a tar archive ({err})")
    # gen_tar's tarball has run_kselftest.sh at its top; some pipelines
    # wrap it in a kselftest/ folder (kselftest.sh looks in both).
    top = "" if "run_kselftest.sh" in names else "kselftest/"
    if f"{top}mm/gup_null_mapping" not in names:
        raise UsageError(f"--kselftest {tarball}: no mm/gup_null_mapping in "
                         "it: build the tarball (make gen_tar) from a tree with the "
                         "series applied")
    return ("mm:ksft_gup_test.sh" if f"{top}mm/ksft_gup_test.sh" in names
            else "mm:run_vmtests.sh")


def check(image: Path | None, modules: Path | None,
          tarball: Path | None) -> Byo | None:
    """The lab's artifacts, checked; None when none was given."""
    if image is None and modules is None and tarball is None:
        return None
    if image is None or tarball is None:
        raise UsageError("--kernel and --kselftest go together "
                         "(--modules is optional): the lab job needs a kernel "
                         "and the tarball")
    for opt, p in (("--kernel", image), ("--kselftest", tarball),
                   ("--modules", modules)):
        if p is not None and not p.exists():
            raise UsageError(f"{opt} {p}: no such file")
    release = image_release(image)
    if release is None:
        raise UsageError(f"--kernel {image}: no `Linux version` in it: "
                         "give the kernel image (vmlinux or bzImage)")
    if modules is not None:
        mrel = modules_release(modules)
        if mrel != release:
            raise UsageError(f"--modules {modules} are for {mrel}, the image "
                             f"is {release}: give the image's own modules")
    return Byo(image.resolve(), modules.resolve() if modules else None,
               tarball.resolve(), release, tarball_wrapper(tarball))


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
