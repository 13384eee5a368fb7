"""The module-free probe (probe/gupnm_probe.c) in the runner.

Where the test module cannot be built or loaded -- a kernel whose headers
have left the archive, a lockdown that loads only signed modules, the
machine's own kernel -- the probe gives the verdict from in-kernel
vm_insert_page() users (af_packet's TX ring, io_uring, BPF maps): a
non-private FUTEX_WAKE does get_user_pages_fast(FOLL_WRITE) on their pages,
and /proc/kpageflags shows whether the slow path dirtied them.

  gupnm-run run --kernel host                  the running kernel, no QEMU
  gupnm-run run --kernel debian:7.1 --method probe
                                               a Debian image booted under
                                               QEMU with the probe only: no
                                               headers needed, image package
                                               only (--arch arm64 too)
  gupnm-run run --kernel image:VMLINUZ --method probe
                                               an image of your own
Reports in the results folder: probe.txt (the probe's KTAP), ktap.txt (the
same), probe-summary.json (method, why, verdict per producer, cost figure,
exit code); runner exit codes as for the module (0 pass, 1 fail, 3 the probe
did not run to its end, 4 skip).
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .host import REPO, RunnerError, UsageError, cache_dir, locked, progress, run
from .parse import tap
from .prepare.kernels import PROBE_LAYERS
from .report import expect

# The probe's C files, lowest first (prepare/kernels.PROBE_LAYERS: each
# uses only those before it; runner/tests/test_probe_layers.py checks the
# order with nm against probe/Makefile's SRCS).
LAYERS = PROBE_LAYERS
SOURCE = REPO / "probe" / LAYERS[-1]
SOURCES = (*(REPO / "probe" / f for f in LAYERS), REPO / "probe" / "probe.h")
METHOD = "probe"
EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INFRA, EXIT_SKIP = 0, 1, 2, 3, 4
# The probe's own budget is under a second; a hung one is killed.
HOST_TIMEOUT = 60
CANNOT_SEE = ("FOLL_LONGTERM|FOLL_WRITE pins (the half of the fix that keeps "
              "them on the slow path): a futex GUP is neither FOLL_PIN nor "
              "FOLL_LONGTERM")

_RESULT = re.compile(r"^(not ok|ok) (\d+) (\S+)(?: # (SKIP|TODO)\b ?(.*))?$")
_PLAN = re.compile(r"^1\.\.(\d+)$")
_VERDICT = re.compile(r"^# verdict (\S+): (\d+)/(\d+) pages via the slow path")
_TABLE = re.compile(r"^# table (\S+) (\S+): (\d+)/(\d+) pages via GUP-fast")
_COST = re.compile(r"^# cost (\S+): FUTEX_WAKE (\d+) ns/call vs control (\d+) "
                   r"ns/call: ratio ([\d.]+) \(median of (\d+) .*quartiles "
                   r"([\d.]+)-([\d.]+)")
_WITNESS = re.compile(r"^# (\S+) witness: MADV_POPULATE_WRITE \(slow path\) "
                      r"dirtied (\d+)/(\d+) clean pages")
_KERNEL = re.compile(r"^# kernel: (\S+)")
_UPTIME = re.compile(r"^# uptime: ([\d.]+)")
_ELAPSED = re.compile(r"^# (\d+) producer\(s\) gave a verdict; (\d+) ms")
_EXIT = re.compile(r"^GUPNM-PROBE-EXIT: (\d+)$", re.M)


@dataclass
class ProbeResult:
    """What one run of the probe said."""
    exit_status: int | None = None
    plan: int | None = None
    results: list[dict] = field(default_factory=list)   # name, status, reason
    verdicts: dict = field(default_factory=dict)        # name -> slow, pages
    # The GUP-fast table (-t): backing, access, fast, total per judged cell,
    # as the module's summary.json has its verdicts.
    table: list[dict] = field(default_factory=list)
    # name -> dirtied, pages: the slow path's witness check on this kernel
    witness: dict = field(default_factory=dict)
    cost: dict | None = None
    kernel: str | None = None
    uptime: float | None = None     # guest uptime (s) when the probe started
    elapsed_ms: int | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def bug_present(self) -> bool | None:
        """True: some producer's pages went to the slow path; False: every
        producer with a verdict went fast; None: no verdict."""
        if not self.verdicts:
            return None
        return any(v["slow"] for v in self.verdicts.values())

    def status_of(self, name: str) -> str | None:
        return next((r["status"] for r in self.results if r["name"] == name), None)


def parse(text: str, exit_status: int | None = None) -> ProbeResult:
    """The probe's KTAP (from any prefix-free capture) as a ProbeResult; a
    result line without its verdict, a plan not met or an exit status that
    disagrees with the lines is an error, listed in .errors."""
    res = ProbeResult(exit_status=exit_status)
    for line in text.splitlines():
        line = line.rstrip("\r")
        if m := _PLAN.match(line):
            res.plan = int(m.group(1))
        elif m := _RESULT.match(line):
            status = ("skip" if m.group(4) == "SKIP" else
                      "pass" if m.group(1) == "ok" else "fail")
            res.results.append({"name": m.group(3), "status": status,
                                "reason": m.group(5) or ""})
        elif m := _VERDICT.match(line):
            res.verdicts[m.group(1)] = {"slow": int(m.group(2)),
                                        "pages": int(m.group(3))}
        elif m := _TABLE.match(line):
            res.table.append({"backing": m.group(1), "access": m.group(2),
                              "fast": int(m.group(3)), "total": int(m.group(4))})
        elif m := _COST.match(line):
            res.cost = {"producer": m.group(1), "ns_per_call": int(m.group(2)),
                        "control_ns_per_call": int(m.group(3)),
                        "ratio": float(m.group(4)), "rounds": int(m.group(5)),
                        "ratio_quartiles": [float(m.group(6)), float(m.group(7))]}
        elif m := _WITNESS.match(line):
            res.witness[m.group(1)] = {"dirtied": int(m.group(2)),
                                       "pages": int(m.group(3))}
        elif m := _KERNEL.match(line):
            res.kernel = m.group(1)
        elif m := _UPTIME.match(line):
            res.uptime = float(m.group(1))
        elif m := _ELAPSED.match(line):
            res.elapsed_ms = int(m.group(2))
    if res.exit_status is None:
        m = _EXIT.findall(text)
        res.exit_status = int(m[-1]) if m else None
    names = [r["name"] for r in res.results]
    if res.plan is None:
        res.errors.append("no KTAP plan: the probe did not start")
    elif len(names) != res.plan:
        res.errors.append(f"{len(names)} results for a plan of {res.plan}: "
                          "the probe did not run to its end")
    if len(set(names)) != len(names):
        res.errors.append("result names are not unique")
    for r in res.results:
        if r["status"] != "skip" and r["name"] in PRODUCERS and \
                r["name"] not in res.verdicts and r["status"] == "pass":
            res.errors.append(f"{r['name']} passed without a verdict line")
    for name, v in res.verdicts.items():
        w = res.witness.get(name)
        if not v["slow"] and w and w["dirtied"] < w["pages"]:
            res.errors.append(f"{name}: a GUP-fast verdict although the "
                              "witness did not hold")
    failed = any(r["status"] == "fail" for r in res.results)
    if res.exit_status is not None and not res.errors:
        if failed != (res.exit_status == 1):
            res.errors.append(f"exit status {res.exit_status} disagrees with "
                              f"the results ({'a' if failed else 'no'} failure)")
    return res


PRODUCERS = ("packet_tx_ring", "io_uring_sqes", "io_uring_sq_ring",
             "bpf_ringbuf", "bpf_array_mmap", "kcov_area")


def exit_code(res: ProbeResult) -> int:
    """The runner's exit code for a probe run."""
    if res.errors or res.exit_status is None:
        return EXIT_INFRA
    return {0: EXIT_PASS, 1: EXIT_FAIL, 4: EXIT_SKIP}.get(res.exit_status,
                                                          EXIT_INFRA)


