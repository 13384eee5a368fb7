"""The verified matrix: the expected verdict on real kernels.

Each kernel is run once in a VM; every expectation about that run is one
counted check, so a wrong verdict, a crashed guest, a splat or a missing
control each fail by name. `assertions()` is pure (summary + TAP text in,
checks out) so it is unit-tested without a VM.
"""
from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

from ..host import REPO, RunnerError
from ..parse import tap

BUG_MESSAGE = "GUP-fast rejects NULL-mapping order-0 folios"

# spec, expected outcome: "pass" (GUP-fast takes NULL-mapping folios, the
# long-term writable pin does not), "bug" (the regression: the driver's
# pages refused), "wrongfix" (a fix that lets long-term writable pins through
# GUP-fast too), "pre65" (a kernel before 6.5: no regression, and the
# long-term writable pin goes through GUP-fast by that kernel's design: the
# test fails that case, the runner marks it XFAIL). Every row with "bug" or
# "wrongfix" is a negative control.
MATRIX = [
    ("debian:6.1", "pre65"),
    ("debian:6.12", "bug"),
    ("debian:7.3", "pass"),
    ("source:debian-6.12:nofix", "bug"),
    ("source:debian-6.12:all", "pass"),
    ("source:debian-6.12:wrongfix", "wrongfix"),
    ("source:debian-7.3:all", "pass"),
    ("source:debian-7.3:nofix", "bug"),
    ("source:debian-7.3:wrongfix", "wrongfix"),
]
DEBUG_MATRIX = [
    ("source:debian-6.12:nofix", "bug"),
    ("source:debian-6.12:all", "pass"),
]
DEBUG_TEST_ARGS = "-B"
# The stress program (hardening/gupnm_stress) runs after the test on every
# build of the driver: malformed inputs and teardown races, 1000 iterations
# on debug kernels, where page_owner then finds any page reference it
# leaked. A source tree's negative controls (:nofix, :wrongfix, mutants)
# change mm/gup.c only: their driver is the :all kernel's, stressed there.
STRESS_ARGS = {"default": "", "debug": "-p 32 -R 1000"}
# MemFree after rmmod may trail MemFree before modprobe by this much: slab
# caches grown by the test stay; KASAN's quarantine holds freed objects on
# debug kernels. Page references are proven by page_owner, not by this.
MEMFREE_TOLERANCE_KB = {"default": 16 * 1024, "debug": 64 * 1024}
# The rows of gup_fast_folio_allowed()'s table other than the driver's: read and
# write (FOLL_PIN, FOLL_PIN|FOLL_WRITE) of each, then its long-term
# writable pin (FOLL_PIN|FOLL_LONGTERM|FOLL_WRITE; "expected": file's is
# slow since 6.5, fast before, which the runner marks XFAIL).
CONTROLS = [("anon", "all"), ("thp", "all"), ("hugetlb", "all"), ("memfd", "all"),
            ("file", "all"), ("secretmem", "none")]
LONGTERM = {"anon": "all", "thp": "all", "hugetlb": "all", "memfd": "all",
            "file": "expected", "secretmem": "none"}
WRONGFIX_MESSAGE = ("FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went "
                    "through GUP-fast")
SECRETMEM_MESSAGE = "secretmem exposure"
# Result names of the test: verdict_<backing>_<case>. The driver row,
# gup_test's own pages, was "shadow" before v4 of the test: summaries of
# either are read by today's names (tap.row_name, tap.canonical_case).
DRIVER = tap.DRIVER
BACKINGS = ("anon", "thp", "hugetlb", "memfd", "file", DRIVER, "secretmem")
CASES = ("read", "write", "longterm_write")


def _case(summary: dict, name: str) -> str | None:
    for case in summary.get("cases", []):
        if tap.canonical_case(case["name"]) == name:
            return case["status"]
    return None


def _verdict(summary: dict, backing: str, access: str) -> dict | None:
    for v in summary.get("verdicts", []):
        if tap.row_name(v["backing"]) == backing and v["access"] == access:
            return v
    return None


