"""The one value prepare/ hands to guest/: everything a boot needs.

plan.make() decides and builds it from a kernel spec and the run's
options: the kernel, the gup_test that answers (built in, or the
runner's module the guest loads), the program the guest runs (the test,
alone or under run_vmtests.sh, or a --command program), the benchmark,
the stress program and the cross-check, each already built. guest/
assembles the initramfs from it, boots and reads; it imports nothing else
from prepare/. This module imports nothing of the runner's, so the type
is all guest/ takes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class CrossCheck:
    """gup_test's PIN_FAST_BENCHMARK over anonymous memory against the
    test's own anon control, run in turn in the guest."""
    command: str                # e.g. "taskset -c 0 ./gup_test -a -T -m 2 -n 512 -r 100"
    binary: Path
    pages: int                  # pages one repeat pins
    test_command: str           # the benchmark at 1 thread, between them
    rounds: int                 # test runs; gup_test runs one more time


@dataclass
class Payload:
    spec: str                   # the kernel spec asked for
    release: str                # uname -r the guest must boot
    image: Path | None          # what QEMU boots; None: nothing (host mode)
    arch: str                   # the guest's: amd64 or arm64
    source: dict                # how the kernel was obtained (summary's kernel.source)
    command: str                # what the guest runs in its test folder
    files: dict[str, Path]      # name in the guest's test folder -> host file
    module: Path | None         # gup_test.ko the guest loads first; None: none
    gup_test: dict | None       # which gup_test answers (summary's gup_test)
    # command is a --command program (its exit status is its verdict), not
    # the test; whether a module that did not load is then a problem.
    program: bool = False
    gup_test_required: bool = True
    vmtests: bool = False       # the test runs under run_vmtests.sh
    dynamic: tuple[str, ...] = ()   # names in files linked dynamically
    bench_command: str | None = None    # the benchmark, after the test
    stress_command: str | None = None   # the stress program, after it
    xcheck: CrossCheck | None = None    # the cross-check, after it
    append: str = ""            # kernel command line words the program needs
    kmemleak: bool = False      # the guest scans for leaks (--config debug)
    busybox: Path | None = None  # the guest's, when not the host's (arm64)
    notes: list[str] = field(default_factory=list)  # from preparing (cache repairs)