def cannot_see(res: ProbeResult) -> str | None:
    """What this run could not see: the long-term writable pin, unless the
    table (-t) judged the shadow row's long-term cell (the probe's name for
    the driver row)."""
    seen = any(c["backing"] in tap.DRIVER_ROW_NAMES and c["access"] == "longterm_write"
               for c in res.table)
    return None if seen else CANNOT_SEE


def verdict_line(res: ProbeResult) -> str:
    """One line a person reads: the verdict and on what it rests."""
    if res.bug_present is None:
        skips = [f"{r['name']}: {r['reason']}" for r in res.results
                 if r["status"] == "skip" and r["name"] in PRODUCERS]
        return "no verdict: " + ("; ".join(skips) if skips else
                                 "no producer ran")
    slow = sorted(n for n, v in res.verdicts.items() if v["slow"])
    fast = sorted(n for n, v in res.verdicts.items() if not v["slow"])
    word = ("BUG: GUP-fast rejects NULL-mapping order-0 folios"
            if res.bug_present else "no bug: GUP-fast takes NULL-mapping "
            "order-0 folios")
    parts = [word]
    if slow:
        parts.append("slow path: " + ", ".join(slow))
    if fast:
        parts.append("GUP-fast: " + ", ".join(fast))
    if res.cost:
        c = res.cost
        parts.append(f"FUTEX_WAKE cost {c['producer']}/control "
                     f"{c['ratio']:.2f} (quartiles {c['ratio_quartiles'][0]:.2f}-"
                     f"{c['ratio_quartiles'][1]:.2f}, {c['rounds']} rounds)")
    return "; ".join(parts)


