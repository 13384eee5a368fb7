"""Boot one prepared Payload in a VM and collect the results.

prepare/ (plan.make) hands over the Payload, everything built; this
module assembles the initramfs from it, boots, reads what the guest said
and writes the reports. It takes nothing else from prepare/.

Results land in one directory per run: console.log (everything the guest
printed), status.log (the guest's protocol), tap.txt (the test's output),
summary.json, and the initramfs work files.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import signal
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import phases
from ..host import RunnerError, private_tmp, progress
from ..parse import console, modload, tap
from ..parse.status import GuestStatus, parse_status
from ..prepare.payload import Payload
from ..report import figures, junit, ktap, results
from . import initramfs, qemu

START_MARKER = "GUPNM-TEST-BEGIN"
END_MARKER = "GUPNM-TEST-END"
# Exit statuses of the runner beyond the test's own 0/1/4 (results.py).
EXIT_INFRA = results.EXIT_INFRA   # the guest died or timed out; the test did not run
EXIT_USAGE = results.EXIT_USAGE   # bad input, found on the host
BENCH = "gup_fast_bench"          # bench/gup_fast_bench.c, run after the test


@dataclass
class VmOptions:
    """How the VM runs (what the guest runs is the Payload's)."""
    accel: str = "auto"
    vcpus: int = 2
    memory_mb: int = 1024
    append: str = ""
    timeout: float = 300.0
    retries: int = 2


@dataclass
class RunOutcome:
    summary: dict
    exit_code: int
    outdir: Path
    tap_text: str
    bench_text: str = ""        # the benchmark program's output (bench.txt)


def unnest_run_vmtests(text: str, test: str = "gup_null_mapping") -> str:
    """The test's own TAP from run_vmtests.sh output (tap.unnest)."""
    return tap.unnest(text, test)


def choose_accel(opts: VmOptions, pay: Payload, work: Path) -> tuple[str, str]:
    if pay.arch == "arm64" and opts.accel in ("auto", "tcg"):
        return "tcg", "arm64 guest on an amd64 host: TCG"
    if opts.accel in ("kvm", "tcg"):
        return opts.accel, "requested"
    if opts.accel != "auto":
        raise RunnerError(f"--accel {opts.accel}: use auto, kvm or tcg")
    return qemu.probe_accel(pay.image, initramfs.build_probe(work))


class ConsoleFollower:
    """Live progress: the test's lines from console.log as they arrive.

    Called by qemu.boot() while the guest runs; passes each complete line
    between the start marker and the end marker to @emit.
    """

    def __init__(self, console: Path, emit: Callable[[str], None]) -> None:
        self.console, self.emit = console, emit
        self.pos, self.buf, self.inside, self.done = 0, b"", False, False

    def poll(self) -> None:
        if self.done:
            return
        try:
            with open(self.console, "rb") as fh:
                fh.seek(self.pos)
                data = fh.read()
        except OSError:
            return
        self.pos += len(data)
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        for raw in lines:
            line = raw.decode(errors="replace").rstrip("\r")
            if not self.inside:
                self.inside = line.endswith(START_MARKER)
                continue
            if line.startswith(END_MARKER):
                self.done = True
                return
            self.emit(line)


def _booted_release(con: str, dmesg: str) -> str | None:
    """uname -r of the kernel that booted: its banner, else init's line."""
    for text in (dmesg, con):
        m = re.search(r"Linux version (\S+)", text)
        if m:
            return m.group(1)
    m = re.search(r"^gupnm: kernel (\S+), ", con, re.M)
    return m.group(1) if m else None


def run(pay: Payload, opts: VmOptions, outdir: Path,
        durations: dict[str, float] | None = None, *,
        meta: dict | None = None,
        live: Callable[[str], None] | None = None) -> RunOutcome:
    """Boot @pay and run its program; writes summary.json, junit.xml, ktap.txt.

    The run's phases are timed by the running clock (phases.py), which the
    summary's durations take and end; without one, @durations (steps
    before this) and this run's initramfs and boot_and_test, summed.
    @meta: run facts (start time, versions, host) merged into the summary.
    @live: called with each test line as the guest prints it.
    SIGINT/SIGTERM (KeyboardInterrupt) while the guest runs stops QEMU and
    ends in a summary whose outcome is "interrupted".
    """
    outdir.mkdir(parents=True, exist_ok=True)
    work = _work_dir(outdir)
    try:
        return _run(pay, opts, outdir, work, durations, meta=meta, live=live)
    finally:
        if work.parent != outdir:
            shutil.rmtree(work, ignore_errors=True)


def _work_dir(outdir: Path) -> Path:
    """Where the initramfs is made: a folder of this run's own in the
    cache's tmp/ (removed when the run ends, or by the next run if this one
    is killed), so a full results disk leaves no half-built archive there;
    GUPNM_KEEP_WORK=1 keeps it in the results folder instead."""
    if os.environ.get("GUPNM_KEEP_WORK"):
        return outdir / "initramfs"
    return private_tmp("run")


def _run(pay: Payload, opts: VmOptions, outdir: Path, work: Path,
         durations: dict[str, float] | None, *, meta: dict | None,
         live: Callable[[str], None] | None) -> RunOutcome:
    """The run in its steps: the initramfs, boot, what the guest said,
    what went wrong, the exit code, the reports."""
    durations = dict(durations or {})
    t0 = time.monotonic()
    with phases.phase("initramfs"):
        guest = _guest(pay)
        # Per run, not per kernel: two runs of one kernel must not share it.
        cpio = initramfs.build(guest.contents, work)
        accel, accel_reason = choose_accel(opts, pay, work)
    durations["initramfs"] = time.monotonic() - t0

    append = " ".join(x for x in (qemu.base_append(pay.arch), opts.append, pay.append)
                      if x)
    unwritten: list[str] = []           # files the results folder did not take
    with phases.phase("boot_and_test"):
        boot = _boot(pay, opts, outdir, cpio, accel, append, live, unwritten)
    durations["boot_and_test"] = boot.attempts[-1]

    phases.enter("parse")
    seen = _read_guest(outdir, guest, unwritten)
    judged = _judge(pay, opts, outdir, boot, seen)
    notes = list(pay.notes)
    _module_problem(modload.load_failure(seen.console, seen.status_log), pay,
                    judged.problems, notes)
    if len(boot.attempts) > 1:
        notes.append(f"{len(boot.attempts) - 1} retried boot(s) (early-boot death)")

    durations["total"] = sum(v for k, v in durations.items() if k != "total")
    summary = results.build_summary(
        kernel_release=pay.release, kernel_source=pay.source, accel=accel,
        vcpus=opts.vcpus, memory_mb=opts.memory_mb, cmdline=append, tap=seen.parsed,
        splats=seen.splats, exit_status=seen.status.exit_code,
        durations=durations)
    code = _exit_code(pay, opts, boot, seen, judged, summary)
    summary["outcome"] = outcome_of(code)
    summary["exit_code"] = code
    summary["kernel"]["booted_release"] = judged.booted_release
    summary["guest_uptime"] = dict(seen.status.times)
    summary["accel_reason"] = accel_reason
    summary["spec"] = pay.spec
    summary["command"] = guest.command
    # Which gup_test answered: the test's (built in, or the runner's module)
    # or the one command.gup_test_server chose for a --command program.
    summary["gup_test"] = pay.gup_test
    summary["boot_attempts"] = len(boot.attempts)
    summary["problems"] = judged.problems
    _add_guest_facts(summary, pay, outdir, guest, seen, notes, unwritten)
    if notes:
        summary["notes"] = summary.get("notes", []) + notes
    summary.update(meta or {})
    _timed(summary)
    failed = save_reports(outdir, summary)
    if unwritten or failed:
        # The verdict stands (it is the guest's); the files are what is lost.
        summary["problems"].append(failed or _unwritten(outdir, unwritten))
    return RunOutcome(summary, code, outdir, seen.tap_text, seen.status.bench or "")


def _timed(summary: dict) -> None:
    """The run's clock into @summary's durations (every phase, their sum
    the total) and ended, just before the reports are written: what comes
    after (writing them, printing the report) is not counted."""
    if phases.running():
        summary["durations_from"] = phases.measured_from()
        summary["durations"] = phases.stop()


@dataclass
class _Guest:
    """What the guest is given: its initramfs's contents and the commands it runs."""
    contents: initramfs.Contents
    command: str                        # the test, or the --command program
    vmtests: bool                       # the test runs under run_vmtests.sh
    bench_command: str | None           # the benchmark after the test
    extra_env: dict[str, str]


def _guest(pay: Payload) -> _Guest:
    """The initramfs's contents of @pay: its files, the program, and the
    commands the guest's init runs after it (the benchmark, the stress
    program, the cross-check) in the environment init reads."""
    files = dict(pay.files)
    dynamic = tuple(pay.dynamic)
    extra_env = {}
    if pay.bench_command is not None:
        extra_env["GUPNM_BENCH_CMD"] = pay.bench_command
    if pay.stress_command is not None:
        extra_env["GUPNM_STRESS_CMD"] = pay.stress_command
    if pay.xcheck:
        files[pay.xcheck.binary.name] = pay.xcheck.binary
        dynamic += (pay.xcheck.binary.name,)
        extra_env["GUPNM_XCHECK_CMD"] = pay.xcheck.command
        extra_env["GUPNM_XCHECK_TEST"] = pay.xcheck.test_command
        extra_env["GUPNM_XCHECK_ROUNDS"] = str(pay.xcheck.rounds)
    contents = initramfs.Contents(pay.release, pay.module, files, pay.command,
                                  need_bash=pay.vmtests, kmemleak=pay.kmemleak,
                                  extra_env=extra_env, dynamic=dynamic,
                                  busybox=pay.busybox)
    return _Guest(contents, pay.command, pay.vmtests, pay.bench_command, extra_env)


@dataclass
class _Boot:
    """The boots of one run: the last one's result (None when interrupted
    before it ended), how long each took, and the interruption if any."""
    res: qemu.BootResult | None
    attempts: list[float]
    interrupted: KeyboardInterrupt | None


# A boot that has not reached user space (the status port's first word)
# after this long, or half the run's timeout if shorter, is a hung early
# boot (TCG, seen once in a make check: Debian 7.3 silent after "hpet0"):
# it is booted again while retries remain; the last attempt has no such
# deadline, only the run's timeout.
BOOT_DEADLINE = 180.0


class _Hung(Exception):
    """The guest did not reach user space within the boot deadline."""


def _deadline(status: Path, seconds: float, inner: Callable[[], None] | None):
    """A qemu.boot watch raising _Hung when @status is still empty after
    @seconds; @inner (the live console follower) is called first."""
    t0 = time.monotonic()

    def watch() -> None:
        if inner:
            inner()
        if time.monotonic() - t0 > seconds and \
                not (status.exists() and status.stat().st_size):
            raise _Hung()
    return watch


def _boot(pay: Payload, opts: VmOptions, outdir: Path, cpio: Path, accel: str,
          append: str, live: Callable[[str], None] | None,
          unwritten: list[str]) -> _Boot:
    """Boot until the guest reaches the test: a guest that died early in
    boot (a known TCG artefact) is booted again, up to opts.retries times."""
    attempts: list[float] = []
    interrupted: KeyboardInterrupt | None = None
    res = None
    t_boot = time.monotonic()
    for attempt in range(1 + max(0, opts.retries)):
        progress(f"booting {pay.release} ({accel}, {opts.vcpus} vCPUs, "
                 f"{opts.memory_mb} MiB){' retry ' + str(attempt) if attempt else ''}")
        kw = {}
        if pay.arch != "amd64":
            kw["arch"] = pay.arch
        if live:
            kw["watch"] = ConsoleFollower(outdir / "console.log", live).poll
        if attempt < opts.retries:
            kw["watch"] = _deadline(outdir / "status.log",
                                    min(BOOT_DEADLINE, opts.timeout / 2), kw.get("watch"))
        try:
            res = qemu.boot(pay.image, cpio, outdir, accel=accel, vcpus=opts.vcpus,
                            memory_mb=opts.memory_mb, append=append,
                            timeout=opts.timeout, **kw)
        except _Hung:                        # qemu is already stopped
            attempts.append(time.monotonic() - t_boot)
            con = (outdir / "console.log").read_text(errors="replace")
            _save(outdir, f"console.attempt{attempt + 1}.log", con, unwritten)
            progress("the guest did not reach user space in "
                     f"{min(BOOT_DEADLINE, opts.timeout / 2):.0f} s (a hung early "
                     "boot under TCG); booting again")
            t_boot = time.monotonic()
            continue
        except KeyboardInterrupt as err:     # qemu is already stopped
            interrupted = err
            attempts.append(time.monotonic() - t_boot)
            break
        con = res.console.read_text(errors="replace")
        attempts.append(res.seconds)
        if not res.timed_out and console.early_boot_death(con, START_MARKER) \
                and not console.out_of_memory(con) and attempt < opts.retries:
            _save(outdir, f"console.attempt{attempt + 1}.log", con, unwritten)
            progress("the guest died before the test started (a known TCG "
                     "early-boot artefact); retrying")
            t_boot = time.monotonic()
            continue
        break
    return _Boot(res, attempts, interrupted)


@dataclass
class _Seen:
    """What the guest said: its console, its status port, the test's TAP
    (and run_vmtests.sh's around it), parsed, and the splats."""
    console: str
    status_log: str
    status: GuestStatus
    tap_text: str
    outer_text: str
    parsed: tap.TapResult
    splats: list


def _read_guest(outdir: Path, guest: _Guest, unwritten: list[str]) -> _Seen:
    """Read console.log and status.log; save tap.txt (run_vmtests.txt,
    bench.txt, dmesg.txt) beside them."""
    def read(name: str) -> str:
        try:
            return (outdir / name).read_text(errors="replace")
        except OSError:
            return ""
    con = read("console.log")
    status_log = read("status.log")
    st = parse_status(status_log)

    tap_text = st.tap
    if not st.complete_tap:         # guest died: take what the console has
        marker = con.find(START_MARKER)
        tap_text = con[marker + len(START_MARKER):] if marker >= 0 else ""
        end = tap_text.find(END_MARKER)
        tap_text = tap_text[:end] if end >= 0 else tap_text
    outer_text = tap_text
    if guest.vmtests:
        _save(outdir, "run_vmtests.txt", tap_text, unwritten)
        tap_text = unnest_run_vmtests(tap_text)
    _save(outdir, "tap.txt", tap_text, unwritten)
    parsed = tap.parse_tap(tap_text.splitlines())
    if guest.bench_command is not None and st.bench is not None:
        _save(outdir, "bench.txt", st.bench, unwritten)
        merge_bench(parsed, tap.parse_tap(st.bench.splitlines()))
    splats = console.find_splats(con) or console.find_splats(st.dmesg)
    if st.dmesg:
        _save(outdir, "dmesg.txt", st.dmesg, unwritten)
    return _Seen(con, status_log, st, tap_text, outer_text, parsed, splats)


@dataclass
class _Judged:
    """What went wrong in the run, before the test's own verdict."""
    problems: list[str]
    qemu_msg: str | None                # QEMU refused to start the guest
    mismatch: bool                      # not the kernel it was named as
    booted_release: str | None
    reached_test: bool


def _judge(pay: Payload, opts: VmOptions, outdir: Path, boot: _Boot,
           seen: _Seen) -> _Judged:
    """The run's problems: interrupted, timed out, QEMU refused, never
    booted, died, another kernel than named, rmmod failed."""
    st, con = seen.status, seen.console
    problems = []
    qemu_msg = None
    booted_release = _booted_release(con, st.dmesg)
    reached_test = console.guest_reached_test(con, START_MARKER)
    if boot.interrupted is not None:
        sig = getattr(boot.interrupted, "signum", signal.SIGINT)
        problems.append(f"interrupted by {signal.Signals(sig).name}; qemu stopped")
    elif boot.res.timed_out:
        problems.append(f"timed out after {opts.timeout:.0f} s")
    elif boot.res.returncode and not st.booted:
        qemu_msg = qemu.qemu_error(outdir / "qemu.log")
    if qemu_msg:
        problems.append(f"qemu refused to start the guest: {qemu_msg}")
    elif boot.interrupted is not None and st.exit_code is None:
        pass
    elif not st.booted:
        problems.append(_never_booted(outdir, con, opts.memory_mb))
    elif st.exit_code is None and _results_full(outdir):
        problems.append(_logs_cut(outdir))
    elif st.exit_code is None:
        problems.append("the guest died before the test finished"
                        if reached_test else
                        "the guest died before the test started")
    mismatch = bool(booted_release and booted_release != pay.release)
    if mismatch:
        problems.append(f"the guest booted kernel {booted_release}, not the "
                        f"expected {pay.release}: the image is not the kernel "
                        "it was named as")
    elif st.exit_code is not None and not booted_release:
        mismatch = True
        problems.append("the guest never said which kernel it runs (no "
                        "'Linux version' banner): cannot confirm it is "
                        f"{pay.release}")
    if st.rmmod == "failed" and not seen.parsed.skipped:
        problems.append("rmmod gup_test failed after the test")
    return _Judged(problems, qemu_msg, mismatch, booted_release, reached_test)


def _exit_code(pay: Payload, opts: VmOptions, boot: _Boot, seen: _Seen,
               judged: _Judged, summary: dict) -> int:
    """The runner's exit code (README: Exit status); a --command program's
    own exit status sets @summary's outcome first."""
    st, problems = seen.status, judged.problems
    if judged.qemu_msg and _cached_image_refused(pay, judged.qemu_msg):
        problems[0] += (": the kernel image is the runner's own cache entry, "
                        f"{pay.image}; runner/gupnm-run cache --clean kernels, "
                        "then run again")
        return results.EXIT_INFRA
    if judged.qemu_msg:
        return results.EXIT_USAGE
    if boot.interrupted is not None:
        return getattr(boot.interrupted, "exit_code", results.EXIT_SIGINT)
    if judged.mismatch:
        return results.EXIT_INFRA
    if pay.program:
        # A selftests/mm program: its exit status is the verdict (many
        # print no TAP), a splat still fails it.
        summary["outcome"] = ("fail" if seen.splats else
                              {0: "pass", 4: "skip", None: "error"}.get(
                                  st.exit_code, "fail"))
    missing = results.missing_for_pass(seen.parsed, st.exit_code,
                                       own_test=not pay.program)
    if summary["outcome"] == "pass" and missing and not problems:
        problems.append(results.not_a_pass(missing))
    _out_of_memory(opts, seen, problems, summary)
    return results.exit_code(
        summary["outcome"], problems=problems, splat=bool(seen.splats),
        reached_test=judged.reached_test, exit_status=st.exit_code,
        has_results=bool(seen.parsed.results))


def _out_of_memory(opts: VmOptions, seen: _Seen, problems: list[str],
                   summary: dict) -> None:
    """A guest that ran out of memory: the first problem of a run that did
    not fail (never a pass or a skip), a note beside a failure's verdict."""
    oom = (console.out_of_memory(seen.console)
           or console.out_of_memory(seen.status.dmesg))
    problem = results.memory_problem(oom, summary["outcome"], seen.status.exit_code,
                                     opts.memory_mb)
    if problem:
        problems.insert(0, problem)
    elif oom:
        summary.setdefault("notes", []).append(
            f"the guest ran out of memory ({opts.memory_mb} MiB): {oom}")


def _add_guest_facts(summary: dict, pay: Payload, outdir: Path, guest: _Guest,
                     seen: _Seen, notes: list[str], unwritten: list[str]) -> None:
    """What else the guest reported into @summary: rmmod, free memory, the
    stress program (stress.txt), page_owner, the benchmark, a --command
    program's figures, the cross-check (crosscheck.txt), run_vmtests.sh."""
    st = seen.status
    summary["rmmod"] = st.rmmod
    summary["memfree_kb"] = st.memfree_kb
    if pay.stress_command is not None:
        parsed_stress = tap.parse_tap((st.stress or "").splitlines())
        summary["stress"] = {
            "command": guest.extra_env["GUPNM_STRESS_CMD"], "exit": st.stress_exit,
            "cases": [{"name": r.name, "status": r.status}
                      for r in parsed_stress.results],
            "counts": tap.counts(parsed_stress), "errors": parsed_stress.errors}
        _save(outdir, "stress.txt", st.stress or "", unwritten)
    if st.page_owner_user is not None:
        summary["page_owner"] = {"user_pages": st.page_owner_user,
                                 "other_pages": st.page_owner_other}
    if {"before", "after"} <= st.memfree_kb.keys():
        summary["memfree_delta_kb"] = st.memfree_kb["before"] - st.memfree_kb["after"]
    if guest.bench_command is not None and st.bench is not None:
        summary["bench_run"] = {"command": guest.bench_command, "exit": st.bench_exit,
                                "output": "bench.txt"}
    elif guest.bench_command is not None and st.exit_code is not None:
        notes.append(f"the guest printed no output of {guest.bench_command}")
    if pay.program:
        summary["figures"] = command_figures(guest.command, seen.tap_text)
    if pay.xcheck:
        summary["crosscheck"] = crosscheck(pay.xcheck, st.xcheck, st.xcheck_exit)
        _save(outdir, "crosscheck.txt", st.xcheck or "", unwritten)
    if guest.vmtests:
        summary["run_vmtests"] = {"outer": tap.summarize(tap.parse_tap(
            seen.outer_text.splitlines())) if seen.outer_text else None}


def merge_bench(test: tap.TapResult, bench: tap.TapResult) -> None:
    """The benchmark program's output into the test's parsed TAP, as when
    the benchmark was the selftest's last result: its rows, parameters and
    ratios, and its "bench" result numbered after the test's (the plan
    grows with it), so that a failed benchmark (-t) fails the run. A test
    that skipped as a whole or every result (nothing judged: a skip), or
    printed no result, stays so. The benchmark's structural
    problems are the run's, prefixed "bench: "; a benchmark that skipped
    as a whole (-B, no gup_test) adds nothing."""
    test.bench, test.bench_title = bench.bench, bench.bench_title
    test.bench_params, test.bench_ratios = bench.bench_params, bench.bench_ratios
    test.bench_refused = bench.bench_refused
    if test.skipped or bench.skipped or not test.results or tap.all_skipped(test):
        return
    for r in bench.results:
        r.number = len(test.results) + 1
        test.results.append(r)
    if test.plan is not None:
        test.plan += len(bench.results)
    test.errors += [f"bench: {e}" for e in bench.errors]


def _cached_image_refused(pay: Payload, qemu_msg: str) -> bool:
    """QEMU refused the kernel, and the kernel is not the user's file (an
    image: spec) but an entry of the runner's cache: not bad input (2)."""
    return pay.source.get("kind") not in ("image", "debs") and "kernel" in qemu_msg.lower()


# Less memory than this, and a guest that printed nothing ran out of it
# before its console started (Debian's 6.12 with the test's initramfs: 48 MiB).
SMALL_MEMORY_MB = 128


def _never_booted(outdir: Path, con: str = "", memory_mb: int = 0) -> str:
    """Why the guest's logs show no boot: a full results disk takes no log;
    a guest given too little memory prints nothing."""
    if _results_full(outdir):
        return _logs_cut(outdir)
    if not con.strip() and 0 < memory_mb < SMALL_MEMORY_MB:
        return (f"the guest printed nothing with {memory_mb} MiB of memory "
                "(--memory): too little for the kernel and its initramfs, the "
                "guest ran out of memory before its console; give it more "
                "(--memory 512 or more)")
    return "the guest never reached user space"


def _results_full(outdir: Path) -> bool:
    """The filesystem of @outdir has no block or no inode left."""
    try:
        st = os.statvfs(outdir)
    except OSError:
        return False
    return st.f_bavail == 0 or bool(st.f_files and st.f_favail == 0)


def _logs_cut(outdir: Path) -> str:
    """The problem of a run whose logs a full results filesystem cut: the
    guest's word is lost with them, so the run cannot be judged."""
    return (f"the guest's logs are cut: the filesystem of {outdir} is full "
            "(it filled while the guest ran), so the run cannot be judged; free "
            "space there or pass --results on another filesystem, then run again")


def _save(outdir: Path, name: str, text: str, unwritten: list[str]) -> None:
    """Write one log of the run; a results folder that cannot take it (a
    full disk) is noted in @unwritten, and the run goes on to its verdict."""
    try:
        (outdir / name).write_text(text)
    except OSError as err:
        with contextlib.suppress(OSError):
            (outdir / name).unlink()        # no half file
        unwritten.append(f"{name} ({err.strerror})")


def _unwritten(outdir: Path, unwritten: list[str]) -> str:
    return (f"{outdir} did not take " + ", ".join(unwritten)
            + ": the verdict above stands; free space there or pass --results elsewhere")


def _module_problem(failure: "modload.LoadFailure | None", pay: Payload,
                    problems: list[str], notes: list[str]) -> None:
    """A test module of the runner's that did not load is a problem (exit
    3), not the test's skip; blacklisted on purpose, a note. For a
    --command program, the module serving gup_test likewise when the
    program needs it (gup_test), else a note (cow, ksm_tests run without)."""
    if failure is None:
        return
    if pay.program and not pay.gup_test_required:
        notes.append(f"{failure.module} did not load ({failure.reason}); "
                     f"{Path(pay.command.split()[0]).name} runs without it")
        return
    if failure.blacklisted:
        notes.append(f"{failure.module} is blacklisted on the kernel command "
                     "line (module_blacklist=): the skip is that choice")
    else:
        problems.append(failure.problem())


def command_figures(command: str, output: str) -> list[dict]:
    """The figures a selftests/mm program printed (figures.parse)."""
    program = Path(command.split()[0]).name
    return [dataclasses.asdict(f) for f in figures.parse(program, output)]


# Issue 12: our anon control and gup_test's must agree within this.
XCHECK_TOLERANCE = 0.15


XCHECK_ROUND = re.compile(r"^GUPNM-XCHECK-ROUND: (gup_test|test) \d+\n?", re.M)


def crosscheck(xc, output: str | None, exit_status: int | None) -> dict:
    """@xc, the Payload's xcheck: gup_test's PIN_FAST_BENCHMARK over
    anonymous memory against the test's own anon control at one thread,
    median ns/page. The guest runs
    them in turn, gup_test first and last (G T G ... T G): each test round
    is compared with the mean of the gup_test runs either side of it, so
    that drift of the host's speed over the seconds between them cancels;
    the ratio is the median over the rounds."""
    out = {"command": xc.command, "test_command": xc.test_command,
           "exit": exit_status, "pages": xc.pages,
           "gup_test_ns_per_page": None, "anon_ns_per_page": None,
           "round_ratios": [], "ratio": None, "agree": None,
           "tolerance": XCHECK_TOLERANCE}
    parts = XCHECK_ROUND.split(output or "")
    gup, anon, samples = [], [], 0
    for kind, text in zip(parts[1::2], parts[2::2]):
        if kind == "gup_test":
            gets = [f.value for f in figures.parse("gup_test", text)
                    if f.name.endswith("get_us")]
            samples += len(gets)
            gup.append(statistics.median(gets) * 1000.0 / xc.pages
                       if gets and xc.pages else None)
        else:
            medians = [f.value for f in figures.parse(BENCH, text)
                       if f.name == "anon median@1"]
            anon.append(medians[0] if medians else None)
    out["gup_test_samples"] = samples
    if any(v is not None for v in gup):
        out["gup_test_ns_per_page"] = statistics.median(v for v in gup if v is not None)
    if any(v is not None for v in anon):
        out["anon_ns_per_page"] = statistics.median(v for v in anon if v is not None)
    for k, a in enumerate(anon):
        around = [v for v in gup[k:k + 2] if v is not None]
        if a and around:
            out["round_ratios"].append(statistics.mean(around) / a)
    if out["round_ratios"]:
        out["ratio"] = statistics.median(out["round_ratios"])
        out["agree"] = abs(out["ratio"] - 1.0) <= XCHECK_TOLERANCE
    return out


def outcome_of(code: int) -> str:
    """The summary's outcome word for a runner exit code."""
    return {results.EXIT_PASS: "pass", results.EXIT_FAIL: "fail",
            results.EXIT_SKIP: "skip", results.EXIT_SIGINT: "interrupted",
            results.EXIT_SIGTERM: "interrupted"}.get(code, "error")


REPORT_FILES = {"summary": "summary.json", "junit": "junit.xml", "ktap": "ktap.txt"}


def write_reports(outdir: Path, summary: dict) -> None:
    """summary.json, junit.xml and ktap.txt of one run, each written atomically."""
    summary.setdefault("files", dict(REPORT_FILES))
    results.write_summary(outdir / REPORT_FILES["summary"], summary)
    junit.write(outdir / REPORT_FILES["junit"], summary)
    ktap.write(outdir / REPORT_FILES["ktap"], summary)


def save_reports(outdir: Path, summary: dict) -> str | None:
    """write_reports(), or the one-line reason they could not be written
    (a full disk, a folder gone): the caller still prints the verdict."""
    try:
        write_reports(outdir, summary)
    except OSError as err:
        where = f" ({err.filename})" if err.filename else ""
        return (f"the reports could not be written in {outdir}: "
                f"{err.strerror or err}{where}; the verdict above stands, "
                "free space there or pass --results elsewhere")
    return None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_")
