"""gupnm: boot a kernel in QEMU, run gup_null_mapping, report verdict and cost.

  gupnm run [--kernel SPEC] ...        one kernel (default debian:6.12)
  gupnm compare [--a SPEC] [--b SPEC]  the benchmark on two kernels, and a plot
  gupnm parse FILE                     verdict of a saved console log or TAP

Exit status of run: the test's own (0 pass, 1 fail, 4 skip); 1 as well when
the kernel reported a splat (Oops, WARNING, BUG, KASAN, ...); 3 when the VM
died or timed out before the test ended; 2 for bad usage.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from . import console, kernels, results, stats, tap, vmrun
from .host import REPO, RunnerError, UsageError, ensure_tools, progress

DEFAULT_KERNEL = "debian:6.12"


def _vm_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", choices=("default", "debug"), default="default",
                   help="config variant of a source kernel (debug: KASAN, "
                   "lockdep, DEBUG_VM, kmemleak, ...)")
    p.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                   help="auto uses KVM only when a probe boot works")
    p.add_argument("--vcpus", type=_positive, default=2)
    p.add_argument("--memory", type=_positive, default=1024, metavar="MiB")
    p.add_argument("--append", default="", help="extra kernel command line")
    p.add_argument("--timeout", type=_positive, default=300, metavar="S",
                   help="global VM timeout in seconds (default 300)")
    p.add_argument("--retries", type=_count, default=2,
                   help="reboots allowed when the guest dies before the test")
    p.add_argument("--test-args", default="",
                   help="arguments of gup_null_mapping, e.g. '-p 512 -r 5 1 2'")
    p.add_argument("--results", type=Path, default=None, metavar="DIR",
                   help="results directory (default results/<time>-<kernel>)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be positive")
    return value


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
                           timeout=args.timeout, test_args=args.test_args,
                           retries=args.retries,
                           kmemleak=args.config == "debug")


def _results_dir(args, spec: str) -> Path:
    if args.results:
        return args.results
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return REPO / "results" / f"{stamp}-{vmrun._slug(spec)}"


def run_one(spec: str, args, outdir: Path):
    """Prepare @spec and run the test (directly when args.test_args is set,
    else through run_vmtests.sh where the tree has it)."""
    ensure_tools(source_build=spec.startswith("source:"))
    t0 = time.monotonic()
    prep = kernels.prepare(spec, variant=args.config)
    prepare_s = time.monotonic() - t0
    return vmrun.run(prep, _options(args), outdir,
                     durations={"prepare": prepare_s})


def report(out: vmrun.RunOutcome, *, show_tap: bool = True) -> None:
    s = out.summary
    if show_tap and out.tap_text:
        sys.stdout.write(out.tap_text)
    print("=" * 72)
    print(f"kernel:  {s['kernel']['release']} ({s['spec']})")
    print(f"vm:      {s['vm']['accel']} ({s['accel_reason']}), "
          f"{s['vm']['vcpus']} vCPUs, {s['vm']['memory_mb']} MiB"
          + (f", {s['boot_attempts']} boots" if s['boot_attempts'] > 1 else ""))
    print(f"test:    {s['command']}")
    print(f"verdict: {s['verdict']}")
    if s["bench"]:
        rows = [[b["threads"], b["backing"], b["min"], b["median"], b["max"]]
                for b in s["bench"]]
        print("bench:   pin_user_pages_fast(FOLL_WRITE), ns/page")
        print(stats.format_table(rows, ["threads", "backing", "min", "median", "max"]))
        for sp in s["bench_speedup"]:
            if sp.get("speedup") is not None:
                print(f"         {sp['threads']} thread(s): shadow/anon = "
                      f"{sp['speedup']:.2f}")
    for sp in s["splats"]:
        print(f"SPLAT ({sp['kind']}) at console line {sp['line']}:")
        print("    " + sp["excerpt"].replace("\n", "\n    "))
    for problem in s.get("problems", []):
        print(f"PROBLEM: {problem}")
    for note in s.get("notes", []):
        print(f"note:    {note}")
    d = s["durations"]
    parts = [f"{k} {v:.1f}s" for k, v in d.items()]
    print("time:    " + ", ".join(parts))
    print(f"results: {out.outdir}")
    print(f"exit:    {out.exit_code}")


def cmd_run(args) -> int:
    spec = args.kernel
    out = run_one(spec, args, _results_dir(args, spec))
    report(out)
    return out.exit_code


def cmd_compare(args) -> int:
    base = args.results or (REPO / "results" /
                            f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-compare")
    runs = []
    for label, spec in (("a", args.a), ("b", args.b)):
        progress(f"compare: kernel {label.upper()} = {spec}")
        out = run_one(spec, args, base / label)
        report(out, show_tap=False)
        if not out.summary["bench"]:
            raise RunnerError(f"kernel {spec} produced no benchmark table "
                              f"(exit {out.exit_code}); see {out.outdir}")
        runs.append(out)
    rows = results.compare(runs[0].summary, runs[1].summary)
    table = results.format_compare(rows, "A", "B")
    text = (f"A = {args.a} ({runs[0].summary['kernel']['release']})\n"
            f"B = {args.b} ({runs[1].summary['kernel']['release']})\n"
            "median ns/page of pin_user_pages_fast(FOLL_WRITE); "
            "speedup = A shadow / B shadow\n" + table + "\n")
    print(text, end="")
    (base / "compare.txt").write_text(text)
    (base / "compare.json").write_text(json.dumps(rows, indent=2) + "\n")
    png = plot(rows, base, args.a, args.b)
    print(f"plot:    {png}" if png else "plot:    skipped (gnuplot missing)")
    return 0


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
    esc = lambda s: s.replace('"', "'")  # noqa: E731
    script = f"""
