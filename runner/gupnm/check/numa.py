"""make check-numa: no false verdict under NUMA balancing and memory pressure.

One boot per kernel of a Debian binary kernel (CONFIG_NUMA=y,
CONFIG_NUMA_BALANCING=y) in a guest with two NUMA nodes (QEMU -numa: one
vCPU and half the memory each). The guest (runner/guest/init,
GUPNM_NUMA_PRESSURE) turns numa_balancing on with a zero scan delay and a
10 ms scan period, compacts memory every 0.2 s (pages migrate: migration
entries) and fills 70 % of the free memory with a tmpfs file and drops it,
over and over (reclaim); it then runs the test RUNS times (GUPNM_REPEAT),
alternating the CPU, so NUMA balancing finds the pages on the other node.

Each run is judged on its own against what the kernel must show: the
controls N/N (anon, memfd) and 0/N (secretmem), the driver row's verdicts as the
kernel's expectation says, the long-term writable pin on the path the test
expects, no other failure, the right exit status. Any deviation is a false
verdict. `judge()` is pure, so it is unit-tested without a VM.
"""
from __future__ import annotations

import re
import time
from datetime import datetime
from pathlib import Path

from ..guest import initramfs, qemu, vmrun
from ..host import REPO, RunnerError, progress
from ..parse import console, tap
from ..parse.status import parse_status
from ..prepare import kernels

# Debian binary kernels: NUMA and NUMA balancing built in. 6.12 carries the
# regression (driver 0/N); 7.3 has the fix (driver N/N).
SPECS = [("debian:6.12", "bug"), ("debian:7.3", "pass")]
TEST_ARGS = "-B"
NODES, VCPUS, MEMORY_MB = 2, 2, 1024
CONTROLS = {("anon", "read"): "all", ("anon", "write"): "all",
            ("memfd", "read"): "all", ("memfd", "write"): "all",
            ("secretmem", "read"): "none", ("secretmem", "write"): "none"}


def judge(tap_text: str, exit_status: int | None, expect: str
          ) -> tuple[bool, str, int]:
    """(no false verdict, what was wrong or seen, most tries any verdict
    needed) for one run of the test; @expect is "bug" or "pass"."""
    t = tap.parse_tap(tap_text.splitlines())
    wrong = []
    want = dict(CONTROLS)
    want[(tap.DRIVER, "read")] = want[(tap.DRIVER, "write")] = (
        "none" if expect == "bug" else "all")
    want[(tap.DRIVER, "longterm_write")] = "expected"
    for (backing, access), w in want.items():
        v = t.verdicts.get((backing, access))
        if v is None:
            wrong.append(f"no verdict for {backing} {access}")
            continue
        target = {"all": v.total, "none": 0, "expected": v.expected}[w]
        if v.total <= 0 or v.fast != target:
            wrong.append(f"{backing} {access} {v.fast}/{v.total}")
    # Result names as the log has them ("shadow" before v4), judged by today's.
    failed = {tap.canonical_case(r.name) for r in tap.failed_results(t)}
    allowed = ({f"verdict_{tap.DRIVER}_read", f"verdict_{tap.DRIVER}_write"}
               if expect == "bug" else set())
    if failed - allowed:
        wrong.append("failed: " + ", ".join(sorted(failed - allowed)))
    want_exit = 1 if expect == "bug" else 0
    if exit_status != want_exit:
        wrong.append(f"exit {exit_status}, expected {want_exit}")
    if t.errors:
        wrong.append("; ".join(t.errors))
    # Retries only count where pages were wanted via GUP-fast: a page the
    # kernel refuses for good (the bug, secretmem) is asked MAX_TRIES times.
    tries = max((v.tries or 1 for k, v in t.verdicts.items()
                 if want.get(k) != "none"), default=0)
    return not wrong, "; ".join(wrong), tries


