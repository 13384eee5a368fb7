"""make check-kernelci-arm64: KernelCI's kselftest-mm budget on arm64.

One guest per row (ci/kernelci.py): a Debian arm64 kernel under
qemu-system-aarch64 TCG with KernelCI's kselftest-mm command line
(`secretmem.enable kpti=off`), the upstream series' 7.3 tarball
cross-built for arm64, `run_kselftest.sh -t mm:ksft_gup_test.sh` with
VM_SELFTEST_ITEMS unset, the QEMU run killed at 600 s (KernelCI's
10-minute job timeout). Per row: boot to result within the budget (the
figure recorded), secretmem.enable on the command line the kernel saw, the
release booted, gup_null_mapping's verdicts as the kernel calls for.

Rows: Debian's 7.3 has the fix (every verdict passes); Debian's 6.12 does
not, and its own tree has no gup_null_mapping, so the negative control is
the same 7.3 tarball on the 6.12 kernel, as a lab running a newer kselftest
on an older kernel does: the driver row's short-term verdicts must fail,
the rest pass.

Alone: `cd runner && python3 -m gupnm.check.kernelci_checks`.
"""
from __future__ import annotations

import argparse
import sys
import time

from ..ci import kernelci
from ..host import REPO, RunnerError, progress

# (spec, the kernel lacks the fix)
ROWS = (("debian:7.3", False), ("debian:6.12", True))


def _outdir(spec: str):
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return REPO / "results" / f"{stamp}-kernelci-arm64-{spec.replace(':', '-')}"


def check_row(t, spec: str, bug: bool, built=None,
              budget: float = kernelci.JOB_TIMEOUT_S) -> float | None:
    """One row into Tally @t; returns its boot-to-result seconds."""
    label = f"kernelci arm64 {spec}"
    try:
        out = _outdir(spec)
        o, notes = kernelci.run_again_if_died(spec, out, out.with_name(out.name + "-again"),
                                              built, budget)
    except (RunnerError, OSError) as err:
        t.record(f"{label}: guest with run_kselftest.sh", False, str(err))
        return None
    label += f" ({notes[0]})" if notes else ""
    progress(f"{label}: boot to result {o.wall_seconds:.1f} s "
             f"(run_kselftest.sh {o.path.seconds if o.path else None} s)")
    t.record(f"{label}: no result before the {o.budget:.0f} s job timeout "
             "(QEMU killed)" if o.timed_out else
             f"{label}: boot to result {o.wall_seconds:.0f} s, within the "
             f"{o.budget:.0f} s job timeout",
             not o.timed_out and o.wall_seconds < o.budget,
             f"{o.wall_seconds:.1f} s; console, status and kernelci.json in {o.outdir}")
    t.record(f"{label}: secretmem.enable on the kernel command line",
             kernelci.has_secretmem(o.cmdline), f"Kernel command line: {o.cmdline}")
    t.record(f"{label}: the guest booted {o.release}", o.booted == o.release,
             f"booted: {o.booted}")
    bad = kernelci.problems(o, bug)
    flat = o.path.flat if o.path else []
    verdicts = [f for f in flat if "_verdict_" in f.name]
    failed = sorted(f.name for f in verdicts if f.result != "pass")
    want = ("the driver's short-term verdicts fail (no fix), the rest pass" if bug
            else "all pass (fix)")
    t.record(f"{label}: {o.wrapper}: {len(verdicts)} verdicts of gup_null_mapping, "
             f"{want}; failing: {len(failed)}",
             not bad and bool(verdicts),
             "\n".join(bad) + "\n--- output ---\n"
             + (o.path.text if o.path else o.console)[-3000:])
    return o.wall_seconds


def check(t, budget: float = kernelci.JOB_TIMEOUT_S) -> dict[str, float | None]:
    """Every row; the tarball built once for both."""
    try:
        built = kernelci.tarball()
    except (RunnerError, OSError) as err:
        t.record("kernelci arm64: the 7.3 kselftest tarball cross-built for arm64",
                 False, str(err))
        return {}
    return {spec: check_row(t, spec, bug, built, budget) for spec, bug in ROWS}


def main(argv: list[str] | None = None) -> int:
    from .tally import Tally
    ap = argparse.ArgumentParser(prog="gupnm.check.kernelci_checks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=float, default=kernelci.JOB_TIMEOUT_S,
                    metavar="SECONDS", help="kill QEMU after SECONDS (default: "
                    "KernelCI's 600; a few seconds shows the budget enforced: "
                    "every row then fails)")
    args = ap.parse_args(argv)
    if args.budget <= 0:
        ap.error(f"--budget {args.budget:g}: give a positive number of seconds")
    t = Tally()
    times = check(t, args.budget)
    for spec, secs in times.items():
        print(f"# {spec}: boot to result "
              + (f"{secs:.1f} s" if secs is not None else "none"))
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
