"""make check's rows for the module-free probe (probe/gupnm_probe.c).

It builds for amd64 and arm64; it gives this machine's own kernel a verdict
without a module and without changing anything; and on the kernels
of the matrix (Debian and source-built, with and without the fix, and the
wrong fix) it finds what the module found there (probe.agreement).
"""
from __future__ import annotations

import os
from pathlib import Path

from .. import probe
from ..host import REPO
from ..parse import tap

# The matrix's kernels the probe boots too: spec, what the probe must say
# (bug present?), what the module found there (its diagnosis).
# debian:6.1: before the regression (f002882ca369 is v6.10); its long-term
# pin XFAIL is a module finding the probe cannot see, its diagnosis "pass".
# The source kernels' default config (configs/base.config) has networking
# and af_packet for the probe. A wrong fix: GUP-fast takes NULL-mapping
# pages, so the probe says no bug; the long-term writable pin it also lets
# through is the half the probe cannot see (longterm_write_pin SKIP).
AGREE = (("debian:6.1", False, "pass"), ("debian:6.12", True, "regression"),
         ("debian:7.3", False, "pass"),
         ("source:debian-6.12:nofix", True, "regression"),
         ("source:debian-6.12:all", False, "pass"),
         ("source:debian-6.12:wrongfix", False, "wrongfix"),
         ("source:debian-7.3:all", False, "pass"),
         ("source:debian-7.3:nofix", True, "regression"),
         ("source:debian-7.3:wrongfix", False, "wrongfix"))


# Cells of the table both must judge on every kernel of AGREE: the read and
# write columns of the seven rows (the long-term column needs io_uring,
# which the source kernels lack, and io_uring pins under the mmap_lock on
# 6.1, so the probe skips it there).
TABLE_CELLS = 14


def host_checks(t) -> None:
    for arch, cc in (("amd64", "gcc"), ("arm64", "aarch64-linux-gnu-gcc")):
        t.guard(f"probe: builds static for {arch} ({cc})",
                lambda cc=cc: (probe.build(cc).exists(), ""))

    def on_host():
        outdir = REPO / "results" / "check-probe-host"
        outdir.mkdir(parents=True, exist_ok=True)
        res, _ = probe.run_host(outdir, [])
        s = probe.summary("host", res, where="host", why="make check",
                          release=os.uname().release)
        ok = os.geteuid() != 0 or s["bug_present"] is not None
        return ok, f"{os.uname().release}: {s['verdict']}; {s['problems']}"
    t.guard("probe: a verdict on this machine's own kernel, no module, no QEMU",
            on_host)


def _shadow(module: dict) -> str:
    """The module's verdicts of the driver row ("shadow" before v4 of the
    test), e.g. "write 512/512 fast"."""
    return ", ".join(f"{v['access']} {v['fast']}/{v['total']} fast"
                     for v in module.get("verdicts", [])
                     if tap.row_name(v.get("backing") or "") == tap.DRIVER)


def judge(bug: bool, diag: str, module: dict | None, s: dict) -> tuple[bool, str]:
    """Does the probe's summary @s say @bug and the module's run on the same
    kernel @diag, and do they agree as far as the probe can see?"""
    detail = f"{s.get('kernel_release')}: {s['verdict']}; problems: {s['problems']}"
    if module is None:
        return False, detail + "; no module run of this kernel to compare"
    agree = probe.agreement(module, s)
    detail += f"; module {tap.DRIVER}: {_shadow(module) or '-'}; {agree['why']}"
    if module.get("diagnosis") != diag:
        return False, detail + f"; the module's diagnosis is not '{diag}'"
    # The probe's table (-t) against the module's, cell for cell where both
    # judged: the read and write columns at least (TABLE_CELLS).
    both, differ = probe.table_agreement(module, s)
    detail += f"; tables: {both} cells judged by both, differing: {differ or 'none'}"
    if both < TABLE_CELLS or differ:
        return False, detail
    if diag != "wrongfix":
        return s["bug_present"] is bug and agree["agree"] is True, detail
    unseen = next((r["status"] for r in s.get("results", [])
                   if r["name"] == "longterm_write_pin"), None)
    return (s["bug_present"] is bug and agree.get("seen_half_agrees") is True
            and unseen == "skip",
            detail + f"; the probe's longterm_write_pin: {unseen}")


def _title(spec: str, bug: bool, diag: str) -> str:
    if diag == "wrongfix":
        return (f"probe {spec}: no bug (GUP-fast takes NULL-mapping pages), as "
                "the module's driver pages, and the module's table where both "
                "judged; its long-term-pin finding unseen")
    return (f"probe {spec}: {'bug' if bug else 'no bug'}, as the module found "
            "on the same kernel, and the module's table where both judged")


def vm_checks(t, module_summaries: dict[str, dict]) -> None:
    """@module_summaries: spec -> the matrix's summary.json of that kernel."""
    for spec, bug, diag in AGREE:
        def one(spec=spec, bug=bug, diag=diag):
            outdir = REPO / "results" / f"check-probe-{spec.replace(':', '_')}"
            outdir.mkdir(parents=True, exist_ok=True)
            release, image, source = probe.image_for(spec)
            res, where, notes = probe.run_guest(image, outdir, [])
            s = probe.summary(spec, res, where=where, why="make check",
                              release=release, source=source, notes=notes)
            probe.write_reports(outdir, s)
            return judge(bug, diag, module_summaries.get(spec), s)
        t.guard(_title(spec, bug, diag), one)
