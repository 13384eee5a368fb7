"""One prepare step: a kernel spec and the run's options made into the
Payload (payload.py) a boot needs, everything in it decided and built.

  kernels.prepare      the kernel, its gup_test (built in or the runner's
                       module) and the test binary
  command              a --command program instead of the test: what it
                       needs of the kernel, who serves gup_test for it
  kselftest_build      selftests/mm of a tree (--command, the cross-check)
  kernels.build_bench, kernels.build_stress
                       the benchmark and the stress program

guest/ gets the Payload and nothing else of prepare/.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from .. import phases, testargs
from ..host import REPO, progress
from . import cache, command, kconfig, kernels, kselftest_build, source
from .payload import CrossCheck, Payload

TEST = "gup_null_mapping"
PROBE = "gupnm_probe"           # probe/: the module-free probe (probe.py)
BENCH = "gup_fast_bench"        # bench/gup_fast_bench.c, run after the test
STRESS = "gupnm_stress"         # hardening/gupnm_stress.c, when asked
# gup_test calls per gup_test run, and test rounds between gup_test runs.
XCHECK_REPEATS = 100
XCHECK_ROUNDS = 5


@dataclass
class Asked:
    """What the run asks of the prepare step (from gupnm-run's options)."""
    spec: str
    config: str = "default"         # --config
    arch: str = "amd64"             # --arch
    test_args: str = ""             # the benchmark's (--test-args)
    stress: str | None = None       # the stress program's arguments; None: not run
    command: str | None = None      # --command: a selftests/mm program instead
    selftests: str | None = None    # --selftests: the tree of its selftests/mm


def make(asked: Asked) -> Payload:
    """Everything the boot of @asked needs, built (or found in the cache)."""
    cmd = command.parse(asked.command) if asked.command else None
    variant = asked.config
    if cmd and asked.spec.startswith("source:") and variant == "default":
        progress("--command: the source kernel is built with the selftests "
                 "config (configs/selftests.config)")
        variant = "selftests"
    prep = kernels.prepare(asked.spec, variant=variant,
                           **({"arch": asked.arch} if asked.arch != "amd64" else {}))
    if cmd:
        pay = with_program(prep, cmd, selftests_mm(prep, asked.selftests))
    else:
        pay = with_bench(base(prep), _cc(prep), asked.test_args)
        if asked.arch == "amd64" and asked.config == "selftests" \
                and has(prep, "CONFIG_GUP_TEST"):
            # Every kernel has gup_test now (built in, or the runner's
            # module): the cross-check, which builds the tree's selftests/mm,
            # stays with the benchmark runs that ask for it.
            pay.xcheck = crosscheck(prep, asked)
    if asked.stress is not None:
        with phases.phase("test_build"):
            pay.files[STRESS] = kernels.build_stress(**_cc(prep))
        pay.stress_command = f"./{STRESS} {asked.stress}".strip()
    if prep.arch == "arm64":
        from . import arm64
        pay.busybox = arm64.busybox()
    pay.kmemleak = asked.config == "debug"
    pay.notes = cache.take_repairs()
    return pay


def host(release: str) -> Payload:
    """Host mode's (hostmode.py): the runner's module built against the
    running kernel's headers and the test, in the Payload a boot gets
    (image None: nothing boots; the test runs on this machine)."""
    kdir = (Path("/lib/modules") / release / "build").resolve()
    ko = kernels.build_module(kdir, release)
    binary = kernels.build_selftest(REPO / kernels.SELFTEST)
    return base(kernels.Prepared(
        "host", release, None, ko, binary, None,
        {"kind": "host", "method": "module", "headers": str(kdir), "module": str(ko)}))


def probe(image: Path, arch: str = "amd64") -> Payload:
    """The probe's guest (probe.py) on @image: the static probe, built
    for @arch as the test is, and the guest's busybox; no module, no test.
    The probe's own init runs it (release and source are the probe's to
    say: its guest reports the kernel)."""
    cc = _cc_for(arch)
    pay = Payload("", "", image, arch, {}, f"/bin/{PROBE}",
                  {PROBE: kernels.build_probe(**cc)}, None, None)
    if arch == "arm64":
        from . import arm64
        pay.busybox = arm64.busybox()
    return pay


def base(prep: kernels.Prepared) -> Payload:
    """The test on @prep's kernel, alone or under run_vmtests.sh, with the
    gup_test that answers it (kernels.gup_test_of)."""
    files = {TEST: prep.test_binary}
    command_line = f"./{TEST}"
    if prep.run_vmtests:
        files["run_vmtests.sh"] = prep.run_vmtests
        command_line = "bash ./run_vmtests.sh -t gup_test"
    return Payload(prep.spec, prep.release, prep.image, prep.arch, prep.source,
                   command_line, files, prep.module, kernels.gup_test_of(prep),
                   vmtests=bool(prep.run_vmtests))


def with_bench(pay: Payload, cc: dict[str, str], test_args: str,
               binary: Path | None = None) -> Payload:
    """@pay with the benchmark after the test: the selftest gives verdicts
    only; the benchmark, which takes the --test-args, is
    bench/gup_fast_bench (@binary: built already)."""
    if binary is None:
        with phases.phase("test_build"):
            binary = kernels.build_bench(**cc)
    pay.files[BENCH] = binary
    pay.bench_command = f"./{BENCH} {test_args}".strip()
    return pay


def with_program(prep: kernels.Prepared, cmd: command.Command, mm_dir: Path) -> Payload:
    """A --command program instead of the test: checked against the
    kernel, gup_test served as command.gup_test_server says."""
    needs = command.needs(cmd)
    command.check_kernel(needs, prep.config, prep.release, prep.spec)
    server = command.gup_test_server(prep.config, prep.module, prep.release,
                                     prep.spec, cmd.program, required=needs.gup_test)
    if server:
        progress(f"/sys/kernel/debug/gup_test: {server.kind}: {server.why}")
    binary = command.binary(mm_dir, cmd)
    return dataclasses.replace(
        base(prep), command=cmd.guest, files={binary.name: binary},
        module=server.module if server else None,
        gup_test=server.as_dict() if server else None, program=True,
        gup_test_required=needs.gup_test, vmtests=False, dynamic=(binary.name,),
        append=" ".join(needs.append))


def has(prep: kernels.Prepared, option: str) -> bool:
    if not prep.config or not prep.config.exists():
        return False
    return kconfig.parse(prep.config.read_text()).get(option) in ("y", "m")


def selftests_mm(prep: kernels.Prepared, selftests: str | None) -> Path:
    """selftests/mm of the kernel's own tree (a source kernel) or of
    --selftests, built by the tree's Makefile (cached by what it is made of)."""
    tree = prep.tree or source.resolve_base(selftests).path
    with phases.phase("test_build"):
        built = kselftest_build.build(tree, commit=prep.tree_commit)
    return built.tree / kselftest_build.SELFTESTS / "mm"


def crosscheck(prep: kernels.Prepared, asked: Asked) -> CrossCheck | None:
    """gup_test over anonymous memory of the benchmark's size and pages per
    call (issue 12), on kernels built with CONFIG_GUP_TEST."""
    opts = testargs.bench_params(asked.test_args or "")
    if opts["no_bench"]:
        return None
    if opts["longterm"]:
        # gup_test's PIN_LONGTERM_BENCHMARK calls pin_user_pages(), the slow
        # path, and it has no pin_user_pages_fast(FOLL_LONGTERM) benchmark.
        progress("no gup_test cross-check with -L: gup_test times long-term "
                 "pins only through pin_user_pages(), not pin_user_pages_fast()")
        return None
    size = opts["pages"] * 4096
    if size % (1 << 20):
        progress(f"no gup_test cross-check: {opts['pages']} pages of 4 KiB are "
                 "not a whole number of MiB (gup_test -m takes MiB)")
        return None
    # On the CPU of the benchmark's first thread, in turn with the test's
    # 1-thread benchmark (vmrun.crosscheck).
    cmd = (f"taskset -c 0 ./gup_test -a -T -m {size >> 20} "
           f"-n {opts['pages_per_call']} -r {XCHECK_REPEATS}")
    # The benchmark program, at one thread.
    test = (f"./{BENCH} -p {opts['pages']} -c {opts['pages_per_call']} "
            f"-r {opts['reps']} -i {opts['iters']} 1")
    return CrossCheck(cmd, selftests_mm(prep, asked.selftests) / "gup_test",
                      opts["pages"], test, XCHECK_ROUNDS)


def _cc(prep: kernels.Prepared) -> dict[str, str]:
    """The compiler of a static guest program for @prep's architecture."""
    return _cc_for(prep.arch)


def _cc_for(arch: str) -> dict[str, str]:
    if arch == "arm64":
        from . import arm64
        return {"cc": arm64.selftest_cc()}
    return {}