def _case_names(summary: dict, status: str | None = None) -> set[str]:
    """The result names of @summary (with @status), by today's names."""
    return {tap.canonical_case(c["name"]) for c in summary.get("cases", [])
            if status is None or c["status"] == status}


def _built_in(summary: dict) -> bool:
    """gup_test built into the kernel (v4 of the series on a source tree):
    no module to load or unload."""
    served = summary.get("gup_test") or {}
    source = (summary.get("kernel") or {}).get("source") or {}
    return (served.get("kind") or source.get("gup_test")) == "built in"


def _fast_is(summary: dict, backing: str, want: str,
             accesses=("read", "write")) -> tuple[bool, str]:
    """@want: "all" (N/N), "none" (0/N) or "expected" (what the test
    derived from the kernel, e.g. long-term pins fast before 6.5)."""
    got = []
    ok = True
    for access in accesses:
        v = _verdict(summary, backing, access)
        if v is None:
            return False, f"no verdict line for {backing} {access}"
        tries = f" ({v['tries']} tries)" if v.get("tries", 1) > 1 else ""
        got.append(f"{access} {v['fast']}/{v['total']} (expected "
                   f"{v['expected']}){tries}")
        target = {"all": v["total"], "none": 0, "expected": v["expected"]}[want]
        ok &= v["total"] > 0 and v["fast"] == target
    return ok, ", ".join(got)


class _Checks(list):
    """(name, ok, detail) of expectations about one run, in order."""

    def check(self, name: str, ok, detail: str = "") -> None:
        self.append((name, bool(ok), detail))


def assertions(summary: dict, tap_text: str, expect: str = "", *,
               debug: bool = False, bug: bool | None = None,
               unjudged: dict[str, str] | None = None
               ) -> list[tuple[str, bool, str]]:
    """(name, ok, detail) of every expectation about one run; @expect is
    "pass", "bug" (the regression: the driver's pages refused) or "wrongfix" (a
    long-term writable pin through GUP-fast on a 6.5+ kernel), see MATRIX;
    bug=True/False is the older spelling of "bug"/"pass"; @unjudged: the
    cells the kernel's config hides (name -> what the skip must say)."""
    if not expect:
        expect = "bug" if bug else "pass"
    if expect not in ("pass", "bug", "wrongfix", "pre65"):
        raise ValueError(f"expect must be pass, bug, wrongfix or pre65, not {expect!r}")
    out = _Checks()
    _check_ran(out, summary)
    if not summary.get("cases"):
        # No result at all: the checks above say why; the per-case ones
        # would only repeat it.
        out.check("the test printed results", False,
                  summary.get("verdict") or "no TAP output")
        return list(out)
    _check_driver(out, summary, tap_text, expect)
    _check_controls(out, summary, unjudged)
    _check_every_case(out, summary, expect, unjudged)
    _check_after_the_test(out, summary, expect, debug)
    return list(out)


def _check_ran(out: _Checks, summary: dict) -> None:
    """The guest ran the test to its end, and the kernel did not complain."""
    problems = summary.get("problems", [])
    out.check("the guest ran the test to the end", not problems and
              summary.get("exit_status") is not None, "; ".join(problems))
    splats = summary.get("splats", [])
    out.check("no kernel splat (panic, Oops, BUG, WARNING, KASAN, lockdep, "
              "kmemleak, leak)", not splats,
              "\n".join(f"{s['kind']}: {s['excerpt']}" for s in splats))


