"""Run gup_null_mapping on one prepared kernel in a VM and collect the results.

Results land in one directory per run: console.log (everything the guest
printed), status.log (the guest's protocol), tap.txt (the test's output),
summary.json, and the initramfs work files.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from . import console, initramfs, qemu, results, tap
from .host import RunnerError, progress
from .kernels import Prepared
from .status import parse_status

START_MARKER = "GUPNM-TEST-BEGIN"
# Exit statuses of the runner beyond the test's own 0/1/4.
EXIT_INFRA = 3        # the VM died before the test ended, or timed out
EXIT_USAGE = 2


@dataclass
class VmOptions:
    accel: str = "auto"
    vcpus: int = 2
    memory_mb: int = 1024
    append: str = ""
    timeout: float = 300.0
    test_args: str = ""
    retries: int = 2
    kmemleak: bool = False


@dataclass
class RunOutcome:
    summary: dict
    exit_code: int
    outdir: Path
    tap_text: str


def unnest_run_vmtests(text: str, test: str = "gup_null_mapping") -> str:
    """The test's own TAP from run_vmtests.sh output, one '# ' level removed."""
    out, inside, skip = [], False, 0
    for line in text.splitlines():
        if re.match(rf"^# running \S*{re.escape(test)}\b", line):
            # The title's underline follows; with busybox tr it is not
            # made of dashes ("# -unnin--./-u-_null_m---in-"), so skip it
            # by position.
            inside, skip = True, 1
            continue
        if skip:
            skip -= 1
            continue
        if inside and re.match(r"^# \[(PASS|FAIL|SKIP)\]$", line):
            inside = False
            continue
        if inside:
            out.append(line[2:] if line.startswith("# ") else
                       "" if line == "#" else line)
    return "\n".join(out) + "\n" if out else ""


def choose_accel(opts: VmOptions, prep: Prepared, work: Path) -> tuple[str, str]:
    if opts.accel in ("kvm", "tcg"):
        return opts.accel, "requested"
    if opts.accel != "auto":
        raise RunnerError(f"--accel {opts.accel}: use auto, kvm or tcg")
    return qemu.probe_accel(prep.image, initramfs.build_probe(work))


def run(prep: Prepared, opts: VmOptions, outdir: Path,
        durations: dict[str, float] | None = None) -> RunOutcome:
    outdir.mkdir(parents=True, exist_ok=True)
    durations = dict(durations or {})
    t0 = time.monotonic()
    vmtests = prep.run_vmtests
    if vmtests and opts.test_args:
        progress("test arguments given: running gup_null_mapping directly, "
                 "not through run_vmtests.sh (which passes none)")
        vmtests = None
    if vmtests:
        command = "bash ./run_vmtests.sh -t gup_fast"
        files = {"gup_null_mapping": prep.test_binary,
                 "run_vmtests.sh": vmtests}
    else:
        command = f"./gup_null_mapping {opts.test_args}".strip()
        files = {"gup_null_mapping": prep.test_binary}
    payload = initramfs.Payload(prep.release, prep.module, files, command,
                                need_bash=bool(vmtests),
                                kmemleak=opts.kmemleak)
    # Per run, not per kernel: two runs of one kernel must not share it.
    cpio = initramfs.build(payload, outdir / "initramfs")
    durations["initramfs"] = time.monotonic() - t0

    accel, accel_reason = choose_accel(opts, prep, outdir / "initramfs")
    append = " ".join(x for x in (qemu.BASE_APPEND, opts.append) if x)
    attempts = []
    for attempt in range(1 + max(0, opts.retries)):
        progress(f"booting {prep.release} ({accel}, {opts.vcpus} vCPUs, "
                 f"{opts.memory_mb} MiB){' retry ' + str(attempt) if attempt else ''}")
        res = qemu.boot(prep.image, cpio, outdir, accel=accel, vcpus=opts.vcpus,
                        memory_mb=opts.memory_mb, append=append,
                        timeout=opts.timeout)
        con = res.console.read_text(errors="replace")
        attempts.append(res.seconds)
        if not res.timed_out and console.early_boot_death(con, START_MARKER) \
                and attempt < opts.retries:
            (outdir / f"console.attempt{attempt + 1}.log").write_text(con)
            progress("the guest died before the test started (a known TCG "
                     "early-boot artefact); retrying")
            continue
        break
    durations["boot_and_test"] = res.seconds
    st = parse_status(res.status.read_text(errors="replace"))
    if st.times:
        durations.update({f"guest_{k}": v for k, v in st.times.items()})

    tap_text = st.tap
    if not st.complete_tap:         # guest died: take what the console has
        marker = con.find(START_MARKER)
        tap_text = con[marker + len(START_MARKER):] if marker >= 0 else ""
    outer_text = tap_text
    if vmtests:
        (outdir / "run_vmtests.txt").write_text(tap_text)
        tap_text = unnest_run_vmtests(tap_text)
    (outdir / "tap.txt").write_text(tap_text)
    parsed = tap.parse_tap(tap_text.splitlines())
    splats = console.find_splats(con) or console.find_splats(st.dmesg)
    if st.dmesg:
        (outdir / "dmesg.txt").write_text(st.dmesg)
    if re.search(r"test_gup_fast: .*reference leak", con + st.dmesg):
        splats.append(console.Splat("leak", 0, "test_gup_fast reported a page "
                                    "reference leak at unload"))

    problems = []
    if res.timed_out:
        problems.append(f"timed out after {opts.timeout:.0f} s")
    if not st.booted:
        problems.append("the guest never reached user space")
    elif st.exit_code is None:
        problems.append("the guest died before the test finished"
                        if console.guest_reached_test(con, START_MARKER) else
                        "the guest died before the test started")
    if st.rmmod == "failed":
        problems.append("rmmod test_gup_fast failed after the test")
    if len(attempts) > 1:
        problems_note = f"{len(attempts) - 1} retried boot(s) (early-boot death)"
    else:
        problems_note = ""

    summary = results.build_summary(
        kernel_release=prep.release, kernel_source=prep.source, accel=accel,
        vcpus=opts.vcpus, memory_mb=opts.memory_mb, cmdline=append, tap=parsed,
        splats=splats, exit_status=st.exit_code,
        durations=durations)
    summary["accel_reason"] = accel_reason
    summary["spec"] = prep.spec
    summary["command"] = command
    summary["boot_attempts"] = len(attempts)
    summary["problems"] = problems
    summary["rmmod"] = st.rmmod
    summary["memfree_kb"] = st.memfree_kb
    if st.page_owner_user is not None:
        summary["page_owner"] = {"user_pages": st.page_owner_user,
                                 "other_pages": st.page_owner_other}
    if {"before", "after"} <= st.memfree_kb.keys():
        summary["memfree_delta_kb"] = st.memfree_kb["before"] - st.memfree_kb["after"]
    if vmtests:
        summary["run_vmtests"] = {"outer": tap.summarize(tap.parse_tap(
            outer_text.splitlines())) if outer_text else None}
    if problems_note:
        summary["notes"] = [problems_note]
    results.write_summary(outdir / "summary.json", summary)

    if problems:
        code = EXIT_INFRA
    elif splats:
        code = 1
    else:
        code = st.exit_code if st.exit_code is not None else EXIT_INFRA
    return RunOutcome(summary, code, outdir, tap_text)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_")
