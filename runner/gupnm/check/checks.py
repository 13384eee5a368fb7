"""`make check`: everything that proves the test right, as counted checks.

Host checks: the runner's unit tests, the module against Debian's 6.1 and
6.12 headers with W=1 (and sparse when installed), the selftest with
-Werror, shellcheck, checkpatch --strict on every patch, the series applying
with git am and patch -p1 to linux-source-6.12 and matching what
patchgen/gen-series.sh makes. VM checks: the expected verdict on real
kernels, default and debug configs (see matrix.py). Prints one `ok`/`not ok` line per check and ends
with `N passed, N failed`.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..host import REPO, RunnerError, cache_dir
from ..hosttools import ensure_tools
from ..prepare import chroot, debian, modsource, source
from . import (arm64_checks, contract, doc_facts, docs_short, kselftest_checks, matrix,
               mutation, numa, probe_checks, revision, sending)
from .tally import Tally


def _sh(cmd, cwd=None, env=None) -> tuple[int, str]:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})))
    return proc.returncode, proc.stdout + proc.stderr


def check_unit(t: Tally) -> None:
    rc, out = _sh([sys.executable, REPO / "runner/tests/run_unit_tests.py"])
    m = re.search(r"^(\d+) passed, (\d+) failed", out, re.M)
    passed = int(m.group(1)) if m else 0
    failed = int(m.group(2)) if m else 1
    t.record(f"unit: runner unit tests ({passed} passed, {failed} failed)",
             rc == 0 and failed == 0 and passed > 0, out)


def check_module_builds(t: Tally) -> None:
    sparse = shutil.which("sparse") is not None
    # The kernels built with the host's own compiler (bookworm's gcc-12):
    # the newest of bookworm-security (6.12.y+deb12) and 6.1.
    for series in ("bookworm-security", "6.1"):
        def build(series=series, sparse=sparse):
            k = debian.fetch(series)
            out = Path(tempfile.mkdtemp(prefix=f"gupnm-mod-{series}-"))
            extra = ["C=1"] if sparse else []
            rc, log = _sh([REPO / "oot/build-module.sh", k.kdir, out, "W=1", *extra])
            shutil.rmtree(out, ignore_errors=True)
            warnings = [l for l in log.splitlines()
                        if re.search(r"warning:|error:", l)]
            return rc == 0 and not warnings, "\n".join(warnings) or log
        what = "W=1" + (" C=1 (sparse)" if sparse else "")
        t.guard(f"host: module builds against Debian {series} headers "
                f"(host gcc), {what}, no warnings", build)

    def build_in_root(spec):
        # Debian's 7.x kernels name gcc-14 (trixie) or newer: the build runs
        # in a root of the kernel's suite, as the runner does for them.
        k = debian.fetch(spec)
        cc = debian.cc_version_text(k.kdir)
        _, root = chroot.pick_root(chroot.compiler_of(cc)[1], k.offered.suites)
        chroot.install_headers(root, k.debs, k.release, lambda debs: debian.present_debs(k, debs))
        with tempfile.TemporaryDirectory() as out:
            log = Path(out) / "build.log"
            chroot.build_module(root, k.release, Path(out) / "ko", log, ["W=1"])
            text = log.read_text()
        warnings = [l for l in text.splitlines() if re.search(r"warning:|error:", l)]
        return not warnings, "\n".join(warnings) or f"built with {cc}"
    for spec in ("6.12", "7.3"):
        t.guard(f"host: module builds against Debian {spec} headers with the "
                "kernel's own compiler (suite root), W=1, no warnings",
                lambda spec=spec: build_in_root(spec))


def _test_build(cc: str, out: Path) -> list:
    """The test's build command for @cc into @out, as the runner builds it:
    includes and helpers (vm_util.c, hugepage_settings.c) from generated/
    (modsource); the helpers without -Werror, their warnings upstream's."""
    incs = [a for inc in modsource.selftest_includes() for a in ("-I", str(inc))]
    libs = [str(p) for p in modsource.selftest_libs()]
    n = len(incs)
    return ["bash", "-c", 'cc=$1 out=$2; shift 2; incs=("${@:1:%d}"); shift %d; objs=(); '
            'for c in "$@"; do objs+=("$out.${c##*/}.o"); '
            '"$cc" -O2 "${incs[@]}" -c -o "${objs[-1]}" "$c" || exit; done; '
            '"$cc" -static -O2 -Wall -Wextra -Werror "${incs[@]}" -o "$out" '
            f'"{REPO / "tools/testing/selftests/mm/gup_null_mapping.c"}" "${{objs[@]}}" '
            '-lpthread -lm' % (n, n),
            "-", cc, str(out), *incs, *libs]


