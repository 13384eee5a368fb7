"""make check's block for issue 11: the kselftest paths and the LAVA jobs.

  make check-kselftest   run_tests, install, gen_tar on both source kernels
  make check-lava        the LAVA jobs validated and run with lava-run, two
                         of them also exported and run as a lab would
                         (lava_export_checks)
  (in check-kselftest)   Linaro's kselftest.sh, unmodified, by TST_CASENAME
                         and by TST_CMDFILES=mm with a SKIPFILE (issue 20)
  (in check-kselftest)   a lab's own kernel, modules and kselftest tarball
                         (kselftest --kernel --modules --kselftest, issue 48:
                         own_kselftest.py)

Both are part of `make check` (checks.py calls host_checks() and
vm_checks()); alone: `cd runner && python3 -m gupnm.check.kselftest_checks
[--paths] [--lava]`.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from ..ci import kselftest_paths, lab, lava, lava_device, linaro
from ..host import REPO, RunnerError, progress
from ..parse import tap
from . import doc_facts, lava_export_checks, own_kselftest

# Source kernels: each series applied, the fix in it (7.3 has it upstream).
# The upstream series' tree: 6.12's stable series is the fix alone, its
# tree has no gup_null_mapping.
SOURCE_KERNELS = ("source:debian-7.3:all",)
# Linaro's kselftest.sh on the fix, no-fix and wrong-fix kernels of the tree.
LINARO_KERNELS = ("source:debian-7.3:all", "source:debian-7.3:nofix",
                  "source:debian-7.3:wrongfix")
# LAVA: (job, kernel, has the bug)
LAVA_RUNS = (("debian-module", "debian:6.12", True),
             ("debian-module", "debian:7.3", False),
             ("source-kselftest", "source:debian-7.3:all", False),
             ("source-kselftest", "source:debian-7.3:nofix", True),
             ("source-kselftest", "source:debian-7.3:wrongfix", True))


def _outdir(what: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = what.replace(":", "-")
    path = REPO / "results" / f"{stamp}-{safe}"
    n = 1
    while path.exists():
        n += 1
        path = REPO / "results" / f"{stamp}-{safe}-{n}"
    return path


def host_checks(t) -> None:
    def valid():
        why = lava.available()
        if why:
            return False, why
        return lava.validate([*lava.JOBS.values()])
    t.guard("lava: job files pass lava-dispatcher's strict schema "
            f"({', '.join(p.name for p in lava.JOBS.values())})", valid)

    def device():
        why = lava.available()
        if why:
            return False, why
        outs = [lava_device.validate(lava_device.render(job))
                for job in lava.JOBS.values()]
        return all(ok for ok, _ in outs), "; ".join(msg for _, msg in outs)
    t.guard(f"lava: {lava.DEVICE.name} extends lava-server's qemu.jinja2, renders "
            "for every job and passes lava-dispatcher's device schema", device)


def check_paths(t, spec: str, run=None) -> None:
    """One guest, three paths; one check per path and one on the names.

    @run: how to get the Outcome (default: kselftest_paths.run on @spec)."""
    try:
        outdir = _outdir(f"kselftest-{spec}")
        o = run(outdir) if run else kselftest_paths.run(spec, outdir)
    except (RunnerError, OSError) as err:
        t.record(f"kselftest {spec}: guest with the three paths", False, str(err))
        return
    progress(f"kselftest paths on {o.release}: guest {o.boot_seconds:.1f} s, "
             + ", ".join(f"{n} {p.seconds} s" for n, p in o.paths.items()))
    for name in kselftest_paths.PATHS:
        p = o.paths.get(name)
        if p is None:
            t.record(f"kselftest {spec}: {name} ran", False,
                     f"no output of {name} in {o.outdir / 'paths.txt'}\n"
                     + o.console[-3000:])
            continue
        bad = kselftest_paths.verdict_problems(p, o.wrapper, bug=False)
        if o.booted != o.release:
            bad.append(f"the guest booted {o.booted}, not {o.release}")
        if name == "run_tests" and "# guest has a compiler" in p.text:
            bad.append("the guest had a compiler: run_tests could have built")
        verdicts = [f for f in p.flat if "_verdict_" in f.name]
        t.record(f"kselftest {spec}: {name} ({o.wrapper}): {len(verdicts)} "
                 f"verdicts pass, exit {p.exit_status}, {p.seconds} s",
                 not bad, "\n".join(bad) + "\n--- output ---\n" + p.text[-3000:])
    names = kselftest_paths.names_by_path(o)
    sets = {n: tuple(v) for n, v in names.items()}
    same = len(set(sets.values())) == 1 and len(sets) == len(kselftest_paths.PATHS)
    ours = len(kselftest_paths.own_results(next(iter(o.paths.values())).flat)) \
        if o.paths else 0
    miscount = own_count_problem(ours)
    t.record(f"kselftest {spec}: the three paths give the same "
             f"{len(next(iter(sets.values()), ()))} flat result names, "
             f"gup_null_mapping's {ours} unique",
             same and not miscount and not any(kselftest_paths.tapflat.duplicates(
                 kselftest_paths.own_results(p.flat)) for p in o.paths.values()),
             miscount + "\n" + "\n".join(f"{n}: {v}" for n, v in names.items()))


def own_count_problem(ours: int, repo: Path = REPO) -> str:
    """'' when gup_null_mapping gave a flat result per cell of its table and
    one for its own line (the figure the documents state); else why not."""
    want = doc_facts.facts(repo)["own_results"]
    if ours == want:
        return ""
    return (f"gup_null_mapping gave {ours} flat results, its table {want} "
            f"(one per cell of {doc_facts.TEST} and its own line)")


def check_linaro(t, spec: str, select: str) -> None:
    """Linaro's kselftest.sh in the guest as `gupnm-run kselftest --via
    linaro --select @select` runs it (kselftest_paths' linaro path), beside
    the tarball path in the same guest: parse-output.py's result.txt must
    give gup_null_mapping's results the names and results tapflat gives the
    tarball path, all passing, and (cmdfiles) skip the rest of mm."""
    label = f"linaro kselftest.sh ({select}) on {spec}"
    try:
        td = linaro.locate()
        k, built = kselftest_paths.prepared(spec)
        lin = linaro.guest(td, built.wrapper, select)
        o = kselftest_paths.run_kernel(spec, k, built, _outdir(f"linaro-{select}-{spec}"),
                                       ("tarball", "linaro"), lin)
    except (RunnerError, OSError) as err:
        t.record(f"{label}: guest", False, str(err))
        return
    p, tb = o.paths.get("linaro"), o.paths.get("tarball")
    pairs = linaro.results(p.text) if p else None
    if pairs is None or tb is None:
        t.record(f"{label}: result.txt", False, "no result.txt or no tarball path\n"
                 + (p.text if p else o.console)[-3000:])
        return
    ours = [x for x in pairs if kselftest_paths.is_ours(x[0])]
    code, problems, verdict = lab.judge(ours, runner_exit=p.exit_status, splats=[],
                                        booted=o.booted, release=o.release,
                                        runner="kselftest.sh")
    want = [(f.name, f.result) for f in kselftest_paths.own_results(tb.flat)]
    expect = expected_failures(spec, [n for n, _ in ours])
    failed = {n for n, r in ours
              if r not in ("pass", "skip") and not n.endswith("gup_null_mapping")}
    bad = list(problems)
    if code != (1 if expect else 0):
        bad.append(f"exit {code}, expected {1 if expect else 0}: {verdict}")
    if failed != expect:
        bad.append(f"failing cases {sorted(failed)}, expected {sorted(expect)}")
    if sorted(ours) != sorted(want):
        bad.append(f"result.txt's gup_null_mapping results differ from the tarball "
                   f"path's flat names: {sorted(set(ours) ^ set(want))[:6]}")
    if own_count_problem(len(ours)):
        bad.append(own_count_problem(len(ours)))
    skips = [n for n, r in pairs if r == "skip" and n.startswith("mm:")]
    if select == "cmdfiles" and not skips:
        bad.append("TST_CMDFILES=mm: the skipfile skipped no other mm test")
    if select == "cmdfiles" and ("shardfile-mm", "pass") not in pairs:
        bad.append("no shardfile-mm pass in result.txt")
    t.record(f"{label}: {len(ours)} results of gup_null_mapping in result.txt, "
             f"{_outcome(spec)}, same names and results as the tarball path's"
             + (f", {len(skips)} other mm tests skipped" if select == "cmdfiles" else "")
             + f" (kselftest.sh {p.seconds} s)",
             not bad, "\n".join(bad) + "\n--- result.txt ---\n"
             + "\n".join(f"{n} {r}" for n, r in pairs))


def expected_failures(spec: str, names: list[str]) -> set[str]:
    """The cases of @names that fail on @spec's kernel (the test's own
    line aside): none with the fix, the driver row's short-term verdicts
    without it, its long-term writable pin with the wrong fix (the row
    "driver", or "shadow" in names of the test before v4)."""
    variant = spec.rsplit(":", 1)[-1]
    if variant == "nofix":
        return {n for n in names if kselftest_paths.is_driver(n)}
    if variant == "wrongfix":
        return {n for n in names if tap.is_driver_case(n, ("longterm_write",))}
    return set()


def _outcome(spec: str) -> str:
    return {"nofix": "driver read/write fail (the bug), the rest pass",
            "wrongfix": "only the driver's long-term writable pin fails (wrong fix)",
            }.get(spec.rsplit(":", 1)[-1], "all pass")


def check_lava(t, job: str, spec: str, bug: bool) -> None:
    expect = "driver fails, controls pass" if bug else "all pass"
    failing = None
    if spec.startswith("source:"):
        # A tree's kernels: what each variant must fail, as the Linaro rows.
        expect = _outcome(spec)

        def failing(name: str) -> bool:
            return bool(expected_failures(spec, [name]))
    label = f"lava {job} on {spec}: per-case results, {expect}"
    exported = None
    try:
        # Two rows also export their job (lava_export_checks), the lab
        # job's given as a lab's own kernel and tarball.
        exported = lava_export_checks.plan(job, spec)
        if exported and exported.byo:
            label += " (as the lab's --kernel and --kselftest)"
        r, notes = lava.run_again_if_died(
            job, spec, _outdir(f"lava-{job}-{spec}"), _outdir(f"lava-{job}-{spec}-again"),
            export=exported.export if exported else None,
            byo=exported.byo if exported else None)
    except (RunnerError, OSError) as err:
        t.record(label, False, str(err))
        if exported:
            shutil.rmtree(exported.tmp, ignore_errors=True)
        return
    cases = r.ours()
    bad = lava.problems(r, bug, failing)
    lab = ""
    if job == "source-kselftest":
        exit_case = [c.result for c in cases if c.case == lava.EXIT_CASE]
        splat = [c.result for c in r.suite(lava.KERNEL_SUITE)]
        lab = (f"; exit-status case {'/'.join(exit_case) or 'missing'}, "
               f"{len(r.skipped_by_skipfile())} skipped by the SKIPFILE, "
               f"{lava.SPLAT_CASE} {'/'.join(splat) or 'missing'}")
    t.record(f"{label} ({len(cases)} cases{lab}, lava-run {r.seconds:.0f} s"
             f"{', ' + notes[0] if notes else ''})",
             not bad, "\n".join(bad + notes + [f"{c.definition}/{c.case}: {c.result}"
                                               for c in r.cases]))
    if exported:
        lava_export_checks.twin(t, r, exported)


# The negative control of the lab job's splat case: a WARNING header
# written to the kernel log (/dev/kmsg) by a step before the check.
SPLAT_INJECT = ("          - 'echo \"<4>WARNING: CPU: 0 PID: 1 at gupnm/negative-control\""
                " >/dev/kmsg'\n")


def check_lava_splat(t, spec: str = "source:debian-7.3:all") -> None:
    """The lab job on the fix with a WARNING line in the kernel log: LAVA's
    kernel-splats case must fail and `gupnm-run lava`'s judgement be exit 1."""
    label = (f"lava source-kselftest on {spec} with a WARNING written to /dev/kmsg: "
             f"{lava.KERNEL_SUITE}/{lava.SPLAT_CASE} fails, exit 1 (negative control)")

    def edit(text: str) -> str:
        if lava.SPLAT_STEP not in text:
            raise RunnerError(f"no step {lava.SPLAT_STEP.strip()!r} in the job")
        return text.replace(lava.SPLAT_STEP, SPLAT_INJECT + lava.SPLAT_STEP)
    try:
        r, notes = lava.run_again_if_died("source-kselftest", spec,
                                          _outdir(f"lava-splat-{spec}"),
                                          _outdir(f"lava-splat-{spec}-again"), edit)
    except (RunnerError, OSError) as err:
        t.record(label, False, str(err))
        return
    splat = [c.result for c in r.suite(lava.KERNEL_SUITE) if c.case == lava.SPLAT_CASE]
    code, problems, verdict = lab.judge_lava(r, r.release, [])
    bad = [] if splat == ["fail"] else [f"{lava.SPLAT_CASE}: {splat or 'missing'}"]
    if code != 1:
        bad.append(f"exit {code}, expected 1: {verdict}; " + "; ".join(problems))
    t.record(f"{label} (lava-run {r.seconds:.0f} s{', ' + notes[0] if notes else ''})",
             not bad, "\n".join(bad + [f"{c.definition}/{c.case}: {c.result}"
                                       for c in r.cases if "gup_null" in c.case
                                       or c.definition != "0_kselftest-mm"]))


def vm_checks(t) -> None:
    for spec in SOURCE_KERNELS:
        check_paths(t, spec)
    for spec in LINARO_KERNELS:
        for select in linaro.SELECTIONS:
            check_linaro(t, spec, select)
    own_kselftest.check_own(t)
    if lava.available():
        t.record("lava: lava-run available", False, lava.available())
        return
    for job, spec, bug in LAVA_RUNS:
        check_lava(t, job, spec, bug)
    check_lava_splat(t)


def main(argv: list[str] | None = None) -> int:
    from .tally import Tally
    ap = argparse.ArgumentParser(prog="gupnm.check.kselftest_checks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paths", action="store_true", help="only the kselftest paths")
    ap.add_argument("--lava", action="store_true", help="only the LAVA jobs")
    args = ap.parse_args(argv)
    t = Tally()
    if not args.lava:
        for spec in SOURCE_KERNELS:
            check_paths(t, spec)
        for spec in LINARO_KERNELS:
            for select in linaro.SELECTIONS:
                check_linaro(t, spec, select)
        own_kselftest.check_own(t)
    if not args.paths:
        host_checks(t)
        for job, spec, bug in LAVA_RUNS:
            check_lava(t, job, spec, bug)
        check_lava_splat(t)
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
