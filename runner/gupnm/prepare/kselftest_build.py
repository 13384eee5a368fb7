"""Build selftests/mm of a patched source tree the ways pipelines do.

The cached worktree of a source kernel (source.prepare) is shared with other
runs, and selftests/mm's Makefile writes into its own source directory
(local_config.h, local_config.mk, and the binaries when built in tree). So
everything happens in a scratch copy, keyed by what it is made of (the
git trees of tools/, of the files outside it and of the uapi directories:
content_key), so that the kernels of one series that differ only in
mm/gup.c (:all, :nofix, :wrongfix) share one build:

  <cache>/kselftest-paths/<key>/tree        `git archive` of the commit's
                                            tools/ and the few files outside
                                            it that selftests/mm includes,
                                            plus usr/include (headers_install)
  .../tree/tools/testing/selftests/mm       built in tree:
                                            `make -C tools/testing/selftests
                                            TARGETS=mm` (what run_tests runs)
  .../install                               `make ... install`
  .../kselftest.tar.gz                      `make ... gen_tar`

The worktree itself is only read (git archive, and `make O=<scratch>
headers_install`, which writes under O= only).
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..host import RunnerError, cache_dir, locked, progress, run
from ..hosttools import install_packages

# Outside tools/, selftests/mm includes these (-I $(top_srcdir)) and
# the top-level selftests Makefile includes scripts/subarch.include.
OUTSIDE_TOOLS = ("scripts/subarch.include", "mm/gup_test.h", "lib/test_hmm_uapi.h",
                 "include/vdso")
SELFTESTS = "tools/testing/selftests"
# Host packages selftests/mm needs to build in full (7.3) and install.
HOST_PACKAGES = ("libcap-dev", "libnuma-dev", "liburing-dev", "rsync")
# What `make headers_install` reads, and the kernel's ARCH, per guest arch.
UAPI_DIRS = {"amd64": ("include/uapi", "arch/x86/include/uapi"),
             "arm64": ("include/uapi", "arch/arm64/include/uapi")}
KERNEL_ARCH = {"amd64": "x86_64", "arm64": "arm64"}
# arm64: cross-built in a trixie root with arm64's -dev packages beside the
# amd64 cross compiler (multiarch inside the root; the host's dpkg is left
# alone). The guest's userland (runner/gupnm/prepare/kselftest_arm64.py)
# comes from the same suite, so the libraries match.
ARM64_SUITE = "trixie"
ARM64_BUILD_PACKAGES = ["gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross", "make",
                        "rsync", "libcap-dev:arm64", "libnuma-dev:arm64",
                        "liburing-dev:arm64"]
ARM64_MAKE_ARGS = ["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-"]
KSFT_SKIP_SLIP = re.compile(r"khugepaged\.c:.*KSFT_SKIP\W* undeclared")


@dataclass
class Built:
    commit: str
    tree: Path          # scratch copy, selftests/mm built in it
    install: Path       # make install (run_kselftest.sh, kselftest-list.txt)
    tarball: Path       # make gen_tar
    wrapper: str        # the collection:test pipelines run ("mm:ksft_gup_test.sh")
    run_tests_args: list[str]   # make arguments for run_tests (see wrapper_of)
    extra_cflags: str   # what the build needed beyond the tree's Makefile
    log: Path


def wrapper_of(selftests_mm: Path) -> tuple[str, list[str]]:
    """The test pipelines run, and how run_tests is narrowed to it.

    7.3 lists one ksft_<category>.sh wrapper per category in TEST_PROGS;
    each passes -t to run_vmtests.sh, which overrides VM_SELFTEST_ITEMS, so
    a plain run_tests would run all 33 categories: TEST_PROGS is narrowed
    to our wrapper on the command line: the test runs in the gup_test
    category (with gup_test and gup_longterm). 6.12 has run_vmtests.sh
    alone in TEST_PROGS and honours VM_SELFTEST_ITEMS.
    """
    if (selftests_mm / "ksft_gup_test.sh").exists():
        return "mm:ksft_gup_test.sh", ["TEST_PROGS=ksft_gup_test.sh"]
    return "mm:run_vmtests.sh", []


def ensure_packages(packages=HOST_PACKAGES) -> None:
    """Install @packages (Debian's) that are missing, as the runner's tools
    are (hosttools: waits for apt's locks, never with --no-install); as
    non-root, say so."""
    install_packages(packages, "the kselftest paths")


def build(worktree: Path, arch: str = "amd64", commit: str | None = None) -> Built:
    """Scratch copy of @worktree's patched commit, built, installed, tarred
    (@arch: the guest's; arm64 cross-built, see ARM64_SUITE). @commit: the
    commit to build, when @worktree is the base git tree (its checkout then
    gives the uapi headers, which the series leaves alone:
    source.patched_commit) or a source kernel's shared worktree, which
    another selection may have checked out since (source.held); default
    @worktree's HEAD."""
    commit = commit or run(["git", "-C", worktree, "rev-parse", "HEAD"]).strip()
    name = content_key(worktree, commit, arch) + ("" if arch == "amd64" else f"-{arch}")
    root = cache_dir() / "kselftest-paths" / name
    root.parent.mkdir(parents=True, exist_ok=True)
    with locked(cache_dir() / "locks" / f"kselftest-{name}.lock"):
        return _build_locked(worktree, commit, root, arch)


def content_key(worktree: Path, commit: str, arch: str = "amd64") -> str:
    """A digest of the git objects the scratch copy of @commit is made of:
    tools/, OUTSIDE_TOOLS (absent ones named so) and the uapi directories
    of @arch. Commits that differ elsewhere (mm/gup.c) get the same key."""
    h = hashlib.sha256()
    for path in ("tools", *OUTSIDE_TOOLS, *UAPI_DIRS[arch]):
        proc = subprocess.run(["git", "-C", str(worktree), "rev-parse", "--verify",
                               "-q", f"{commit}:{path}"], capture_output=True, text=True)
        h.update(f"{path}\0{proc.stdout.strip() if proc.returncode == 0 else '-'}\0"
                 .encode())
    return h.hexdigest()[:16]


def _maker(arch: str, root: Path):
    """How `make` runs for @arch: on the host (amd64), or in the arm64 build
    root with the scratch directory @root bound at its own path (returns a
    run-like callable and the make arguments every call takes)."""
    if arch == "amd64":
        return run, []
    from . import chroot
    broot = chroot.root_with(ARM64_SUITE, ARM64_BUILD_PACKAGES,
                             name=f"{ARM64_SUITE}-kselftest-arm64",
                             what=f"a {ARM64_SUITE} root with arm64's selftest "
                                  "libraries and a cross compiler",
                             arches=("amd64", "arm64"))

    def in_root(cmd, **kw):
        inner = root.relative_to("/")
        script = (f'mkdir -p "{broot / inner}" && mount -t proc proc "{broot}/proc" && '
                  f'mount --bind "{root}" "{broot / inner}" && '
                  f'exec chroot "{broot}" {shlex.join(str(c) for c in cmd)}')
        return run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    script], env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                  "LC_ALL": "C.UTF-8"}, **kw)
    return in_root, ARM64_MAKE_ARGS


