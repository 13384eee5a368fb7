"""Kernel specs, and what each kernel needs: the module and the test binary.

A spec names one kernel to test:
  debian:SERIES|RELEASE        a Debian binary kernel (debian:6.12, debian:6.1,
                               debian:6.12.117+deb12-amd64)
  source:TREE[:SELECTION]      a kernel built from TREE ('debian-6.12' is
                               Debian's linux-source-6.12; any git checkout
                               works) with the patches/ SELECTION applied:
                               all (default), nofix (all but the fix), none
  image:KERNEL:DIR             a kernel image, with either its headers or
                               build directory (the module is built against
                               it) or a module tree holding test_gup_fast.ko
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import debian, source, vmlinux
from .host import REPO, RunnerError, UsageError, cache_dir, locked, progress, run

SELFTEST = "tools/testing/selftests/mm/gup_null_mapping.c"


@dataclass
class Prepared:
    spec: str
    release: str
    image: Path
    module: Path
    test_binary: Path
    run_vmtests: Path | None          # set: run through run_vmtests.sh
    source: dict = field(default_factory=dict)   # how the kernel was obtained


def parse_spec(spec: str) -> tuple[str, list[str]]:
    kind, _, rest = spec.partition(":")
    if kind == "debian" and rest:
        return kind, [rest]
    if kind == "source" and rest and not rest.startswith(":"):
        tree, _, sel = rest.partition(":")
        sel = sel or "all"
        if sel not in source.SELECTIONS:
            raise UsageError(f"'{sel}' in '{spec}' is not a patch selection: "
                              + ", ".join(source.SELECTIONS))
        return kind, [tree, sel]
    if kind == "image" and rest:
        parts = rest.split(":")
        if len(parts) == 2 and all(parts):
            return kind, parts
    raise UsageError(f"bad kernel spec '{spec}': use debian:6.12, debian:6.1, "
                      "source:debian-6.12[:all|nofix|none] or "
                      "image:KERNEL:HEADERS_OR_MODULE_DIR")


def build_module(kdir: Path, release: str) -> Path:
    """Build lib/test_gup_fast.ko out of tree against @kdir (W=1, cached)."""
    out = cache_dir() / "modules" / release
    with locked(cache_dir() / "locks" / f"module-{release}.lock"):
        return _build_module_locked(kdir, out)


MODULE_INPUTS = ["lib/test_gup_fast.c", "lib/test_gup_fast_uapi.h",
                 "oot/Kbuild", "oot/test_gup_fast_compat.h", "oot/build-module.sh"]


def _build_module_locked(kdir: Path, out: Path) -> Path:
    h = hashlib.sha256(str(kdir).encode())
    for name in MODULE_INPUTS:
        h.update((REPO / name).read_bytes())
    stamp = out / ".gupnm-inputs-v2"
    ko = out / "test_gup_fast.ko"
    if ko.exists() and stamp.exists() and stamp.read_text() == h.hexdigest():
        return ko
    log = out.parent / f"{out.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    # Other inputs than last time: start clean. make compares mtimes only,
    # and a checkout's older source would not rebuild a newer object.
    shutil.rmtree(out, ignore_errors=True)
    progress(f"building test_gup_fast.ko against {kdir}")
    run([REPO / "oot" / "build-module.sh", kdir, out, "W=1"], log=log,
        what="module build")
    if not ko.exists():
        raise RunnerError(f"module build left no {ko}; see {log}")
    stamp.write_text(h.hexdigest())
    return ko


def build_selftest(src: Path, include_root: Path, kselftest_tree: Path) -> Path:
    """Static gup_null_mapping from @src, its ABI from @include_root/lib."""
    mm = kselftest_tree / "tools/testing/selftests/mm"
    if not (mm.parent / "kselftest.h").exists():
        raise RunnerError(f"{mm.parent}/kselftest.h missing: need a kernel tree")
    h = hashlib.sha256()
    for p in (src, include_root / "lib/test_gup_fast_uapi.h", mm.parent / "kselftest.h"):
        h.update(p.read_bytes())
    out = cache_dir() / "selftest" / h.hexdigest()[:16] / "gup_null_mapping"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    progress("building gup_null_mapping (static)")
    run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror",
         "-I", include_root, "-I", mm, "-o", out.with_suffix(".tmp"), src,
         "-lpthread", "-lm"], what="selftest build")
    out.with_suffix(".tmp").rename(out)
    return out


def _kselftest_tree() -> Path:
    return source.resolve_base("debian-6.12")


def _release_of(kdir: Path) -> str:
    """uname -r of the kernel a build/headers directory belongs to.

    UTS_RELEASE first: Debian's headers carry the upstream version
    ("6.1.192") in include/config/kernel.release but the real release
    ("6.1.0-57-amd64") in utsrelease.h.
    """
    uts = kdir / "include" / "generated" / "utsrelease.h"
    if uts.exists():
        m = re.search(r'UTS_RELEASE\s+"([^"]+)"', uts.read_text())
        if m:
            return m.group(1)
    rel = kdir / "include" / "config" / "kernel.release"
    if rel.exists():
        return rel.read_text().strip()
    out = run(["make", "-s", "-C", kdir, "kernelrelease"], what="make kernelrelease")
    return out.strip().splitlines()[-1]


def prepare(spec: str, *, variant: str = "default") -> Prepared:
    kind, args = parse_spec(spec)
    if kind == "debian":
        if variant != "default":
            raise RunnerError("a debug config needs a source kernel "
                              "(source:debian-6.12)")
        k = debian.fetch(args[0])
        module = build_module(k.kdir, k.release)
        binary = build_selftest(REPO / SELFTEST, REPO, _kselftest_tree())
        image = vmlinux.uncompressed(k.image) or k.image
        return Prepared(spec, k.release, image, module, binary, None,
                        {"kind": "debian", "release": k.release,
                         "packages": k.packages, "boot_image": str(image)})
    if kind == "source":
        tree, sel = args
        k = source.prepare(tree, sel, variant)
        module = k.module or build_module(k.build, k.release)
        if sel == "none":
            binary = build_selftest(REPO / SELFTEST, REPO, k.tree)
            vmtests = None
        else:
            binary = build_selftest(k.tree / SELFTEST, k.tree, k.tree)
            vmtests = k.tree / "tools/testing/selftests/mm/run_vmtests.sh"
        return Prepared(spec, k.release, k.image, module, binary, vmtests,
                        {"kind": "source", "tree": str(k.base),
                         "base_commit": k.base_commit, "patches": k.patches,
                         "selection": sel, "config": variant})
    image, moddir = Path(args[0]).resolve(), Path(args[1]).resolve()
    if not image.exists():
        raise UsageError(f"kernel image {image} does not exist")
    if (moddir / "Makefile").exists():
        release = _release_of(moddir)
        module = build_module(moddir, release)
    else:
        found = sorted(moddir.rglob("test_gup_fast.ko"))
        if not found:
            raise RunnerError(f"{moddir} is neither a kernel build/headers "
                              "directory (no Makefile) nor a module tree with "
                              "test_gup_fast.ko")
        module = found[0]
        vermagic = subprocess.run(["modinfo", "-F", "vermagic", str(module)],
                                  capture_output=True, text=True).stdout.split()
        if not vermagic:
            raise RunnerError(f"cannot read the vermagic of {module}")
        release = vermagic[0]
    binary = build_selftest(REPO / SELFTEST, REPO, _kselftest_tree())
    boot_image = vmlinux.uncompressed(image) or image
    return Prepared(spec, release, boot_image, module, binary, None,
                    {"kind": "image", "image": str(image), "modules": str(moddir),
                     "boot_image": str(boot_image)})