def check_selftest_build(t: Tally, base: Path) -> None:
    def build():
        with tempfile.TemporaryDirectory() as tmp:
            rc, out = _sh(_test_build("gcc", Path(tmp) / "t"))
            return rc == 0, out
    t.guard("host: gup_null_mapping compiles with -Wall -Wextra -Werror", build)


# make check runs the NUMA pressure check short; make check-numa runs 200.
NUMA_SHORT_RUNS = 20
CROSS_CC = "aarch64-linux-gnu-gcc"
# Debian's cross compilers the test must build with, each from gcc-<triplet>
# and libc6-dev-<arch>-cross (.ci/run installs them): syscall numbers and
# types differ between them (memfd_secret has no number on some).
CROSS_CCS = {"arm64": CROSS_CC, "armhf": "arm-linux-gnueabihf-gcc",
             "ppc64el": "powerpc64le-linux-gnu-gcc", "s390x": "s390x-linux-gnu-gcc",
             "riscv64": "riscv64-linux-gnu-gcc"}


def _cross_build(cc: str, src: Path | None, includes: list[str]) -> tuple[bool, str]:
    """@src built with @cc and @includes, or the test (@src None) as the
    runner builds it."""
    if not shutil.which(cc):
        return False, f"{cc} not found: apt-get install gcc-{cc[:-len('-gcc')]} (.ci/run does)"
    with tempfile.TemporaryDirectory() as tmp:
        if src is None:
            rc, out = _sh(_test_build(cc, Path(tmp) / "t"))
        else:
            rc, out = _sh([cc, "-static", "-O2", "-Wall", "-Wextra", "-Werror",
                           *includes, "-o", Path(tmp) / "t", src, "-lpthread", "-lm"])
        return rc == 0, out


def check_cross_builds(t: Tally, base: Path) -> None:
    """The test for every architecture of CROSS_CCS and the stress program
    for arm64, -Wall -Wextra -Werror: nothing x86-only."""
    for arch, cc in CROSS_CCS.items():
        t.guard(f"host: gup_null_mapping cross-compiles for {arch} ({cc}) with "
                "-Wall -Wextra -Werror",
                lambda cc=cc: _cross_build(cc, None, []))
    stress_inc = ["-I", str(modsource.include_root()),
                  "-I", str(base / "tools/testing/selftests")]
    t.guard(f"host: gupnm_stress cross-compiles for arm64 ({CROSS_CC}) with "
            "-Wall -Wextra -Werror",
            lambda: _cross_build(CROSS_CC, REPO / "hardening/gupnm_stress.c", stress_inc))


def shell_scripts() -> list[Path]:
    files = sorted(REPO.glob("**/*.sh")) + [REPO / ".ci/run",
                                             REPO / "runner/guest/init",
                                             REPO / "runner/guest/lab-init"]
    return [f for f in files if f.exists() and "/results/" not in str(f)]


def check_shellcheck(t: Tally) -> None:
    for f in shell_scripts():
        shell = "sh" if f.name in ("init", "lab-init") else "bash"
        # -x from the top: a sourced file (patchgen/identity.sh) is checked too
        rc, out = _sh(["shellcheck", "-x", "-s", shell, f], cwd=REPO)
        t.record(f"host: shellcheck {f.relative_to(REPO)}", rc == 0, out)


def patch_files(series: str) -> list[Path]:
    names = (REPO / "patches" / series / "series").read_text().split()
    return [REPO / "patches" / series / n for n in names]


