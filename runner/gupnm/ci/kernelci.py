"""KernelCI's kselftest-mm job, its gup part, on an arm64 guest in budget.

KernelCI (kernelci-pipeline config/jobs.yaml) schedules `kselftest-mm` on
arm64 boards with `extra_kernel_args: "secretmem.enable kpti=off"`,
`collections: mm` and `job_timeout: 10` (minutes); its kselftest template
runs Linaro's kselftest.sh with TST_CMDFILES=mm and no ENV, i.e.
run_kselftest.sh from the tarball with VM_SELFTEST_ITEMS unset. Here: the
gup part of that collection, `run_kselftest.sh -t mm:ksft_gup_test.sh`
(the collection:test the 7.3 tree's kselftest-list.txt gives for it), from
the upstream series' 7.3 tree's tarball cross-built for arm64, on a Debian
arm64 kernel with the series' gup_test.ko cross-built for it, under
qemu-system-aarch64 TCG with that command line. The whole QEMU run, boot
included, is killed at JOB_TIMEOUT_S: a result after it does not exist.
"""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..guest import initramfs, qemu
from ..host import RunnerError, progress
from ..parse import console
from ..parse.status import parse_status
from ..prepare import arm64, kernels, kselftest_arm64, kselftest_build, source
from . import kselftest_paths

JOB_TIMEOUT_S = 600.0
# KernelCI's kselftest-mm (no hugepages: its -2g/-8g variants add them).
EXTRA_KERNEL_ARGS = "secretmem.enable kpti=off"
# The runner's console, status port and init; no secretmem.enable=1 of its own.
BASE_APPEND = "console=ttyAMA0 panic=-1 oops=panic rdinit=/init GUPNM_STATUS=/dev/ttyS0"
APPEND = f"{BASE_APPEND} {EXTRA_KERNEL_ARGS}"
# The tree whose tarball runs (the test is in the upstream series).
TARBALL_TREE = ("debian-7.3", "all")
MEMORY_MB = 2048
VCPUS = 2
GUEST_DIR = "opt/gupnm-kst"
GUEST_TARBALL = f"/{GUEST_DIR}/kselftest.tar.gz"
# What runner/guest/init prints on the console when the test starts.
START_MARKER = "GUPNM-TEST-BEGIN"


@dataclass
class Outcome:
    spec: str
    release: str
    wrapper: str
    path: kselftest_paths.PathResult | None
    guest_exit: int | None
    wall_seconds: float          # QEMU started to QEMU gone: boot included
    timed_out: bool
    cmdline: str | None          # the kernel's "Kernel command line:"
    booted: str | None
    console: str
    outdir: Path
    budget: float = JOB_TIMEOUT_S   # when QEMU was to be killed


def cmdline_of(console: str) -> str | None:
    m = re.search(r"Kernel command line: (.*)", console)
    return m.group(1).strip() if m else None


def has_secretmem(cmdline: str | None) -> bool:
    """secretmem.enable set on @cmdline (bare, as KernelCI writes it, =1 or =y)."""
    return bool(cmdline) and re.search(
        r"(^|\s)secretmem\.enable(=(1|y|Y|on))?(\s|$)", cmdline) is not None


def tarball() -> kselftest_build.Built:
    """The 7.3 tree's selftests/mm tarball for arm64 (cached per commit)."""
    base, commit = source.patched_commit(*TARBALL_TREE)
    return kselftest_build.build(base, arm64.ARCH, commit)


def build_initramfs(k: kernels.Prepared, built: kselftest_build.Built,
                    work: Path) -> Path:
    """The runner's arm64 root (busybox, init, gup_test.ko) + arm64 bash,
    timeout and libraries + the guest script + the tarball."""
    work.mkdir(parents=True, exist_ok=True)
    contents = initramfs.Contents(k.release, k.module, {},
                                  f"sh /{GUEST_DIR}/paths.sh", busybox=arm64.busybox())
    base = initramfs.build(contents, work / "base")
    extra = work / "extra-root"
    if extra.exists():
        shutil.rmtree(extra)
    elves = [f for f in sorted(built.install.rglob("*"))
             if f.is_file() and not f.is_symlink() and kselftest_arm64.is_elf(f)]
    kselftest_arm64.install(extra, elves)
    gdir = extra / GUEST_DIR
    gdir.mkdir(parents=True)
    shutil.copy2(kselftest_paths.GUEST_SCRIPT, gdir / "paths.sh")
    shutil.copy2(built.tarball, gdir / "kselftest.tar.gz")
    env = {"KST_TARBALL": GUEST_TARBALL, "KST_WRAPPER": built.wrapper,
           "KST_PATHS": "kernelci"}
    (gdir / "env").write_text("".join(f"{n}='{v}'\n" for n, v in env.items()))
    extra_cpio = work / "extra.cpio"
    initramfs.pack_names(sorted(kselftest_paths._walk(extra, extra)[1:]), extra,
                         extra_cpio)
    combined = work / "initramfs.cpio"
    with open(combined, "wb") as out:
        for part in (base, extra_cpio):
            with open(part, "rb") as src:
                shutil.copyfileobj(src, out)
    return combined


