"""make check's block for issue 11: the kselftest paths and the LAVA jobs.

  make check-kselftest   run_tests, install, gen_tar on both source kernels
  make check-lava        the LAVA jobs validated and run with lava-run

Both are part of `make check` (checks.py calls host_checks() and
vm_checks()); alone: `cd runner && python3 -m gupnm.check.kselftest_checks
[--paths] [--lava]`.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..ci import kselftest_paths, lava
from ..host import REPO, RunnerError, progress

# Source kernels: each series applied, the fix in it (7.3 has it upstream).
# The upstream series' tree: 6.12's stable series is the fix alone, its
# tree has no gup_null_mapping.
SOURCE_KERNELS = ("source:debian-7.3:all",)
# LAVA: (job, kernel, has the bug)
LAVA_RUNS = (("debian-module", "debian:6.12", True),
             ("debian-module", "debian:7.3", False),
             ("source-kselftest", "source:debian-7.3:all", False))
LAVA_SUITE = {"debian-module": "gup_null_mapping",
              "source-kselftest": "kselftest-mm"}


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
    t.record(f"kselftest {spec}: the three paths give the same "
             f"{len(next(iter(sets.values()), ()))} flat result names, "
             f"gup_null_mapping's {ours} unique",
             same and ours > 0 and not any(kselftest_paths.tapflat.duplicates(
                 kselftest_paths.own_results(p.flat)) for p in o.paths.values()),
             "\n".join(f"{n}: {v}" for n, v in names.items()))


def check_lava(t, job: str, spec: str, bug: bool) -> None:
    expect = "shadow fails, controls pass" if bug else "all pass"
    label = f"lava {job} on {spec}: per-case results, {expect}"
    notes = []
    try:
        r = lava.run(job, spec, _outdir(f"lava-{job}-{spec}"))
        died = lava.died_before_user_space(r)
        if died:
            # The device has one boot try, as labs' do; a guest that never
            # reached /init proves nothing either way: once more, said so.
            notes.append(f"boot 1 died before /init ({died}): booted again")
            r = lava.run(job, spec, _outdir(f"lava-{job}-{spec}-again"))
    except (RunnerError, OSError) as err:
        t.record(label, False, str(err))
        return
    cases = r.suite(LAVA_SUITE[job])
    bad = lava.problems(r, LAVA_SUITE[job], bug)
    t.record(f"{label} ({len(cases)} cases, lava-run {r.seconds:.0f} s"
             f"{', ' + notes[0] if notes else ''})",
             not bad, "\n".join(bad + notes + [f"{c.case}: {c.result}" for c in cases]))


def vm_checks(t) -> None:
    for spec in SOURCE_KERNELS:
        check_paths(t, spec)
    if lava.available():
        t.record("lava: lava-run available", False, lava.available())
        return
    for job, spec, bug in LAVA_RUNS:
        check_lava(t, job, spec, bug)


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
    if not args.paths:
        host_checks(t)
        for job, spec, bug in LAVA_RUNS:
            check_lava(t, job, spec, bug)
    print(f"{t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
