"""Build the module with the compiler the kernel was built with.

A Debian kernel names its compiler in CONFIG_CC_VERSION_TEXT ("x86_64-
linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0"). When the host has that
compiler the module builds on the host. Otherwise it builds in a minimal
root of the kernel's own suite (trixie for trixie and trixie-backports
kernels, sid for sid), made once with mmdebstrap from Debian's archive and
cached: another suite's compiler is never installed on the host. The
kernel's headers are unpacked inside that root at their own /usr/src paths,
so the absolute paths in Debian's headers work as packaged, and the kbuild
tools run against the libc they were linked with.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..host import REPO, RunnerError, UsageError, cache_dir, locked, progress, run
from ..hosttools import ensure_tools
from . import apt, cache, debian
from .modsource import gup_test_source

# perl: kernel-doc (W=1) on 6.12; python3: its successor on newer trees.
BUILD_PACKAGES = ["make", "libc6-dev", "libelf-dev", "dwarves", "bc", "kmod",
                  "perl", "python3"]
MIRROR = os.environ.get("GUPNM_DEBIAN_MIRROR", "http://deb.debian.org") + "/debian"


# The distributions a build root can be made of, oldest first.
BASE_SUITES = ("bookworm", "trixie", "sid")


def compiler_of(cc_text: str) -> tuple[str, str]:
    """(command, Debian package) of a CONFIG_CC_VERSION_TEXT: the command is
    its first word, the package gcc-N for x86_64-linux-gnu-gcc-N."""
    cmd = cc_text.split(" ", 1)[0]
    m = re.search(r"\bgcc-(\d+)$", cmd)
    if not m:
        raise RunnerError(f"cannot tell the compiler package of '{cc_text}' "
                          "(CONFIG_CC_VERSION_TEXT): only gcc-N is supported")
    return cmd, f"gcc-{m.group(1)}"


def kernel_suites(release: str, arch: str = "amd64") -> list[str]:
    """The archive suites that offer the kernel @release ([] when Debian
    does not offer it): what a debian: spec's kernel carries with it."""
    return sorted({s for o in debian.catalogue(arch) if o.release == release
                   for s in o.suites})


def suite_for(package: str, suites: list[str]) -> str:
    """The suite whose root builds a module with @package (gcc-N, or its
    cross compiler): the kernel's own (the base of @suites, the archive
    suites offering the kernel: its kbuild tools run against that suite's
    libc), else, for a kernel Debian does not offer, the oldest suite whose
    archive has @package."""
    if suites:
        return debian.base_suite(suites)
    offering = _offering(package)
    found = [s for s in BASE_SUITES if s in offering]
    if not found:
        raise UsageError(f"no Debian suite ({', '.join(BASE_SUITES)}) offers "
                         f"{package}: no build root can provide it")
    return found[0]


def _offering(package: str) -> set[str]:
    """The base suites whose archive has @package (the runner's apt lists)."""
    return {debian.base_suite([o.suite]) for o in apt.madison([package])
            if o.suite in debian.SUITES}


def pick_root(package: str, suites: list[str]) -> tuple[str, Path]:
    """(suite, root) that builds a module with @package for a kernel the
    archive offers in @suites (suite_for); the root is made on first use,
    once the suite is seen to offer @package (else bad input: exit 2)."""
    suite = suite_for(package, suites)
    if (suites and not (_root_path(suite, package) / ".gupnm-ready").exists()
            and suite not in _offering(package)):
        raise UsageError(f"Debian's {suite} offers no {package}: no {suite} "
                         "build root can provide it")
    return suite, root_for(suite, package)


def host_has(cc_text: str) -> bool:
    """True when the host runs the very compiler the kernel names."""
    cmd = cc_text.split(" ", 1)[0]
    if not cmd or not shutil.which(cmd):
        return False
    out = subprocess.run([cmd, "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0].strip() == cc_text.strip() if out else False


def _root_path(suite: str, gcc_pkg: str) -> Path:
    """Where root_for(@suite, @gcc_pkg) is (made or not)."""
    return _path_with(suite, [gcc_pkg, *BUILD_PACKAGES], f"{suite}-{gcc_pkg}")[0]


def _path_with(suite: str, packages: list[str], name: str,
               arches: tuple[str, ...] = (), variant: str = "apt") -> tuple[Path, list[str]]:
    words = [suite, *packages, MIRROR, *arches] + ([variant] if variant != "apt" else [])
    key = hashlib.sha256(" ".join(words).encode()).hexdigest()[:12]
    return cache_dir() / "chroots" / f"{name}-{key}", words


def root_for(suite: str, gcc_pkg: str) -> Path:
    """A cached build root of @suite with @gcc_pkg; made on first use."""
    return root_with(suite, [gcc_pkg, *BUILD_PACKAGES], name=f"{suite}-{gcc_pkg}",
                     what=f"a {suite} build root with {gcc_pkg}")


def root_with(suite: str, packages: list[str], *, name: str, what: str,
              arches: tuple[str, ...] = (), variant: str = "apt") -> Path:
    """A cached root of @suite holding @packages (mmdebstrap @variant; extra
    dpkg architectures @arches, e.g. amd64 + arm64 for arm64 -dev packages
    beside an amd64 cross compiler); made on first use, once."""
    root, words = _path_with(suite, packages, name, arches, variant)
    with locked(cache_dir() / "locks" / f"chroot-{root.name}.lock"):
        if (root / ".gupnm-ready").exists():
            why = cache.check_tree(root)
            if why is None:
                cache.listed(root, ROOT_SKIP)
                return root
            cache.discard(root, why)
        ensure_tools(extra={"mmdebstrap": "mmdebstrap"})
        tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent
                                    if root.parent.exists() else _mk(root.parent)))
        tmp.rmdir()                 # mmdebstrap wants to create it
        progress(f"making {what} (mmdebstrap, about a minute, once)")
        log = root.parent / f"{root.name}.log"
        arch_args = [f"--architectures={','.join(arches)}"] if arches else []
        try:
            run(["mmdebstrap", f"--variant={variant}", "--mode=root", *arch_args,
                 "--include=" + ",".join(packages),
                 "--aptopt=Acquire::Check-Valid-Until \"false\"",
                 suite, tmp, MIRROR], log=log, what=f"mmdebstrap {suite}")
        except RunnerError:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        (tmp / ".gupnm-ready").write_text(" ".join(words) + "\n")
        cache.record_tree(tmp, ROOT_SKIP)
        shutil.rmtree(root, ignore_errors=True)
        tmp.rename(root)
        if (why := cache.check_tree(root)):
            raise cache.CacheError(f"build root {root} fails its check once made "
                                   f"afresh ({why}): runner/gupnm-run cache --clean "
                                   "chroots, then run again; if it persists, the disk "
                                   "may be failing")
        return root


