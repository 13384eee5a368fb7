"""The summary.json of a saved log (gupnm-run parse --json / --results):
the keys run writes (runner/summary.schema.json), from the log alone.

What a log does not say stays null: the accelerator, the command line,
durations. The schema needs vcpus and memory_mb as numbers: they are read
from the kernel's boot lines when the log has them ("smp: Brought up 1
node, 2 CPUs", "Memory: 2010504K/2096632K available"), else 1 with a note
that says so.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ..parse.tap import TapResult
from . import results

_CPUS = re.compile(r"smp: Brought up \d+ nodes?, (\d+) CPUs?")
_MEMORY = re.compile(r"Memory: \d+K/(\d+)K available")


def vm_facts(raw: str) -> tuple[int | None, int | None]:
    """(vcpus, memory MiB) from the kernel's boot lines in @raw, None where
    the log does not say."""
    cpus = _CPUS.search(raw)
    mem = _MEMORY.search(raw)
    return (int(cpus.group(1)) if cpus else None,
            -(-int(mem.group(1)) // 1024) if mem else None)


def build(parsed: TapResult, *, raw: str, log: str, release: Optional[str],
          exit_status: Optional[int], exit_code: int, outcome: str,
          problems: list[str], splats: list, meta: dict) -> dict[str, Any]:
    """summary.json of the log @log (its text @raw) as parse judged it."""
    vcpus, memory = vm_facts(raw)
    s = results.build_summary(kernel_release=release or "unknown",
                              kernel_source={"kind": "log", "log": log},
                              accel="tcg", vcpus=vcpus or 1, memory_mb=memory or 1,
                              cmdline="", tap=parsed, splats=splats,
                              exit_status=exit_status)
    s["kernel"]["release"] = release
    s["kernel"]["booted_release"] = release
    s["vm"] = {"accel": None, "vcpus": vcpus or 1, "memory_mb": memory or 1,
               "cmdline": None}
    notes = list(s.get("notes", []))
    if vcpus is None or memory is None:
        notes.append("vm.vcpus/vm.memory_mb: not in the log, 1 written (the "
                     "schema needs a number)")
    s.update(meta)
    s.update(spec=f"log:{log}", exit_code=exit_code, outcome=outcome,
             problems=list(problems), command=f"gupnm-run parse {log}",
             boot_attempts=0, notes=notes, guest_uptime={},
             files={"summary": "summary.json", "junit": "junit.xml",
                    "ktap": "ktap.txt"})
    return s
