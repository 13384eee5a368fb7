"""The ways labs run the test, as commands (issue 20):

  gupnm-run kselftest SPEC [--via run_kselftest|linaro]
  gupnm-run lava JOB SPEC

kselftest boots SPEC once and runs the kselftest tarball the tree's
`make gen_tar` made, the way a pipeline does (kselftest_paths.py,
runner/guest/kselftest-paths.sh); lava runs one of lava/jobs with
lava-run (lava.py). Both judge gup_null_mapping's own results and exit
by the README's table: 0 pass, 1 a result failed or the kernel
complained, 2 bad input (found before anything is built), 3 no answer
(the guest died, lava-run's job errored, no result of ours, the wrong
kernel booted, a build failed), 4 the whole test skipped.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from ..guest import qemu, vmrun
from ..host import RunnerError, UsageError, progress
from ..hosttools import ensure_tools
from ..parse import console
from ..report import expect, results
from . import kselftest_own, kselftest_paths, lava, lava_byo, lava_export, linaro

VIAS = ("run_kselftest", "linaro")
# The path of runner/guest/kselftest-paths.sh each --via runs.
GUEST_PATH = {"run_kselftest": "tarball", "linaro": "linaro"}

KSELFTEST_HELP = f"""\
Boot SPEC once and run gup_null_mapping the way a pipeline does, from the
kselftest tarball the kernel tree's own `make gen_tar` made (mm collection,
our test only):

  --via run_kselftest  the tarball unpacked in the guest and
                       ./run_kselftest.sh -t mm:ksft_gup_test.sh (6.12-style
                       trees: mm:run_vmtests.sh with VM_SELFTEST_ITEMS=gup_test)
  --via linaro         the tarball unpacked in {linaro.KSELFTEST_PATH} and Linaro's
                       kselftest.sh (test-definitions automated/linux/kselftest,
                       run unmodified from --linaro DIR, ${linaro.ENV_VAR}, or
                       {linaro.DEFAULT}) called as kselftest.yaml calls it;
                       its parse-output.py writes result.txt
                       --select casename: TST_CASENAME=<collection:test>
                       --select cmdfiles: TST_CMDFILES=mm and a SKIPFILE that
                       skips the rest of mm
                       SKIPFILE is always set (its default "" makes kselftest.sh
                       wget "" and fail): the checkout's empty kselftest-skipfile,
                       or --skipfile FILE

SPEC: a source kernel whose series adds the selftest to the tree:
source:debian-7.3[:all|nofix|wrongfix] or source:PATH (a git checkout that
is not 6.12). Not supported (exit 2): debian:, image: and debs: kernels (no
tree, no tarball: use `gupnm-run run` or `gupnm-run lava debian-module`, or
bring the tarball: --kernel IMAGE --kselftest TARBALL, below),
source:debian-6.12 (its stable series is the fix alone: no selftest in the
tree), selection none. The source kernel is built when not cached (minutes).

A lab's own artifacts instead of SPEC (nothing built by the runner):

  --kernel IMAGE --kselftest TARBALL [--modules DIR_OR_TARBALL]

IMAGE the kernel the lab built (bzImage, vmlinuz, vmlinux); TARBALL its
`make -C tools/testing/selftests TARGETS=mm gen_tar` tarball (with
run_kselftest.sh and mm/gup_null_mapping); --modules its `make
modules_install` tree or that tree's tarball (lib/modules/REL; needed only
when gup_test is a module: loaded when the kernel has none built in).
Checked before anything boots (exit 2): the image, the tarball's contents,
modules of the release IMAGE's banner names.

