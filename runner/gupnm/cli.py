"""gupnm: boot a kernel in QEMU, run gup_null_mapping, report verdict and cost.

  gupnm run [--kernel SPEC] ...        one kernel (default debian:bookworm-security)
  gupnm compare [--a SPEC] [--b SPEC]  the benchmark on two kernels, and a plot
  gupnm parse FILE                     verdict of a saved console log or TAP
  gupnm cache [--clean GROUP ...]      what the cache holds; clean it

Exit status (run and parse): 0 the test ran to its end and passed; 1 it
failed or the kernel complained (splat); 2 bad input, found on the host
before anything boots; 3 the run could not judge the kernel (the guest died
or timed out, the test did not run or end, the runner's module did not
load, a cache entry or build failed); 4 the whole test skipped; 130
interrupted (SIGINT; 143 SIGTERM). With --json, stdout is JSON for every
exit. README: Exit status.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from . import hostmode, hosttools, phases, probe, survey, testargs
from .ci import lab, linaro  # gupnm-run kselftest, gupnm-run lava; parse
from .guest import qemu, vmrun
from .host import REPO, Interrupted, RunnerError, UsageError, progress
from .hosttools import BOOT_PACKAGES, ensure_tools, missing_tools
from .parse import console, modload, tap
from .prepare import arm64, cache, command, debdir, kconfig, kernels, plan, vmlinux
from .report import expect, figures, junit, logsummary, results, stats

# Debian 12 (bookworm) hosts build its 6.12 module with their own gcc-12:
# the main job needs no suite root. debian:6.12 is trixie's newest.
DEFAULT_KERNEL = "debian:bookworm-security"


def _vm_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", choices=kconfig.VARIANTS, default="default",
                   help="config variant of a source kernel (debug: KASAN, "
                   "lockdep, DEBUG_VM, kmemleak, ...; selftests: CONFIG_GUP_TEST, "
                   "KSM, THP, and the gup_test cross-check of the benchmark; "
                   "kselftest: the tree's own gup_test built in, as kselftest "
                   "kernels have it; thp-always: THP always and no madvise(), "
                   "whose controls must prove their own order; oot: the runner's "
                   "out-of-tree gup_test even where the tree has the series' to "
                   "build in; notrace: no CONFIG_FTRACE/TRACING)")
    p.add_argument("--arch", choices=("amd64", "arm64"), default="amd64",
                   help="guest architecture: arm64 boots Debian arm64 kernels "
                   "under qemu-system-aarch64 (TCG; module and test cross-built)")
    p.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                   help="auto uses KVM only when a probe boot works")
    p.add_argument("--vcpus", type=_positive, default=2)
    p.add_argument("--memory", type=_positive, default=1024, metavar="MiB")
    p.add_argument("--append", default="", help="extra kernel command line")
    p.add_argument("--timeout", type=_positive, default=300, metavar="S",
                   help="global VM timeout in seconds (default 300)")
    p.add_argument("--retries", type=_count, default=2,
                   help="reboots allowed when the guest dies before the test")
    p.add_argument("--stress", default=None, metavar="ARGS",
                   help="also run the project's stress program "
                   "(hardening/gupnm_stress) after the test, with ARGS "
                   "('' for its defaults)")
    p.add_argument("--test-args", default="",
                   help="arguments of the benchmark (bench/gup_fast_bench, run "
                   "after the test, which takes none), one word even when it "
                   "starts with '-': --test-args -B, --test-args '-p 512 -r 5 1 2' "
                   "(checked on the host by the benchmark's own rules)")
    p.add_argument("--results", type=_results_arg, default=None, metavar="DIR",
                   help="results directory, new or empty (default "
                   "results/<time>-<kernel>-<n>, unique per run)")
    p.add_argument("--json", action="store_true",
                   help="print summary.json on stdout (the report goes to stderr)")
    p.add_argument("--no-install", action="store_true",
                   help="never install into the host (as GUPNM_NO_INSTALL=1): "
                   "a missing tool is named, exit 3")
    p.add_argument("--command", default=None, metavar="CMD",
                   help="run this program of the kernel tree's "
                   "tools/testing/selftests/mm instead of the test, e.g. "
                   "'gup_test -a -m 64 -n 512' or 'ksm_tests -D -s 256' "
                   "(source kernels get the selftests config)")
    p.add_argument("--selftests", default="debian-6.12", metavar="TREE",
                   help="the tree whose selftests/mm --command takes for a "
                   "Debian binary kernel (default debian-6.12; a source: "
                   "kernel uses its own)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be positive")
    return value


def _results_arg(text: str) -> Path:
    """--results DIR: a path to a folder; an empty word (an unset CI
    variable) would put every file of the run in the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty path would put the run's files in the current folder: "
            "name a directory, or leave --results out for results/<time>-...")
    if _control(text):
        raise argparse.ArgumentTypeError(f"{shown(text)} holds a control "
                                         "character: name a plain directory")
    return Path(text)


def _control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


def shown(text: str) -> str:
    """@text for a one-line message: quoted, control characters escaped
    and a very long value cut in the middle."""
    quoted = repr(text) if _control(text) else f"'{text}'"
    if len(quoted) <= 120:
        return quoted
    return f"{quoted[:60]}...{quoted[-40:]} ({len(text)} characters)"


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' must not be negative")
    return value


def _options(args) -> vmrun.VmOptions:
    return vmrun.VmOptions(accel=args.accel, vcpus=args.vcpus,
                           memory_mb=args.memory, append=args.append,
                           timeout=args.timeout, retries=args.retries)


def _asked(spec: str, args, arch: str = "amd64") -> plan.Asked:
    """What the prepare step is asked for (plan.make)."""
    return plan.Asked(spec, config=args.config, arch=arch,
                      test_args=args.test_args or "",
                      stress=getattr(args, "stress", None),
                      command=getattr(args, "command", None),
                      selftests=getattr(args, "selftests", None))


# Characters of the kernel spec in a default results folder's name: a very
# long spec must not make the name too long for the filesystem.
SLUG_MAX = 64