def _check_driver(out: _Checks, summary: dict, tap_text: str, expect: str) -> None:
    """The driver's pages (gup_test's, NULL ->mapping): read/write, a plain
    pin, and the long-term pin as @expect calls for."""
    bug = expect == "bug"
    lt_case = f"verdict_{DRIVER}_longterm_write"
    ok, got = _fast_is(summary, DRIVER, "none" if bug else "all")
    out.check(f"{DRIVER} read/write via GUP-fast: {'0/N (bug present)' if bug else 'N/N'}",
              ok, got)
    if bug:
        out.check(f"the failure names the bug ('{BUG_MESSAGE}')",
                  BUG_MESSAGE in tap_text and
                  _case(summary, f"verdict_{DRIVER}_read") == "fail", "")
    if expect == "wrongfix":
        v = _verdict(summary, DRIVER, "longterm_write") or {}
        out.check(f"the long-term writable pin of the {DRIVER}'s pages went through "
                  "GUP-fast (the wrong fix)", v and v["expected"] == 0 and
                  v["fast"] == v["total"] > 0, str(v))
        out.check(f"the failure names the wrong fix ('{WRONGFIX_MESSAGE}')",
                  WRONGFIX_MESSAGE in tap_text and _case(summary, lt_case) == "fail" and
                  summary.get("diagnosis", "wrongfix") == "wrongfix",
                  f"diagnosis: {summary.get('diagnosis')}")
    elif expect == "pre65":
        ok, got = _fast_is(summary, DRIVER, "all", ("longterm_write",))
        out.check(f"before 6.5: the long-term writable pin of the {DRIVER}'s pages went "
                  "through GUP-fast, and the runner marked that XFAIL",
                  ok and _case(summary, lt_case) == "xfail", got)
    else:
        ok, got = _fast_is(summary, DRIVER, "expected", ("longterm_write",))
        out.check(f"the long-term writable pin of the {DRIVER}'s pages took the path the "
                  "kernel version calls for (slow since 6.5)",
                  ok and _case(summary, lt_case) == "pass", got)


def _check_controls(out: _Checks, summary: dict,
                    unjudged: dict[str, str] | None = None) -> None:
    """The other rows of the table: read and write through GUP-fast but
    secretmem's; long-term writable pins as LONGTERM has them. The cells
    of @unjudged print no verdict line: _check_judged asks for their skip."""
    hidden = unjudged or {}
    for backing, want in CONTROLS:
        accesses = tuple(a for a in ("read", "write") if f"verdict_{backing}_{a}" not in hidden)
        if not accesses:
            continue
        ok, got = _fast_is(summary, backing, want, accesses)
        label = "N/N" if want == "all" else "0/N (refused)"
        out.check(f"row {backing}: {' and '.join(accesses)} {label}", ok, got)
    for backing, want in LONGTERM.items():
        if f"verdict_{backing}_longterm_write" in hidden:
            continue
        ok, got = _fast_is(summary, backing, want, ("longterm_write",))
        label = {"all": "N/N", "none": "0/N",
                 "expected": "as the kernel version calls for"}[want]
        out.check(f"row {backing}: long-term writable pin {label}",
                  ok and _case(summary, f"verdict_{backing}_longterm_write") in
                  ("pass", "xfail"), got)


def _check_judged(out: _Checks, summary: dict,
                  unjudged: dict[str, str] | None = None) -> None:
    """Every cell judged: no SKIP but the cells of @unjudged (name -> what
    its reason must say), each skipped with its reason. Every kernel of the
    matrices maps a THP and a huge page of 32 MiB or less (64K pages: an
    mTHP and a contiguous-PTE huge page; arm64_checks asserts their sizes)."""
    unjudged = unjudged or {}
    cases = {c["name"]: c for c in summary.get("cases", [])}
    skipped = sorted(f"{n} ({c.get('reason') or 'no reason'})"
                     for n, c in cases.items() if c["status"] == "skip" and n not in unjudged)
    out.check("every cell judged: none skipped" + (
        f" but {len(unjudged)} this kernel's config hides" if unjudged else ""),
        not skipped, "; ".join(skipped))
    for name, why in sorted(unjudged.items()):
        c = cases.get(name, {})
        out.check(f"{name} unjudged, naming why ('{why}')",
                  c.get("status") == "skip" and why in (c.get("reason") or ""),
                  f"{c.get('status')}: {c.get('reason')}")


