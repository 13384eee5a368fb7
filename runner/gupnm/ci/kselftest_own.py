"""gupnm-run kselftest --kernel IMAGE --kselftest TARBALL [--modules M]:
a lab's own artifacts, nothing built by the runner.

  IMAGE    the kernel the lab built (bzImage, vmlinuz or vmlinux)
  TARBALL  its kselftest tarball: `make -C tools/testing/selftests
           TARGETS=mm gen_tar` of the same tree (kselftest-packages/
           kselftest.tar.gz), holding run_kselftest.sh and mm/gup_null_mapping
  M        its modules (optional when gup_test is built in): a folder or a
           tarball (.tar, .tar.gz, .tar.xz: KernelCI's modules.tar.xz) of
           `make modules_install INSTALL_MOD_PATH=...`, holding
           lib/modules/REL/ (or that folder itself)

The guest is kselftest_paths' (runner's root, the host's make, timeout and
the tarball's libraries); the tarball unpacked there and run by
run_kselftest.sh or Linaro's kselftest.sh, as for a source kernel. M goes to
/lib/modules/REL (depmod run on the host); when the kernel has no
/sys/kernel/debug/gup_test the guest loads gup_test from M first.
Everything is checked on the host before anything boots (exit 2).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from ..host import UsageError, run
from ..prepare import cache, kselftest_build, vmlinux

# Where the tarball goes in the guest (kselftest_paths.GUEST_DIR): not at
# its host path, which may be under /tmp (a tmpfs in the guest).
GUEST_TARBALL = "/opt/gupnm-kst/kselftest.tar.gz"
_BANNER = re.compile(rb"Linux version (\S+) \(")
_MODDIR = re.compile(r"^(?:\./)?(?:lib/modules/)?(?P<rel>[^/]+)/")


@dataclass
class OwnKernel:
    """What kselftest_paths.run_kernel needs of a kernel."""
    release: str
    image: Path            # booted (a vmlinuz uncompressed when QEMU needs it)
    given: Path            # the user's image
    modules: Path | None   # the user's modules folder or tarball
    tarball: Path          # the user's kselftest tarball (copied in: GUEST_TARBALL)
    builtin: bool = True   # no module of ours to build: the lab's own


def release_of(image: Path) -> str:
    """The release in @image's banner ("Linux version REL (...)"), read in
    the uncompressed vmlinux when @image is a bzImage."""
    elf = vmlinux.uncompressed(image) or image
    m = _BANNER.search(elf.read_bytes())
    if not m:
        raise UsageError(f"{image}: no 'Linux version' banner in the kernel: "
                         "name the image the lab built (bzImage, vmlinuz, vmlinux)")
    return m.group(1).decode(errors="replace")


def tar_names(tarball: Path) -> list[str]:
    try:
        with tarfile.open(tarball) as tf:
            return tf.getnames()
    except (tarfile.TarError, OSError) as err:
        raise UsageError(f"{tarball} is not a tarball tar can read ({err}): "
                         "name the kselftest.tar.gz gen_tar made") from None


def check_tarball(tarball: Path, tops: tuple[str, ...] = ("",)) -> str:
    """The wrapper pipelines run (kselftest_build.wrapper_of) of the
    kselftest @tarball, whose run_kselftest.sh stands at one of @tops
    (gen_tar's: its top; Linaro's kselftest.sh also looks in kselftest/);
    UsageError when it is not one with our test."""
    if not tarball.is_file():
        raise UsageError(f"--kselftest {tarball} is not a file: name the "
                         "kselftest.tar.gz `make -C tools/testing/selftests "
                         "TARGETS=mm gen_tar` made")
    names = {n.removeprefix("./") for n in tar_names(tarball)}
    top = next((t for t in tops if f"{t}run_kselftest.sh" in names), tops[0])
    missing = [n for n in ("run_kselftest.sh", "mm/gup_null_mapping")
               if f"{top}{n}" not in names]
    if missing:
        raise UsageError(
            f"--kselftest {tarball} has no {' nor '.join(missing)}: it must be the "
            "gen_tar tarball of a tree with the series' selftest "
            "(make -C tools/testing/selftests TARGETS=mm gen_tar)")
    if f"{top}mm/ksft_gup_test.sh" in names:
        return "mm:ksft_gup_test.sh"
    return "mm:run_vmtests.sh"


def module_releases(modules: Path) -> list[str]:
    """The releases @modules (folder or tarball) holds modules of."""
    if modules.is_dir():
        base = modules / "lib" / "modules"
        if base.is_dir():
            return sorted(p.name for p in base.iterdir() if p.is_dir())
        if (modules / "modules.order").exists() or (modules / "kernel").is_dir():
            return [modules.name]          # lib/modules/REL itself
        return sorted(p.name for p in modules.iterdir()
                      if p.is_dir() and (p / "kernel").is_dir())
    parts = [[p for p in n.split("/") if p not in ("", ".")]
             for n in tar_names(modules)]
    rels = {p[2] for p in parts if len(p) >= 4 and p[:2] == ["lib", "modules"]}
    if not rels:        # a tarball of lib/modules/REL itself
        rels = {p[0] for p in parts if len(p) >= 3 and p[1] == "kernel"}
    return sorted(rels)


def check(image: Path, modules: Path | None, tarball: Path,
          tops: tuple[str, ...] = ("",)) -> tuple[str, str]:
    """(release, wrapper) of the lab's artifacts (@tops: check_tarball's);
    UsageError (exit 2) for anything that cannot work, before anything
    boots."""
    if not image.is_file():
        raise UsageError(f"--kernel {image} "
                         + ("is not a file" if image.exists() else "does not exist"))
    vmlinux.check_kernel(image)
    wrapper = check_tarball(tarball, tops)
    release = release_of(image)
    if modules is not None:
        if not modules.exists():
            raise UsageError(f"--modules {modules} does not exist")
        rels = module_releases(modules)
        if release not in rels:
            raise UsageError(
                f"--modules {modules} holds no modules of {release}, the release "
                f"{image.name} boots (found: {', '.join(rels) or 'none'}): give "
                "the modules_install tree (or its tarball) of the same build")
    return release, wrapper


def prepare(image: Path, modules: Path | None, tarball: Path,
            work: Path) -> tuple[OwnKernel, kselftest_build.Built]:
    """The kernel and a Built of the lab's tarball: unpacked in @work (the
    host copies its programs' libraries from there), booted as it is."""
    release, wrapper = check(image, modules, tarball)
    unpacked = work / "kselftest"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir(parents=True)
    run(["tar", "-xf", tarball, "-C", unpacked], what=f"tar -xf {tarball}")
    boot = vmlinux.uncompressed(image) or image
    k = OwnKernel(release, boot, image, modules, tarball.resolve())
    built = kselftest_build.Built("-", unpacked, unpacked, Path(GUEST_TARBALL),
                                  wrapper, [], "", work / "none.log")
    return k, built