def run(spec: str, outdir: Path, built: kselftest_build.Built | None = None,
        budget: float = JOB_TIMEOUT_S) -> Outcome:
    """Debian arm64 kernel @spec with the tarball's gup part, QEMU killed
    after @budget seconds (KernelCI's job timeout; less only to see the
    budget enforced)."""
    if kernels.parse_spec(spec)[0] != "debian":
        raise RunnerError(f"{spec}: the KernelCI arm64 row takes a Debian arm64 "
                          "kernel (debian:7.3, debian:6.12)")
    k = kernels.prepare(spec, arch=arm64.ARCH)
    built = built or tarball()
    outdir.mkdir(parents=True, exist_ok=True)
    cpio = build_initramfs(k, built, outdir / "initramfs")
    progress(f"booting {k.release} (arm64, TCG, {VCPUS} vCPUs) with "
             f"run_kselftest.sh -t {built.wrapper}; budget {budget:.0f} s")
    res = qemu.boot(k.image, cpio, outdir, accel="tcg", vcpus=VCPUS,
                    memory_mb=MEMORY_MB, append=APPEND, timeout=budget,
                    arch=arm64.ARCH)
    con = res.console.read_text(errors="replace")
    st = parse_status(res.status.read_text(errors="replace"))
    text = st.tap if st.tap else con
    (outdir / "kernelci.txt").write_text(text)
    shutil.rmtree(outdir / "initramfs", ignore_errors=True)
    m = re.search(r"Linux version (\S+)", con)
    o = Outcome(spec, k.release, built.wrapper,
                kselftest_paths.split_paths(text).get("kernelci"),
                st.exit_code, res.seconds, res.timed_out, cmdline_of(con),
                m.group(1) if m else None, con, outdir, budget)
    (outdir / "kernelci.json").write_text(json.dumps(record(o), indent=2) + "\n")
    return o


def died_before_test(o: Outcome) -> bool:
    """The guest panicked or Oopsed before the test started, within the
    budget: multi-vCPU TCG now and then Oopses in early-boot text patching,
    an emulation artefact, not a result."""
    return not o.timed_out and console.early_boot_death(o.console, START_MARKER)


def run_again_if_died(spec: str, outdir: Path, again: Path, built=None,
                      budget: float = JOB_TIMEOUT_S) -> tuple[Outcome, list[str]]:
    """run(); when the guest died before the test (died_before_test), once
    more in @again, with its own budget, and a note that says so (a lab
    would resubmit the job: an infrastructure failure, not a verdict)."""
    o = run(spec, outdir, built, budget)
    if not died_before_test(o):
        return o, []
    note = (f"boot 1 died before the test ({o.wall_seconds:.0f} s; {outdir}): "
            "booted again")
    progress(note)
    return run(spec, again, built, budget), [note]


def record(o: Outcome) -> dict:
    """What a row measured, as kernelci.json in its results folder."""
    p = o.path
    return {"spec": o.spec, "release": o.release, "booted": o.booted,
            "collection_test": o.wrapper, "kernel_cmdline": o.cmdline,
            "job_timeout_s": o.budget, "boot_to_result_s": round(o.wall_seconds, 1),
            "timed_out": o.timed_out, "guest_exit": o.guest_exit,
            "run_kselftest_exit": p.exit_status if p else None,
            "run_kselftest_s": p.seconds if p else None,
            "results": {f.name: f.result for f in (p.flat if p else [])
                        if kselftest_paths.is_ours(f.name)}}


def problems(o: Outcome, bug: bool) -> list[str]:
    """What is wrong with a KernelCI-style run (empty: all right). @bug:
    the kernel lacks the fix, so the driver's short-term verdicts must fail."""
    out = []
    if o.timed_out or o.wall_seconds >= o.budget:
        out.append(f"over KernelCI's budget: {o.wall_seconds:.0f} s, the job "
                   f"times out at {o.budget:.0f} s")
    if not has_secretmem(o.cmdline):
        out.append(f"no secretmem.enable on the kernel command line: {o.cmdline}")
    if o.booted != o.release:
        out.append(f"the guest booted {o.booted}, not {o.release}")
    if o.path is None:
        out.append("run_kselftest.sh never started in the guest (no "
                   "KSFT-PATH-BEGIN: kernelci; see console.log)")
        return out
    return out + kselftest_paths.verdict_problems(o.path, o.wrapper, bug)
