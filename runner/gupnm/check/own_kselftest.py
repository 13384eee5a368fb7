"""make check's row for issue 48: a lab's own artifacts through
`gupnm-run kselftest --kernel IMAGE --modules TARBALL --kselftest TARBALL`.

The artifacts are real and built as a lab builds them, but not by this
row: the kernel and the gen_tar tarball of source:debian-7.3:nofix, which
the Linaro rows build anyway (kselftest_paths.prepared: cached), and a
modules tarball laid out as `make modules_install` lays it out (the
build's .ko files and modules.order under lib/modules/REL, depmod run),
made here in milliseconds rather than by running make in the shared tree.
The command runs as a pipeline runs it (the real CLI, --json); the bug
must show as it does on the source kernel: exit 1, the driver's short-term
verdicts failing. A tarball without our test must be refused before
anything boots (exit 2). Measured 2026-12-07, everything cached, other
helpers loading the 2 cores: 28.5 s for both (the boot 25.1 s, the
refusal 0.9 s); 3.5 min the first time, when the nofix kernel was relinked
and its selftests/mm built (which the Linaro rows need anyway).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from ..ci import kselftest_paths
from ..host import REPO, RunnerError

SPEC = "source:debian-7.3:nofix"
GUPNM = [sys.executable, str(REPO / "runner" / "gupnm-run")]


def modules_tarball(build: Path, release: str, work: Path) -> Path:
    """What `make modules_install INSTALL_MOD_PATH=D && tar -C D -cJf
    modules.tar.xz lib` gives for @build (KernelCI's modules.tar.xz)."""
    root = work / "modules-root"
    shutil.rmtree(root, ignore_errors=True)
    dest = root / "lib" / "modules" / release
    (dest / "kernel").mkdir(parents=True)
    for ko in sorted(build.rglob("*.ko")):
        to = dest / "kernel" / ko.relative_to(build)
        to.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ko, to)
    for name in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        if (build / name).exists():
            shutil.copy2(build / name, dest / name)
    subprocess.run(["depmod", "-b", str(root), release], capture_output=True)
    out = work / "modules.tar.xz"
    with tarfile.open(out, "w:xz") as tf:
        tf.add(root / "lib", arcname="lib")
    shutil.rmtree(root, ignore_errors=True)
    return out


def _kselftest(argv: list[str]) -> tuple[int, dict | None, str]:
    proc = subprocess.run([*GUPNM, "kselftest", *argv, "--json"],
                          capture_output=True, text=True, timeout=900)
    try:
        return proc.returncode, json.loads(proc.stdout), proc.stderr
    except ValueError:
        return proc.returncode, None, proc.stderr + proc.stdout


def check_own(t, spec: str = SPEC) -> None:
    label = (f"kselftest --kernel --modules --kselftest: a lab's own artifacts "
             f"({spec}'s vmlinux, modules tarball, gen_tar tarball)")
    work = REPO / "results" / time.strftime("%Y%m%d-%H%M%S-own-kselftest-artifacts")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        k, built = kselftest_paths.prepared(spec)
        mods = modules_tarball(k.build, k.release, work)
    except (RunnerError, OSError) as err:
        t.record(label, False, str(err))
        return
    t0 = time.monotonic()
    code, s, err = _kselftest(["--kernel", str(k.image), "--modules", str(mods),
                               "--kselftest", str(built.tarball),
                               "--results", str(work / "run")])
    seconds = time.monotonic() - t0
    bad = []
    if s is None:
        bad.append("no JSON on stdout")
    else:
        failed = sorted(c["name"] for c in s["cases"] if c["status"] == "fail"
                        and not c["name"].endswith("gup_null_mapping"))
        # nofix: the driver's short-term pins fail (kselftest_checks'
        # expected_failures), nothing else of ours.
        want = sorted(c["name"] for c in s["cases"]
                      if kselftest_paths.is_driver(c["name"]))
        if code != 1 or s["exit_code"] != 1:
            bad.append(f"exit {code}, expected 1 (the bug): {s.get('verdict')}")
        if failed != want or not want:
            bad.append(f"failing cases {failed}, expected {want}")
        src = s["kernel"]["source"]
        if src.get("kind") != "own" or src.get("modules") != str(mods):
            bad.append(f"kernel.source is not the lab's artifacts: {src}")
        if s["kernel"].get("booted_release") != k.release:
            bad.append(f"booted {s['kernel'].get('booted_release')}, not {k.release}")
    t.record(f"{label}: exit 1, driver read/write fail, the rest pass "
             f"({seconds:.1f} s)", not bad, "\n".join(bad) + "\n" + err[-3000:])
    _check_refusal(t, k.image, work)


def _check_refusal(t, image: Path, work: Path) -> None:
    """A tarball without gup_null_mapping: exit 2 before anything boots."""
    other = work / "other-kselftest.tar.gz"
    with tarfile.open(other, "w:gz") as tf:
        for name in ("run_kselftest.sh", "mm/gup_test"):
            src = work / "empty"
            src.write_text("")
            tf.add(src, arcname=name)
    t0 = time.monotonic()
    code, s, err = _kselftest(["--kernel", str(image), "--kselftest", str(other),
                               "--results", str(work / "refused")])
    seconds = time.monotonic() - t0
    ok = code == 2 and s is not None and "mm/gup_null_mapping" in err \
        and not (work / "refused" / "console.log").exists()
    t.record(f"kselftest --kselftest TARBALL without gup_null_mapping: exit 2 "
             f"before anything boots ({seconds:.1f} s)", ok,
             f"exit {code}\n{err[-2000:]}")