def run_kernel(spec: str, expect: str, runs: int, outdir: Path) -> dict:
    """Boot @spec once with two nodes under pressure, run the test @runs
    times, judge each run; returns the figures (see check())."""
    prep = kernels.prepare(spec)
    files = {"gup_null_mapping": prep.test_binary}
    contents = initramfs.Contents(
        prep.release, prep.module, files, f"./gup_null_mapping {TEST_ARGS}",
        extra_env={"GUPNM_REPEAT": str(runs), "GUPNM_NUMA_PRESSURE": "1"})
    outdir.mkdir(parents=True, exist_ok=True)
    cpio = initramfs.build(contents, outdir / "initramfs")
    accel, _ = vmrun.choose_accel(vmrun.VmOptions(), prep, outdir / "initramfs")
    progress(f"check-numa: {spec}: {runs} runs, {NODES} NUMA nodes, "
             f"numa_balancing and memory pressure ({accel})")
    t0 = time.monotonic()
    for attempt in range(2):
        res = qemu.boot(prep.image, cpio, outdir, accel=accel, vcpus=VCPUS,
                        memory_mb=MEMORY_MB,
                        append=qemu.BASE_APPEND + " numa_balancing=enable",
                        timeout=120 + 15 * runs, numa=NODES)
        con = (outdir / "console.log").read_text(errors="replace")
        # Multi-vCPU TCG now and then Oopses in early-boot text patching,
        # before the test starts: an emulation artefact, booted once more.
        if attempt or res.timed_out or \
                not console.early_boot_death(con, vmrun.START_MARKER):
            break
        (outdir / "console.attempt1.log").write_text(con)
        progress(f"check-numa: {spec}: the guest died before the test "
                 "started (a known TCG early-boot artefact); booting again")
    st = parse_status((outdir / "status.log").read_text(errors="replace"))
    per_run, false_runs, retried, most = [], [], 0, 0
    for i, status, text in st.runs:
        ok, detail, tries = judge(text, status, expect)
        per_run.append({"run": i, "exit": status, "ok": ok, "tries": tries,
                        "detail": detail})
        most = max(most, tries)
        retried += tries > 1
        if not ok:
            false_runs.append(f"run {i}: {detail}")
    lines = [f"run {r['run']}: exit {r['exit']}, max tries {r['tries']}"
             + (f", FALSE VERDICT: {r['detail']}" if not r["ok"] else "")
             for r in per_run]
    (outdir / "runs.txt").write_text("\n".join(lines) + "\n")
    vmstat = dict(re.findall(r"(\w+)=(\d+)", " ".join(
        line for line in (outdir / "status.log").read_text(errors="replace")
        .splitlines() if line.startswith("GUPNM-VMSTAT:"))))
    return {"spec": spec, "release": prep.release, "accel": accel,
            "vmstat": vmstat,
            "runs": len(per_run), "wanted": runs, "false": false_runs,
            "retried_runs": retried, "max_tries": most,
            "nodes": _nodes(con), "seconds": round(time.monotonic() - t0, 1),
            "timed_out": res.timed_out}


def _nodes(console: str) -> str:
    for line in console.splitlines():
        if "gupnm: numa_balancing" in line:
            return line.split("gupnm: ", 1)[1].strip()
    return "not reported"


def check(t, runs: int) -> None:
    """One counted check per kernel: @runs runs, every one without a false
    verdict. Kernels that cannot be prepared here are a failed check."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = REPO / "results" / f"check-numa-{stamp}"
    for spec, expect in SPECS:
        name = (f"numa {spec}: {runs} runs on {NODES} NUMA nodes with "
                f"numa_balancing and memory pressure, 0 false verdicts")
        try:
            r = run_kernel(spec, expect, runs, base / spec.replace(":", "_"))
        except RunnerError as err:
            t.record(name, False, str(err))
            continue
        print(f"# numa {spec} ({r['release']}, {r['accel']}): {r['runs']}/"
              f"{r['wanted']} runs, {len(r['false'])} false verdicts, "
              f"{r['retried_runs']} runs needed a retry (most tries "
              f"{r['max_tries']}); {r['nodes']}; vmstat "
              f"{' '.join(f'{k}={v}' for k, v in r['vmstat'].items())}; "
              f"{r['seconds']} s; results "
              f"{base / spec.replace(':', '_')}", flush=True)
        t.record(name, r["runs"] == runs and not r["false"] and
                 not r["timed_out"],
                 "\n".join(r["false"][:20]) or
                 f"{r['runs']} of {runs} runs reported"
                 + (" (timed out)" if r["timed_out"] else ""))