Judged: gup_null_mapping's own flattened results (the gup_test category
also runs upstream's gup_test and gup_longterm: reported in flat.txt, not
judged). Exit: 0 all ours pass; 1 one of ours failed (the bug) or the kernel
complained; 2 bad input; 3 no answer (the guest died or timed out, no
result of ours, no driver verdict, the runner exited non-zero with ours
passing, kselftest.sh wrote no result.txt, the wrong kernel booted, a build
failed); 4 the whole test skipped. Results folder: summary.json, junit.xml,
ktap.txt, console.log, paths.txt (the guest's output), flat.txt (every
flat result name), result.txt (--via linaro: kselftest.sh's own).
"""


def lava_help() -> str:
    jobs = "\n".join(f"  {name:18} {path.relative_to(lava.REPO)}: {_job_use(name)}"
                     for name, path in lava.JOBS.items())
    return f"""\
Run one of the repository's LAVA jobs with lava-run (lava-dispatcher, no
server) against SPEC's kernel, on the device lava/devices/qemu-tcg.jinja2
(extends lava-server's qemu.jinja2; rendered as lava-server does, its
templates taken from lava-server's .deb), print LAVA's per-case results
and exit by them. Jobs:
{jobs}

lava-run exits 0 even when cases fail: the exit status here comes from the
results LAVA recorded. Exit: 0 every case of the job's suite passes; 1 a
case failed (the bug) or the kernel complained; 2 bad input (an unknown JOB,
a SPEC the job cannot take); 3 no answer (lava-run's job errored or timed
out, LAVA's own job result is not pass, no case of ours, no driver verdict,
the guest died before /init twice, the wrong kernel booted); 4 every case
skipped. source-kselftest also needs its exit-status case, its
kernel-splats case (a fail is exit 1) and the SKIPFILE's skips (missing: 3).
A guest that died before /init (a multi-vCPU TCG artefact) is run
once more, and said so. Results folder: summary.json, junit.xml, ktap.txt,
job.yaml, device.yaml, lava-run.log, lava/ (lava-run's output directory).

--export DIR --base-url URL: also the job to submit to a lab, in DIR with
its artifacts (kept), every url URL/<file> with its sha256sum, README.txt
and manifest.json (docs/lab-commands.md). source-kselftest takes a lab's
own --kernel, --kselftest and --modules in place of SPEC.
"""


def _job_use(name: str) -> str:
    return {"debian-module": "a Debian binary kernel (debian:6.12, debian:7.3; "
                             "any spec `run` takes) with our module, the "
                             "test's TAP read by a monitor",
            "source-kselftest": "a source kernel as labs run it: rootfs, "
                                "modules and the kselftest tarball deployed, "
                                "Linaro's kselftest.yaml in LAVA's test shell "
                                "(source:debian-7.3[:all|nofix|wrongfix])"
            }.get(name, "")


def add_parsers(sub, results_arg, results_dir, meta) -> None:
    """`kselftest` and `lava`; @results_arg, @results_dir, @meta: cli's
    --results type, results folder maker and run facts."""
    p = sub.add_parser("kselftest", help="the kselftest tarball in a guest, by "
                       "run_kselftest.sh or Linaro's kselftest.sh",
                       description=KSELFTEST_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC", nargs="?", default=None)
    p.add_argument("--kernel", type=Path, default=None, metavar="IMAGE",
                   help="a lab's own kernel image (with --kselftest; no SPEC)")
    p.add_argument("--kselftest", type=Path, default=None, metavar="TARBALL",
                   help="the lab's gen_tar kselftest tarball (with --kernel)")
    p.add_argument("--modules", type=Path, default=None, metavar="DIR_OR_TARBALL",
                   help="the lab's modules_install tree or its tarball (with --kernel)")
    p.add_argument("--via", choices=VIAS, default="run_kselftest")
    p.add_argument("--linaro", default=None, metavar="DIR",
                   help=f"Linaro's test-definitions checkout (default "
                   f"${linaro.ENV_VAR}, else {linaro.DEFAULT})")
    p.add_argument("--select", choices=linaro.SELECTIONS, default="casename",
                   help="--via linaro: TST_CASENAME (default) or TST_CMDFILES=mm")
    p.add_argument("--skipfile", type=Path, default=None, metavar="FILE",
                   help="--via linaro: kselftest.sh's SKIPFILE (perl regexes of "
                   "collection:test, one a line)")
    _common(p, results_arg)
    p.set_defaults(func=lambda a: cmd_kselftest(a, results_dir, meta))
    p = sub.add_parser("lava", help="one of lava/jobs with lava-run",
                       description=lava_help(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("job", type=_job, metavar="JOB",
                   help="one of: " + ", ".join(lava.JOBS))
    p.add_argument("spec", metavar="SPEC", nargs="?", default=None,
                   help="the kernel (not with --kernel)")
    _lava_options(p)
    _common(p, results_arg)
    p.set_defaults(func=lambda a: cmd_lava(a, results_dir, meta))


def _lava_options(p) -> None:
    """lava's --export and the lab's own artifacts."""
    p.add_argument("--export", type=Path, default=None, metavar="DIR",
                   help="also write the job to submit to a lab into DIR, its "
                   "artifacts kept beside it (new, empty, or a previous export)")
    p.add_argument("--base-url", default=None, metavar="URL",
                   help="with --export: the http(s):// or file:// URL DIR's files "
                   "are served at; the exported job fetches URL/<file>")
    p.add_argument("--no-run", action="store_true",
                   help="with --export: write DIR and stop (exit 0), no lava-run")
    p.add_argument("--kernel", dest="kernel_image", type=Path, default=None, metavar="IMAGE",
                   help="source-kselftest on the lab's kernel (vmlinux or "
                   "bzImage) instead of SPEC")
    p.add_argument("--modules", type=Path, default=None, metavar="MODULES",
                   help="with --kernel: its modules, a tar(.gz/.xz/.bz2) or "
                   "folder holding lib/modules/<release>/")
    p.add_argument("--kselftest", dest="kselftest_tarball", type=Path, default=None,
                   metavar="TARBALL",
                   help="with --kernel: the tree's `make gen_tar` tarball")


def _common(p, results_arg) -> None:
    p.add_argument("--results", type=results_arg, default=None, metavar="DIR",
                   help="results directory, new or empty (default "
                   "results/<time>-<what>-<n>)")
    p.add_argument("--json", action="store_true",
                   help="print summary.json on stdout (the report goes to stderr)")
    p.add_argument("--expect", type=expect.arg, default=None, metavar="FILE",
                   help="compare gup_null_mapping's cases with FILE's expectations "
                   "(docs/expectations.md): exit 0 when all are as expected, 1 "
                   "on a new failure or an unexpected pass")


def _job(text: str) -> str:
    if text not in lava.JOBS:
        raise argparse.ArgumentTypeError(
            f"unknown job '{text}': use one of {', '.join(lava.JOBS)} (lava/jobs)")
    return text


# --- judging ---------------------------------------------------------------

def judge(ours: list[tuple[str, str]], *, runner_exit: int | None,
          splats: list, booted: str | None, release: str | None,
          runner: str = "run_kselftest.sh") -> tuple[int, list[str], str]:
    """(exit code, problems, verdict) of gup_null_mapping's own flat
    results (name, pass|fail|skip|...), by the README's table."""
    problems = []
    if booted and release and booted != release:
        problems.append(f"the guest booted {booted}, not {release}")
    if splats:
        return results.EXIT_FAIL, problems, "FAIL: the kernel complained (" + \
            ", ".join(sorted({s.kind for s in splats})) + ")"
    failed = [n for n, r in ours if r not in ("pass", "skip")]
    if failed and not problems:
        # The bug: the driver's short-term verdicts fail, nothing else but
        # the test's own line (a flat name ending in gup_null_mapping).
        cases = [n for n in failed if not n.endswith("gup_null_mapping")]
        why = ("GUP-fast rejects NULL-mapping order-0 folios (bug present)"
               if cases and all(kselftest_paths.is_driver(n) for n in cases) else "")
        return results.EXIT_FAIL, problems, (f"FAIL: {len(failed)} of {len(ours)} "
                                             f"failed{': ' + why if why else ''}")
    if not ours:
        problems.append("no result of gup_null_mapping (did the test run? see "
                        "paths.txt)")
    elif all(r == "skip" for _, r in ours):
        if not problems:
            return results.EXIT_SKIP, problems, "SKIP: every result skipped"
    elif not any(kselftest_paths.is_driver(n) and r == "pass" for n, r in ours):
        # Every verdict skipped (the test's own line passes then) or none
        # of the driver row: nothing says the kernel lacks the bug.
        problems.append("no verdict_driver_* result judged: not a pass without "
                        "the test's own driver verdict")
    if runner_exit is None:
        problems.append(f"{runner} never finished in the guest (died or timed out)")
    elif runner_exit != 0 and not problems:
        problems.append(f"{runner} exited {runner_exit} while gup_null_mapping's "
                        "results pass")
    if problems:
        return results.EXIT_INFRA, problems, "not judged: " + problems[0]
    skipped = [n for n, r in ours if r == "skip"]
    return results.EXIT_PASS, problems, (
        f"PASS: {len(ours)} results of gup_null_mapping"
        + (f", {len(skipped)} skipped (not judged: {', '.join(skipped)})" if skipped else ""))


def summary(*, spec: str, code: int, verdict: str, problems: list[str],
            cases: list[tuple[str, str]], release: str | None,
            booted: str | None, source: dict, memory_mb: int,
            cmdline: str | None, exit_status: int | None, command: str,
            splats: list, durations: dict, notes: list[str], meta: dict,
            attempts: int, files: dict) -> dict:
    """A summary.json (runner/summary.schema.json) of a lab-style run."""
    s = results.stub_summary(spec=spec, exit_code=code, outcome=vmrun.outcome_of(code),
                             problems=problems, vcpus=2, memory_mb=memory_mb,
                             durations=durations, release=release)
    s.update(meta)
    s["kernel"].update(booted_release=booted, source=source)
    s["vm"].update(accel="tcg", cmdline=cmdline)
    status = {"pass": "pass", "fail": "fail", "skip": "skip"}
    s["cases"] = [{"number": i, "name": n, "status": status.get(r, "error"),
                   "reason": None if r in status else f"result {r}"}
                  for i, (n, r) in enumerate(cases, 1)]
    for c in s["cases"]:
        s["counts"][c["status"]] += 1
    s["counts"]["total"] = len(cases)
    s["verdict"] = verdict
    s["exit_status"] = exit_status
    s["command"] = command
    s["bug_present"] = (True if code == results.EXIT_FAIL and "bug present" in verdict
                        else False if code == results.EXIT_PASS else None)
    s["splats"] = [{"kind": x.kind, "line": x.line_no, "excerpt": x.excerpt}
                   for x in splats]
    s["notes"] = list(notes)
    s["boot_attempts"] = attempts
    s["files"] = {**vmrun.REPORT_FILES, **files}
    return s


def _finish(args, outdir: Path, s: dict, lines: list[str]) -> int:
    """Reports written, the per-case lines and verdict printed; the code
    (with --expect, the comparison's: report/expect.py)."""
    expect.apply(s, getattr(args, "expect", None))
    unwritten = vmrun.save_reports(outdir, s)
    out = sys.stderr if args.json else sys.stdout
    for line in lines:
        print(line, file=out)
    print(f"verdict: {s['verdict']}", file=out)
    for line in expect.report_lines(s):
        print(line, file=out)
    for p in s["problems"]:
        print(f"PROBLEM: {p}", file=out)
    for n in s.get("notes", []):
        print(f"note: {n}", file=out)
    if unwritten:
        print(f"PROBLEM: {unwritten}", file=out)
    print(f"results: {outdir}", file=out)
    print(f"exit:    {s['exit_code']}", file=out)
    if args.json:
        print(json.dumps(s, indent=2, sort_keys=True))
        args.printed_json = True
    return s["exit_code"]


def _code_of(err: Exception) -> int:
    """What cli.main will exit with for @err (bad input 2, else 3)."""
    return results.EXIT_USAGE if isinstance(err, UsageError) else results.EXIT_INFRA


def _fail_summary(args, outdir: Path, spec: str, code: int, message: str,
                  meta: dict, t0: float) -> int:
    """A summary for a run that stopped before its answer (a build failed)."""
    s = results.stub_summary(spec=spec, exit_code=code, outcome=vmrun.outcome_of(code),
                             problems=[message], vcpus=2, memory_mb=2048,
                             durations={"total": time.monotonic() - t0})
    s.update(meta)
    s["files"] = dict(vmrun.REPORT_FILES)
    expect.apply(s, getattr(args, "expect", None))      # not judged: code kept
    vmrun.save_reports(outdir, s)
    if args.json:
        print(json.dumps(s, indent=2, sort_keys=True))
        args.printed_json = True
    return code


# --- kselftest ---------------------------------------------------------------

def check_kselftest(args) -> Path | None:
    """Everything about kselftest's input checked on the host before
    anything is built; UsageError (exit 2). The checkout for --via linaro."""
    own = [o for o, v in (("--kernel", args.kernel), ("--kselftest", args.kselftest),
                          ("--modules", args.modules)) if v is not None]
    if own:
        if args.spec is not None:
            raise UsageError(f"give SPEC or {' '.join(own)}, not both: SPEC is "
                             "a kernel the runner builds, --kernel a lab's own")
        if args.kernel is None or args.kselftest is None:
            raise UsageError("a lab's own artifacts need --kernel IMAGE and "
                             "--kselftest TARBALL (--modules DIR_OR_TARBALL "
                             "when gup_test is a module)")
        kselftest_own.check(args.kernel, args.modules, args.kselftest)
    elif args.spec is None:
        raise UsageError("name a kernel: SPEC (source:debian-7.3:all) or a "
                         "lab's own --kernel IMAGE --kselftest TARBALL")
    else:
        problem = kselftest_paths.spec_problem(args.spec)
        if problem:
            raise UsageError(problem)
    linaro_only = [o for o, v in (("--linaro", args.linaro),
                                  ("--skipfile", args.skipfile),
                                  ("--select", args.select != "casename" or None))
                   if v]
    if args.via != "linaro":
        if linaro_only:
            raise UsageError(f"{', '.join(linaro_only)} only with --via linaro")
        return None
    if args.skipfile is not None and not args.skipfile.is_file():
        raise UsageError(f"--skipfile {args.skipfile} is not a file: name a "
                         "kselftest.sh skipfile (collection:test regexes)")
    return linaro.locate(args.linaro, has_option=True)


def own_spec(args) -> str:
    """The name a run on a lab's own artifacts goes by (summary's spec)."""
    return f"own:{args.kernel}"


def cmd_kselftest(args, results_dir, meta) -> int:
    td = check_kselftest(args)
    if args.spec is None:
        args.spec = own_spec(args)
    outdir = results_dir(args, f"kselftest-{args.via}-"
                         + ("own" if args.kernel else args.spec))
    started = meta(datetime.now(timezone.utc))
    t0 = time.monotonic()
    try:
        return _kselftest(args, td, outdir, started, t0)
    except Exception as err:           # noqa: BLE001 -- reported, then raised
        _fail_summary(args, outdir, args.spec, _code_of(err), str(err), started, t0)
        raise


def _kselftest_prepared(args, outdir: Path):
    """(kernel, Built, kernel.source) of SPEC (built when not cached) or of
    the lab's own --kernel, --modules and --kselftest (nothing built)."""
    ensure_tools(source_build=args.kernel is None)
    if args.kernel is not None:
        k, built = kselftest_own.prepare(args.kernel, args.modules, args.kselftest,
                                         outdir / "own")
        return k, built, kselftest_own.kernel_source(k, built)
    k, built = kselftest_paths.prepared(args.spec)
    return k, built, kselftest_paths.kernel_source(k, built)


def _kselftest(args, td: Path | None, outdir: Path, started: dict, t0: float) -> int:
    k, built, source = _kselftest_prepared(args, outdir)
    prepare_s = time.monotonic() - t0
    path = GUEST_PATH[args.via]
    lin = linaro.guest(td, built.wrapper, args.select, args.skipfile) if td else None
    notes, attempts = [], 1
    o = kselftest_paths.run_kernel(args.spec, k, built, outdir, (path,), lin)
    if console.early_boot_death(o.console, "KSFT-PATH-BEGIN"):
        notes.append("boot 1 died before the test started (a multi-vCPU TCG "
                     "early-boot artefact): booted again")
        progress(notes[-1])
        attempts = 2
        (outdir / "console.attempt1.log").write_text(o.console)
        o = kselftest_paths.run_kernel(args.spec, k, built, outdir, (path,), lin)
    if args.kernel is not None and not os.environ.get("GUPNM_KEEP_WORK"):
        shutil.rmtree(outdir / "own", ignore_errors=True)   # the unpacked tarball
    p = o.paths.get(path)
    text = p.text if p else ""
    if args.via == "linaro":
        pairs = linaro.results(text)
        runner = "kselftest.sh"
        if pairs is None:
            pairs = []
            notes.append("kselftest.sh wrote no output/result.txt")
        else:
            (outdir / "result.txt").write_text("".join(f"{n} {r}\n" for n, r in pairs))
        command = _linaro_command(lin)
    else:
        pairs = [(f.name, f.result) for f in (p.flat if p else [])]
        runner = "run_kselftest.sh"
        command = f"./run_kselftest.sh -t {built.wrapper}"
    (outdir / "flat.txt").write_text("".join(f"{n} {r}\n" for n, r in pairs))
    ours = [(n, r) for n, r in pairs if kselftest_paths.is_ours(n)]
    splats = _splats_after(o.console, "KSFT-PATH-BEGIN")
    code, problems, verdict = judge(ours, runner_exit=p.exit_status if p else None,
                                    splats=splats, booted=o.booted,
                                    release=o.release, runner=runner)
    if args.via == "linaro" and not pairs and p and p.exit_status is not None:
        problems.append(f"kselftest.sh exited {p.exit_status} and wrote no "
                        "result.txt (see paths.txt)")
    s = summary(spec=args.spec, code=code, verdict=verdict, problems=problems,
                cases=ours, release=o.release, booted=o.booted,
                source={**source, "via": args.via},
                memory_mb=kselftest_paths.MEMORY_MB, cmdline=qemu.BASE_APPEND,
                exit_status=p.exit_status if p else None, command=command,
                splats=splats, durations={"prepare": prepare_s,
                                          "boot_and_test": o.boot_seconds,
                                          "total": time.monotonic() - t0},
                notes=notes, meta=started, attempts=attempts,
                files={"console": "console.log", "paths": "paths.txt",
                       "flat": "flat.txt",
                       **({"result": "result.txt"} if args.via == "linaro" else {})})
    lines = [f"{n}: {r}" for n, r in ours]
    others = len(pairs) - len(ours)
    if others:
        lines.append(f"({others} other results of the category in flat.txt, not judged)")
    return _finish(args, outdir, s, lines)


def _linaro_command(lin: linaro.Guest) -> str:
    prm = lin.params
    return (f"cd {lin.td / linaro.KSELFTEST_DIR} && ./kselftest.sh "
            f"-c '{prm.TST_CMDFILES}' -T '{prm.TST_CASENAME}' -S '{prm.SKIPFILE}' "
            f"-s {prm.SKIP_INSTALL} -p {prm.KSELFTEST_PATH} -E '{prm.ENV}' ...")


def _splats_after(text: str, marker: str) -> list:
    """Kernel reports from the test's start on (before it: a boot problem,
    which the retry or the missing results answer)."""
    start = console.marker_line(text, marker)
    if start is None:
        return []
    return [s for s in console.find_splats(text) if s.line_no >= start]


# --- lava ----------------------------------------------------------------------

def lava_console(log: str) -> str:
    """The guest's console out of lava-run's log: the msg of its `target`
    lines (JSON objects, one a line, in lava-dispatcher 2023.01)."""
    lines = []
    for line in log.splitlines():
        if '"target"' not in line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("lvl") == "target" \
                and isinstance(obj.get("msg"), str):
            lines.append(obj["msg"])
    return "\n".join(lines) + "\n"


def judge_lava(r: lava.LavaRun, booted: str | None,
               splats: list) -> tuple[int, list[str], str]:
    """judge() of LAVA's cases of ours (r.ours()), plus what only LAVA
    tells: its exit status, its own job result, and for the lab job the
    kernel-splat case (a fail is the kernel complaining: exit 1) and the
    cases it must give (the exit status, the SKIPFILE's skips)."""
    ours = [(c.case, c.result) for c in r.ours()]
    code, problems, verdict = judge(ours, runner_exit=0 if r.returncode is not None
                                    else None, splats=splats, booted=booted,
                                    release=r.release, runner="lava-run")
    splat_case = [c for c in r.suite(lava.KERNEL_SUITE) if c.case == lava.SPLAT_CASE]
    if any(c.result == "fail" for c in splat_case) and code != results.EXIT_FAIL:
        code, verdict = results.EXIT_FAIL, (f"FAIL: the kernel complained (LAVA case "
                                            f"{lava.KERNEL_SUITE}/{lava.SPLAT_CASE})")
    job_problems = []
    if r.returncode is None:
        job_problems.append(f"lava-run timed out after {lava.TIMEOUT:.0f} s")
    elif r.returncode != 0:
        job_problems.append(f"lava-run exited {r.returncode}: a job error "
                            f"(see {r.outdir / 'lava-run.log'})")
    if r.job_result() != "pass":
        job_problems.append(f"LAVA's own job result is {r.job_result()}, not pass")
    if r.job == "source-kselftest":
        job_problems += lava.lab_problems(r, splat_may_fail=True)
    if job_problems and code in (results.EXIT_PASS, results.EXIT_SKIP):
        return results.EXIT_INFRA, problems + job_problems, \
            "not judged: " + job_problems[0]
    return code, problems + [p for p in job_problems if p not in problems], verdict


def check_lava(args) -> tuple[lava_byo.Byo | None, lava_export.Export | None]:
    """Everything about lava's input checked before anything is built
    (UsageError, exit 2): the lab's artifacts or SPEC, the export."""
    lab_built = (args.kernel_image, args.modules, args.kselftest_tarball)
    if any(a is not None for a in lab_built) and (
            args.job != "source-kselftest" or args.spec is not None):
        raise UsageError("--kernel, --modules and --kselftest "
                         "are the lab job's (source-kselftest), in place of SPEC")
    byo = lava_byo.check(*lab_built)
    if byo is not None:
        linaro.locate()            # Linaro's test-definitions, for from: git
    elif args.spec is None:
        raise UsageError(f"lava {args.job}: no SPEC (or, for source-kselftest, "
                         "--kernel IMAGE --kselftest TARBALL)")
    else:
        problem = lava.spec_problem(args.job, args.spec)
        if problem:
            raise UsageError(problem)
    export = lava_export.check(args.export, args.base_url)
    if args.no_run and export is None:
        raise UsageError("--no-run only with --export DIR --base-url URL")
    if args.no_run and (args.json or args.expect):
        raise UsageError("--no-run runs nothing, so there is no summary.json "
                         "(--json) or case (--expect): drop them")
    return byo, export


def cmd_lava(args, results_dir, meta) -> int:
    byo, export = check_lava(args)
    args.spec = byo.label() if byo else args.spec
    args.byo, args.export_to = byo, export
    if args.no_run:
        why = lava.available()      # its schema checks the exported job
        if why:
            raise RunnerError(why)
        staged = lava.stage(args.job, args.spec, results_dir(
            args, f"lava-export-{args.job}"), export=export, byo=byo)
        print(f"exported: {export.dir}/job.yaml (artifacts beside it, "
              f"fetched from {export.base_url}; {staged.release})")
        return results.EXIT_PASS
    outdir = results_dir(args, f"lava-{args.job}-{args.spec}")
    started = meta(datetime.now(timezone.utc))
    t0 = time.monotonic()
    try:
        return _lava(args, outdir, started, t0)
    except Exception as err:           # noqa: BLE001 -- reported, then raised
        _fail_summary(args, outdir, args.spec, _code_of(err), str(err), started, t0)
        raise


def _lava(args, outdir: Path, started: dict, t0: float) -> int:
    ensure_tools(source_build=args.spec.startswith("source:"),
                 extra={"lava-run": "lava-dispatcher"})
    r, notes = lava.run_again_if_died(args.job, args.spec, outdir, outdir / "boot2",
                                      export=args.export_to, byo=args.byo)
    if args.export_to:
        notes.append(f"exported: {args.export_to.dir}/job.yaml, its files "
                     f"fetched from {args.export_to.base_url}")
    log = (r.outdir / "lava-run.log").read_text(errors="replace")
    con = lava_console(log)
    m = re.search(r"Linux version (\S+)", con)
    booted = m.group(1) if m else None
    start = lava.START[args.job]
    splats = _splats_after(con, start)
    code, problems, verdict = judge_lava(r, booted, splats)
    if lava.died_before_user_space(r):
        problems.append("the guest died before /init on both boots")
    ours = [(c.case, c.result) for c in r.ours()]
    rel = os.path.relpath(r.outdir, outdir)
    s = summary(spec=args.spec, code=code, verdict=verdict, problems=problems,
                cases=ours, release=r.release, booted=booted,
                source={**r.source, "kind": args.spec.split(":", 1)[0],
                        "lava_job": args.job},
                memory_mb=2048, cmdline=qemu.BASE_APPEND, exit_status=r.returncode,
                command=f"lava-run --device device.yaml (rendered from "
                        f"{lava.DEVICE.name}) {lava.JOBS[args.job].name}",
                splats=splats, durations={"lava_run": r.seconds,
                                          "total": time.monotonic() - t0},
                notes=notes, meta=started, attempts=1 + len(notes),
                files={"lava_log": os.path.join(rel, "lava-run.log"),
                       "job": os.path.join(rel, "job.yaml"),
                       "device": os.path.join(rel, "device.yaml")})
    lines = [f"{c.definition}/{c.case}: {c.result}" for c in r.cases]
    return _finish(args, outdir, s, lines)

