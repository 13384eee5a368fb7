"""What `debian:` reaches, and a verdict on every kernel of it.

  gupnm-run kernels [--arch A] [--flavours F,..] [--json]   every kernel Debian offers
  gupnm-run survey  [--arch A] [--flavours F,..] [--series S,..] [--newest]

Each kernel gets the module's verdict where its headers are in the archive
and the module run judged it, else the module-free probe's (probe.py): the
row names the method and why. No kernel is left without a test.
"""
from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path

from .host import REPO, RunnerError, UsageError, progress
from .prepare import debian
from . import probe
from .parse import tap
from .report import expect, stats


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
    flavours = _flavours(args.flavours or debian.DEFAULT_FLAVOUR[args.arch])
    offers = [o for o in debian.catalogue(args.arch) if o.flavour in flavours]
    if args.json:
        print(json.dumps([o.to_json() for o in offers], indent=2))
        return 0
    rows = [[o.release, o.version, o.suite, o.layout,
             "yes" if o.headers else "no (the probe tests it)"] for o in offers]
    print(stats.format_table(rows, ["release", "package version", "suites",
                                    "layout", "headers"]))
    print(f"{len(offers)} kernels; debian:SERIES or debian:SUITE picks the newest "
          "with headers, debian:RELEASE an exact one; `survey` gives each a verdict")
    return 0


# The test's cells, by the letter a row's table gives each when GUP-fast
# took every page of it.
CELLS = (("read", "r"), ("write", "w"), ("longterm_write", "L"))
# What a failure of the driver row's read and write cells is: the bug
# itself (the row was "shadow" before v4 of the test, and is in the probe's
# table: names are compared as tap.canonical_case gives them).
BUG_CASES = {f"verdict_{tap.DRIVER}_read", f"verdict_{tap.DRIVER}_write"}


def fast_table(summary: dict) -> str | None:
    """The kernel's GUP-fast table as the test saw it, one word per backing
    in the test's order: r, w, L where GUP-fast took every page of the
    read, write or long-term write cell, - where it took none, ~ where some,
    ? where the cell was not judged (skipped); None without verdicts. The
    driver row by its name today (tap.row_name), whatever the log said."""
    got = {(tap.row_name(v["backing"]), v["access"]): v for v in summary.get("verdicts", [])}
    words = []
    for backing in dict.fromkeys(b for b, _ in got):
        cells = ""
        for access, letter in CELLS:
            v = got.get((backing, access))
            cells += ("?" if v is None or v["total"] <= 0 else letter
                      if v["fast"] == v["total"] else "-" if v["fast"] == 0 else "~")
        words.append(f"{backing} {cells}")
    return ", ".join(words) or None


def _row(o: debian.Offered, summary: dict | None, code: int | None,
         error: str = "") -> dict:
    """A module row: the run's summary.json (None: the run ended early)."""
    row = o.to_json()
    row.update({"method": "module", "verdict": None, "exit_status": code,
                "shadow": None, "ratio": None, "results": None,
                "bug_present": None, "error": error or None})
    if summary is None:
        row["verdict"] = f"error: {error}"
        return row
    row["verdict"] = summary.get("verdict")
    row["bug_present"] = summary.get("bug_present")
    row["table"] = fast_table(summary)
    row["other_failures"] = sorted(c["name"] for c in summary.get("cases", [])
                                   if c["status"] == "fail"
                                   and tap.canonical_case(c["name"]) not in BUG_CASES)
    # The driver row's write verdict (the key keeps the row's old name).
    for v in summary.get("verdicts", []):
        if tap.row_name(v["backing"]) == tap.DRIVER and v["access"] == "write":
            row["shadow"] = f"{v['fast']}/{v['total']}"
    ratios = [r.get("shadow_anon_ratio") for r in summary.get("bench_ratio", [])]
    ratios = [r for r in ratios if r]
    row["ratio"] = round(ratios[0], 2) if ratios else None
    return row


def _probe_row(row: dict, res: probe.ProbeResult, outdir: Path) -> dict:
    """@row (a module row or a bare offer) turned into the probe's."""
    row.update({"method": probe.METHOD, "exit_status": probe.exit_code(res),
                "bug_present": res.bug_present, "verdict": probe.verdict_line(res),
                "ratio": round(res.cost["ratio"], 2) if res.cost else None,
                "shadow": None, "results": str(outdir),
                "error": "; ".join(res.errors) or None})
    # The probe's table (-t) reads like the module's: its cases are named
    # table_<backing>_<access> where the test's are verdict_<...>.
    row["table"] = fast_table({"verdicts": res.table})
    row["other_failures"] = sorted(
        r["name"] for r in res.results if r["status"] == "fail"
        and r["name"].startswith("table_")
        and tap.canonical_case(r["name"].replace("table_", "verdict_", 1)) not in BUG_CASES)
    slow = sum(1 for v in res.verdicts.values() if v["slow"])
    row["evidence"] = (f"{slow}/{len(res.verdicts)} producers slow"
                       if res.verdicts else None)
    return row


