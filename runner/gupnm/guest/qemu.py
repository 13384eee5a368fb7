"""Boot a kernel under qemu-system-x86_64: accelerator probe and one boot.

The guest console (ttyS0) goes to console.log; the guest's status protocol
(runner/guest/init) goes to status.log on a second serial port, so test
output can never be mistaken for the exit status. Every boot has a global
timeout; `panic=-1 -no-reboot` turns a panic into an immediate exit.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..host import RunnerError, cache_dir, private_tmp, progress, reaped, spawn, stop

QEMU = "qemu-system-x86_64"
BASE_APPEND = "console=ttyS0 panic=-1 oops=panic secretmem.enable=1 rdinit=/init"
# arm64 (-M virt, TCG): the console is the PL011 (ttyAMA0); the status port
# a PCI 16550 (ttyS0), named to the guest's init on the command line.
QEMU_ARM64 = "qemu-system-aarch64"
# No rodata=full: the 64K-page source kernels get a page-granular direct
# map, which secretmem needs, from CONFIG_RODATA_FULL_DEFAULT_ENABLED
# (configs/arm64-64k.config), as Debian's arm64 kernels do.
ARM64_APPEND = ("console=ttyAMA0 panic=-1 oops=panic secretmem.enable=1 "
                "rdinit=/init GUPNM_STATUS=/dev/ttyS0")


def base_append(arch: str = "amd64") -> str:
    """The kernel command line every boot of an @arch guest starts with."""
    return ARM64_APPEND if arch == "arm64" else BASE_APPEND


def arm64_command(kernel: Path, initrd: Path, *, accel: str, vcpus: int,
                  memory_mb: int, append: str, console: Path, status: Path,
                  numa: int = 0) -> list[str]:
    """qemu-system-aarch64 -M virt under TCG (the host is not arm64)."""
    if accel != "tcg":
        raise RunnerError(f"an arm64 guest runs under TCG on this host, not {accel}: "
                          "use --accel tcg (or auto)")
    if numa > 1:
        raise RunnerError("NUMA guests are x86 only: drop --numa with --arch arm64")
    # pauth-impdef: QEMU's own pointer-authentication hash (the
    # architected one costs much emulation time, same guest behaviour).
    return [QEMU_ARM64, "-nodefaults", "-no-user-config", "-display", "none",
            "-machine", "virt", "-accel", "tcg", "-cpu", "max,pauth-impdef=on",
            "-smp", str(vcpus), "-m", str(memory_mb), "-no-reboot",
            "-serial", f"file:{console}",
            "-chardev", f"file,id=status,path={status}",
            "-device", "pci-serial,chardev=status",
            "-kernel", str(kernel), "-initrd", str(initrd), "-append", append]


@dataclass
class BootResult:
    console: Path
    status: Path
    returncode: int | None   # None: killed on timeout
    seconds: float
    command: list[str]

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def numa_args(nodes: int, vcpus: int, memory_mb: int) -> list[str]:
    """QEMU arguments for @nodes NUMA nodes sharing @vcpus and @memory_mb
    evenly (vCPU i on node i % nodes)."""
    if nodes < 2:
        return []
    if vcpus < nodes or memory_mb % nodes:
        raise RunnerError(f"{nodes} NUMA nodes need at least {nodes} vCPUs and "
                          f"memory divisible by {nodes} (got {vcpus}, {memory_mb} MiB)")
    args = []
    for n in range(nodes):
        cpus = ",".join(f"cpus={c}" for c in range(n, vcpus, nodes))
        args += ["-object", f"memory-backend-ram,id=m{n},size={memory_mb // nodes}M",
                 "-numa", f"node,nodeid={n},memdev=m{n},{cpus}"]
    return args


def qemu_command(kernel: Path, initrd: Path, *, accel: str, vcpus: int,
                 memory_mb: int, append: str, console: Path,
                 status: Path, numa: int = 0) -> list[str]:
    if accel == "kvm":
        accel_args = ["-accel", "kvm", "-cpu", "host"]
    elif accel == "tcg":
        accel_args = ["-accel", "tcg", "-cpu", "max"]
    else:
        raise RunnerError(f"unknown accelerator '{accel}': use kvm, tcg or auto")
    return [QEMU, "-nodefaults", "-no-user-config", "-display", "none",
            "-machine", "q35", *accel_args, "-smp", str(vcpus),
            "-m", str(memory_mb), "-no-reboot",
            "-serial", f"file:{console}", "-serial", f"file:{status}",
            *numa_args(numa, vcpus, memory_mb),
            "-kernel", str(kernel), "-initrd", str(initrd),
            "-append", append]


def boot(kernel: Path, initrd: Path, outdir: Path, *, accel: str, vcpus: int,
         memory_mb: int, append: str, timeout: float,
         watch: Callable[[], None] | None = None, numa: int = 0,
         arch: str = "amd64") -> BootResult:
    """Run one VM to completion or until @timeout seconds have passed.

    @watch, when given, is called about 5 times a second while the guest
    runs (live progress). QEMU runs in a session of its own (a terminal's
    Ctrl-C goes to the runner, which decides); whatever ends the wait --
    timeout, an exception, SIGINT or SIGTERM turned into an exception --
    kills its whole process group before this returns or raises, so no
    qemu outlives the runner.
    """
    binary, pkg = ((QEMU_ARM64, "qemu-system-arm") if arch == "arm64"
                   else (QEMU, "qemu-system-x86"))
    if not shutil.which(binary):
        raise RunnerError(f"{binary} not found: apt-get install {pkg}")
    outdir.mkdir(parents=True, exist_ok=True)
    console, status = outdir / "console.log", outdir / "status.log"
    for path in (console, status):
        path.write_bytes(b"")
    command = arm64_command if arch == "arm64" else qemu_command
    cmd = command(kernel, initrd, accel=accel, vcpus=vcpus,
                  memory_mb=memory_mb, append=append, console=console,
                  status=status, numa=numa)
    t0 = time.monotonic()
    with open(outdir / "qemu.log", "wb") as qlog:
        proc = spawn(cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                     stderr=subprocess.STDOUT)
        rc: int | None = None
        try:
            rc = _wait(proc, timeout, watch)
            reaped(proc)
        except subprocess.TimeoutExpired:
            rc = None
            stop(proc)
        except BaseException:
            stop(proc)
            raise
        if watch:
            watch()
    return BootResult(console, status, rc, time.monotonic() - t0, cmd)


def _wait(proc: subprocess.Popen, timeout: float,
          watch: Callable[[], None] | None) -> int:
    if not watch:
        return proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return proc.wait(timeout=max(min(0.2, left), 0))
        except subprocess.TimeoutExpired:
            watch()
            if left <= 0.2:
                raise


def qemu_error(log: Path) -> str | None:
    """QEMU's own error message ("qemu-system-x86_64: ..."), if it gave one."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    lines = [l.strip() for l in text.splitlines()
             if re.match(r"qemu(-system-\w+)?:", l)]
    return "\n".join(lines) or None