def build(cc: str = "gcc") -> Path:
    """The static probe, cached by the content of its sources (kernels.build_probe)."""
    from .prepare import kernels
    return kernels.build_probe(cc)


# --- the running kernel ---------------------------------------------------

def host_method(root: Path = Path("/"), release: str | None = None) -> tuple[str, str]:
    """Which method host mode uses on the running kernel, and why: the
    module when its headers are there, the kernel has module support, loads
    unsigned modules, and gup_test is neither loaded nor built in; the probe
    otherwise, the reason naming every blocker (hostmode.py runs the module,
    and falls back to the probe when it does not build or load)."""
    release = release or os.uname().release
    blockers = []
    if not (root / "proc/modules").exists():
        blockers.append("the kernel has no module support (no /proc/modules)")
    build_dir = root / "lib/modules" / release / "build"
    if not (build_dir / "Makefile").exists():
        blockers.append(f"no headers for {release} ({build_dir} missing)")
    lockdown = root / "sys/kernel/security/lockdown"
    try:
        mode = re.search(r"\[(\w+)\]", lockdown.read_text())
        if mode and mode.group(1) != "none":
            blockers.append(f"lockdown={mode.group(1)}: only signed modules load")
    except OSError:
        pass
    try:
        if (root / "sys/module/module/parameters/sig_enforce").read_text().strip() == "Y":
            blockers.append("module.sig_enforce=1: only signed modules load")
    except OSError:
        pass
    blockers += _gup_test_taken(root, release)
    if blockers:
        return METHOD, "probe: the module cannot be used here: " + "; ".join(blockers)
    return "module", (f"module: {release}'s headers are in {build_dir} and it "
                      "loads unsigned modules")


def _gup_test_taken(root: Path, release: str) -> list[str]:
    """gup_test already there: loaded by someone (host mode leaves it
    alone) or built in (CONFIG_GUP_TEST=y: the kernel's own, not ours)."""
    out = []
    try:
        if any(line.split()[0] == "gup_test"
               for line in (root / "proc/modules").read_text().splitlines() if line):
            out.append("gup_test is loaded already (not by this run: host mode "
                       "leaves it alone)")
    except OSError:
        pass
    try:
        if re.search(r"(^|/)gup_test\.ko$", (root / "lib/modules" / release /
                                               "modules.builtin").read_text(), re.M):
            out.append("gup_test is built into this kernel (CONFIG_GUP_TEST=y)")
    except OSError:
        pass
    return out


