"""Build selftests/mm of a patched source tree the ways pipelines do.

The cached worktree of a source kernel (source.prepare) is shared with other
runs, and selftests/mm's Makefile writes into its own source directory
(local_config.h, local_config.mk, and the binaries when built in tree). So
everything happens in a scratch copy, keyed by the patched commit:

  <cache>/kselftest-paths/<commit>/tree     `git archive` of the commit's
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

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..host import RunnerError, cache_dir, locked, progress, run

# Outside tools/, selftests/mm includes these (-I $(top_srcdir)) and
# the top-level selftests Makefile includes scripts/subarch.include.
OUTSIDE_TOOLS = ("scripts/subarch.include", "mm/gup_test.h", "lib/test_hmm_uapi.h",
                 "include/vdso")
SELFTESTS = "tools/testing/selftests"
# Host packages selftests/mm needs to build in full (7.3) and install.
HOST_PACKAGES = ("libcap-dev", "libnuma-dev", "liburing-dev", "rsync")
# gcc quotes with ' or with ‘’ depending on the locale.
# What `make headers_install` reads (x86_64).
UAPI_DIRS = ("include/uapi", "arch/x86/include/uapi")
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


def _missing_packages(packages=HOST_PACKAGES) -> list[str]:
    missing = []
    for pkg in packages:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                              capture_output=True, text=True)
        if "install ok installed" not in proc.stdout:
            missing.append(pkg)
    return missing


def ensure_packages(packages=HOST_PACKAGES) -> None:
    """Install @packages (Debian's) that are missing; as non-root, say so."""
    missing = _missing_packages(packages)
    if not missing:
        return
    if os.geteuid() != 0:
        raise RunnerError("the kselftest paths need " + " ".join(missing)
                          + ": apt-get install them (as root)")
    progress("installing " + " ".join(missing))
    run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing],
        env={"DEBIAN_FRONTEND": "noninteractive"}, what="apt-get install")


def build(worktree: Path) -> Built:
    """Scratch copy of @worktree's patched commit, built, installed, tarred."""
    commit = run(["git", "-C", worktree, "rev-parse", "HEAD"]).strip()
    root = cache_dir() / "kselftest-paths" / commit[:16]
    root.parent.mkdir(parents=True, exist_ok=True)
    with locked(cache_dir() / "locks" / f"kselftest-{commit[:16]}.lock"):
        return _build_locked(worktree, commit, root)


def _built(commit: str, root: Path, extra: str) -> Built:
    tree = root / "tree"
    wrapper, args = wrapper_of(tree / SELFTESTS / "mm")
    return Built(commit, tree, root / "install", root / "kselftest.tar.gz",
                 wrapper, args, extra, root / "build.log")


def _build_locked(worktree: Path, commit: str, root: Path) -> Built:
    stamp = root / ".done"
    if stamp.exists():
        return _built(commit, root, stamp.read_text().strip())
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
        shutil.copytree(_headers(worktree, commit, log), tree / "usr",
                        symlinks=True, dirs_exist_ok=True)
        headers.write_text("")

    make = ["make", "-C", tree / SELFTESTS, "TARGETS=mm"]
    jobs = f"-j{os.cpu_count() or 1}"
    progress("building selftests/mm (make -C tools/testing/selftests "
             f"TARGETS=mm; log {log})")
    extra = ""
    try:
        run([*make, jobs], log=log, what="make TARGETS=mm", tail=40)
    except RunnerError:
        if not KSFT_SKIP_SLIP.search(log.read_text(errors="replace")):
            raise
        # Debian's 6.12 khugepaged.c uses KSFT_SKIP without including
        # kselftest.h (a stable-backport slip): kselftest.h forced in.
        extra = f"-include {tree / SELFTESTS / 'kselftest.h'}"
        progress(f"khugepaged.c: KSFT_SKIP undeclared; again with EXTRA_CFLAGS='{extra}'")
        make.append(f"EXTRA_CFLAGS={extra}")
        run([*make, jobs], log=log, what="make TARGETS=mm", tail=40)
    run([*make, f"KSFT_INSTALL_PATH={root / 'install'}", "gen_tar"], log=log,
        what="make TARGETS=mm gen_tar", tail=40)
    packed = root / "install" / "kselftest-packages" / "kselftest.tar.gz"
    if not packed.exists():
        raise RunnerError(f"gen_tar did not write {packed} (log {log})")
    packed.rename(root / "kselftest.tar.gz")
    shutil.rmtree(packed.parent, ignore_errors=True)
    stamp.write_text(extra + "\n")
    return _built(commit, root, extra)


def _headers(worktree: Path, commit: str, log: Path) -> Path:
    """`make headers_install` of @commit, cached by what it is made of.

    A few minutes on a busy 2-core machine, and the same for every series
    on one base: keyed by the git trees of the uapi directories, which the
    series do not touch.
    """
    key = "".join(run(["git", "-C", worktree, "rev-parse", f"{commit}:{d}"]).strip()[:8]
                  for d in UAPI_DIRS)
    cached = cache_dir() / "kselftest-paths" / f"headers-{key}"
    with locked(cache_dir() / "locks" / f"kselftest-headers-{key}.lock"):
        if (cached / "include").is_dir():
            return cached
        tmp = cached.with_name(cached.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        run(["make", "-C", worktree, f"O={tmp / 'hdr'}", "ARCH=x86_64",
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
