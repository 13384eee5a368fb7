"""make check's rows for the module-free probe (probe/gupnm_probe.c).

It builds for amd64 and arm64; it gives this machine's own kernel a verdict
without a module and without changing anything; and on the Debian kernels
of the matrix it finds what the module found there (probe.agreement).
"""
from __future__ import annotations

import os
from pathlib import Path

from .. import probe
from ..host import REPO

# The matrix's Debian kernels the probe boots too: spec, bug present.
# 6.1: before the regression (f002882ca369 is v6.10); its long-term pin
# XFAIL is a module finding the probe cannot see, its diagnosis is "pass".
AGREE = (("debian:6.1", False), ("debian:6.12", True), ("debian:7.3", False))


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


def vm_checks(t, module_summaries: dict[str, dict]) -> None:
    """@module_summaries: spec -> the matrix's summary.json of that kernel."""
    for spec, bug in AGREE:
        def one(spec=spec, bug=bug):
            outdir = REPO / "results" / f"check-probe-{spec.replace(':', '_')}"
            outdir.mkdir(parents=True, exist_ok=True)
            release, image, source = probe.fetch_image(spec)
            res, where, notes = probe.run_guest(image, outdir, [])
            s = probe.summary(spec, res, where=where, why="make check",
                              release=release, source=source, notes=notes)
            probe.write_reports(outdir, s)
            detail = f"{release}: {s['verdict']}; problems: {s['problems']}"
            module = module_summaries.get(spec)
            if module is None:
                return False, detail + "; no module run of this kernel to compare"
            agree = probe.agreement(module, s)
            return (s["bug_present"] is bug and agree["agree"] is True,
                    f"{detail}; {agree['why']}")
        t.guard(f"probe {spec}: {'bug' if bug else 'no bug'}, as the module "
                "found on the same kernel", one)