def run_host(outdir: Path, probe_args: list[str], *, binary: Path | None = None,
             timeout: float = HOST_TIMEOUT) -> tuple[ProbeResult, str]:
    """Run the probe on the running kernel; its output into outdir/probe.txt.
    Changes nothing on the machine: the probe only maps, reads /proc and
    unmaps; no module, no sysctl, no mount."""
    binary = binary or build()
    t0 = time.monotonic()
    try:
        proc = subprocess.run([str(binary), *probe_args], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as err:
        text = err.stdout.decode(errors="replace") if isinstance(err.stdout, bytes) \
            else (err.stdout or "")
        (outdir / "probe.txt").write_text(text)
        res = parse(text)
        res.errors.append(f"the probe did not finish in {timeout:g} s (killed)")
        return res, "host"
    (outdir / "probe.txt").write_text(proc.stdout)
    if proc.stderr.strip():
        (outdir / "probe-stderr.txt").write_text(proc.stderr)
    res = parse(proc.stdout, proc.returncode)
    res.elapsed_ms = res.elapsed_ms if res.elapsed_ms is not None else \
        int((time.monotonic() - t0) * 1000)
    return res, "host"


# --- a Debian image under QEMU ------------------------------------------

INIT = """#!/bin/sh
# PID 1 of a probe guest: run gupnm_probe, its output and exit status on
# the status port ({status}), between markers.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
{{
	echo "GUPNM-STATUS: booted"
	echo "GUPNM-PROBE-BEGIN"
	echo "# kernel: $(uname -r)"
	read -r up _ </proc/uptime
	echo "# uptime: $up"
	/bin/gupnm_probe {args}
	echo "GUPNM-PROBE-EXIT: $?"
}} >{status} 2>&1
reboot -f
"""


# hugepages=1: the table's hugetlb row (2 MiB of the guest's memory).
GUEST_APPEND = "quiet mitigations=off hugepages=1"
# A probe guest also gives the GUP-fast table: the tracefs it mounts, the
# ramfs and the huge page are the guest's own.
GUEST_ARGS = ["-t"]


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def initramfs(workdir: Path, binary: Path, probe_args: list[str], *,
              busybox: Path | None = None, status: str = "/dev/ttyS1") -> Path:
    """busybox (@busybox: the guest's, when not the host's), the probe and
    an init that runs it, reporting on @status; a newc cpio."""
    from .guest import initramfs as ifs
    root = workdir / "probe-guest-root"
    if root.exists():
        shutil.rmtree(root)
    for d in ("bin", "proc", "sys", "dev"):
        (root / d).mkdir(parents=True)
    shutil.copy2(busybox or ifs._busybox(), root / "bin" / "busybox")
    for applet in ("sh", "mount", "echo", "reboot", "uname"):
        (root / "bin" / applet).symlink_to("busybox")
    shutil.copy2(binary, root / "bin" / "gupnm_probe")
    (root / "init").write_text(INIT.format(
        status=status, args=" ".join(_quote(a) for a in probe_args)))
    (root / "init").chmod(0o755)
    return ifs.pack_tree(root, workdir / "probe-initramfs.cpio")


def select_any(spec: str, offers: list, arch: str = "amd64"):
    """debian.select() without its need for headers: the probe needs only
    the image, so debian:7.1 is the newest 7.1 with or without them."""
    from .prepare import debian
    chosen = debian.select(spec, [dataclasses.replace(o, headers=True)
                                  for o in offers], arch)
    return next(o for o in offers if (o.release, o.version, o.image_pkg) ==
                (chosen.release, chosen.version, chosen.image_pkg))


def _image_in(base: Path, rel: str) -> Path | None:
    """The image an unpacked Debian kernel (or its image alone) holds."""
    return next((p for p in (base / "boot" / f"vmlinuz-{rel}",
                             base / "usr/lib/modules" / rel / "vmlinuz")
                 if p.is_file()), None)


def _whole(base: Path) -> bool:
    """@base passes its check (cache.check: the image's size and sha256
    as filled); one that fails is not used (an image-only entry is filled
    again). One filled by a runner that kept no record gets one of what it
    holds."""
    from .prepare import cache
    image_only = base.parent.name == "debian-image"
    if image_only and not (base / cache.MANIFEST).exists():
        image = next(iter(base.glob("boot/vmlinuz-*")), None) or \
            next(iter(base.glob("usr/lib/modules/*/vmlinuz")), None)
        try:
            cache.record(base, [str(image.relative_to(base))])
        except (OSError, AttributeError):
            pass
    why = cache.check(base)
    if why and image_only:
        cache.discard(base, why)
    return why is None


def fetch_image(spec: str, arch: str = "amd64") -> tuple[str, Path, dict]:
    """A Debian kernel image (image package only: no headers needed), cached
    beside debian.fetch()'s entries and reusing one when it is there."""
    from .prepare import apt, cache, debian, debs
    kind, _, rest = spec.partition(":")
    if kind != "debian" or not rest:
        raise UsageError(f"--method probe boots debian:SPEC, source:TREE and "
                         f"image:KERNEL kernels (or use --kernel host), not '{spec}'")
    offered = select_any(rest, debian.catalogue(arch), arch)
    sha = apt.field(offered.image_pkg, offered.version, "SHA256", arch)
    if not sha:
        raise RunnerError(f"no SHA256 for {offered.image_pkg} {offered.version}: "
                          "run runner/debian-apt.sh --refresh")
    key = f"{offered.release}-{sha[:16]}"
    rel = offered.release
    source = {"kind": "debian", "release": rel, "package": offered.image_pkg,
              "version": offered.version, "suites": offered.suites,
              "headers_in_archive": offered.headers}
    root = cache_dir() / "debian-image" / key
    for base in (cache_dir() / "debian" / key, root):
        image = _image_in(base, rel)
        if image is not None and _whole(base):
            return rel, image, source
    with locked(cache_dir() / "locks" / f"debian-image-{key}.lock"):
        tmp = root.with_name(root.name + ".tmp")
        progress(f"downloading {offered.image_pkg} {offered.version} (image only)")
        deb = debs.verified(apt.download(offered.image_pkg, offered.version,
                                               cache_dir() / "debs", arch),
                                  offered.image_pkg, offered.version, arch)
        run(["rm", "-rf", tmp, root])
        tmp.mkdir(parents=True)
        debian.extract_image(deb, tmp, rel)
        cache.record(tmp, [str(_image_in(tmp, rel).relative_to(tmp))])
        tmp.rename(root)
        cache.verify_filled(root, "kernels")
    for image in (root / "boot" / f"vmlinuz-{rel}",
                  root / "usr/lib/modules" / rel / "vmlinuz"):
        if image.exists():
            return rel, image, source
    raise RunnerError(f"no vmlinuz in {offered.image_pkg} {offered.version} "
                      f"(unpacked in {root}); remove it and retry")


def source_image(spec: str, arch: str = "amd64") -> tuple[str, Path, dict]:
    """The image of source:TREE[:SELECTION], built (or found in the cache)
    with the default config as a module run builds it: configs/base.config
    has what the probe needs (networking and af_packet built in)."""
    from .prepare import kernels, source
    _, (tree, sel) = kernels.parse_spec(spec)
    k = source.prepare(tree, sel, "default", arch=arch)
    return k.release, k.image, {"kind": "source", "tree": str(k.base),
                                "base_commit": k.base_commit,
                                "patches": k.patches, "selection": sel,
                                "config": "default"}


def image_for(spec: str, arch: str = "amd64") -> tuple[str, Path, dict]:
    """(release, image, source) of a debian: or source: spec."""
    if spec.startswith("source:"):
        return source_image(spec, arch)
    return fetch_image(spec, arch)


def image_of(spec: str, arch: str = "amd64") -> Path:
    """The kernel image of image:KERNEL[:DIR] (DIR, headers or a module
    tree, is not needed by the probe); UsageError when it is unusable."""
    parts = spec.split(":")
    image = Path(parts[1]) if len(parts) in (2, 3) and parts[1] else None
    if image is None:
        raise UsageError(f"'{spec}': use image:KERNEL (or image:KERNEL:DIR)")
    if not image.is_file():
        raise UsageError(f"kernel image {image} does not exist")
    if arch == "amd64":
        from .prepare import vmlinux
        vmlinux.check_kernel(image)
    return image


# A guest of 512 MiB or less gets no THP at all: the kernel turns THP off
# when it sees less than 512 MiB of RAM (hugepage_init()), so the table's
# thp row would skip on every kernel (make check's probe rows, 2026-12-05).
GUEST_MEMORY_MB = 1024


def run_guest(image: Path, outdir: Path, probe_args: list[str], *,
              memory_mb: int = GUEST_MEMORY_MB, timeout: float = 120, retries: int = 1,
              append: str = "", arch: str = "amd64") -> tuple[ProbeResult, str, list[str]]:
    """Boot @image under TCG with the probe; (result, where, notes). A guest
    that died before the probe started is booted again, up to @retries
    times, and said so. arm64: qemu-system-aarch64 -M virt, the probe
    cross-built, Debian's arm64 busybox, the status port on ttyS0."""
    from .guest import qemu
    from .prepare import plan
    work = outdir / "probe-work"
    work.mkdir(parents=True, exist_ok=True)
    # What the guest needs, from the prepare step a module run has too.
    pay = plan.probe(image, arch)
    initrd = initramfs(work, pay.files[plan.PROBE], GUEST_ARGS + probe_args,
                       busybox=pay.busybox,
                       status="/dev/ttyS0" if arch == "arm64" else "/dev/ttyS1")
    notes: list[str] = []
    # mitigations=off: about 1 s less boot under TCG (guest uptime at the
    # probe 4.3 -> 3.2 s on 7.3.4); it changes no GUP path, and the cost
    # figure compares two backings within the same boot.
    cmdline = f"{qemu.base_append(arch)} {GUEST_APPEND} {append}".strip()
    for attempt in range(retries + 1):
        boot = qemu.boot(image, initrd, outdir, accel="tcg", vcpus=1,
                         memory_mb=memory_mb, append=cmdline, timeout=timeout,
                         arch=arch)
        status = boot.status.read_text(errors="replace")
        text = status.split("GUPNM-PROBE-BEGIN", 1)[-1] if \
            "GUPNM-PROBE-BEGIN" in status else ""
        if "GUPNM-PROBE-BEGIN" in status or attempt == retries:
            break
        notes.append(f"boot {attempt + 1} died before the probe started "
                     f"({boot.seconds:.0f} s): booted again")
    (outdir / "probe.txt").write_text(_EXIT.sub("", text).rstrip() + "\n")
    res = parse(text)
    if boot.timed_out:
        res.errors.append(f"the guest timed out after {timeout:g} s")
    elif "GUPNM-STATUS: booted" not in status:
        res.errors.append("the guest never reached user space (console.log)")
    notes.append(f"kernel command line: {cmdline}")
    notes.append(f"boot to power-off {boot.seconds:.1f} s under TCG ({arch}), 1 vCPU"
                 + (f"; the probe started at guest uptime {res.uptime:.1f} s"
                    if res.uptime is not None else ""))
    if not os.environ.get("GUPNM_KEEP_WORK"):
        shutil.rmtree(work, ignore_errors=True)
    return res, "qemu-tcg", notes


# --- reports and the run subcommand ----------------------------------------

def summary(spec: str, res: ProbeResult, *, where: str, why: str,
            release: str, source: dict | None = None,
            notes: list[str] | None = None, seconds: float = 0.0) -> dict:
    code = exit_code(res)
    problems = list(res.errors)
    if res.kernel and res.kernel != release:
        problems.append(f"the probe ran on {res.kernel}, not {release}")
        code = EXIT_INFRA
    return {"method": METHOD, "method_reason": why, "spec": spec,
            "where": where, "kernel_release": release,
            "probe_kernel": res.kernel, "kernel_source": source or {},
            "exit_code": code,
            "outcome": {EXIT_PASS: "pass", EXIT_FAIL: "fail",
                        EXIT_SKIP: "skip"}.get(code, "error"),
            "bug_present": res.bug_present, "verdict": verdict_line(res),
            "verdicts": res.verdicts, "witness": res.witness,
            "results": res.results,
            "cost": res.cost, "probe_exit_status": res.exit_status,
            "probe_elapsed_ms": res.elapsed_ms, "cannot_see": cannot_see(res),
            "table": res.table,
            "guest_uptime_at_probe": res.uptime,
            "problems": problems, "notes": notes or [],
            "seconds": round(seconds, 2),
            "files": {"probe": "probe.txt", "ktap": "ktap.txt",
                      "summary": "probe-summary.json", "junit": "junit.xml"}}


def junit_view(s: dict) -> dict:
    """The probe's summary in the shape report/junit.py reads (a case per
    KTAP result, the kernel, the exit code), so a CI gets junit.xml from the
    probe as from the module."""
    arch = (s.get("kernel_source") or {}).get("arch") or "amd64"
    return {"spec": s["spec"], "exit_code": s["exit_code"], "verdict": s["verdict"],
            "outcome": s["outcome"], "problems": s["problems"], "command": "gupnm_probe",
            "kernel": {"release": s["kernel_release"], "source": {"arch": arch}},
            "durations": {"total": s["seconds"]},
            "cases": [{"number": n, "name": r["name"], "status": r["status"],
                       "reason": r.get("reason") or None, "diagnostics": []}
                      for n, r in enumerate(s["results"], 1)]}


def write_reports(outdir: Path, s: dict) -> None:
    from .report import junit
    probe_txt = outdir / "probe.txt"
    if probe_txt.exists():
        shutil.copyfile(probe_txt, outdir / "ktap.txt")
    tmp = outdir / ".probe-summary.json.tmp"
    tmp.write_text(json.dumps(s, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, outdir / "probe-summary.json")
    junit.write(outdir / "junit.xml", junit_view(s))


def cmd_run(args, outdir: Path) -> int:
    """gupnm-run run --kernel host, or --method probe: the probe's verdict."""
    probe_args = args.test_args.split() if getattr(args, "test_args", "") else []
    t0 = time.monotonic()
    source, notes = None, []
    if args.kernel == "host":
        if getattr(args, "arch", "amd64") != "amd64" and os.uname().machine == "x86_64":
            raise UsageError("--kernel host tests this machine's kernel: drop --arch")
        method, why = host_method()
        if method == "module":          # hostmode.run() did not use it
            why = "probe: " + (getattr(args, "host_fallback", None) or "--method probe")
        if os.geteuid():
            progress("not root: the probe will skip (it needs /proc/kpageflags "
                     "and PFNs); run as root")
        release = os.uname().release
        progress(f"host mode on {release}: {why}")
        res, where = run_host(outdir, probe_args)
    else:
        arch = getattr(args, "arch", "amd64")
        if args.kernel.startswith("image:"):
            image = image_of(args.kernel, arch)
            release, source = None, {"kind": "image", "image": str(image)}
            why = "probe: --method probe (an image of your own; no headers used)"
        else:
            release, image, source = image_for(args.kernel, arch)
            why = ("probe: --method probe" + ("" if source.get("headers_in_archive", True)
                   else " (no headers in the archive: the module cannot be built)"))
        progress(f"booting {release} with the probe (TCG)")
        res, where, notes = run_guest(image, outdir, probe_args,
                                      memory_mb=min(args.memory, 1024),
                                      timeout=args.timeout,
                                      retries=args.retries, append=args.append,
                                      arch=arch)
    if release is None:                 # image: the kernel says which it is
        release = res.kernel or "unknown"
    s = summary(args.kernel, res, where=where, why=why, release=release,
                source=source, notes=notes, seconds=time.monotonic() - t0)
    write_reports(outdir, s)
    out = sys.stderr if getattr(args, "json", False) else sys.stdout
    print(f"kernel   {release} ({where})", file=out)
    print(f"method   {why}", file=out)
    print(f"verdict  {s['verdict']}", file=out)
    if s["cannot_see"]:
        print(f"cannot   {s['cannot_see']}", file=out)
    for p in s["problems"]:
        print(f"problem  {p}", file=out)
    for n in s["notes"]:
        print(f"note     {n}", file=out)
    print(f"result   {s['outcome'].upper()} (exit {s['exit_code']}); "
          f"reports in {outdir}", file=out)
    if getattr(args, "json", False):
        print(json.dumps(s, indent=2, sort_keys=True))
    return s["exit_code"]


# Where the test could not ask: the kernel's own gup_test lacks what it needs
# (built in, so the runner's module cannot stand in for it, or the module an
# image: DIR gave). Its skip is no verdict: the probe judges the same image.
UNASKED = ("gup_test lacks GUP_FAST_VERDICT", "gup_test cannot be mapped")


def judge_unasked(run: dict, args, outdir: Path) -> int | None:
    """If @run (a module run's summary) is such a skip, run the probe on the
    image it booted, write its reports into @outdir, fold its verdict into
    @run (exit code, outcome, verdict, a note) and return its exit code;
    else None."""
    from .guest import vmrun
    reason = run.get("skip_reason") or ""
    image = run.get("kernel", {}).get("source", {}).get("boot_image")
    if run.get("exit_code") != 4 or not reason.startswith(UNASKED) or not image:
        return None
    release = run["kernel"].get("release", "?")
    why = (f"probe: the test could not ask ({reason}): the kernel's own gup_test, "
           "built in or its own module, stands where the runner's would")
    progress(f"{release}: {why}")
    res, where, notes = run_guest(Path(image), outdir, [], memory_mb=min(args.memory, 1024),
                                  timeout=args.timeout, retries=args.retries,
                                  append=args.append, arch=getattr(args, "arch", "amd64"))
    s = summary(run.get("spec") or "?", res, where=where, why=why, release=release,
                notes=notes)
    run.update(exit_code=s["exit_code"], outcome=s["outcome"],
               verdict=f"probe: {s['verdict']}")
    run.setdefault("notes", []).append(
        f"{why}: probe-summary.json, junit.xml and ktap.txt are the probe's")
    vmrun.save_reports(outdir, run)
    write_reports(outdir, s)            # the probe's junit.xml and ktap.txt
    return s["exit_code"]


# --- module and probe on the same kernel --------------------------------------

def _path(cell: dict) -> str:
    """"fast", "slow" or "mixed": which path took a judged cell's pages."""
    return ("fast" if cell["fast"] == cell["total"] else
            "slow" if cell["fast"] == 0 else "mixed")


def table_agreement(module: dict, probe_summary: dict) -> tuple[int, list[str]]:
    """The cells both the module's table (summary.json verdicts) and the
    probe's (-t) judged: (how many, those where the two saw another path)."""
    # One name for the driver row on both sides: the probe (and the test
    # before v4) call it "shadow".
    mod = {(tap.row_name(v["backing"]), v["access"]): v for v in module.get("verdicts", [])
           if v.get("total", 0) > 0}
    both, differ = 0, []
    for cell in probe_summary.get("table") or []:
        m = mod.get((tap.row_name(cell["backing"]), cell["access"]))
        if m is None or cell["total"] <= 0:
            continue
        both += 1
        if _path(m) != _path(cell):
            differ.append(f"{cell['backing']} {cell['access']}: module {_path(m)} "
                          f"({m['fast']}/{m['total']}), probe {_path(cell)} "
                          f"({cell['fast']}/{cell['total']})")
    return both, differ


def agreement(module: dict, probe_summary: dict) -> dict:
    """Do the module's run (summary.json) and the probe's (probe-summary.json)
    on one kernel say the same? agree: True, False, or None when either has
    no verdict or the module's finding is one the probe cannot see (a
    long-term writable pin through GUP-fast, secretmem exposure)."""
    rel_m = (module.get("kernel") or {}).get("release")
    rel_p = probe_summary.get("kernel_release")
    out = {"release": rel_m, "module": module.get("diagnosis"),
           "probe_bug": probe_summary.get("bug_present"), "agree": None}
    if rel_m != rel_p:
        out["why"] = f"not the same kernel: module on {rel_m}, probe on {rel_p}"
        return out
    diag, bug = module.get("diagnosis"), probe_summary.get("bug_present")
    if bug is None or diag not in ("regression", "pass", "wrongfix", "secretmem"):
        out["why"] = "no verdict from " + ("the probe" if bug is None else "the module")
        return out
    if diag == "wrongfix":
        # Half of it both see: NULL-mapping pages through GUP-fast (the
        # module's shadow pages, the probe's producers). The other half, the
        # long-term writable pin that went through GUP-fast too, is a pin
        # the probe cannot make.
        out["seen_half_agrees"] = bug is False
        out["why"] = ("the module found 'wrongfix' (a long-term writable pin "
                      "through GUP-fast), which the probe cannot see; both see "
                      "GUP-fast take NULL-mapping pages: "
                      + ("yes" if bug is False else "no, the probe says bug"))
        return out
    if diag == "secretmem":
        out["why"] = (f"the module found '{diag}', which the probe cannot see; "
                      f"the probe says {'bug' if bug else 'no bug'}")
        return out
    out["agree"] = (diag == "regression") == bug
    out["why"] = (f"module: {diag}; probe: {'bug' if bug else 'no bug'}")
    return out


# --- every Debian kernel: probe-survey ---------------------------------------

def survey_rows(offers: list, run_one, *, headerless_only: bool = False,
                exp: expect.Expectations | None = None) -> list[dict]:
    """One row per kernel: @run_one(offered) -> ProbeResult (or raises
    RunnerError: the row says what went wrong, the survey goes on); what
    each is expected to carry from @exp (default: Debian's file)."""
    exp = exp or expect.default()
    rows = []
    for o in offers:
        if headerless_only and o.headers:
            continue
        t0 = time.monotonic()
        row = {"release": o.release, "arch": o.arch, "headers": o.headers,
               "method": METHOD, "expected_bug": expect.expects_bug(exp, o.release)[0]}
        try:
            res = run_one(o)
            row.update(bug_present=res.bug_present, exit_code=exit_code(res),
                       ratio=res.cost["ratio"] if res.cost else None,
                       errors=res.errors)
        except RunnerError as err:
            row.update(bug_present=None, exit_code=EXIT_INFRA, ratio=None,
                       errors=[str(err)])
        row["seconds"] = round(time.monotonic() - t0, 1)
        row["agrees"] = (None if row["bug_present"] is None else
                         row["bug_present"] == row["expected_bug"])
        rows.append(row)
    return rows


def format_rows(rows: list[dict]) -> str:
    def word(v):
        return {True: "bug", False: "no bug", None: "-"}[v]
    lines = [f"{'release':28} {'headers':7} {'method':6} {'verdict':8} "
             f"{'expected':8} {'ratio':>5}  note"]
    for r in rows:
        note = ("MISMATCH" if r["agrees"] is False else
                "; ".join(r["errors"])[:60])
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        lines.append(f"{r['release']:28} {'yes' if r['headers'] else 'no':7} "
                     f"{r['method']:6} {word(r['bug_present']):8} "
                     f"{word(r['expected_bug']):8} {ratio:>5}  {note}")
    return "\n".join(lines)


def cmd_survey(args) -> int:
    """The probe on every Debian kernel of --arch (or only those without
    headers): a verdict per row, the method named, compared with what the
    kernel is known to carry. Exit 0 when every row has a verdict that
    matches, 1 on a mismatch, 3 when a row has no verdict."""
    from .prepare import debian
    offers = [o for o in debian.catalogue(args.arch)
              if o.flavour == debian.DEFAULT_FLAVOUR[args.arch]
              and (not args.series or o.series in args.series.split(","))]
    outdir = Path(args.results) if args.results else \
        REPO / "results" / f"probe-survey-{args.arch}-{time.strftime('%Y%m%d-%H%M%S')}"
    outdir.mkdir(parents=True, exist_ok=True)

    def one(o):
        rel = o.release
        _, image, _ = fetch_image(f"debian:{rel}", args.arch)
        sub = outdir / rel
        sub.mkdir(exist_ok=True)
        progress(f"{rel}: booting with the probe")
        res, _, _ = run_guest(image, sub, [], timeout=args.timeout,
                              arch=args.arch)
        return res

    rows = survey_rows(offers, one, headerless_only=args.headerless,
                       exp=getattr(args, "expect", None))
    (outdir / "probe-survey.json").write_text(json.dumps(rows, indent=2) + "\n")
    table = format_rows(rows)
    (outdir / "probe-survey.txt").write_text(table + "\n")
    human = sys.stderr if args.json else sys.stdout     # --json: stdout is JSON only
    print(table, file=human)
    print(f"{len(rows)} kernels; results in {outdir}", file=human)
    if args.json:
        print(json.dumps(rows, indent=2))           # probe-survey.json's content
        args.printed_json = True
    if any(r["agrees"] is False for r in rows):
        return EXIT_FAIL
    if any(r["bug_present"] is None for r in rows):
        return EXIT_INFRA
    return EXIT_PASS


def add_parsers(sub) -> None:
    p = sub.add_parser("probe-survey", help="the module-free probe on every "
                       "Debian kernel (or those without headers)")
    p.add_argument("--arch", choices=("amd64", "arm64"), default="amd64")
    p.add_argument("--headerless", action="store_true",
                   help="only kernels whose headers left the archive")
    p.add_argument("--series", default="", metavar="S,..",
                   help="only these series, e.g. 6.19,7.0")
    p.add_argument("--timeout", type=float, default=120, metavar="S")
    p.add_argument("--results", default=None, metavar="DIR")
    p.add_argument("--expect", type=expect.arg, default=None, metavar="FILE",
                   help="what each kernel is expected to carry (default "
                   "runner/expectations/debian.txt; docs/expectations.md)")
    p.add_argument("--json", action="store_true",
                   help="print probe-survey.json on stdout (the table goes to stderr)")
    p.set_defaults(func=cmd_survey)
