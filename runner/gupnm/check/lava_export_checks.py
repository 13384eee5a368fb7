"""make check's rows for `gupnm-run lava --export` (issue 48): the job a
lab gets, run as a lab would run it.

For each job: the runner's own lava run exports its job to a temporary
DIR with an http base URL; DIR is served by `python3 -m http.server` on
127.0.0.1, and the exported job.yaml runs UNCHANGED (its sha256 before
and after) under lava-run from a deep working directory; it must pass
LAVA's strict schema, fetch every file from the URL (sha256sum checked by
LAVA), and give the same verdict and cases as the runner's own run. The
lab job runs on the lab's own artifacts (--kernel,
--kselftest: the files of source:debian-7.3:all's build) and on a
device whose lava_test_results_dir is four levels deeper than LAVA's
default: the SKIPFILE must still skip.

In make check these rows ride on the LAVA block's own runs
(kselftest_checks.check_lava exports debian-module on debian:7.3 and the
lab job on source:debian-7.3:all): one extra lava-run each. Alone, both
runs of each: `cd runner && python3 -m gupnm.check.lava_export_checks
[--kernel IMAGE --kselftest TARBALL]` (without them the lab
row takes source:debian-7.3:all, built when not cached).
"""
from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from dataclasses import dataclass

from ..ci import kselftest_paths, lab, lava, lava_byo, lava_device, lava_export
from ..host import RunnerError, progress

LAB_SPEC = "source:debian-7.3:all"
DEEP_RESULTS = "/var/lib/gupnm/lab/deep/lava-%s"
DEEP_CWD = "a/b/c/d/e/f/g/h/i/j"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """DIR served over http on 127.0.0.1 (our own child, stopped by pid)."""

    def __init__(self, folder: Path, port: int):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
             "--directory", str(folder)], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RunnerError(f"python3 -m http.server on port {port} never listened")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def _deep_device(job: Path, tmp: Path) -> Path:
    """The local device with the results dir deeper than LAVA's default."""
    dev = tmp / "deep-device.jinja2"
    dev.write_text(lava.DEVICE.read_text() + "{% set lava_test_results_dir = '"
                   + DEEP_RESULTS + "' %}\n")
    out = tmp / "deep-device.yaml"
    out.write_text(lava_device.render(job, device=dev))
    if DEEP_RESULTS not in out.read_text():
        raise RunnerError("the deeper device kept LAVA's default results dir")
    return out


def run_exported(job: str, export: lava_export.Export, tmp: Path, deep: bool,
                 label: str, release: str) -> lava.LavaRun:
    """The exported job.yaml, unchanged, under lava-run from a deep working
    directory with DIR served at the base URL."""
    job_file = export.dir / "job.yaml"
    before = lava_export.sha256(job_file)
    device = _deep_device(job_file, tmp) if deep else export.dir / "device.yaml"
    cwd = tmp / DEEP_CWD
    cwd.mkdir(parents=True)
    out = tmp / "exported-run"
    out.mkdir()
    served = Served(export.dir, int(export.base_url.rsplit(":", 1)[1]))
    try:
        rc, text, seconds = lava.lava_run(job_file, device, out / "lava", cwd=cwd)
    finally:
        served.stop()
    (out / "lava-run.log").write_text(text)
    if lava_export.sha256(job_file) != before:
        raise RunnerError("the exported job.yaml changed while it ran")
    return lava.LavaRun(job, label, release, lava.parse_results(text), rc, seconds, out)


def _differences(mine: lava.LavaRun, theirs: lava.LavaRun) -> list[str]:
    a = lab.judge_lava(mine, mine.release, [])
    b = lab.judge_lava(theirs, theirs.release, [])
    out = []
    if a[0] != b[0]:
        out.append(f"exit {b[0]} ({b[2]}) from the exported job, {a[0]} ({a[2]}) "
                   "from the runner's own run")
    ours = sorted((c.case, c.result) for c in mine.ours())
    if sorted((c.case, c.result) for c in theirs.ours()) != ours:
        out.append("the exported job's cases differ from the runner's own")
    if not ours:
        out.append("no case of ours recorded")
    return out + [f"exported: {p}" for p in b[1]]