def check_series(t: Tally, series: str, base: Path) -> None:
    """@series (patches/<series>) against its base tree @base."""
    label = f"series {series}"
    patches = patch_files(series)
    t.guard(f"{label}: patches/{series} is what patchgen/gen-series.sh makes",
            lambda: _series_is_current(series, base))

    am_tree = Path(tempfile.mkdtemp(prefix="gupnm-am-"))
    _sh(["git", "-C", base, "worktree", "add", "-q", "--detach", am_tree, "HEAD"])
    applied = t.guard(f"{label}: git am onto {base.name}",
                      lambda: _git_am(base, am_tree, patches))
    t.guard(f"{label}: patch -p1 onto {base.name}", lambda: _patch_p1(base, patches))
    if series != "stable-6.12":     # stable: the fix alone, no test
        t.guard(f"{label}: gup_null_mapping builds with the tree's own "
                "selftests/mm Makefile, no warnings",
                lambda: _kselftest_builds(am_tree, applied))
    if series != "stable-6.12":     # stable's -g needs a mainline: check.sending
        t.guard(f"{label}: drafts carry no Signed-off-by of the project's; "
                "make patches-to-send adds the sender's",
                lambda: _signoffs(series, base, patches))

    try:
        checkpatch = base / "scripts/checkpatch.pl"
        for p in patches:
            t.guard(f"{label}: checkpatch --strict {p.name}",
                    lambda p=p: run_checkpatch(am_tree if applied else base,
                                               checkpatch, p))
    finally:
        _sh(["git", "-C", base, "worktree", "remove", "--force", am_tree])
    fixes = [p for p in patches if source.is_fix(p)]
    if series == "stable-6.12":
        t.guard(f"{label}: the fix alone, as a backport of {UPSTREAM_FIX} "
                "(upstream author, 'commit <full sha> upstream.' line, no "
                "words or trailers of upstream's written here, the note)",
                lambda: _backport(patches, fixes))
    else:
        t.guard(f"{label}: does not carry the fix (it is upstream)",
                lambda: (not fixes, ", ".join(p.name for p in fixes)))


def _series_is_current(series: str, base: Path) -> tuple[bool, str]:
    """patches/@series is what patchgen/gen-series.sh makes now."""
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = _sh([REPO / "patchgen/gen-series.sh", "-o", tmp, "-b", base,
                       series])
        if rc:
            return False, out
        rc, diff = _sh(["diff", "-ru", REPO / "patches" / series, tmp])
        return rc == 0, ("patches/ is stale: run make patches\n" + diff)


def check_generated(t: Tally, base: Path) -> None:
    """generated/ is what patchgen/gen-generated.sh writes from @base, the
    upstream series' base tree, and the series' hunks."""
    t.guard("generated/ is what patchgen/gen-generated.sh makes (make patches)",
            lambda: _generated_is_current(base))


def _generated_is_current(base: Path) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "generated"
        rc, text = _sh([REPO / "patchgen/gen-generated.sh", "-b", base, "-o", out])
        if rc:
            return False, text
        rc, diff = _sh(["diff", "-ru", REPO / "generated", out])
        return rc == 0, ("generated/ is stale: run make patches\n" + diff)


def _git_am(base: Path, am_tree: Path, patches: list[Path]) -> tuple[bool, str]:
    """git am of every patch onto @am_tree, a worktree of @base's HEAD."""
    rc, out = _sh(["git", "-C", am_tree, "-c", "user.name=check",
                   "-c", "user.email=check@localhost", "am", "-q", *patches])
    head = _sh(["git", "-C", base, "rev-parse", "HEAD"])[1].strip()
    n = _sh(["git", "-C", am_tree, "rev-list", "--count", f"{head}..HEAD"])[1]
    n = n.strip() if rc == 0 else "0"
    return rc == 0 and n == str(len(patches)), out + f"\n{n} commits applied"


def _patch_p1(base: Path, patches: list[Path]) -> tuple[bool, str]:
    """patch -p1 of every patch onto @base's HEAD."""
    # patch(1) needs only the files the series touches: check out just
    # those instead of the whole tree.
    wt = Path(tempfile.mkdtemp(prefix="gupnm-p1-"))
    touched = sorted({f for p in patches for f in re.findall(
        r"^diff --git a/(\S+) ", p.read_text(), re.M)})
    existing = [f for f in touched if _sh(["git", "-C", base, "cat-file",
                                            "-e", f"HEAD:{f}"])[0] == 0]
    try:
        _sh(["git", "-C", base, "worktree", "add", "-q", "--detach",
             "--no-checkout", wt, "HEAD"])
        rc, out = _sh(["git", "-C", wt, "checkout", "HEAD", "--", *existing])
        if rc:
            return False, out
        for p in patches:
            rc, out = _sh(["patch", "-p1", "--batch", "--forward", "-s",
                           "-i", p], cwd=wt)
            if rc:
                return False, f"{p.name}:\n{out}"
        return True, ""
    finally:
        _sh(["git", "-C", base, "worktree", "remove", "--force", wt])