def _check_every_case(out: _Checks, summary: dict, expect: str,
                      unjudged: dict[str, str] | None = None) -> None:
    """Every case of the table reported, none failed but the ones @expect
    names, and the test's exit status."""
    names = _case_names(summary)
    want_names = {f"verdict_{b}_{c}" for b in BACKINGS for c in CASES}
    out.check(f"every case of the table reported ({len(want_names)} verdicts)",
              want_names <= names, "missing: " + ", ".join(sorted(want_names - names)))
    _check_judged(out, summary, unjudged)
    failed = sorted(_case_names(summary, "fail"))
    allowed = {"bug": {f"verdict_{DRIVER}_read", f"verdict_{DRIVER}_write"},
               "wrongfix": {f"verdict_{DRIVER}_longterm_write"},
               "pass": set(), "pre65": set()}[expect]
    out.check("no other case fails" + (f" than {', '.join(sorted(allowed))}"
                                       if allowed else ""),
              set(failed) <= allowed and summary.get("counts", {}).get("total", 0) > 0,
              "failed: " + ", ".join(failed))
    want_exit = 0 if expect == "pass" else 1     # pre65: the test's own 1
    out.check(f"test exit status {want_exit}", summary.get("exit_status") == want_exit,
              f"got {summary.get('exit_status')}")
    if expect == "pre65":
        out.check("the runner's verdict: PASS (the regression is absent)",
                  summary.get("outcome") == "pass", f"outcome {summary.get('outcome')}")


def _check_after_the_test(out: _Checks, summary: dict, expect: str, debug: bool) -> None:
    """The runner's module unloads (nothing to unload where gup_test is
    built in) and the memory comes back; run_vmtests.sh, the stress
    program, page_owner (debug) or the benchmark (default)."""
    built_in = _built_in(summary)
    if built_in:
        out.check("gup_test is built in: no module loaded or unloaded",
                  summary.get("rmmod") is None, f"rmmod: {summary.get('rmmod')}")
    else:
        out.check("the driver unloads after the test", summary.get("rmmod") == "ok",
                  f"rmmod: {summary.get('rmmod')}")
    delta = summary.get("memfree_delta_kb")
    limit = MEMFREE_TOLERANCE_KB["debug" if debug else "default"]
    out.check(f"free memory back within {limit // 1024} MiB after "
              + ("the test" if built_in else "rmmod"),
              delta is not None and delta <= limit,
              f"MemFree before/after: {summary.get('memfree_kb')}")
    if summary.get("run_vmtests"):
        outer = summary["run_vmtests"].get("outer") or ""
        out.check("run_vmtests.sh -t gup_test ran it and reported "
                  + ("ok" if expect == "pass" else "not ok"),
                  ("PASS" in outer) if expect == "pass" else ("FAIL" in outer), outer)
    if "stress" in summary:
        st = summary["stress"]
        bad = sorted(c["name"] for c in st.get("cases", [])
                     if c["status"] != "pass")
        n = len(st.get("cases", []))
        out.check(f"stress program: malformed-input and race cases all pass "
                  f"({n} cases)", n > 0 and not bad and st.get("exit") == 0
                  and not st.get("errors"),
                  f"exit {st.get('exit')}; not passing: {', '.join(bad)}; "
                  f"{'; '.join(st.get('errors', []))}")
    if debug:
        po = summary.get("page_owner") or {}
        out.check("no user page (anon, shmem) left allocated by the test or the "
                  "stress program after they exited (page_owner)",
                  po.get("user_pages") == 0,
                  f"page_owner: {po or 'not reported (page_owner=on missing?)'}")
    else:
        bench = summary.get("bench", [])
        out.check("benchmark measured shadow and anon (non-zero medians: a real "
                  "clocksource)",
                  {b["backing"] for b in bench} >= {"shadow", "anon"} and
                  all(b["median"] > 0 for b in bench),
                  "; ".join(f"{b['threads']} {b['backing']} median {b['median']}"
                            for b in bench))


def stress_args(spec: str, config: str) -> str | None:
    """The stress program's arguments on @spec, or None where its driver is
    stressed on another row (STRESS_ARGS)."""
    if spec.startswith("source:") and not spec.endswith(":all"):
        return None
    return STRESS_ARGS[config]


def _args(config: str, test_args: str, spec: str = "") -> argparse.Namespace:
    debug = config == "debug"
    return argparse.Namespace(config=config, accel="auto", vcpus=2,
                              memory=1536 if debug else 1024,
                              append="page_owner=on" if debug else "",
                              timeout=900 if debug else 300, retries=2,
                              test_args=test_args, results=None,
                              stress=stress_args(spec, config))


