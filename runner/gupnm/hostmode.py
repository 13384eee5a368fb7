"""gupnm-run run --kernel host: the test on this machine's running kernel, no QEMU.

The module (gup_test.ko, the series' source) and the test when
probe.host_method() finds nothing in their way: the running kernel's
headers in /lib/modules/RELEASE/build, module support, unsigned modules
allowed, gup_test neither loaded nor built in. The module-free probe
otherwise, and also when the module does not build here (the headers name
a compiler this machine lacks) or the kernel refuses to load it; the
method and its reason are printed and kept in the reports either way.

Safe on a shared machine: no sysctl, hugepage, drop_caches or other
setting is touched (the test maps, pins and unmaps only its own memory);
debugfs is mounted only when it is not, and unmounted after; gup_test is
loaded for the test alone and removed after it, also when the test fails,
times out or the run is interrupted; a module left loaded or a debugfs
left mounted is a problem in the report (exit 3), never silent.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

from . import phases, probe
from .guest import vmrun
from .host import RunnerError, progress
from .parse import tap as tapmod
from .prepare import plan
from .report import results

DEBUGFS = Path("/sys/kernel/debug")
TEST_TIMEOUT = 300


def _loaded(name: str = "gup_test") -> bool:
    try:
        return any(line.split()[0] == name
                   for line in Path("/proc/modules").read_text().splitlines() if line)
    except OSError:
        return False


def _mounted(path: Path) -> bool:
    return any(line.split()[1] == str(path)
               for line in Path("/proc/mounts").read_text().splitlines() if line)


@contextlib.contextmanager
def debugfs(problems: list[str]):
    """debugfs at /sys/kernel/debug for the test; unmounted after when this
    run mounted it."""
    if _mounted(DEBUGFS):
        yield
        return
    subprocess.run(["mount", "-t", "debugfs", "debugfs", str(DEBUGFS)], check=True,
                   capture_output=True)
    try:
        yield
    finally:
        if subprocess.run(["umount", str(DEBUGFS)], capture_output=True).returncode:
            problems.append(f"debugfs could not be unmounted from {DEBUGFS} "
                            "(this run mounted it): umount it by hand")


@contextlib.contextmanager
def module(ko: Path, problems: list[str]):
    """gup_test loaded from @ko for the block, removed after it."""
    proc = subprocess.run(["insmod", str(ko)], capture_output=True, text=True)
    if proc.returncode:
        raise LoadRefused((proc.stderr or proc.stdout).strip() or f"exit {proc.returncode}")
    try:
        yield
    finally:
        subprocess.run(["rmmod", "gup_test"], capture_output=True)
        if _loaded():
            problems.append("gup_test is still loaded after the test (rmmod "
                            "failed): rmmod gup_test by hand")


class LoadRefused(RunnerError):
    """insmod refused the module (signature, lockdown, version)."""


def _facts() -> dict:
    mem = next((int(line.split()[1]) // 1024 for line in
                Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal:")), 1)
    return {"vcpus": os.cpu_count() or 1, "memory_mb": max(mem, 1),
            "cmdline": Path("/proc/cmdline").read_text().strip()}


def _test(ko: Path, binary: Path, test_args: list[str], problems: list[str]):
    with phases.phase("test"), debugfs(problems), module(ko, problems):
        try:
            return subprocess.run([str(binary), *test_args], capture_output=True,
                                  text=True, timeout=TEST_TIMEOUT)
        except subprocess.TimeoutExpired as err:
            problems.append(f"the test did not finish in {TEST_TIMEOUT} s (killed)")
            out = err.stdout.decode(errors="replace") if isinstance(err.stdout, bytes) \
                else (err.stdout or "")
            return subprocess.CompletedProcess(err.cmd, None, out, "")


def run(args, outdir: Path, meta: dict) -> vmrun.RunOutcome | None:
    """The module's verdict on the running kernel, when probe.host_method()
    picks it; None when the probe must answer instead, its reason in
    args.host_fallback (not root, the module does not build or load)."""
    method, why = probe.host_method()
    if method != "module":
        return None
    if os.geteuid():
        args.host_fallback = "not root: loading a module needs root"
        return None
    release = os.uname().release
    progress(f"host mode on {release}: {why}")
    t0 = time.monotonic()
    problems: list[str] = []
    try:
        pay = plan.host(release)        # the same prepare step a boot has
        t1 = time.monotonic()
        proc = _test(pay.module, pay.files[plan.TEST],
                     args.test_args.split() if args.test_args else [], problems)
    except (RunnerError, subprocess.CalledProcessError) as err:
        text = str(err).strip() or repr(err)
        args.host_fallback = f"the module could not be used: {text.splitlines()[0]}"
        progress(f"host mode: {args.host_fallback}; the probe instead")
        return None
    (outdir / "test.txt").write_text(proc.stdout + proc.stderr)
    parsed = tapmod.parse_tap(proc.stdout.splitlines())
    summary = results.build_summary(
        kernel_release=release, accel=None, tap=parsed, splats=[],
        kernel_source={**pay.source, "method_reason": why},
        exit_status=proc.returncode, **_facts(),
        durations={"prepare": t1 - t0, "test": time.monotonic() - t1})
    code = results.exit_code(summary["outcome"], problems=problems,
                             exit_status=proc.returncode, has_results=bool(parsed.results))
    summary.update(meta)
    summary.update(spec="host", exit_code=code, problems=problems,
                   notes=summary.get("notes", []) + [why])
    if phases.running():                # every phase from the process's start
        summary.update(durations=phases.stop(), durations_from=phases.measured_from())
    unwritten = vmrun.save_reports(outdir, summary)
    if unwritten:
        problems.append(unwritten)
    return vmrun.RunOutcome(summary, code, outdir, proc.stdout)