def _kselftest_builds(am_tree: Path, applied: bool) -> tuple[bool, str]:
    """gup_null_mapping built by the patched tree's selftests/mm Makefile."""
    if not applied:
        return False, "the series did not apply"
    with tempfile.TemporaryDirectory() as out:
        rc, log = _sh(["make", "-C", am_tree / "tools/testing/selftests/mm",
                       f"OUTPUT={out}", f"{out}/gup_null_mapping"])
        warnings = [l for l in log.splitlines() if "warning:" in l]
        return rc == 0 and not warnings, "\n".join(warnings) or log


def _signoffs(series: str, base: Path, patches: list[Path]) -> tuple[bool, str]:
    """The committed drafts are unsigned; make patches-to-send (-g) adds
    the sender's own Signed-off-by to every patch."""
    ours = [p.name for p in patches if re.search(
        r"^Signed-off-by: .*example\.org>$", p.read_text(), re.M)]
    sender = "A Sender <sender@kernel.invalid>"
    env = {**os.environ, "GIT_CONFIG_COUNT": "2",
           "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "A Sender",
           "GIT_CONFIG_KEY_1": "user.email",
           "GIT_CONFIG_VALUE_1": "sender@kernel.invalid"}
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = _sh([REPO / "patchgen/gen-series.sh", "-g", "-o", tmp, "-b",
                       base, series], env=env)
        if rc:
            return False, out
        unsigned = [p.name for p in sorted(Path(tmp).glob("00[0-9][1-9]-*.patch"))
                    if f"Signed-off-by: {sender}" not in p.read_text()]
    return not ours and not unsigned, (f"project sign-offs in {ours}; "
                                       f"-g left unsigned: {unsigned}")


def _backport(patches: list[Path], fixes: list[Path]) -> tuple[bool, str]:
    """The stable series: the fix alone, with the backport's upstream
    author and 'commit <sha> upstream.' line; upstream's changelog is not
    reachable offline, so the draft says what stands in its place and
    writes none of upstream's trailers (make patches-to-send MAINLINE=...
    puts them there: check.sending)."""
    if [p.name for p in fixes] != [p.name for p in patches] or len(patches) != 1:
        return False, ("stable takes the fix alone: one patch, the backport "
                       f"(got {', '.join(p.name for p in patches)})")
    text = fixes[0].read_text()
    # the mail's body: after its headers (To:/Cc: of the recipients file)
    body = text[text.index("\n\n") + 2:text.index("\n---\n")]
    want = [UPSTREAM_LINE, "From: John Hubbard <jhubbard@nvidia.com>",
            f"[ Upstream's changelog of {UPSTREAM_FIX}, verbatim",
            "[ context-only adjustment: "]
    missing = [w for w in want if w not in body]
    trailers = re.findall(r"^(?:Signed-off-by|Acked-by|Reviewed-by|Fixes|Cc|Link): .*$",
                          body, re.M)
    return not missing and not trailers, ("missing: " + "; ".join(missing)
                                          + "; trailers written here: " + "; ".join(trailers))


def check_prefixes(t: Tally) -> None:
    """Every prefix of each series builds: the kernel, with the series'
    gup_test built in where the prefix has its GUP_FAST_VERDICT (else the
    tree's own stays out: kconfig.fragments), and the selftest with the
    tree's own Makefile where it has the test (make check-prefixes; real
    builds)."""
    for tree, name in source.DEBIAN_TREES.items():
        n = len(patch_files(name))
        for k in range(1, n + 1):
            sel = "all" if k == n else f"first-{k}"

            def build(tree=tree, sel=sel):
                with source.held(tree, sel) as sk:
                    have = ["vmlinux"] + (["gup_test built in"] if sk.builtin else [])
                    test = sk.tree / "tools/testing/selftests/mm/gup_null_mapping.c"
                    if test.exists():
                        with tempfile.TemporaryDirectory() as out:
                            rc, log = _sh(["make", "-C",
                                           sk.tree / "tools/testing/selftests/mm",
                                           f"OUTPUT={out}", f"{out}/gup_null_mapping"])
                            if rc:
                                return False, log
                        have.append("gup_null_mapping")
                return True, f"{', '.join(sk.patches)}: built {', '.join(have)}"
            t.guard(f"prefix {name} 1..{k} builds (source:{tree}:{sel})", build)