# The runs of make check's LAVA block that also export their job (the
# rows run_again_if_died makes in kselftest_checks.check_lava): job, spec
# -> the exported job runs on the deeper device. The lab job's row takes
# its kernel and tarball as a lab hands them over (--kernel,
# --kselftest), so that row is also the proof of those options.
EXPORTED = {("debian-module", "debian:7.3"): False,
            ("source-kselftest", LAB_SPEC): True}


@dataclass
class Plan:
    export: lava_export.Export
    tmp: Path
    deep: bool
    byo: lava_byo.Byo | None


def plan(job: str, spec: str, byo: lava_byo.Byo | None = None) -> Plan | None:
    """The export (and for the lab job the lab-built artifacts: @byo, or
    @spec's) of one of make check's LAVA rows; None when that row exports
    nothing."""
    if (job, spec) not in EXPORTED:
        return None
    if job == "source-kselftest" and byo is None:
        byo = lab_byo(spec)
    tmp = Path(tempfile.mkdtemp(prefix="gupnm-lava-export-"))
    return Plan(lava_export.Export(tmp / "export", f"http://127.0.0.1:{_port()}"),
                tmp, EXPORTED[(job, spec)], byo)


def twin(t, mine: lava.LavaRun, p: Plan) -> None:
    """The row of the exported job beside the runner's own run @mine."""
    label = (f"lava --export {mine.job}{' (lab-built kernel and tarball)' if p.byo else ''}: "
             "job.yaml run unchanged by lava-run over http from a deep directory, "
             "same verdict and cases as the runner's run"
             + (f", LAVA results dir {DEEP_RESULTS} (the SKIPFILE still skips)"
                if p.deep else ""))
    try:
        theirs = run_exported(mine.job, p.export, p.tmp, p.deep, mine.spec, mine.release)
        bad = _differences(mine, theirs)
        if p.deep and not theirs.skipped_by_skipfile():
            bad.append("the SKIPFILE skipped nothing at the deeper results dir")
        ok, why = lava.validate([p.export.dir / "job.yaml"])
        if not ok:
            bad.append(why)
        t.record(f"{label} (lava-run {theirs.seconds:.0f} s; the runner's "
                 f"{mine.seconds:.0f} s)", not bad,
                 "\n".join(bad + [f"{c.definition}/{c.case}: {c.result}"
                                  for c in theirs.cases if c.definition == "lava"]))
    except (RunnerError, OSError) as err:
        t.record(label, False, str(err))
    finally:
        shutil.rmtree(p.tmp, ignore_errors=True)


def lab_byo(spec: str = LAB_SPEC) -> lava_byo.Byo:
    """@spec's kernel image and kselftest tarball, as a lab hands them over."""
    k, built = kselftest_paths.prepared(spec)
    return lava_byo.check(Path(k.image), None, Path(built.tarball))


def check(t, job: str, spec: str, p: Plan) -> None:
    """The runner's run (exporting) and the exported job's (alone)."""
    try:
        mine = lava.run(job, spec, p.tmp / "runner", export=p.export, byo=p.byo)
    except (RunnerError, OSError) as err:
        t.record(f"lava --export {job} on {spec}: the runner's run", False, str(err))
        shutil.rmtree(p.tmp, ignore_errors=True)
        return
    twin(t, mine, p)


def main(argv: list[str] | None = None) -> int:
    from .tally import Tally
    ap = argparse.ArgumentParser(prog="gupnm.check.lava_export_checks",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", dest="kernel_image", type=Path, default=None,
                   help="the lab job on this image (default: source:debian-7.3:all's)")
    ap.add_argument("--kselftest", dest="kselftest_tarball", type=Path, default=None)
    args = ap.parse_args(argv)
    t = Tally()
    if lava.available():
        t.record("lava --export: lava-run available", False, lava.available())
        return t.end()
    for job, spec in EXPORTED:
        try:
            byo = (lava_byo.check(args.kernel_image, None, args.kselftest_tarball)
                   if args.kernel_image and job == "source-kselftest" else None)
            p = plan(job, spec, byo)
        except (RunnerError, OSError) as err:
            t.record(f"lava --export {job} on {spec}: its artifacts", False, str(err))
            continue
        check(t, job, spec, p)
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