set terminal pngcairo size 900,560 noenhanced
set output "{png}"
set title "pin_user_pages_fast(FOLL_WRITE): median ns/page"
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


def cmd_parse(args) -> int:
    try:
        text = args.file.read_text(errors="replace")
    except OSError as err:
        raise UsageError(f"cannot read {args.file}: {err.strerror}") from None
    if vmrun.START_MARKER in text:
        text = text[text.index(vmrun.START_MARKER) + len(vmrun.START_MARKER):]
    if "# running ./gup_null_mapping" in text:
        text = vmrun.unnest_run_vmtests(text)
    parsed = tap.parse_tap(text.splitlines())
    splats = console.find_splats(args.file.read_text(errors="replace"))
    print(f"verdict: {tap.summarize(parsed)}")
    c = tap.counts(parsed)
    print("counts:  " + ", ".join(f"{k} {v}" for k, v in c.items()))
    for sp in splats:
        print(f"SPLAT ({sp.kind}) at line {sp.line_no}")
    for err in parsed.errors:
        print(f"TAP problem: {err}")
    if splats or tap.failed_results(parsed) or parsed.errors:
        return 1
    return 4 if parsed.skipped else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gupnm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="run the test on one kernel",
                       description=kernels.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernel", default=DEFAULT_KERNEL, metavar="SPEC",
                   help=f"kernel to test (default {DEFAULT_KERNEL})")
    _vm_args(p)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("compare", help="benchmark two kernels side by side",
                       description=kernels.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", default="source:debian-6.12:nofix", metavar="SPEC")
    p.add_argument("--b", default="source:debian-6.12:all", metavar="SPEC")
    _vm_args(p)
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("parse", help="verdict of a saved console log or TAP file")
    p.add_argument("file", type=Path)
    p.set_defaults(func=cmd_parse)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RunnerError as err:
        print(f"gupnm: error: {err}", file=sys.stderr)
        return vmrun.EXIT_USAGE if isinstance(err, UsageError) else vmrun.EXIT_INFRA
    except KeyboardInterrupt:
        print("gupnm: interrupted", file=sys.stderr)
        return 130