def _built(commit: str, root: Path, extra: str) -> Built:
    tree = root / "tree"
    wrapper, args = wrapper_of(tree / SELFTESTS / "mm")
    return Built(commit, tree, root / "install", root / "kselftest.tar.gz",
                 wrapper, args, extra, root / "build.log")


def _build_locked(worktree: Path, commit: str, root: Path, arch: str) -> Built:
    stamp = root / ".done"
    if stamp.exists():
        return _built(commit, root, stamp.read_text().strip())
    if arch == "amd64":
        ensure_packages()
    tree = root / "tree"
    headers = root / ".headers"
    if not headers.exists() and root.exists():
        shutil.rmtree(root)
    tree.mkdir(parents=True, exist_ok=True)
    log = root / "build.log"
    progress(f"selftests/mm of {commit[:12]}: scratch copy in {root}")
    # Only what the commit has (lib/test_hmm_uapi.h came with 5.x).
    present = [p for p in OUTSIDE_TOOLS if subprocess.run(
        ["git", "-C", str(worktree), "cat-file", "-e", f"{commit}:{p}"],
        capture_output=True).returncode == 0]
    archive = subprocess.run(["git", "-C", str(worktree), "archive", commit,
                              "tools", *present], capture_output=True)
    if archive.returncode:
        raise RunnerError(f"git archive of {worktree} failed: "
                          + archive.stderr.decode(errors="replace"))
    _untar(archive.stdout, tree)
    if not headers.exists():
        shutil.copytree(_headers(worktree, commit, log, arch), tree / "usr",
                        symlinks=True, dirs_exist_ok=True)
        headers.write_text("")

    runner, cross = _maker(arch, root)
    make = ["make", "-C", tree / SELFTESTS, "TARGETS=mm", *cross]
    jobs = f"-j{os.cpu_count() or 1}"
    progress("building selftests/mm (make -C tools/testing/selftests "
             f"TARGETS=mm{''.join(' ' + a for a in cross)}; log {log})")
    extra = ""
    try:
        runner([*make, jobs], log=log, what="make TARGETS=mm", tail=40)
    except RunnerError:
        if not KSFT_SKIP_SLIP.search(log.read_text(errors="replace")):
            raise
        # Debian's 6.12 khugepaged.c uses KSFT_SKIP without including
        # kselftest.h (a stable-backport slip): kselftest.h forced in.
        extra = f"-include {tree / SELFTESTS / 'kselftest.h'}"
        progress(f"khugepaged.c: KSFT_SKIP undeclared; again with EXTRA_CFLAGS='{extra}'")
        make.append(f"EXTRA_CFLAGS={extra}")
        runner([*make, jobs], log=log, what="make TARGETS=mm", tail=40)
    runner([*make, f"KSFT_INSTALL_PATH={root / 'install'}", "gen_tar"], log=log,
        what="make TARGETS=mm gen_tar", tail=40)
    packed = root / "install" / "kselftest-packages" / "kselftest.tar.gz"
    if not packed.exists():
        raise RunnerError(f"gen_tar did not write {packed} (log {log})")
    packed.rename(root / "kselftest.tar.gz")
    shutil.rmtree(packed.parent, ignore_errors=True)
    stamp.write_text(extra + "\n")
    return _built(commit, root, extra)


