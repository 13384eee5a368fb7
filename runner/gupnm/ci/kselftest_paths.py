"""The gup_test category (gup_null_mapping in it) the three ways pipelines
run it, in one guest.

On a source kernel (source.prepare) whose tree has the series' gup_test
(built in: nothing to load) the guest gets, in its initramfs:
  - the runner's own root (busybox, runner/guest/init), with bash;
  - GNU make, coreutils' timeout and tar's companions from the host, with the
    libraries ldd names; no compiler;
  - the scratch copy of the patched tree (kselftest_build.py) at the same
    absolute path as on the host, restricted to what `make run_tests`
    reads: the selftests Makefiles and runner, selftests/mm with its built
    binaries, tools/include, the installed uapi headers and the few
    kernel headers selftests/mm includes;
  - the `make install` tree and the `gen_tar` tarball.
runner/guest/kselftest-paths.sh then runs run_tests, the installed tree and
the unpacked tarball in turn. The host parses each path's nested TAP into
flat names (tapflat.py) and asserts the verdicts.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..guest import initramfs, qemu
from ..host import REPO, RunnerError, progress
from ..parse import tap
from ..parse.status import parse_status
from ..prepare import cache, kernels, kselftest_arm64, kselftest_build, source
from . import kselftest_own, linaro, tapflat

GUEST_SCRIPT = REPO / "runner" / "guest" / "kselftest-paths.sh"
GUEST_DIR = "opt/gupnm-kst"
# Host programs the guest needs beyond busybox and bash.
# timeout: runner.sh uses /usr/bin/timeout --foreground (busybox's has no
# --foreground). The selftests Makefile's `readlink -e` runs busybox's
# applet whatever PATH says (busybox sh prefers its applets) and fails;
# what it sets, SRC_PATH, only serves TEST_INCLUDES, which mm has none of.
GUEST_PROGRAMS = ("/usr/bin/make", "/usr/bin/timeout")
# Scripts say #!/bin/bash; the runner's root is not usr-merged.
GUEST_LINKS = {"bin/bash": "/usr/bin/bash"}
# What run_tests reads of the scratch tree (relative to it).
TREE_PARTS = ("tools/testing/selftests/Makefile", "tools/testing/selftests/lib.mk",
              "tools/testing/selftests/kselftest", "tools/testing/selftests/mm",
              "tools/testing/selftests/run_kselftest.sh",
              "tools/testing/selftests/x86/check_cc.sh",
              "tools/include", "tools/arch/x86/include", "usr/include",
              *kselftest_build.OUTSIDE_TOOLS)
PATHS = ("run_tests", "install", "tarball")
# linaro (gupnm-run kselftest --via linaro): not one of make check's three.
ALL_PATHS = (*PATHS, "linaro")
MEMORY_MB = 2048
TIMEOUT = 600.0


@dataclass
class PathResult:
    name: str
    exit_status: int | None
    seconds: float | None
    text: str
    flat: list[tapflat.Flat] = field(default_factory=list)


@dataclass
class Outcome:
    spec: str
    release: str
    wrapper: str
    paths: dict[str, PathResult]
    guest_exit: int | None
    boot_seconds: float
    console: str
    outdir: Path
    booted: str | None = None    # the release the console's banner names


def _walk(top: Path, base: Path) -> list[str]:
    """@top and everything under it, as paths relative to @base."""
    if top.is_file() or top.is_symlink():
        return [str(top.relative_to(base))]
    names = [str(top.relative_to(base))]
    for dirpath, dirnames, filenames in os.walk(top):
        for n in sorted(dirnames + filenames):
            names.append(os.path.relpath(os.path.join(dirpath, n), base))
    return names


def _parents(path: Path) -> list[str]:
    """Every directory from / down to @path, relative to /."""
    parts = path.relative_to("/").parts
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def build_initramfs(k, built: kselftest_build.Built, work: Path,
                    paths: tuple[str, ...] = PATHS,
                    lin: linaro.Guest | None = None) -> Path:
    """The runner's root + programs and script + what @paths need of the
    scratch tree, as one concatenation of newc archives (the kernel unpacks
    them in turn). @lin: the linaro path's checkout and parameters."""
    if "linaro" in paths and lin is None:
        raise RunnerError("the linaro path needs the test-definitions checkout")
    work.mkdir(parents=True, exist_ok=True)
    # The series' gup_test is built in (source.prepare): nothing to load.
    contents = initramfs.Contents(k.release, None, {},
                                  f"sh /{GUEST_DIR}/paths.sh", need_bash=True)
    base = initramfs.build(contents, work / "base")
    extra = work / "extra-root"
    host_tops = _extra_root(extra, built, paths, lin, k)
    extra_cpio = work / "extra.cpio"
    initramfs.pack_names(sorted(_walk(extra, extra)[1:]), extra, extra_cpio)
    tree_cpio = work / "tree.cpio"
    initramfs.pack_names(_host_names(built, paths, host_tops), Path("/"), tree_cpio)

    combined = work / "initramfs.cpio"
    with open(combined, "wb") as out:
        for part in (base, extra_cpio, tree_cpio):
            with open(part, "rb") as src:
                shutil.copyfileobj(src, out)
    return combined