def install(k: OwnKernel, root: Path) -> bool:
    """The lab's tarball at GUEST_TARBALL and modules (install_modules)
    in @root; True when the guest is to load gup_test."""
    dest = root / GUEST_TARBALL.lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(k.tarball, dest)
    return install_modules(k, root)


def install_modules(k: OwnKernel, root: Path) -> bool:
    """The lab's modules of @k into @root/lib/modules/REL, depmod run; True
    when gup_test.ko is among them (the guest loads it where the kernel has
    no gup_test of its own)."""
    if k.modules is None:
        return False
    dest = root / "lib" / "modules"
    dest.mkdir(parents=True, exist_ok=True)
    src = k.modules
    if src.is_dir():
        if (src / "lib" / "modules" / k.release).is_dir():
            src = src / "lib" / "modules" / k.release
        elif (src / k.release).is_dir():
            src = src / k.release
        shutil.copytree(src, dest / k.release, symlinks=True, dirs_exist_ok=True)
    else:
        tmp = root.parent / "modules-unpacked"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        run(["tar", "-xf", src, "-C", tmp], what=f"tar -xf {src}")
        found = next((p for p in (tmp / "lib" / "modules" / k.release,
                                  tmp / k.release) if p.is_dir()), None)
        if found is None:
            raise UsageError(f"--modules {src} unpacks no lib/modules/{k.release}")
        shutil.copytree(found, dest / k.release, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    # A modules_install tree's build/source links point into the lab's tree.
    for link in ("build", "source"):
        p = dest / k.release / link
        if p.is_symlink():
            p.unlink()
    subprocess.run(["depmod", "-b", str(root), k.release], capture_output=True)
    return any((dest / k.release).rglob("gup_test.ko*"))


def kernel_source(k: OwnKernel, built: kselftest_build.Built) -> dict:
    """summary.json's kernel.source of a run on the lab's artifacts."""
    return {"kind": "own", "image": str(k.given),
            "image_sha256": cache.sha256(k.given),
            "modules": str(k.modules) if k.modules else None,
            "kselftest": str(k.tarball),
            "kselftest_sha256": cache.sha256(k.tarball),
            "wrapper": built.wrapper, "boot_image": str(k.image)}