def survey_one(o: debian.Offered, run_module, run_probe) -> dict:
    """One kernel's row: the module where its headers are in the archive and
    the run judged the kernel (exit 0 or 1 with a driver verdict), else the
    probe, with the reason (no headers; the module's build or run failed:
    its first line)."""
    t0 = time.monotonic()
    why = "no headers in the archive: the module cannot be built"
    module = None
    if o.headers:
        try:
            out = run_module(o)
            module = _row(o, out.summary, out.exit_code)
            module["results"] = str(out.outdir)
            module["evidence"] = f"{tap.DRIVER} {module['shadow']} fast" \
                if module["shadow"] else None
            if out.exit_code in (0, 1) and module["bug_present"] is not None:
                module.update(method_reason="module: the headers are in the archive",
                              seconds=round(time.monotonic() - t0, 1))
                return module
            problems = (out.summary or {}).get("problems") or [
                f"no {tap.DRIVER} verdict: {module['verdict']}"]
            why = f"the module run could not judge it (exit {out.exit_code}: {problems[0]})"
        except RunnerError as err:
            why = f"the module could not be used: {one_line(err)}"
    row = o.to_json()
    row["module_exit_status"] = module["exit_status"] if module else None
    row["method_reason"] = f"probe: {why}"
    try:
        res, outdir = run_probe(o)
        _probe_row(row, res, outdir)
    except RunnerError as err:
        row.update(method=probe.METHOD, exit_status=probe.EXIT_INFRA,
                   bug_present=None, verdict=f"error: {str(err).splitlines()[0]}",
                   ratio=None, shadow=None, evidence=None, results=None,
                   error=str(err).splitlines()[0])
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def one_line(err: Exception) -> str:
    """An error on one line: its first, and its last when the first only
    announces what follows ("apt-get download ... failed (exit 100):")."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    if not lines:
        return type(err).__name__
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[-1]}"
    return lines[0]


def _judged(row: dict, exp: expect.Expectations | None = None) -> dict:
    """What the row's kernel is expected to carry (@exp: --expect FILE or
    runner/expectations/debian.txt), the rule that says it, and whether the
    verdict agrees."""
    exp = exp or expect.default()
    row["expected_bug"], row["expected_by"] = expect.expects_bug(exp, row["release"])
    row["agrees"] = (None if row["bug_present"] is None
                     else row["bug_present"] == row["expected_bug"])
    return row


def _word(row: dict) -> str:
    word = {True: "FAIL: bug present", False: "PASS: no bug",
            None: row["verdict"] or "no verdict"}[row["bug_present"]]
    if row.get("agrees") is False:
        word += " (MISMATCH: expected " + ("the bug" if row["expected_bug"] else "no bug") \
            + f", {row.get('expected_by') or 'no rule: pass'})"
    if row.get("other_failures"):
        word += "; also failed: " + ", ".join(row["other_failures"])
    return word


def table(rows: list[dict]) -> str:
    cells = [[r["series"], r["release"], r["suites"][0] if r["suites"] else "",
              r["version"], r["method"], r.get("evidence") or "-",
              r.get("table") or "-",
              f"{r['ratio']:.2f}" if r["ratio"] else "-", _word(r)] for r in rows]
    return stats.format_table(cells, ["series", "release", "suite", "package",
                                      "method", "evidence", "GUP-fast table", "ratio",
                                      "verdict"])


def exit_status(rows: list[dict]) -> int:
    """3 when a row has no verdict, 1 when a verdict contradicts what its
    series carries, else 0 (a kernel with the bug is a finding, not a
    failure of the survey)."""
    if any(r["bug_present"] is None for r in rows):
        return 3
    return 1 if any(r.get("agrees") is False for r in rows) else 0


def pick(args) -> list[debian.Offered]:
    """Every kernel of --arch and --flavours (--series: only those; --newest:
    only the newest release of each series), oldest first."""
    flavours = _flavours(args.flavours or debian.DEFAULT_FLAVOUR[args.arch])
    offers = [o for o in debian.catalogue(args.arch) if o.flavour in flavours]
    if args.series:
        wanted = [s.strip() for s in args.series.split(",") if s.strip()]
        offers = [o for o in offers if o.series in wanted]
    if args.newest:
        offers = newest_per_series(offers, flavours)
    if not offers:
        raise UsageError(f"no {args.arch} kernel matches --flavours "
                         f"{','.join(flavours)} --series {args.series or 'any'}: "
                         f"list them with runner/gupnm-run kernels --arch {args.arch}")
    return offers


def _runners(args, run_one, outdir: Path):
    def run_module(o):
        progress(f"survey: {o.release} ({o.suite}), the module")
        return run_one(f"debian:{o.release}", args, outdir / _dirname(o.release))

    def run_probe(o):
        progress(f"survey: {o.release} ({o.suite}), the probe")
        release, image, source = probe.fetch_image(f"debian:{o.release}", args.arch)
        sub = outdir / (_dirname(o.release) + "-probe")
        sub.mkdir(parents=True, exist_ok=True)
        res, where, notes = probe.run_guest(image, sub, [], timeout=min(args.timeout, 120),
                                            retries=args.retries, arch=args.arch)
        probe.write_reports(sub, probe.summary(
            f"debian:{o.release}", res, where=where, why="make survey",
            release=release, source=source, notes=notes))
        return res, sub
    return run_module, run_probe


def _dirname(release: str) -> str:
    return release.replace("+", "_")


def cmd_survey(args, run_one) -> int:
    """Every Debian kernel of --arch: a row each, its method named;
    survey.json and survey.txt in the results folder."""
    picked = pick(args)
    exp = getattr(args, "expect", None) or expect.default()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    outdir = args.results or REPO / "results" / f"survey-{args.arch}-{stamp}"
    outdir.mkdir(parents=True, exist_ok=True)
    run_module, run_probe = _runners(args, run_one, outdir)
    t0 = time.monotonic()
    rows = []
    for i, o in enumerate(picked, 1):
        progress(f"survey: kernel {i}/{len(picked)}")
        rows.append(_judged(survey_one(o, run_module, run_probe), exp))
        _write(outdir, stamp, args, rows, time.monotonic() - t0)
    human = sys.stderr if args.json else sys.stdout     # --json: stdout is JSON only
    print(table(rows), file=human)
    code = exit_status(rows)
    methods = {m: sum(r["method"] == m for r in rows) for m in ("module", probe.METHOD)}
    print(f"{len(rows)} {args.arch} kernels ({methods['module']} module, "
          f"{methods[probe.METHOD]} probe) in {time.monotonic() - t0:.0f} s; "
          f"results: {outdir}/survey.json; exit {code}", file=human)
    if args.json:
        print(json.dumps(document(stamp, args, rows, time.monotonic() - t0), indent=2))
        args.printed_json = True
    return code


def document(stamp: str, args, rows: list[dict], seconds: float) -> dict:
    """survey.json's content, which --json prints."""
    return {"date": stamp, "arch": args.arch, "flavours": args.flavours,
            "seconds": round(seconds), "load_average": list(os.getloadavg()),
            "kernels": rows}