def _extra_root(extra: Path, built: kselftest_build.Built, paths: tuple[str, ...],
                lin: linaro.Guest | None, k=None) -> list[Path]:
    """Into @extra: the host programs and libraries, the guest script and
    its env file (and the linaro path's programs and skipfile; a lab's
    own modules, kselftest_own.OwnKernel @k). Returned: what the linaro
    path needs from the host root at its own path."""
    if extra.exists():
        shutil.rmtree(extra)
    for prog in GUEST_PROGRAMS:
        initramfs.copy_with_libs(prog, extra)
    copy_selftest_libs(built, extra)
    link_guest_programs(extra)
    gdir = extra / GUEST_DIR
    gdir.mkdir(parents=True)
    shutil.copy2(GUEST_SCRIPT, gdir / "paths.sh")
    env = {"KST_TREE": str(built.tree), "KST_INSTALL": str(built.install),
           "KST_TARBALL": str(built.tarball), "KST_WRAPPER": built.wrapper,
           "KST_RUN_TESTS_ARGS": " ".join(built.run_tests_args),
           "KST_PATHS": " ".join(paths),
           "KST_MODPROBE": "gup_test" if isinstance(k, kselftest_own.OwnKernel)
           and kselftest_own.install(k, extra) else ""}
    lines = [f"{k_}='{v}'" for k_, v in env.items()]
    tops: list[Path] = []
    if lin is not None:
        lines += [f"KST_LINARO_DIR='{lin.td}'", *lin.params.env_lines()]
        # The checkout and python's modules at their own absolute paths.
        tops = [lin.td, *map(Path, linaro_root(extra, lin.td))]
        if lin.skipfile is not None:
            (extra / linaro.GUEST_SKIPFILE.lstrip("/")).write_text(lin.skipfile)
    (gdir / "env").write_text("".join(line + "\n" for line in lines))
    return tops


def copy_selftest_libs(built: kselftest_build.Built, root: Path) -> None:
    """The selftests are built on the host: the libraries of their
    programs (libc, libm, libcap, libnuma, liburing, ...) into @root."""
    for top in (built.install, built.tree / kselftest_build.SELFTESTS / "mm"):
        for f in sorted(top.rglob("*")):
            if f.is_file() and not f.is_symlink() and kselftest_arm64.is_elf(f):
                initramfs.copy_libs(str(f), root)


def link_guest_programs(root: Path) -> None:
    """GUEST_LINKS in @root (#!/bin/bash in a root that is not usr-merged)."""
    for link, target in GUEST_LINKS.items():
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        if not (root / link).is_symlink():
            (root / link).symlink_to(target)


def _host_names(built: kselftest_build.Built, paths: tuple[str, ...],
                tops: list[Path]) -> list[str]:
    """What @paths need of the host root (relative to /, parents first):
    the scratch tree's parts, the install tree, the tarball, @tops."""
    root = Path("/")
    names = _parents(built.tree.parent)
    names += _parents(built.tree)[len(names):]
    parts = [built.tree / part for part in TREE_PARTS] if "run_tests" in paths else []
    if "install" in paths:
        parts.append(built.install)
    if "tarball" in paths or "linaro" in paths:
        parts.append(built.tarball)
    for top in [*parts, *tops]:
        if not (top.exists() or top.is_symlink()):
            continue
        for d in _parents(top.parent):
            if d not in names:
                names.append(d)
        names += _walk(top, root)
    return names


