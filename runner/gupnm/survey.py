"""What `debian:` reaches, and the verdict on the newest kernel of each series.

  gupnm-run kernels [--flavours F,..] [--json]   every kernel Debian offers
  gupnm-run survey  [--flavours F,..] [--json]   run the newest of each series

A kernel whose headers are no longer in the archive is listed as such (no
module can be built for it), never dropped.
"""
from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

from .host import REPO, RunnerError, UsageError, progress
from .prepare import debian
from .report import stats


def _flavours(text: str) -> list[str]:
    out = [f.strip() for f in text.split(",") if f.strip()]
    if not out:
        raise UsageError("--flavours needs at least one flavour, e.g. amd64")
    return out


def newest_per_series(offers: list[debian.Offered],
                      flavours: list[str]) -> list[debian.Offered]:
    """The newest release of every (series, flavour), preferring one whose
    headers are in the archive only when it is also the newest with them."""
    best: dict[tuple[str, str], debian.Offered] = {}
    for o in offers:                     # oldest first: the last one wins
        if o.flavour in flavours:
            best[(o.series, o.flavour)] = o
    return sorted(best.values(), key=lambda o: (debian.version_key(o.series),
                                                flavours.index(o.flavour)))


def cmd_kernels(args) -> int:
    flavours = _flavours(args.flavours)
    offers = [o for o in debian.catalogue() if o.flavour in flavours]
    if args.json:
        print(json.dumps([o.to_json() for o in offers], indent=2))
        return 0
    rows = [[o.release, o.version, o.suite, o.layout,
             "yes" if o.headers else "no (cannot be tested)"] for o in offers]
    print(stats.format_table(rows, ["release", "package version", "suites",
                                    "layout", "headers"]))
    print(f"{len(offers)} kernels; debian:SERIES or debian:SUITE picks the newest "
          "with headers, debian:RELEASE an exact one")
    return 0


def _row(o: debian.Offered, summary: dict | None, code: int | None,
         error: str = "") -> dict:
    row = o.to_json()
    row.update({"verdict": None, "exit_status": code, "shadow": None,
                "ratio": None, "results": None, "error": error or None})
    if summary is None:
        row["verdict"] = "untested: no headers in the archive" if not o.headers \
            else f"error: {error}"
        return row
    row["verdict"] = summary.get("verdict")
    for v in summary.get("verdicts", []):
        if v["backing"] == "shadow" and v["access"] == "write":
            row["shadow"] = f"{v['fast']}/{v['total']}"
    ratios = [r.get("shadow_anon_ratio") for r in summary.get("bench_ratio", [])]
    ratios = [r for r in ratios if r]
    row["ratio"] = round(ratios[0], 2) if ratios else None
    return row


def cmd_survey(args, run_one, vm_args) -> int:
    """Run the newest kernel of every series; table + survey.json."""
    flavours = _flavours(args.flavours)
    picked = newest_per_series(debian.catalogue(), flavours)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = args.results or REPO / "results" / f"survey-{stamp}"
    outdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for o in picked:
        if not o.headers:
            progress(f"{o.release}: no headers in the archive, not tested")
            rows.append(_row(o, None, None))
            continue
        progress(f"survey: {o.release} ({o.suite})")
        try:
            out = run_one(f"debian:{o.release}", vm_args,
                          outdir / o.release.replace("+", "_"))
            rows.append(_row(o, out.summary, out.exit_code))
            rows[-1]["results"] = str(out.outdir)
        except RunnerError as err:
            rows.append(_row(o, None, None, str(err).splitlines()[0]))
    (outdir / "survey.json").write_text(json.dumps(
        {"date": stamp, "flavours": flavours, "kernels": rows}, indent=2) + "\n")
    table = [[r["series"], r["release"], r["suites"][0] if r["suites"] else "",
              r["version"], r["shadow"] or "-",
              f"{r['ratio']:.2f}" if r["ratio"] else "-", r["verdict"]]
             for r in rows]
    text = stats.format_table(table, ["series", "release", "suite", "package",
                                      "shadow fast", "shadow/anon", "verdict"])
    (outdir / "survey.txt").write_text(text + "\n")
    print(text)
    print(f"results: {outdir}/survey.json")
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    tested = [r for r in rows if r["exit_status"] is not None]
    # The survey ran when every kernel with headers gave a verdict; a kernel
    # that carries the regression is a finding, not a failure of the survey.
    return 0 if all(r["exit_status"] in (0, 1) for r in tested) else 3


def add_parsers(sub, vm_args_adder, run_one) -> None:
    p = sub.add_parser("kernels", help="list the Debian kernels debian: reaches")
    p.add_argument("--flavours", default="amd64",
                   help="comma-separated flavours (amd64, cloud-amd64, rt-amd64)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_kernels)
    p = sub.add_parser("survey", help="the verdict on the newest Debian kernel "
                       "of every series (make survey)")
    p.add_argument("--flavours", default="amd64",
                   help="comma-separated flavours (amd64, cloud-amd64, rt-amd64)")
    vm_args_adder(p)
    p.set_defaults(func=lambda args: cmd_survey(args, run_one, args))