def version() -> str | None:
    """`qemu-system-x86_64 --version`'s first line, e.g. "QEMU emulator version 7.2.19"."""
    try:
        out = subprocess.run([QEMU, "--version"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"version (\S+)", out)
    return m.group(1) if m else None


def _kvm_plausible() -> str | None:
    """Why KVM cannot work here, or None when it might."""
    if not os.path.exists("/dev/kvm"):
        return "no /dev/kvm"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "/dev/kvm is not accessible to this user"
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "cannot read /proc/cpuinfo"
    if " vmx" not in flags and " svm" not in flags:
        return "the CPU shows no vmx/svm flag (no nested virtualization)"
    return None


def probe_accel(kernel: Path, probe_initrd: Path) -> tuple[str, str]:
    """Return (accel, reason): KVM only when a real probe boot worked.

    /dev/kvm can exist on hosts that cannot run a Linux guest (no nested
    virtualization: the guest dies with a KVM emulation failure), so the
    node is not the test: a short boot that must report on the status port
    is. The answer is cached per host boot.
    """
    why = _kvm_plausible()
    if why:
        return "tcg", why
    try:
        boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot_id = "unknown"
    cache = cache_dir() / "accel-probe.json"
    try:
        saved = json.loads(cache.read_text())
        if isinstance(saved, dict) and saved.get("boot_id") == boot_id:
            return saved["accel"], saved["reason"] + " (cached probe)"
    except (OSError, ValueError, KeyError):
        pass
    progress("probing KVM with a short boot")
    tmp = private_tmp("probe")
    try:
        res = boot(kernel, probe_initrd, tmp, accel="kvm", vcpus=1,
                   memory_mb=256, append=BASE_APPEND, timeout=30)
        ok = "GUPNM-STATUS: booted" in res.status.read_text(errors="replace")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    accel, reason = (("kvm", "KVM probe boot reached user space") if ok else
                     ("tcg", "KVM probe boot failed (emulation failure or "
                      "timeout); using TCG"))
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"boot_id": boot_id, "accel": accel,
                               "reason": reason}))
    tmp.replace(cache)          # a parallel run reads all of it or none
    return accel, reason