def linaro_root(extra: Path, td: Path) -> list[str]:
    """Into @extra: what kselftest.sh and parse-output.py run with beyond
    busybox (python3, GNU split, perl, /usr/bin/env); returned: the python
    module files and perl-base's directory to take from the host root."""
    kselftest_build.ensure_packages(linaro.HOST_PACKAGES)
    for prog in linaro.GUEST_PROGRAMS:
        initramfs.copy_with_libs(prog, extra)
    python = os.path.realpath(linaro.PYTHON)
    initramfs.copy_with_libs(python, extra)
    link = extra / linaro.PYTHON.lstrip("/")
    if not link.exists():
        link.symlink_to(os.path.basename(python))
    env = extra / "usr/bin/env"
    if not env.exists():
        env.symlink_to("/bin/busybox")
    files = linaro.python_files(td)
    for f in files:
        if ".so" in os.path.basename(f):
            initramfs.copy_libs(f, extra)
    # A module that is a link (sitecustomize.py -> /etc/python3.11/...)
    # needs its target too.
    return [*files, *(os.path.realpath(f) for f in files if os.path.islink(f)),
            linaro.perl_base()]


def split_paths(text: str) -> dict[str, PathResult]:
    """The guest's output cut at the KSFT-PATH markers."""
    found: dict[str, PathResult] = {}
    cur, buf = None, []
    for line in text.splitlines():
        m = re.match(r"^KSFT-PATH-BEGIN: (\S+)$", line)
        if m:
            cur, buf = m.group(1), []
            continue
        m = re.match(r"^KSFT-PATH-END: (\S+) (\d+) ([\d.]+)$", line)
        if m and cur == m.group(1):
            body = "\n".join(buf) + "\n"
            found[cur] = PathResult(cur, int(m.group(2)), float(m.group(3)),
                                    body, tapflat.flatten(body))
            cur = None
            continue
        if cur:
            buf.append(line)
    if cur:    # the guest died inside a path
        body = "\n".join(buf) + "\n"
        found[cur] = PathResult(cur, None, None, body, tapflat.flatten(body))
    return found


def run(spec: str, outdir: Path, paths: tuple[str, ...] = PATHS,
        lin: linaro.Guest | None = None) -> Outcome:
    """Boot source kernel @spec ("source:debian-7.3:all") with @paths
    (default make check's three)."""
    k, built = prepared(spec)
    return run_kernel(spec, k, built, outdir, paths, lin)


def spec_problem(spec: str) -> str | None:
    """Why @spec cannot give a kselftest tarball with our test in it (None:
    it can), found on the host before anything is built: the tarball comes
    from the tree's gen_tar, so only a source kernel whose series adds
    gup_null_mapping to tools/testing/selftests/mm has one."""
    kind, args = kernels.parse_spec(spec)
    if kind != "source":
        return (f"{spec}: the kselftest tarball is made by a source kernel's "
                "tree (its gen_tar target): use source:debian-7.3[:all|nofix|wrongfix] "
                "or a git checkout (source:PATH); for a Debian binary kernel use "
                "gupnm-run run --kernel SPEC or gupnm-run lava debian-module SPEC; "
                "for a kernel and kselftest tarball you built: gupnm-run kselftest "
                "--kernel IMAGE --kselftest TARBALL [--modules DIR_OR_TARBALL]")
    tree, selection = args
    if selection == "none":
        return (f"{spec}: selection none applies no patch, so the tree has no "
                "gup_null_mapping selftest: use all, nofix or wrongfix")
    series = source.DEBIAN_TREES.get(tree)
    if series is None and (Path(tree).expanduser() / "Makefile").is_file():
        series = source.series_of_tree(Path(tree).expanduser())
    if series == "stable-6.12":
        return (f"{spec}: 6.12's stable series is the fix alone, its tree has "
                "no gup_null_mapping selftest: use source:debian-7.3 (the "
                "upstream series) or run 6.12 out of tree with gupnm-run run "
                "--kernel source:debian-6.12")
    return None


def prepared(spec: str):
    """(source kernel, built selftests) of @spec, for callers that need the
    wrapper name before booting (linaro's parameters)."""
    kind, args = kernels.parse_spec(spec)
    if kind != "source":
        raise RunnerError(f"{spec}: the kselftest paths need a source kernel "
                          "(source:debian-7.3:all)")
    with source.held(*args) as k:
        if not k.builtin:
            raise RunnerError(f"{spec}: this selection has no gup_test with "
                              "GUP_FAST_VERDICT to build in (the upstream series)")
        return k, kselftest_build.build(k.tree, commit=k.commit)


