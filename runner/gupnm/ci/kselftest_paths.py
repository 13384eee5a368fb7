"""The gup_test category (gup_null_mapping in it) the three ways pipelines
run it, in one guest.

On a source kernel (source.prepare) the guest gets, in its initramfs:
  - the runner's own root (busybox, runner/guest/init, gup_test.ko under
    /lib/modules, depmod'ed), with bash;
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
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..guest import initramfs, qemu
from ..host import REPO, RunnerError, progress
from ..parse.status import parse_status
from ..prepare import kernels, kselftest_build, source
from . import tapflat

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


def _copy_with_libs(binary: str, root: Path) -> None:
    dest = root / binary.lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, dest)
    _copy_libs(binary, root)


def _is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _copy_libs(binary: str, root: Path) -> None:
    """The shared libraries ldd names for @binary (the host's: the
    selftests are built on this host, against its libc)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    for lib in re.findall(r"(/\S+\.so[\w.]*)", out):
        target = root / lib.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(lib), target)


def _cpio(names: list[str], cwd: Path, out: Path) -> None:
    with open(out, "wb") as fh:
        proc = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"],
                              input="\n".join(names).encode(), cwd=cwd,
                              stdout=fh, stderr=subprocess.PIPE)
    if proc.returncode:
        raise RunnerError("cpio failed: " + proc.stderr.decode(errors="replace"))


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
                    paths: tuple[str, ...] = PATHS) -> Path:
    """The runner's root + programs and script + what @paths need of the
    scratch tree, as one concatenation of newc archives (the kernel unpacks
    them in turn)."""
    work.mkdir(parents=True, exist_ok=True)
    payload = initramfs.Payload(k.release, k.module, {},
                                f"sh /{GUEST_DIR}/paths.sh", need_bash=True)
    base = initramfs.build(payload, work / "base")

    extra = work / "extra-root"
    if extra.exists():
        shutil.rmtree(extra)
    for prog in GUEST_PROGRAMS:
        _copy_with_libs(prog, extra)
    # The selftests are built on the host: their libraries (libc, libm,
    # libcap, libnuma, liburing, ...) come with them.
    for top in (built.install, built.tree / kselftest_build.SELFTESTS / "mm"):
        for f in sorted(top.rglob("*")):
            if f.is_file() and not f.is_symlink() and _is_elf(f):
                _copy_libs(str(f), extra)
    for link, target in GUEST_LINKS.items():
        (extra / link).parent.mkdir(parents=True, exist_ok=True)
        (extra / link).symlink_to(target)
    gdir = extra / GUEST_DIR
    gdir.mkdir(parents=True)
    shutil.copy2(GUEST_SCRIPT, gdir / "paths.sh")
    env = {"KST_TREE": str(built.tree), "KST_INSTALL": str(built.install),
           "KST_TARBALL": str(built.tarball), "KST_WRAPPER": built.wrapper,
           "KST_RUN_TESTS_ARGS": " ".join(built.run_tests_args),
           "KST_PATHS": " ".join(paths)}
    (gdir / "env").write_text("".join(f"{k_}='{v}'\n" for k_, v in env.items()))
    extra_cpio = work / "extra.cpio"
    _cpio(sorted(_walk(extra, extra)[1:]), extra, extra_cpio)

    root = Path("/")
    names = _parents(built.tree.parent)
    names += _parents(built.tree)[len(names):]
    for part in TREE_PARTS if "run_tests" in paths else ():
        p = built.tree / part
        if not p.exists():
            continue
        # the part's parent directories first
        for d in _parents(p.parent):
            if d not in names:
                names.append(d)
        names += _walk(p, root)
    if "install" in paths:
        names += _walk(built.install, root)
    if "tarball" in paths:
        names += _walk(built.tarball, root)
    tree_cpio = work / "tree.cpio"
    _cpio(names, root, tree_cpio)

    combined = work / "initramfs.cpio"
    with open(combined, "wb") as out:
        for part in (base, extra_cpio, tree_cpio):
            with open(part, "rb") as src:
                shutil.copyfileobj(src, out)
    return combined


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


def run(spec: str, outdir: Path) -> Outcome:
    """Boot source kernel @spec ("source:debian-7.3:all") with all three paths."""
    kind, args = kernels.parse_spec(spec)
    if kind != "source":
        raise RunnerError(f"{spec}: the kselftest paths need a source kernel "
                          "(source:debian-7.3:all)")
    tree_name, selection = args
    k = source.prepare(tree_name, selection)
    if not k.module:
        raise RunnerError(f"{spec}: no gup_test module in this selection")
    return run_kernel(spec, k, kselftest_build.build(k.tree), outdir)


def run_kernel(spec: str, k, built: kselftest_build.Built,
               outdir: Path) -> Outcome:
    """Boot @k (release, image, module) with @built's three paths."""
    outdir.mkdir(parents=True, exist_ok=True)
    cpio = build_initramfs(k, built, outdir / "initramfs")
    size = cpio.stat().st_size >> 20
    progress(f"booting {k.release} with the three kselftest paths "
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


def is_shadow(name: str) -> bool:
    """A verdict on the driver's NULL-mapping pages that the bug turns into
    a failure: every short-term access (read, write, ...). A long-term pin
    takes the slow path by design on every kernel, so it passes with or
    without the bug."""
    return re.search(r"(^|_)verdict_shadow_(?!longterm)", name) is not None


def own_results(flat: list) -> list:
    """The flattened results of gup_null_mapping itself (its line and its
    subtests), out of everything its run_vmtests.sh category ran."""
    return [f for f in flat if re.search(r"(^|_)gup_null_mapping(_|$)", f.name)]


def verdict_problems(p: PathResult, wrapper: str, bug: bool) -> list[str]:
    """What is wrong with one path's flattened results (empty: all right).

    @bug: the kernel has the bug, so the shadow verdicts must fail and
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
    if not any(is_shadow(f.name) for f in verdicts):
        out.append(f"{p.name}: no verdict_shadow_* case in the nested TAP "
                   "(is /dev/stdout there? did the test run?)")
    for f in verdicts:
        want = "fail" if bug and is_shadow(f.name) else "pass"
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