def _results_dir(args, spec: str) -> Path:
    """A new results folder of this run alone (UsageError when unusable)."""
    if args.results:
        path = args.results
        if path.exists() and not path.is_dir():
            raise UsageError(f"--results {path} is not a directory: name a new "
                             "or empty directory")
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / f".gupnm-write-test-{os.getpid()}"
            probe.write_text("")
            probe.unlink()
        except OSError as err:
            raise UsageError(f"--results {path}: cannot create or write there "
                             f"({err.strerror}); name a writable directory") from None
        if (path / "summary.json").exists():
            raise UsageError(f"--results {path} already holds a run (summary.json); "
                             "name a new directory, or remove that one first")
        _check_room(path, "--results")
        return path
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = REPO / "results"
    try:
        base.mkdir(parents=True, exist_ok=True)
        for n in range(1, 1000):
            path = base / f"{stamp}-{vmrun._slug(spec)[:SLUG_MAX]}-{n}"
            try:
                path.mkdir()            # atomic: two runs never share a folder
            except FileExistsError:
                continue
            try:
                _check_room(path, "the results folder")
            except UsageError:
                path.rmdir()
                raise
            return path
    except OSError as err:
        raise UsageError(f"cannot create a results folder in {base} "
                         f"({err.strerror}); pass --results DIR") from None
    raise UsageError(f"no free results folder name in {base}; pass --results DIR")


# Free space a run needs in its results folder: its logs and reports are
# 0.1-0.5 MiB (a debug kernel's console a few MiB).
MIN_FREE = 1 << 20


def _check_room(path: Path, what: str) -> None:
    """UsageError (exit 2, before anything is fetched or booted) when the
    filesystem of @path cannot take a run's logs."""
    try:
        st = os.statvfs(path)
    except OSError:
        return
    free = st.f_bavail * st.f_frsize
    if free < MIN_FREE:
        raise UsageError(f"{what} {path} has {free // 1024} KiB free, a run writes "
                         f"up to {MIN_FREE >> 20} MiB of logs: free space there or "
                         "pass --results on another filesystem")
    if st.f_files and st.f_favail < 16:
        raise UsageError(f"{what} {path} has {st.f_favail} free inodes, a run "
                         "writes about 10 files: free some or pass --results "
                         "on another filesystem")


def check_input(spec: str, args) -> None:
    """Everything about the input that can be checked before anything is
    fetched or booted; UsageError (exit 2) says what is wrong."""
    _one_line_values(spec, args)
    kind, parts = kernels.parse_spec(spec)
    variant = getattr(args, "config", "default")
    if variant != "default" and kind != "source":
        raise UsageError(f"--config {variant} needs a kernel built from source "
                         f"(source:debian-6.12[:all|nofix]), not {spec}")
    if kind == "image":
        image = Path(parts[0])
        if not image.is_file():
            raise UsageError(f"kernel image {image} "
                             + ("is not a file" if image.exists() else "does not exist"))
        vmlinux.check_kernel(image)
        if not Path(parts[1]).is_dir():
            raise UsageError(f"{parts[1]} is not a directory: name the kernel's "
                             "headers/build directory or a module tree")
    if kind == "debs":
        debdir.find(Path(parts[0]))     # names what the folder lacks
    if getattr(args, "test_args", ""):
      testargs.check(getattr(args, "test_args", "") or "",
                   vcpus=getattr(args, "vcpus", 2))
    if getattr(args, "command", None):
        if getattr(args, "arch", "amd64") != "amd64":
            raise UsageError("--command runs amd64 guests only (the selftests "
                             "are built for the host)")
        if args.test_args or args.stress is not None:
            raise UsageError("--command replaces the test: drop --test-args "
                             "and --stress")
        command.check_memory(command.needs(command.parse(args.command)),
                             args.memory)


def _one_line_values(spec: str, args) -> None:
    """UsageError for a spec or option holding a newline or another control
    character (a copy-paste accident): the error names it on one line."""
    values = [("kernel spec", spec)] + [
        (f"--{name.replace('_', '-')}", getattr(args, name, None))
        for name in ("append", "test_args", "command", "stress")]
    for what, value in values:
        if isinstance(value, str) and _control(value):
            raise UsageError(f"{what} {shown(value)} holds a control character "
                             "(a newline?): give it on one line")