def boot(t, label: str, spec: str, args, outdir: Path, run_one):
    """Prepare and run @spec once, recorded as "@label: prepared and
    booted"; the outcome, or None when it could not be prepared."""
    try:
        out = run_one(spec, args, outdir)
    except RunnerError as err:
        t.record(f"{label}: prepared and booted", False, str(err))
        return None
    t.record(f"{label}: prepared and booted", True)
    print(f"# {label}: {out.summary['verdict']} "
          f"({out.summary['vm']['accel']}, results {outdir})", flush=True)
    asked, ran = args.stress is not None, "stress" in out.summary
    t.record(f"{label}: " + ("the stress program ran" if asked else "no stress program")
             + ", as asked", ran == asked, f"stress in summary.json: {ran}")
    return out


def _run(t, matrix, config: str, test_args: str) -> dict[str, dict]:
    """Run each kernel once; the summaries by spec."""
    from ..cli import run_one                    # cli imports checks' peers
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = REPO / "results" / f"check-{config}-{stamp}"
    summaries = {}
    for spec, expect in matrix:
        label = f"vm {spec}{' (debug)' if config == 'debug' else ''}"
        out = boot(t, label, spec, _args(config, test_args, spec),
                   base / spec.replace(":", "_"), run_one)
        if out is None:
            continue
        summaries[spec] = out.summary
        for name, ok, detail in assertions(out.summary, out.tap_text, expect,
                                           debug=config == "debug"):
            t.record(f"{label}: {name}", ok, detail)
    return summaries


def run_matrix(t) -> dict[str, dict]:
    return _run(t, MATRIX, "default", "")


# THP "always" (Debian's kernels say madvise): the controls must still be
# order-0, as the test and the benchmark check, and the verdicts unchanged.
THP_ALWAYS = ("debian:7.3", "transparent_hugepage=always")


def _passing_row(t, label: str, spec: str, args, tag: str, extra=lambda s: []):
    """Boot @spec once into results/check-@tag-<time> and record the
    matrix's "pass" assertions about it, and @extra(summary)'s; its
    outcome, or None when it could not be prepared."""
    from ..cli import run_one
    out = boot(t, label, spec, args,
               REPO / "results" / f"check-{tag}-{datetime.now():%Y%m%d-%H%M%S}", run_one)
    if out is None:
        return None
    for name, ok, detail in assertions(out.summary, out.tap_text, "pass") + \
            extra(out.summary):
        t.record(f"{label}: {name}", ok, detail)
    return out


def run_thp_always(t) -> None:
    spec, append = THP_ALWAYS
    args = _args("default", "", spec)
    args.append = append
    _passing_row(t, f"vm {spec} ({append})", spec, args, "thp",
                 lambda s: [_ratio_each(s)])


def _ratio_each(summary: dict) -> tuple[str, bool, str]:
    """Every benchmark cell got its shadow/anon ratio: the benchmark found
    its controls order-0 (it refuses a ratio against a THP control)."""
    ratios = summary.get("bench_ratio", [])
    return ("every benchmark cell's control was order-0 (a ratio each)",
            bool(ratios) and all(r.get("shadow_anon_ratio") is not None and
                                 not r.get("refused") for r in ratios), str(ratios))


# THP "always" and no madvise() (runner/configs/thp-always.config) on
# linux-source-7.3 + the series: the test sets THP "never" (it cannot ask
# for one THP without madvise()), so the controls stay order-0 and the thp
# row is named unjudged; with the fix, PASS and a ratio per benchmark cell;
# with GUP-fast refusing every anonymous folio ("anonslow", far worse than
# the regression), the anon control fails where an unchecked THP control
# passed (issue 32).
THP_SOURCE = [("source:debian-7.3:all", "pass"),
              ("source:debian-7.3:anonslow", "anonslow")]
THP_SOURCE_CONFIG = "thp-always"
# anonslow refuses anonymous folios where gup_fast_folio_allowed() checks
# them: order-0 ones for any pin, and every one for a long-term writable pin.
ANONSLOW_FAILED = {"verdict_anon_read", "verdict_anon_write", "verdict_anon_longterm_write",
                   "verdict_thp_longterm_write"}