UPSTREAM_FIX = "c494788faffe"
UPSTREAM_SHA = "c494788faffe67216c56623d240541fde50139c3"
UPSTREAM_LINE = f"commit {UPSTREAM_SHA} upstream."


def added_files(patch: Path) -> list[str]:
    """Paths a patch creates."""
    return re.findall(r"^diff --git a/\S+ b/(\S+)\nnew file mode",
                      patch.read_text(), re.M)


def run_checkpatch(tree: Path, checkpatch: Path, patch: Path) -> tuple[bool, str]:
    """checkpatch --strict, with two warnings replaced by real checks.

    UNKNOWN_COMMIT_ID: Debian's source tree has no history, so no commit id
    can be looked up; make patches-to-send runs checkpatch in the sender's
    tree, which can (check.sending).
    MISSING_SIGN_OFF: the committed drafts carry no Signed-off-by (no DCO
    without a person); make patches-to-send adds the sender's, which
    check_series checks.
    FILE_PATH_CHANGES ("does MAINTAINERS need updating?"): answered by
    get_maintainer.pl, run in @tree (the series applied), which must find a
    maintained section for every new file of the patch.
    GIT_COMMIT_ID, only on a stable backport's "commit <sha> upstream."
    line (stable-kernel-rules.rst; checkpatch wants a ("subject") after any
    commit id): that line is checked verbatim instead (check_series).
    """
    ignore = ["UNKNOWN_COMMIT_ID", "MISSING_SIGN_OFF"]
    if re.search(r"^commit [0-9a-f]{12,40} upstream\.$", patch.read_text(), re.M):
        ignore.append("GIT_COMMIT_ID")
    detail = []
    for f in added_files(patch):
        rc, out = _sh(["perl", tree / "scripts/get_maintainer.pl", "--no-git",
                       "--no-git-fallback", "--sections", "-f", f], cwd=tree)
        covered = rc == 0 and re.search(r"^\S.*\n(?:[MRL]:.*\n)+", out, re.M)
        if not covered:
            return False, f"{f}: no MAINTAINERS section covers it\n{out}"
        section = out.strip().splitlines()[0]
        detail.append(f"{f}: covered by MAINTAINERS section '{section}'")
    ignore.append("FILE_PATH_CHANGES")
    rc, out = _sh(["perl", checkpatch, "--strict", "--ignore", ",".join(ignore),
                   patch], cwd=tree, env={"GIT_DIR": "/nonexistent"})
    clean = "has no obvious style problems" in out
    return rc == 0 and clean, out + "\n".join(detail)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    t0 = time.monotonic()
    t = Tally()
    t.stop_on_signals()
    try:
        return _main(t, args, t0)
    except KeyboardInterrupt as err:
        print("# make check interrupted: the totals count the checks that ended")
        t.end()
        return getattr(err, "exit_code", 130)


def _main(t: Tally, args: argparse.Namespace, t0: float) -> int:
    bases = _setup(t)
    if bases is None:
        t.end()
        return 1
    if args.numa is not None:
        t.section(f"NUMA pressure, {args.numa} runs per kernel", "NUMA")
        numa.check(t, args.numa)
    elif args.prefixes:
        t.section("every prefix of each series, built", "prefixes")
        check_prefixes(t)
    elif args.arm64:
        t.section("VM matrix, arm64 (qemu-system-aarch64, TCG)", "arm64")
        arm64_checks.check_arm64(t)
    elif args.debug:
        t.section("VM matrix, debug kernels", "debug")
        matrix.run_debug(t)
    elif args.mutants:
        t.section("mutation check: each decision of gup_fast_folio_allowed() flipped",
                  "mutants")
        mutation.check(t)
    elif args.revision:
        t.section("a kernel carrying series v3, today's test and v3's own", "revision")
        revision.check(t)
    elif args.notrace:
        t.section("no tracing: the matrix's source rows and the mutants, --config notrace",
                  "notrace")
        runs = matrix.run_notrace(t)
        mutation.check(t, runs.get("source:debian-7.3:all"), config="notrace")
    else:
        if not args.vm_only:
            _host_checks(t, bases)
        if not args.host_only:
            _vm_checks(t, args)
    minutes = (time.monotonic() - t0) / 60
    print(f"# make check{' (debug)' if args.debug else ''} took {minutes:.1f} min "
          f"({t.times()})")
    if t.failures:
        print("# failed: " + "; ".join(t.failures))
    return t.end()


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="gupnm-check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host-only", action="store_true",
                    help="skip the VM matrix")
    ap.add_argument("--vm-only", action="store_true", help="only the VM matrix")
    ap.add_argument("--debug", action="store_true",
                    help="only the debug-kernel matrix (make check-debug)")
    ap.add_argument("--prefixes", action="store_true",
                    help="only build every prefix of each series "
                    "(make check-prefixes)")
    ap.add_argument("--no-debug", action="store_true",
                    help="leave out the debug-kernel matrix (make check-quick)")
    ap.add_argument("--numa", type=int, metavar="RUNS", default=None,
                    help="only the NUMA pressure check, RUNS runs per kernel "
                    "(make check-numa: 200)")
    ap.add_argument("--arm64", action="store_true",
                    help="only the arm64 rows: Debian arm64 kernels under "
                    "qemu-system-aarch64 (make check-arm64)")
    ap.add_argument("--mutants", action="store_true",
                    help="only the mutation check of gup_fast_folio_allowed() "
                    "(make check-mutants)")
    ap.add_argument("--revision", action="store_true",
                    help="only a kernel carrying series v3's gup_test, with today's "
                    "test and its own (make check-revision)")
    ap.add_argument("--notrace", action="store_true",
                    help="only the source kernels without CONFIG_TRACING: the "
                    "negative controls and the mutants (make check-notrace)")
    ap.add_argument("--no-fresh", action="store_true",
                    help="leave out the fresh-machine check (contract.py)")
    return ap


