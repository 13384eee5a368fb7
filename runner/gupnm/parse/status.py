"""Parse the guest's status port (runner/guest/init writes it)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class GuestStatus:
    booted: bool = False
    exit_code: int | None = None       # None: the guest never said
    rmmod: str | None = None           # "ok" / "failed" / None
    times: dict[str, float] = field(default_factory=dict)
    memfree_kb: dict[str, int] = field(default_factory=dict)   # before/after
    # Pages the test left allocated after it exited (page_owner): user
    # memory (LRU) and other non-slab pages; None when not reported.
    page_owner_user: int | None = None
    page_owner_other: int | None = None
    tap: str = ""
    dmesg: str = ""
    complete_tap: bool = False
    # The stress program (hardening/), when the guest ran it.
    stress: str | None = None
    stress_exit: int | None = None
    # The benchmark (bench/gup_fast_bench), when the guest ran it.
    bench: str | None = None
    bench_exit: int | None = None
    # The gup_test cross-check (GUPNM_XCHECK_CMD), when the guest ran it.
    xcheck: str | None = None
    xcheck_exit: int | None = None
    # GUPNM_REPEAT runs: (index, exit status or None if cut short, output).
    runs: list[tuple[int, int | None, str]] = field(default_factory=list)


def parse_status(text: str) -> GuestStatus:
    st = GuestStatus()
    section = None
    run_no = 0
    buf: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if section == "RUN":
            if m := re.fullmatch(r"GUPNM-RUN-END: (\d+) (-?\d+)", line):
                st.runs.append((int(m.group(1)), int(m.group(2)),
                                "\n".join(buf) + "\n"))
                section, buf = None, []
            else:
                buf.append(line)
            continue
        if section:
            if line == f"GUPNM-{section}-END":
                if section == "TAP":
                    st.tap, st.complete_tap = "\n".join(buf) + "\n", True
                elif section == "STRESS":
                    st.stress = "\n".join(buf) + "\n"
                elif section == "XCHECK":
                    st.xcheck = "\n".join(buf) + "\n"
                elif section == "BENCH":
                    st.bench = "\n".join(buf) + "\n"
                else:
                    st.dmesg = "\n".join(buf) + "\n"
                section, buf = None, []
            else:
                buf.append(line)
            continue
        if line in ("GUPNM-TAP-BEGIN", "GUPNM-DMESG-BEGIN",
                    "GUPNM-STRESS-BEGIN", "GUPNM-XCHECK-BEGIN",
                    "GUPNM-BENCH-BEGIN"):
            section = line.split("-")[1]
            continue
        if m := re.fullmatch(r"GUPNM-RUN-BEGIN: (\d+)", line):
            section, run_no = "RUN", int(m.group(1))
            continue
        if m := re.fullmatch(r"GUPNM-(STRESS|XCHECK|BENCH)-EXIT: (-?\d+)", line):
            setattr(st, f"{m.group(1).lower()}_exit", int(m.group(2)))
            continue
        if line == "GUPNM-STATUS: booted":
            st.booted = True
        elif m := re.fullmatch(r"GUPNM-EXIT: (-?\d+)", line):
            st.exit_code = int(m.group(1))
        elif m := re.fullmatch(r"GUPNM-RMMOD: (\w+)", line):
            st.rmmod = m.group(1)
        elif m := re.fullmatch(r"GUPNM-PAGE-OWNER: (\d+) (\d+)", line):
            st.page_owner_user = int(m.group(1))
            st.page_owner_other = int(m.group(2))
        elif m := re.fullmatch(r"GUPNM-MEMFREE: (\w+) (\d+)", line):
            st.memfree_kb[m.group(1)] = int(m.group(2))
        elif m := re.fullmatch(r"GUPNM-TIME: (\w+) ([\d.]+)", line):
            st.times[m.group(1)] = float(m.group(2))
    if section == "TAP":            # cut short: keep what arrived
        st.tap = "\n".join(buf) + "\n"
    elif section == "RUN":
        st.runs.append((run_no, None, "\n".join(buf) + "\n"))
    return st