# Without madvise() the thp row cannot be had: its cells skip, naming why.
NO_MADVISE = {f"verdict_thp_{c}": "no madvise() here (CONFIG_ADVISE_SYSCALLS)" for c in CASES}


def thp_source_assertions(summary: dict, tap_text: str, expect: str
                          ) -> list[tuple[str, bool, str]]:
    """(name, ok, detail) of one run of THP_SOURCE: @expect "pass" (the
    matrix's assertions and a ratio per cell) or "anonslow" (anon read and
    write 0/N, those two cases the only failures, the test and the runner
    exit 1)."""
    if expect == "pass":
        return assertions(summary, tap_text, "pass", unjudged=NO_MADVISE) + \
            [_ratio_each(summary)]
    if expect != "anonslow":
        raise ValueError(f"expect must be pass or anonslow, not {expect!r}")
    out = _Checks()
    _check_ran(out, summary)
    ok, got = _fast_is(summary, "anon", "none")
    out.check("control anon read/write via GUP-fast: 0/N (order-0 anon refused)", ok, got)
    names = _case_names(summary)
    want_names = {f"verdict_{b}_{c}" for b in BACKINGS for c in CASES}
    out.check(f"every case of the table reported ({len(want_names)} verdicts)",
              want_names <= names, "missing: " + ", ".join(sorted(want_names - names)))
    _check_judged(out, summary, NO_MADVISE)
    failed = _case_names(summary, "fail")
    want = ANONSLOW_FAILED - set(NO_MADVISE)
    out.check("the failed cases are " + ", ".join(sorted(want)) + ", no other",
              failed == want, "failed: " + ", ".join(sorted(failed)))
    out.check("test exit status 1, runner exit 1",
              summary.get("exit_status") == 1 and summary.get("exit_code") == 1,
              f"exit status {summary.get('exit_status')}, "
              f"exit code {summary.get('exit_code')}")
    return list(out)


def run_thp_source(t) -> None:
    from ..cli import run_one
    base = REPO / "results" / f"check-{THP_SOURCE_CONFIG}-{datetime.now():%Y%m%d-%H%M%S}"
    for spec, expect in THP_SOURCE:
        label = f"vm {spec} (--config {THP_SOURCE_CONFIG})"
        args = _args("default", "", spec)
        args.config = THP_SOURCE_CONFIG
        out = boot(t, label, spec, args, base / spec.replace(":", "_"), run_one)
        if out is None:
            continue
        for name, ok, detail in thp_source_assertions(out.summary, out.tap_text, expect):
            t.record(f"{label}: {name}", ok, detail)


# On linux-source-7.3 with the series, the built-in gup_test (the matrix's
# row) and the same gup_test.c built out of tree against the same tree
# (--config oot, oot/internal.h's helper) must give the same 21-cell table.
OOT_COMPARE = ("source:debian-7.3:all", "oot")


def table(summary: dict | None) -> dict[tuple[str, str], tuple[int, int]]:
    """(backing, pin) -> (pages GUP-fast took, pages asked) of a run."""
    return {(v["backing"], v["access"]): (v["fast"], v["total"])
            for v in (summary or {}).get("verdicts", [])}


def run_oot_compare(t, builtin: dict | None) -> None:
    from ..prepare.kernels import GUP_TEST_BUILTIN, GUP_TEST_RUNNERS
    spec, config = OOT_COMPARE
    label = f"vm {spec} (--config {config}: the series' gup_test out of tree)"
    args = _args("default", "", spec)
    args.config = config
    out = _passing_row(t, label, spec, args, config)
    if out is None:
        return
    kinds = ((builtin or {}).get("gup_test", {}).get("kind"),
             out.summary.get("gup_test", {}).get("kind"))
    t.record(f"{label}: the matrix's row asked the built-in gup_test, this one "
             "the runner's module", kinds == (GUP_TEST_BUILTIN, GUP_TEST_RUNNERS),
             f"answered by: {kinds[0]}; {kinds[1]}")
    a, b = table(builtin), table(out.summary)
    t.record(f"{label}: the same {len(a)}-cell table as the built-in gup_test",
             len(a) == len(BACKINGS) * len(CASES) and a == b,
             "; ".join(f"{k[0]} {k[1]}: {a.get(k)} vs {b.get(k)}"
                       for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)))