def _setup(t: Tally) -> dict[str, Path] | None:
    """The tools installed and the base trees of both series (name -> tree);
    None, recorded as a failed check, when either cannot be had."""
    try:
        ensure_tools(source_build=True, extra={"shellcheck": "shellcheck",
                                               "sparse": "sparse",
                                               "patch": "patch"})
        trees = list(source.DEBIAN_TREES)
        return {source.DEBIAN_TREES[tree]: base.path
                for tree, base in zip(trees, source.resolve_bases(trees))}
    except RunnerError as err:
        t.record("setup: tools and linux-source-6.12/7.3", False, str(err))
        return None


def _host_checks(t: Tally, bases: dict[str, Path]) -> None:
    """Everything that needs no guest: unit tests, builds, the series, the
    probe's and the LAVA jobs' host side."""
    t.section("host checks", "host")
    check_unit(t)
    doc_facts.check(t)
    check_shellcheck(t)
    check_selftest_build(t, bases["upstream"])
    check_cross_builds(t, bases["upstream"])
    check_module_builds(t)
    for name, base in bases.items():
        check_series(t, name, base)
    check_generated(t, bases["upstream"])
    sending.check(t, bases)
    probe_checks.host_checks(t)
    kselftest_checks.host_checks(t)


def _vm_checks(t: Tally, args: argparse.Namespace) -> None:
    """The real kernels: the VM matrix, the probe on its kernels, NUMA, the
    debug kernels, the runner's contract, the kselftest paths and LAVA."""
    t.section("VM matrix", "VM matrix")
    module_runs = matrix.run_matrix(t)
    matrix.run_oot_compare(t, module_runs.get("source:debian-7.3:all"))
    matrix.run_unasked(t)
    matrix.run_thp_always(t)
    matrix.run_thp_source(t)
    t.section("mutation check: each decision of gup_fast_folio_allowed() flipped",
              "mutants")
    mutation.check(t, module_runs.get("source:debian-7.3:all"))
    t.section("the module-free probe on the matrix's Debian kernels", "probe")
    probe_checks.vm_checks(t, module_runs)
    t.section(f"NUMA pressure, {NUMA_SHORT_RUNS} runs per kernel "
              "(make check-numa: 200)", "NUMA")
    numa.check(t, NUMA_SHORT_RUNS)
    if not args.no_debug:
        t.section("VM matrix, debug kernels", "debug")
        matrix.run_debug(t)
    t.section("runner contract: exit codes, parallel runs, SIGINT, fresh machine",
              "contract")
    contract.run_all(t, fresh=not args.no_fresh)
    t.section("kselftest paths and LAVA jobs", "kselftest/LAVA")
    kselftest_checks.vm_checks(t)
    t.section("the documents' commands that boot a kernel, short forms (amd64 "
              "but docs/own-kernel.md's: make check-docs-short runs every one)",
              "short forms")
    docs_short.check(t)