def tool_version() -> tuple[str | None, str]:
    """(version, where it comes from): `git describe --always --dirty
    --tags` of the checkout the runner runs from; (None, why) when that is
    not a git checkout (an unpacked tarball) or git is missing."""
    try:
        proc = subprocess.run(["git", "-C", str(REPO), "describe", "--always",
                               "--dirty", "--tags"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, f"no version: git describe could not run ({err})"
    if proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout.strip(), f"git describe --always --dirty --tags of {REPO}"
    why = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return None, f"no version: {REPO} is not a git checkout ({why})"


class _Version(argparse.Action):
    """--version: the version and where it comes from, computed when asked."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the runner's version (git describe of its "
                         "checkout) and where it comes from, then exit")

    def __call__(self, parser, namespace, values, option_string=None):
        version, where = tool_version()
        print(f"gupnm-run {version or 'unknown'} ({where})")
        parser.exit(0)


def run_meta(started: datetime) -> dict:
    """Facts about the run for a pipeline: when, with what, where."""
    tool = tool_version()[0]
    os_name = None
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return {"started": started.isoformat(timespec="seconds"),
            "tool_version": tool, "qemu_version": qemu.version(),
            "host": {"name": platform.node(), "kernel": platform.release(),
                     "cpus": os.cpu_count(), "os": os_name}}


def run_one(spec: str, args, outdir: Path, *, meta: dict | None = None,
            live=None):
    """Prepare @spec and run the test, then the benchmark with
    args.test_args. Timed by the clock cmd_run started at the process's
    start, else by one of this run's own (phases.py)."""
    own_clock = not phases.running()
    if own_clock:
        phases.start()
    phases.enter(phases.OTHER)
    try:
        return _run_one(spec, args, outdir, meta=meta, live=live)
    except BaseException:
        if own_clock:           # the next run of compare or survey starts afresh
            phases.stop()
        raise


def _run_one(spec: str, args, outdir: Path, *, meta: dict | None, live):
    check_input(spec, args)
    arch = getattr(args, "arch", "amd64")
    tools = {"source_build": spec.startswith("source:"),
             **({"extra": arm64.TOOLS} if arch == "arm64" else {})}
    boot_tools = None
    if missing_tools(**tools):
        # A fresh machine: the kernel is downloaded and unpacked while the
        # tools install (it needs only apt and dpkg-deb), and QEMU installs
        # while the run builds.
        fetching = kernels.start_fetch(spec, arch)
        with phases.phase("tools"):
            boot_tools = ensure_tools(**tools, later=BOOT_PACKAGES)
        if fetching:
            with phases.phase("kernel_fetch"):
                fetching.join()
    try:
        return _prepare_and_run(spec, args, outdir, arch, meta, live, boot_tools)
    except RunnerError:
        if boot_tools:          # a failed build leaves no dpkg half done
            boot_tools.join()
        raise


def _prepare_and_run(spec: str, args, outdir: Path, arch: str, meta, live,
                     boot_tools) -> object:
    """run_one() once the tools are there, but for @boot_tools (QEMU),
    which must be installed before the boot: one prepare step (plan.make:
    everything the boot needs, built), then the boot (vmrun.run)."""
    t0 = time.monotonic()
    pay = plan.make(_asked(spec, args, arch))
    prepare_s = time.monotonic() - t0
    if boot_tools:
        with phases.phase("tools"):
            boot_tools.wait()
    return vmrun.run(pay, _options(args), outdir,
                     durations={"prepare": prepare_s},
                     meta=meta or run_meta(datetime.now(timezone.utc)), live=live)


def _crosscheck_lines(s: dict) -> str:
    """The xcheck lines of report(): gup_test's timer beside the test's."""
    xc = s["crosscheck"]
    lines = [f"xcheck:  {xc['command']} (anonymous memory, {xc['pages']} pages)"
             + (f",\n         in turn with {xc['test_command']}"
                if xc.get("test_command") else "")]
    if xc.get("ratio") is None:
        lines.append(f"         no comparison (gup_test exit {xc.get('exit')}); "
                     "see crosscheck.txt")
        return "\n".join(lines)
    rounds = xc.get("round_ratios") or []
    lines.append(f"         gup_test {xc['gup_test_ns_per_page']:.1f} ns/page "
                 + ("emulated (TCG) " if results.emulated(s) else "")
                 + f"({xc.get('gup_test_samples')} calls), the test's anon control "
                 f"{xc['anon_ns_per_page']:.1f} (1 thread)"
                 + (f"; ratio per round {' '.join(f'{r:.2f}' for r in rounds)}, median"
                    if len(rounds) > 1 else "; ratio")
                 + f" {xc['ratio']:.2f}, " + ("agree" if xc["agree"] else "DISAGREE")
                 + f" (bound +-{xc['tolerance'] * 100:.0f} %)")
    return "\n".join(lines)


def report(out: vmrun.RunOutcome, *, show_tap: bool = True, file=None,
           show_problems: bool = True) -> None:
    file = file or sys.stdout
    s = out.summary

    def say(text: str = "") -> None:
        print(text, file=file)
    if show_tap and out.tap_text:
        file.write(out.tap_text)
    say("=" * 72)
    k = s["kernel"]
    booted = k.get("booted_release")
    say(f"kernel:  {k['release']} ({s['spec']})"
        + (f"; the guest booted {booted}" if booted and booted != k["release"] else ""))
    vm = s["vm"]
    if vm.get("accel"):
        say(f"vm:      {vm['accel']} ({s.get('accel_reason')}), "
            f"{vm['vcpus']} vCPUs, {vm['memory_mb']} MiB"
            + (f", {s['boot_attempts']} boots" if s.get('boot_attempts', 0) > 1 else ""))
    if s.get("command"):
        say(f"test:    {s['command']}")
    served = s.get("gup_test")
    if served:
        why = served.get("why")
        say(f"gup_test: {served['kind']}" + (f": {why}" if why else ""))
    br = s.get("bench_run")
    if br:
        say(f"then:    {br['command']} (the benchmark, exit {br['exit']}; {br['output']})")
    say(f"verdict: {s['verdict']}")
    for line in expect.report_lines(s):
        say(line)
    if s.get("bench"):
        say(bench_report(s))
    if s.get("crosscheck"):
        say(_crosscheck_lines(s))
    if s.get("figures"):
        for st in figures.summarise([[figures.Figure(**f) for f in s["figures"]]]).values():
            say(f"figure:  {st.name} = {st.mean:g} +- {st.stddev:.3g} {st.unit} "
                f"(n={st.n}, {st.better} is better)"
                + (", emulated (TCG)" if results.emulated(s) else ""))
    for sp in s.get("splats", []):
        say(f"SPLAT ({sp['kind']}) at console line {sp['line']}:")
        say("    " + sp["excerpt"].replace("\n", "\n    "))
    for problem in s.get("problems", []) if show_problems else []:
        say(f"PROBLEM: {problem}")
    for note in s.get("notes", []):
        say(f"note:    {note}")
    say(time_line(s))
    up = s.get("guest_uptime") or {}
    if up:
        say("guest:   " + ", ".join(f"{k} at {v:.1f}s" for k, v in up.items())
            + " (guest uptime)")
    say(f"results: {out.outdir}")
    say(f"exit:    {out.exit_code}")


def time_line(s: dict) -> str:
    """The report's time line: every phase of the run, and their sum."""
    d = dict(s.get("durations") or {})
    total = d.pop(phases.TOTAL, None)
    since = {"process": "since the runner started",
             "run": "since this run started"}.get(s.get("durations_from"))
    return ("time:    " + ", ".join(f"{k} {v:.1f}s" for k, v in d.items())
            + (f" = total {total:.1f}s" if total is not None else "")
            + f" (host wall clock{', ' + since if since else ''})")


def _add_phase(summary: dict, name: str, seconds: float) -> None:
    """A phase after the reports were first written (the probe) into
    @summary's durations, its total grown by it."""
    d = summary.setdefault("durations", {})
    d[name] = round(d.get(name, 0.0) + seconds, 3)
    if phases.TOTAL in d:
        d[phases.TOTAL] = round(d.pop(phases.TOTAL) + seconds, 3)


def bench_report(s: dict) -> str:
    """The benchmark of summary @s for people: its conditions, a row per
    thread count and backing (p90, cv and noisy when the test printed
    them), the shadow/anon ratio per thread count; numbers from TCG are
    labelled emulated."""
    p = s.get("bench_params") or {}
    title = s.get("bench_title") or "pin_user_pages_fast(FOLL_WRITE)"
    lines = ["bench:   " + title + ("" if "ns/page" in title else ", ns/page")
             + (", emulated (TCG)" if results.emulated(s) else "")]
    how = []
    if p.get("reps") and p.get("iters"):
        how.append(f"{p['reps']} reps x {p['iters']} iters"
                   + (f" after {p['warmup']} warm-up pass" if p.get("warmup") else ""))
    if p.get("warmup"):     # the test that warms up also alternates
        how.append("shadow and anon reps alternate")
    if p.get("pinned"):
        how.append(f"threads pinned round-robin to {p['cpus']} CPUs")
    if how:
        lines.append("         " + "; ".join(how))
    spread = any(b.get("p90") is not None for b in s["bench"])
    headers = ["threads", "backing", "min", "median"] + (["p90"] if spread else []) + ["max"]
    if spread:
        headers += ["cv %", "noisy"]
    rows = []
    for b in s["bench"]:
        row = [b["threads"], b["backing"], b["min"], b["median"]]
        row += [b.get("p90")] if spread else []
        row += [b["max"]]
        if spread:
            row += [b.get("cv"), "noisy" if b.get("noisy") else ""]
        rows.append(row)
    lines.append(stats.format_table(rows, headers))
    for r in s.get("bench_ratio", []):
        if r.get("refused"):
            lines.append(f"         {r['threads']} thread(s): no shadow/anon ratio, "
                         f"the control is not what it claims: {r['refused']}")
        if r.get("shadow_anon_ratio") is not None:
            lines.append(f"         {r['threads']} thread(s): shadow/anon ratio = "
                         f"{r['shadow_anon_ratio']:.2f}"
                         + (" (noisy)" if r.get("noisy") else ""))
    if spread:
        lines.append("         cv: stddev/mean of the cell's samples; noisy: cv above "
                     + (f"{p['noisy_cv']:g} %" if p.get("noisy_cv") is not None
                        else "the test's threshold"))
    if results.emulated(s):
        lines.append("         emulated (TCG): absolute ns/page drift between runs; "
                     "the shadow/anon ratio is the figure to compare")
    return "\n".join(lines)


def _run_host(args) -> int:
    """--kernel host: the module on this machine (hostmode), else the probe."""
    phases.start(phases.process_start(), first="startup")
    outdir = _results_dir(args, "host")
    out = hostmode.run(args, outdir, run_meta(datetime.now(timezone.utc)))
    if out is None:
        return probe.cmd_run(args, outdir)
    _expected(out, args)
    report(out, file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(out.summary, indent=2, sort_keys=True))
        args.printed_json = True
    return out.exit_code


def cmd_run(args) -> int:
    spec = args.kernel
    if spec == "host" and getattr(args, "method", "module") == "module":
        return _run_host(args)
    if spec == "host" or getattr(args, "method", "module") == "probe":
        if getattr(args, "expect", None) and getattr(args, "method", "") == "probe":
            raise UsageError("--expect compares the test's cases; the probe "
                             "(--method probe) has none: drop one of them")
        return probe.cmd_run(args, _results_dir(args, spec))
    # Timed from the process's start: every phase until the reports.
    phases.start(phases.process_start(), first="startup")
    check_input(spec, args)                  # bad input: exit 2, nothing made
    cache.sweep_stale()                      # what killed runs left behind
    started = datetime.now(timezone.utc)
    outdir = _results_dir(args, spec)
    human = sys.stderr if args.json else sys.stdout
    live = None
    if not args.json and sys.stdout.isatty():
        def live(line: str) -> None:
            print(line, flush=True)
    meta = run_meta(started)
    try:
        out = run_one(spec, args, outdir, meta=meta, live=live)
    except (Exception, KeyboardInterrupt) as err:
        code, problem = _failure(err)
        summary = results.stub_summary(
            spec=spec, exit_code=code, outcome=vmrun.outcome_of(code),
            problems=[problem], vcpus=args.vcpus, memory_mb=args.memory,
            durations=phases.stop())
        summary.update(meta, durations_from=phases.measured_from())
        expect.apply(summary, getattr(args, "expect", None))  # not judged: code kept
        unwritten = vmrun.save_reports(outdir, summary)
        out = vmrun.RunOutcome(summary, code, outdir, "")
        report(out, show_tap=False, file=sys.stderr, show_problems=False)
        if unwritten:
            print(f"gupnm: error: {unwritten}", file=sys.stderr)
        if args.json:
            print(json.dumps(summary, indent=2, sort_keys=True))
        args.printed_json = True
        return code
    _expected(out, args)
    report(out, show_tap=live is None, file=human)
    t_probe = time.monotonic()
    judged = probe.judge_unasked(out.summary, args, outdir)
    if judged is not None:
        _add_phase(out.summary, "probe", time.monotonic() - t_probe)
        vmrun.save_reports(outdir, out.summary)
        print(f"verdict: {out.summary['verdict']}\n{time_line(out.summary)}\n"
              f"exit:    {judged}", file=human)
    if args.json:
        print(json.dumps(out.summary, indent=2, sort_keys=True))
    args.printed_json = True
    return out.exit_code if judged is None else judged


def _expected(out: vmrun.RunOutcome, args) -> None:
    """The run compared with its expectations (report/expect.py): --expect
    FILE gates the exit code, Debian's default informs; the reports written
    again with summary.json's expected and as_expected."""
    exp, _ = expect.chosen(getattr(args, "expect", None), out.summary.get("spec"))
    if exp is None:
        return
    out.exit_code = expect.apply(out.summary, getattr(args, "expect", None))
    failed = vmrun.save_reports(out.outdir, out.summary)
    if failed and failed not in out.summary["problems"]:
        out.summary["problems"].append(failed)


def _failure(err: BaseException) -> tuple[int, str]:
    """(exit code, one-line problem) of a run that ended before the guest
    ran the test; says it on stderr."""
    if isinstance(err, KeyboardInterrupt):
        print("gupnm: interrupted", file=sys.stderr)
        return (getattr(err, "exit_code", results.EXIT_SIGINT),
                "interrupted before the guest ran the test")
    if isinstance(err, RunnerError):
        print(f"gupnm: error: {err}", file=sys.stderr)
        return (results.EXIT_USAGE if isinstance(err, UsageError)
                else results.EXIT_INFRA, str(err))
    if isinstance(err, OSError):
        message = os_error_message(err)
        print(f"gupnm: error: {message}", file=sys.stderr)
        return results.EXIT_INFRA, message
    return results.EXIT_INFRA, _internal(err)


def cmd_compare(args) -> int:
    """Both kernels, --repeat times each, interleaved (A1 B1 A2 B2 ...) so
    that drift of the host hits both alike; each run is its own boot."""
    for spec in (args.a, args.b):
        check_input(spec, args)
    cache.sweep_stale()
    base = args.results or _results_dir(args, "compare")
    human = sys.stderr if args.json else sys.stdout
    runs: dict[str, list[vmrun.RunOutcome]] = {"a": [], "b": []}
    for i in range(args.repeat):
        for label, spec in (("a", args.a), ("b", args.b)):
            progress(f"compare: kernel {label.upper()} = {spec}"
                     + (f", run {i + 1} of {args.repeat}" if args.repeat > 1 else ""))
            outdir = base / label / f"run-{i + 1}" if args.repeat > 1 else base / label
            out = run_one(spec, args, outdir)
            report(out, show_tap=False, file=human)
            _check_figures(out, spec, args)
            runs[label].append(out)
    first = {k: v[0].summary for k, v in runs.items()}
    emulated = any(o.summary["vm"].get("accel") == "tcg" for v in runs.values() for o in v)
    head = (f"A = {args.a} ({first['a']['kernel']['release']})\n"
            f"B = {args.b} ({first['b']['kernel']['release']})\n"
            + (f"{args.repeat} runs per kernel, interleaved, one boot each\n"
               if args.repeat > 1 else "")
            + ("QEMU TCG: emulated CPUs, figures are not hardware figures\n"
               if emulated else ""))
    data: dict = {"a": args.a, "b": args.b, "repeat": args.repeat,
                  "emulated": emulated}
    text = head
    rows = None
    if not args.command:
        rows = results.compare(_median_bench(runs["a"]), _median_bench(runs["b"]))
        text += ("median ns/page of the pin the table names below"
                 + (" (median over the runs of each run's median)" if args.repeat > 1 else "")
                 + "; speedup = A shadow / B shadow\n"
                 + results.format_compare(rows, "A", "B") + "\n")
        data["bench"] = rows
    fig_rows, stability = _figure_rows(runs, args)
    if fig_rows:
        text += "\n" + figures.format_table(fig_rows, args.a, args.b, emulated) + "\n"
        data["figures"] = fig_rows
    if stability:
        text += "\n" + stability["text"]
        data["stability"] = stability["rows"]
    xcheck = _crosscheck_rows(runs)
    if xcheck:
        text += "\n" + xcheck["text"]
        data["crosscheck"] = xcheck["rows"]
    print(text, end="", file=human)
    if args.json:
        print(json.dumps(data, indent=2))
        args.printed_json = True
    (base / "compare.txt").write_text(text)
    (base / "compare.json").write_text(json.dumps(data, indent=2) + "\n")
    if rows is not None:
        png = plot(rows, base, args.a, args.b)
    else:
        png = figures.plot(fig_rows, base, args.a, args.b, args.command)
    print(f"plot:    {png}" if png else "plot:    skipped (gnuplot missing)", file=human)
    return 0


def _check_figures(out: vmrun.RunOutcome, spec: str, args) -> None:
    """A run a comparison can use, or RunnerError saying why not."""
    if args.command:
        if out.exit_code not in (results.EXIT_PASS,):
            raise RunnerError(f"'{args.command}' on {spec} ended with exit "
                              f"{out.exit_code} ({out.summary['outcome']}): its "
                              f"figures are not comparable; see {out.outdir}")
        if not out.summary.get("figures"):
            raise RunnerError(f"'{args.command}' on {spec} printed no figure the "
                              f"runner knows how to read (runner/gupnm/report/figures.py); "
                              f"see {out.outdir}/tap.txt")
    elif not out.summary["bench"]:
        raise RunnerError(f"kernel {spec} produced no benchmark table "
                          f"(exit {out.exit_code}); see {out.outdir}")


def _median_bench(outs: list[vmrun.RunOutcome]) -> dict:
    """A summary-like {"bench": [...]} whose medians are the median over
    @outs of each run's median, per thread count and backing."""
    cells: dict[tuple, list[float]] = {}
    for out in outs:
        for b in out.summary["bench"]:
            cells.setdefault((b["threads"], b["backing"]), []).append(b["median"])
    first = outs[0].summary
    return {"bench": [{"threads": t, "backing": k, "median": statistics.median(v)}
                      for (t, k), v in sorted(cells.items())],
            **({"bench": first["bench"]} if len(outs) == 1 else {}),
            "vm": first.get("vm", {}), "bench_params": first.get("bench_params")}


def _crosscheck_rows(runs: dict) -> dict | None:
    """gup_test/anon of each run that had the cross-check, per kernel."""
    lines, table = [], []
    for label, outs in runs.items():
        got = [o.summary["crosscheck"] for o in outs if o.summary.get("crosscheck")]
        if not got:
            continue
        ratios = [x.get("ratio") for x in got]
        agree = sum(1 for x in got if x.get("agree"))
        table.append({"kernel": label.upper(), "ratios": ratios, "agree": agree,
                      "runs": len(got), "tolerance": vmrun.XCHECK_TOLERANCE})
        lines.append(f"{label.upper()} gup_test/anon: "
                     + " ".join("n/a" if r is None else f"{r:.2f}" for r in ratios)
                     + f"; agree in {agree} of {len(got)} runs "
                     + f"(bound +-{vmrun.XCHECK_TOLERANCE * 100:.0f} %)")
    if not lines:
        return None
    return {"rows": table,
            "text": "cross-check, gup_test -a over the test's anon control at 1 thread "
                    "(median of each run's rounds):\n" + "\n".join(lines) + "\n"}


# Issue 12: five back-to-back runs of one kernel must give shadow/anon
# ratios within this of their median.
RATIO_STABILITY = 0.15


def _figure_rows(runs: dict, args) -> tuple[list[dict], dict | None]:
    """figures.compare rows of both kernels' runs, and for the benchmark
    with --repeat the spread of each kernel's shadow/anon ratios."""
    per = {}
    for label, outs in runs.items():
        if args.command:
            per[label] = [[figures.Figure(**f) for f in o.summary["figures"]]
                          for o in outs]
        else:
            # The benchmark's output; a log from before series v2 has it
            # in the test's.
            per[label] = [figures.parse(vmrun.BENCH, o.bench_text or o.tap_text)
                          for o in outs]
    stats_a, stats_b = figures.summarise(per["a"]), figures.summarise(per["b"])
    rows = figures.compare(stats_a, stats_b)
    if args.command or args.repeat < 2:
        return rows, None
    lines, table = [], []
    for label, st in (("A", stats_a), ("B", stats_b)):
        for name, s in sorted(st.items()):
            if not name.startswith("shadow/anon"):
                continue
            ratios = s.run_means
            med = statistics.median(ratios)
            dev = max(abs(r / med - 1.0) for r in ratios) if med else None
            ok = dev is not None and dev <= RATIO_STABILITY
            table.append({"kernel": label, "figure": name, "ratios": ratios,
                          "median": med, "max_deviation": dev, "stable": ok})
            lines.append(f"{label} {name}: " + " ".join(f"{r:.2f}" for r in ratios)
                         + f"; median {med:.2f}, max deviation "
                         + (f"{dev * 100:.1f} %" if dev is not None else "n/a")
                         + (" (within" if ok else " (OUTSIDE")
                         + f" +-{RATIO_STABILITY * 100:.0f} %)")
    text = ("shadow/anon ratio of each run (the decision figure):\n"
            + "\n".join(lines) + "\n") if lines else ""
    return rows, {"rows": table, "text": text}


def plot(rows: list[dict], outdir: Path, label_a: str, label_b: str) -> Path | None:
    """ns/page vs threads, shadow and anon on both kernels, as a PNG."""
    try:
        ensure_tools(extra={"gnuplot": "gnuplot-nox"})
    except RunnerError as err:
        progress(str(err))
        return None
    data = outdir / "compare.dat"
    with open(data, "w") as fh:
        fh.write("# threads a_shadow a_anon b_shadow b_anon\n")
        for r in rows:
            vals = [r[k] if r[k] is not None else "NaN"
                    for k in ("a_shadow", "a_anon", "b_shadow", "b_anon")]
            fh.write(f"{r['threads']} " + " ".join(map(str, vals)) + "\n")
    png = outdir / "compare.png"
    esc = lambda s: s.replace('"', "'").replace("\\", "/")  # noqa: E731
    # What was measured, from the rows (results.compare): flags, pages per
    # call, and TCG numbers labelled emulated.
    setup = {k: next((r[f"{k}_setup"] for r in rows if r.get(f"{k}_setup")), None)
             for k in "ab"}
    if setup["a"] == setup["b"]:
        what = esc(setup["a"] or "pin_user_pages_fast(FOLL_WRITE)")
    else:
        what = "; ".join(f"{k.upper()}: {esc(v)}" for k, v in setup.items() if v)
    tcg = [k.upper() for k in "ab" if any(r.get(f"{k}_accel") == "tcg" for r in rows)]
    title = f"{what}: median ns/page"
    if tcg and "emulated" not in what:
        title += f"\\n{' and '.join(tcg)}: emulated (TCG)"
    script = f"""
set terminal pngcairo size 900,560 noenhanced
set output "{png}"
set title "{title}"
set xlabel "threads"
set ylabel "ns/page"
set logscale y
set key outside bottom center horizontal
set grid
set xtics ({", ".join(f'"{r["threads"]}" {r["threads"]}' for r in rows)})
plot "{data}" using 1:2 with linespoints lw 2 title "A shadow: {esc(label_a)}", \\
     "{data}" using 1:3 with linespoints dt 2 title "A anon", \\
     "{data}" using 1:4 with linespoints lw 2 title "B shadow: {esc(label_b)}", \\
     "{data}" using 1:5 with linespoints dt 2 title "B anon"
"""
    (outdir / "compare.gp").write_text(script)
    subprocess.run(["gnuplot", str(outdir / "compare.gp")], check=True)
    return png


def _read_log(path: Path) -> str:
    """The text of a saved log; UsageError for what cannot be one."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    if not data.strip():
        raise UsageError(f"{path} is empty: give a console.log, status.log or TAP file")
    sample = data[:65536]
    text = sample.decode("utf-8", errors="replace")
    bad = sample.count(b"\0") + text.count("\ufffd")
    if bad > len(sample) // 100:
        raise UsageError(f"{path} is not a text log ({bad} binary bytes in its "
                         "first 64 KiB): give a console.log, status.log or TAP file")
    return data.decode("utf-8", errors="replace")


def parse_log(raw: str) -> tuple[tap.TapResult, list, int | None]:
    """(TAP, splats, the test's exit status or None) of a console or status log."""
    text = raw
    exit_status = None
    bench = None                # the benchmark program's output, if any
    if "GUPNM-TAP-BEGIN" in raw:               # a status.log
        from .parse.status import parse_status
        st = parse_status(raw)
        text, exit_status, bench = st.tap, st.exit_code, st.bench
        splat_text = st.dmesg
    else:
        splat_text = raw
        m = re.search(r"^GUPNM-BENCH-BEGIN\r?\n(.*?)^GUPNM-BENCH-END", raw, re.M | re.S)
        bench = m.group(1) if m else None
        if vmrun.START_MARKER in text:
            text = text[text.index(vmrun.START_MARKER) + len(vmrun.START_MARKER):]
        m = None
        for m in re.finditer(r"GUPNM-TEST-END: exit (\d+)", text):
            pass
        if m:
            exit_status = int(m.group(1))
            text = text[:m.start()]
    if "running ./gup_null_mapping" in text:     # run_vmtests.sh, run_kselftest.sh
        text = tap.unnest(text)
    elif "TAP version" not in text:     # result.txt or LAVA's signals alone
        text = linaro.tap_of_results(text) or text
    parsed = tap.parse_tap(text.splitlines())
    if bench is not None:
        vmrun.merge_bench(parsed, tap.parse_tap(bench.splitlines()))
    return parsed, console.find_splats(splat_text), exit_status


def log_problems(raw: str, parsed: tap.TapResult, outcome: str,
                 exit_status: int | None) -> list[str]:
    """What keeps a saved log from its TAP verdict, by run's own rules
    (vmrun.run): the test did not run, the runner's module did not load,
    a pass lacks its evidence (results.missing_for_pass)."""
    problems = []
    if not (parsed.results or parsed.plan is not None):
        problems.append("the test did not run")
    failure = modload.load_failure(raw)
    if failure and not failure.blacklisted:
        problems.append(failure.problem())
    missing = results.missing_for_pass(parsed, exit_status)
    if outcome == "pass" and missing and not problems:
        problems.append(results.not_a_pass(missing))
    memory = results.memory_problem(console.out_of_memory(raw), outcome, exit_status)
    if memory:
        problems.insert(0, memory)
    return problems


def cmd_parse(args) -> int:
    raw = _read_log(args.file)
    if '"lvl": "target"' in raw:                # lava-run's log: the guest's console
        raw = lab.lava_console(raw)
    parsed, splats, exit_status = parse_log(raw)
    # As run judges it (results.build_summary): before 6.5 the long-term
    # writable pins of page cache go through GUP-fast by design; the kernel
    # says its release in its first line, which console and status logs hold.
    release = re.search(r"Linux version (\S+)", raw)
    pre65 = tap.expect_pre65(parsed, release.group(1) if release else None)
    judged = 0 if pre65 and exit_status == 1 and not tap.failed_results(parsed) \
        else exit_status
    outcome = results.outcome(parsed, splats, judged)
    ran = bool(parsed.results) or parsed.plan is not None
    problems = log_problems(raw, parsed, outcome, judged)
    code = results.exit_code(outcome, problems=problems,
                             reached_test=ran, splat=bool(splats), exit_status=judged,
                             has_results=bool(parsed.results))
    verdict = tap.summarize(parsed)
    out = sys.stderr if args.json else sys.stdout
    print(f"verdict: {verdict}", file=out)
    c = tap.counts(parsed)
    print("counts:  " + ", ".join(f"{k} {v}" for k, v in c.items()), file=out)
    if exit_status is not None:
        print(f"test exit status: {exit_status}", file=out)
    for sp in splats:
        print(f"SPLAT ({sp.kind}) at line {sp.line_no}", file=out)
    for err in parsed.errors:
        print(f"TAP problem: {err}", file=out)
    for name in pre65:
        print(f"note:    {name}: XFAIL: {tap.PRE_65}", file=out)
    for problem in problems:
        if problem != "the test did not run":      # the TAP problems say it
            print(f"PROBLEM: {problem}", file=out)
    print(f"exit:    {code}", file=out)
    if args.junit:
        junit.write(args.junit, junit.from_parsed(
            parsed, release=release.group(1) if release else None, exit_code=code,
            outcome=vmrun.outcome_of(code), verdict=verdict, problems=problems,
            splats=splats), console=args.file)
        print(f"junit:   {args.junit}", file=out)
    if args.results or args.json:
        s = logsummary.build(parsed, raw=raw, log=str(args.file),
                             release=release.group(1) if release else None,
                             exit_status=exit_status, exit_code=code,
                             outcome=vmrun.outcome_of(code), problems=problems,
                             splats=splats,
                             meta=run_meta(datetime.now(timezone.utc)))
        if args.results:
            outdir = _results_dir(args, "parse")
            unwritten = vmrun.save_reports(outdir, s)
            print(f"PROBLEM: {unwritten}" if unwritten else f"results: {outdir}",
                  file=out)
        if args.json:
            print(json.dumps(s, indent=2, sort_keys=True))
            args.printed_json = True
    return code


def cmd_cache(args) -> int:
    if args.clean:
        removed = cache.clean(args.clean, args.older_than)
        for path, n in removed:
            print(f"removed {cache.human(n):>10}  {path}")
        print(f"freed {cache.human(sum(n for _, n in removed))} in {len(removed)} entries")
        return 0
    print(cache.show())
    return 0


def _join_test_args(argv: list[str]) -> list[str]:
    """--test-args takes the next word as its value even when it starts
    with '-' (argparse would take "-B" for an option of the runner)."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--test-args" and i + 1 < len(argv):
            out.append(f"--test-args={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def _internal(err: Exception) -> str:
    """A bug in the runner: the traceback, and exit 3 (not Python's 1,
    which would read as "the test failed")."""
    traceback.print_exc()
    msg = (f"internal error ({type(err).__name__}: {err}); this is a bug in "
           "the runner, not a test result: please report it with the traceback")
    print(f"gupnm: {msg}", file=sys.stderr)
    return msg


def _on_signal(signum, frame):
    raise Interrupted(signum)


def os_error_message(err: OSError) -> str:
    """One line for an OSError of the environment (a full disk, a folder
    that cannot be written), with what to do about it."""
    where = f" ({err.filename})" if err.filename else ""
    text = f"{err.strerror or err}{where}"
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"{text}: free space there (runner/gupnm-run cache shows what "
                "the cache holds; runner/gupnm-run cache --clean GROUP removes it)")
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (f"{text}: make it writable, or point GUPNM_CACHE / --results "
                "somewhere writable")
    if err.errno == errno.ENOENT:
        return (f"{text}: a file the runner needs is gone (removed while it "
                "ran?); if it was a cache entry, runner/gupnm-run cache "
                "--clean GROUP and run again")
    return f"{text}: a problem of the host, not a test result"


def _error_object(code: int, message: str) -> str:
    """What --json prints on stdout when no summary exists: the exit code
    and the error, so a pipeline reading stdout always gets JSON."""
    return json.dumps({"exit_code": code, "outcome": vmrun.outcome_of(code),
                       "error": message, "problems": [message]},
                      indent=2, sort_keys=True)


class _Parser(argparse.ArgumentParser):
    """argparse that remembers its error for --json before exiting 2."""

    last_error: str | None = None

    def error(self, message):
        _Parser.last_error = message
        super().error(message)


def _wants_json(argv: list[str]) -> bool:
    return "--json" in argv


def _add_cache_parser(sub) -> None:
    p = sub.add_parser("cache", help="show the cache's size by group; clean it",
                       description=cache.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clean", nargs="+", metavar="GROUP",
                   choices=[*cache.GROUPS, cache.RESULTS, "all"],
                   help="remove these groups' entries: " + ", ".join(
                       [*cache.GROUPS, cache.RESULTS, "all"]))
    p.add_argument("--older-than", type=float, metavar="DAYS", default=None,
                   help="only entries last changed more than DAYS days ago")
    p.set_defaults(func=cmd_cache)


def _build_parser() -> _Parser:
    """gupnm-run's parser: run, compare, parse, cache and the others' subcommands."""
    parser = _Parser(prog="gupnm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="run the test on one kernel",
                       description=kernels.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel", default=DEFAULT_KERNEL, metavar="SPEC",
                   help=f"kernel to test (default {DEFAULT_KERNEL}); 'host': "
                   "the running kernel, no QEMU, with the module-free probe")
    p.add_argument("--method", choices=("module", "probe"), default="module",
                   help="module: the test module and selftest (default); "
                   "probe: the module-free probe (probe/), no headers needed "
                   "(runner/gupnm/probe.py)")
    p.add_argument("--expect", type=expect.arg, default=None, metavar="FILE",
                   help="compare every case with FILE's expectations "
                   "(e.g. runner/expectations/debian.txt; docs/expectations.md) "
                   "and exit 0 when all are as expected, 1 on a new failure "
                   "or an unexpected pass")
    _vm_args(p)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("compare", help="benchmark two kernels side by side",
                       description=kernels.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", default="source:debian-6.12:nofix", metavar="SPEC")
    p.add_argument("--b", default="source:debian-6.12:all", metavar="SPEC")
    p.add_argument("--repeat", type=_positive, default=1, metavar="N",
                   help="runs per kernel, interleaved A B A B ..., each its own "
                   "boot: mean +- stddev and the ratio B/A of every figure")
    _vm_args(p)
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("parse", help="verdict of a saved console log, status.log or TAP file")
    p.add_argument("file", type=Path)
    p.add_argument("--junit", type=Path, default=None, metavar="FILE",
                   help="also write the log's results as JUnit XML to FILE "
                   "(the names run, kselftest and lava give them)")
    p.add_argument("--results", type=_results_arg, default=None, metavar="DIR",
                   help="also write summary.json, junit.xml and ktap.txt there "
                   "(a new or empty directory), as run does")
    p.add_argument("--json", action="store_true",
                   help="print the summary.json on stdout (the report goes to stderr)")
    p.set_defaults(func=cmd_parse)
    _add_cache_parser(sub)
    survey.add_parsers(sub, _vm_args, run_one)
    probe.add_parsers(sub)
    lab.add_parsers(sub, _results_arg, _results_dir, run_meta)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    argv = _join_test_args(list(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        if exit_.code not in (0, None) and _wants_json(argv):
            print(_error_object(results.EXIT_USAGE, _Parser.last_error or "bad usage"))
        raise
    return _dispatch(args)


def _dispatch(args) -> int:
    """Run the subcommand; every error becomes its exit code and one message."""
    wants_json = getattr(args, "json", False)

    def fail(code: int, message: str) -> int:
        if wants_json and not getattr(args, "printed_json", False):
            print(_error_object(code, message))
        return code
    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            old[sig] = signal.signal(sig, _on_signal)
        except ValueError:          # not the main thread (tests)
            pass
    if getattr(args, "no_install", False):
        hosttools.forbid_install()
    try:
        return args.func(args)
    except RunnerError as err:
        print(f"gupnm: error: {err}", file=sys.stderr)
        return fail(results.EXIT_USAGE if isinstance(err, UsageError)
                    else results.EXIT_INFRA, str(err))
    except KeyboardInterrupt as err:
        print("gupnm: interrupted", file=sys.stderr)
        return fail(getattr(err, "exit_code", results.EXIT_SIGINT), "interrupted")
    except OSError as err:
        message = os_error_message(err)
        print(f"gupnm: error: {message}", file=sys.stderr)
        return fail(results.EXIT_INFRA, message)
    except Exception as err:            # noqa: BLE001 -- never exit 1 (= FAIL)
        return fail(results.EXIT_INFRA, _internal(err))
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