# No tracing (make check-notrace): the series' built-in gup_test asks
# GUP-fast alone, so 7.3 judges all 21 cells and the reverted and the wrong
# fix fail as they must; the runner's out-of-tree module cannot ask about
# pins without the mmap_lock tracepoint (EOPNOTSUPP), so on 6.12 every pin
# cell is named unjudged and the run is never a pass (exit 3).
NOTRACE = [("source:debian-7.3:all", "pass"), ("source:debian-7.3:nofix", "bug"),
           ("source:debian-7.3:wrongfix", "wrongfix"), ("source:debian-6.12:nofix", "unjudged"),
           ("source:debian-6.12:all", "unjudged"), ("source:debian-6.12:wrongfix", "unjudged")]


def run_notrace(t) -> dict[str, dict]:
    from ..cli import run_one
    base = REPO / "results" / f"check-notrace-{datetime.now():%Y%m%d-%H%M%S}"
    summaries = {}
    for spec, expect in NOTRACE:
        label = f"vm {spec} (--config notrace)"
        args = _args("default", "", spec)
        args.config, args.stress = "notrace", None
        out = boot(t, label, spec, args, base / spec.replace(":", "_"), run_one)
        if out is None:
            continue
        summaries[spec] = out.summary
        config = Path(out.summary.get("kernel", {}).get("source", {}).get("boot_image", "")).parent / ".config"
        t.record(f"{label}: the kernel has no CONFIG_TRACING",
                 config.exists() and "\nCONFIG_TRACING=y" not in config.read_text(),
                 str(config))
        if expect != "unjudged":
            for name, ok, detail in assertions(out.summary, out.tap_text, expect):
                t.record(f"{label}: {name}", ok, detail)
            continue
        s = out.summary
        skipped = {c["name"] for c in s.get("cases", []) if c["status"] == "skip"
                   and "EOPNOTSUPP" in (c.get("reason") or "")}
        want = {f"verdict_{b}_{c}" for b in BACKINGS for c in CASES}
        t.record(f"{label}: every pin cell unjudged, naming EOPNOTSUPP", skipped == want,
                 "not skipped: " + ", ".join(sorted(want - skipped)))
        t.record(f"{label}: never a pass: exit 3, the verdict naming what was not judged",
                 s.get("exit_code") == 3 and "verdict_driver_read" in (s.get("verdict") or "")
                 + " ".join(s.get("problems") or []),
                 f"exit {s.get('exit_code')}: {s.get('verdict')}; {s.get('problems')}")
    return summaries


# A kernel with the fix whose gup_test is built in from a tree without the
# series (6.12 configured as kselftest labs do): the test cannot ask, so it
# skips, and the runner's verdict comes from the probe, never a FAIL.
UNASKED = ("source:debian-6.12:all", "kselftest")


def run_unasked(t) -> None:
    from .. import probe
    from ..cli import run_one
    spec, config = UNASKED
    label = f"vm {spec} (--config {config}: gup_test built in, without the command)"
    outdir = REPO / "results" / f"check-{config}-{datetime.now():%Y%m%d-%H%M%S}"
    args = _args("default", "", spec)
    args.config = config
    out = boot(t, label, spec, args, outdir, run_one)
    if out is None:
        return
    s = out.summary
    t.record(f"{label}: the test skipped, naming the missing command",
             s.get("exit_status") == 4 and
             (s.get("skip_reason") or "").startswith("gup_test lacks GUP_FAST_VERDICT"),
             f"exit status {s.get('exit_status')}, skip: {s.get('skip_reason')}")
    code = probe.judge_unasked(s, args, outdir)
    t.record(f"{label}: the runner judged with the probe: PASS (the fix), not FAIL",
             code == 0 and s.get("exit_code") == 0, f"exit {code}: {s.get('verdict')}")


def run_debug(t) -> None:
    _run(t, DEBUG_MATRIX, "debug", DEBUG_TEST_ARGS)