def _write(outdir: Path, stamp: str, args, rows: list[dict], seconds: float) -> None:
    """survey.json and survey.txt, rewritten after every kernel."""
    (outdir / "survey.json").write_text(json.dumps(
        document(stamp, args, rows, seconds), indent=2) + "\n")
    (outdir / "survey.txt").write_text(table(rows) + "\n")


def add_parsers(sub, vm_args_adder, run_one) -> None:
    p = sub.add_parser("kernels", help="list the Debian kernels debian: reaches")
    p.add_argument("--arch", choices=("amd64", "arm64"), default="amd64")
    p.add_argument("--flavours", default=None,
                   help="comma-separated flavours (default: the arch's plain one; "
                   "amd64, cloud-amd64, rt-amd64, arm64, arm64-16k, ...)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_kernels)
    p = sub.add_parser("survey", help="a verdict on every Debian kernel of "
                       "--arch, the module's or the probe's (make survey)")
    p.add_argument("--flavours", default=None,
                   help="comma-separated flavours (default: the arch's plain one)")
    p.add_argument("--series", default="", metavar="S,..",
                   help="only these series, e.g. 6.1,7.3")
    p.add_argument("--newest", action="store_true",
                   help="only the newest release of each series")
    p.add_argument("--expect", type=expect.arg, default=None, metavar="FILE",
                   help="what each kernel is expected to carry (default "
                   "runner/expectations/debian.txt; docs/expectations.md)")
    vm_args_adder(p)
    p.set_defaults(func=lambda args: cmd_survey(args, run_one))