def kernel_source(k, built: kselftest_build.Built) -> dict:
    """How a kselftest path's kernel was obtained, for its summary: the
    tree, its base commit and patches, the selftests' commit and wrapper,
    and the sha256 of the image booted."""
    return {"kind": "source", "tree": str(k.base), "base_commit": k.base_commit,
            "patches": list(k.patches), "selftests_commit": built.commit,
            "wrapper": built.wrapper, "boot_image": str(k.image),
            "boot_image_sha256": cache.recorded_sha256(k.image)}


def run_kernel(spec: str, k, built: kselftest_build.Built,
               outdir: Path, paths: tuple[str, ...] = PATHS,
               lin: linaro.Guest | None = None) -> Outcome:
    """Boot @k (release, image, module) with @built's @paths."""
    outdir.mkdir(parents=True, exist_ok=True)
    cpio = build_initramfs(k, built, outdir / "initramfs", paths, lin)
    size = cpio.stat().st_size >> 20
    progress(f"booting {k.release} with the kselftest paths {', '.join(paths)} "
             f"(tcg, {size} MiB initramfs)")
    t0 = time.monotonic()
    res = qemu.boot(k.image, cpio, outdir, accel="tcg", vcpus=2,
                    memory_mb=MEMORY_MB, append=qemu.BASE_APPEND, timeout=TIMEOUT)
    seconds = time.monotonic() - t0
    con = res.console.read_text(errors="replace")
    st = parse_status(res.status.read_text(errors="replace"))
    text = st.tap if st.tap else con
    (outdir / "paths.txt").write_text(text)
    if not os.environ.get("GUPNM_KEEP_WORK"):
        shutil.rmtree(outdir / "initramfs", ignore_errors=True)
    m = re.search(r"Linux version (\S+)", con)
    return Outcome(spec, k.release, built.wrapper, split_paths(text),
                   st.exit_code, seconds, con, outdir, m.group(1) if m else None)


def is_driver(name: str) -> bool:
    """A verdict on the driver's NULL-mapping pages that the bug turns into
    a failure: the short-term pins (read, write), verdict_driver_* (a flat
    name too; verdict_shadow_* in logs of the test before v4). A long-term
    pin takes the slow path by design on every kernel, so it passes with or
    without the bug."""
    return tap.is_driver_case(name, ("read", "write"))


def own_results(flat: list) -> list:
    """The flattened results of gup_null_mapping itself (its line and its
    subtests), out of everything its run_vmtests.sh category ran."""
    return [f for f in flat if is_ours(f.name)]


def is_ours(name: str) -> bool:
    """A flat name of gup_null_mapping's (its line or a subtest's)."""
    return re.search(r"(^|_)gup_null_mapping(_|$)", name) is not None


def verdict_problems(p: PathResult, wrapper: str, bug: bool) -> list[str]:
    """What is wrong with one path's flattened results (empty: all right).

    @bug: the kernel has the bug, so the driver's verdicts must fail and
    everything else pass; otherwise everything passes.
    """
    out = []
    if p.exit_status is None:
        return [f"{p.name}: the guest never finished this path"]
    top = tapflat.slug(wrapper.replace(":", ": "))
    names = [f.name for f in p.flat]
    if top not in names:
        out.append(f"{p.name}: no result named {top} (got {names[:3]}...)")
    verdicts = [f for f in p.flat if re.search(r"_verdict_", f.name)]
    if not any(is_driver(f.name) for f in verdicts):
        out.append(f"{p.name}: no verdict_{tap.DRIVER}_* case in the nested TAP "
                   "(is /dev/stdout there? did the test run?)")
    for f in verdicts:
        want = "fail" if bug and is_driver(f.name) else "pass"
        if f.result != want:
            out.append(f"{p.name}: {f.name} {f.result}, expected {want}")
    # The gup_test category also runs upstream's gup_test and gup_longterm:
    # their results are reported, ours are judged.
    ours = own_results(p.flat)
    others = [f for f in ours if f.depth >= 2 and f not in verdicts
              and f.result == "fail"]
    for f in others:
        out.append(f"{p.name}: {f.name} failed")
    # make run_tests and run_kselftest.sh exit 0 even when a test fails:
    # the TAP carries the verdict. With everything passing, 0 is required.
    if not bug and p.exit_status != 0:
        out.append(f"{p.name}: exit status {p.exit_status}, expected 0")
    dups = tapflat.duplicates(ours)
    if dups:
        out.append(f"{p.name}: result names not unique: {', '.join(dups)}")
    return out


def names_by_path(o: Outcome) -> dict[str, list[str]]:
    return {n: [f.name for f in p.flat] for n, p in o.paths.items()}