# What a build root's listing (cache.TREE) leaves out: where builds work and
# what the kernel mounts or makes there.
ROOT_SKIP = ("tmp", "proc", "dev")


def record(root: Path) -> None:
    """@root's listing made again after the runner changed the root on
    purpose (the amd64 kbuild tools unpacked over the arm64 ones), so that
    the next use does not take that change for a root cut short."""
    with locked(cache_dir() / "locks" / f"chroot-{root.name}.lock"):
        cache.record_tree(root, ROOT_SKIP)


def _mk(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def install_headers(root: Path, debs: list[Path], release: str,
                    present: Callable[[list[Path]], list[Path]] | None = None) -> Path:
    """Unpack the kernel's header packages inside @root; the headers dir.
    @present: gives the files of the header packages of @debs, downloading
    again those dropped since their kernel was unpacked (asked only when
    @root lacks the headers)."""
    kdir = root / "usr" / "src" / f"linux-headers-{release}"
    key = hashlib.sha256("\n".join(d.name for d in debs).encode()).hexdigest()[:12]
    marker = root / "usr" / "src" / f".gupnm-{release}-{key}"
    with locked(cache_dir() / "locks" / f"chroot-{root.name}.lock"):
        if not marker.exists():
            wanted = [d for d in debs
                      if re.match(r"linux-(headers|kbuild|base|compiler)-", d.name)]
            for deb in (present(wanted) if present else wanted):
                run(["dpkg-deb", "-x", deb, root], what=f"dpkg-deb -x {deb.name}")
            cache.record_tree(root, ROOT_SKIP)   # the headers are checked too
            marker.write_text(release + "\n")
    if not (kdir / "Makefile").exists():
        raise RunnerError(f"{kdir}/Makefile missing after unpacking the headers "
                          f"into {root}")
    return kdir


MODULE_FILES = ["oot/Kbuild", "oot/gup_test_compat.h", "oot/internal.h",
                 "oot/build-module.sh"]


@dataclass(frozen=True)
class Bound:
    """Headers that stay outside a build root (image:'s DIR) and are bound
    into it, read-only, for one build: each (host folder, path inside the
    root), the headers' own path inside the root being @kdir."""
    suite: str
    root: Path
    kdir: str
    binds: tuple[tuple[Path, str], ...]


def _mounts(root: Path, binds) -> str:
    """The shell commands that bind @binds into @root, read-only; their
    mount points are made first (empty folders of the root)."""
    out = ""
    for host, inside in binds:
        point = root / inside.lstrip("/")
        point.mkdir(parents=True, exist_ok=True)
        out += (f"mount --bind -o ro {shlex.quote(str(host))} "
                f"{shlex.quote(str(point))} && ")
    return out


def build_module(root: Path, release: str, out: Path, log: Path,
                 extra: list[str] | None = None, bound: Bound | None = None) -> Path:
    """Build the series' gup_test.ko inside @root against its headers of
    @release, or against @bound's headers bound into it; copy the module and
    the build log's output to @out."""
    ensure_tools(extra={"unshare": "util-linux", "chroot": "coreutils", "mount": "mount"})
    work = Path(tempfile.mkdtemp(prefix="gupnm-build-", dir=_mk(root / "tmp")))
    try:
        for name in MODULE_FILES:
            dest = work / "src" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest)
        (work / "out").mkdir()
        for name in ("gup_test.c", "gup_test.h"):
            shutil.copy2(gup_test_source() / name, work / "out" / name)
        inner = "/" + str(work.relative_to(root))
        kdir = bound.kdir if bound else f"/usr/src/linux-headers-{release}"
        cmd = shlex.join([f"{inner}/src/oot/build-module.sh", kdir, f"{inner}/out",
                          *(extra or [])])
        # A private mount namespace: /proc (objtool needs it) and the bound
        # headers disappear with the process, whatever happens to the build.
        script = (f"mount -t proc proc {shlex.quote(str(root / 'proc'))} && "
                  + _mounts(root, bound.binds if bound else ())
                  + f"exec chroot {shlex.quote(str(root))} /bin/sh -c "
                  + shlex.quote(cmd))
        run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            log=log, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8"},
            what=f"module build in {root.name}")
        ko = work / "out" / "gup_test.ko"
        if not ko.exists():
            raise RunnerError(f"module build in {root} left no gup_test.ko; "
                              f"see {log}")
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ko, out / ko.name)
        return out / ko.name
    finally:
        shutil.rmtree(work, ignore_errors=True)