def _headers(worktree: Path, commit: str, log: Path, arch: str = "amd64") -> Path:
    """`make headers_install` of @commit, cached by what it is made of.

    A few minutes on a busy 2-core machine, and the same for every series
    on one base: keyed by the git trees of the uapi directories, which the
    series do not touch.
    """
    trees = [run(["git", "-C", worktree, "rev-parse", f"{commit}:{d}"]).strip()
             for d in UAPI_DIRS[arch]]
    key = "".join(t[:8] for t in trees)
    cached = cache_dir() / "kselftest-paths" / f"headers-{key}"
    with locked(cache_dir() / "locks" / f"kselftest-headers-{key}.lock"):
        if (cached / "include").is_dir():
            return cached
        checked_out = [run(["git", "-C", worktree, "rev-parse", f"HEAD:{d}"]).strip()
                       for d in UAPI_DIRS[arch]]
        if checked_out != trees:
            raise RunnerError(f"{worktree}'s checkout is not {commit[:12]} in "
                              f"{', '.join(UAPI_DIRS[arch])}: check the commit out "
                              "there to install its uapi headers")
        tmp = cached.with_name(cached.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        run(["make", "-C", worktree, f"O={tmp / 'hdr'}", f"ARCH={KERNEL_ARCH[arch]}",
             f"INSTALL_HDR_PATH={tmp / 'usr'}", "headers_install"], log=log,
            what="make headers_install")
        (tmp / "usr").rename(cached)
        shutil.rmtree(tmp, ignore_errors=True)
    return cached


def _untar(data: bytes, dest: Path) -> None:
    proc = subprocess.run(["tar", "-x", "-C", str(dest)], input=data,
                          capture_output=True)
    if proc.returncode:
        raise RunnerError("tar -x of the git archive failed: "
                          + proc.stderr.decode(errors="replace"))
