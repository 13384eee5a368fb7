"""Run the repository's LAVA jobs with Debian's lava-dispatcher, no server.

lava/jobs/*.yaml are the job definitions, lava/devices/qemu-tcg.jinja2 the
local QEMU device (a device dictionary extending lava-server's
qemu.jinja2, rendered by lava_device.py). For one job and one kernel this
module prepares the artifacts (kernel and ramdisk; for source-kselftest
the lab's rootfs, modules and kselftest tarball of labroot.py), fills the
job's @PLACEHOLDERS@, renders the device for the job, runs

    lava-run --job-id N --output-dir DIR --device device.yaml job.yaml

and reads the per-case results LAVA itself records: the `lvl: results`
lines of lava-run's stdout. lava-run exits 0 even when cases fail, so the
results, not its exit status, carry the verdict.

Job files are validated with lava-dispatcher's own schema
(lava_common.schemas.validate, strict) by the system python3 that
lava-dispatcher is installed for.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..guest import initramfs
from ..host import REPO, RunnerError, UsageError, progress
from ..prepare import kernels
from . import kselftest_paths, labroot, lava_byo, lava_device, lava_export, linaro

LAVA_DIR = REPO / "lava"
DEVICE = lava_device.DEVICE
JOBS = {"debian-module": LAVA_DIR / "jobs" / "debian-module.yaml",
        "source-kselftest": LAVA_DIR / "jobs" / "source-kselftest.yaml"}
# The definition (LAVA's suite) holding each job's test results: the
# monitor's, or the test shell's (LAVA prefixes a definition's index), and
# the console line its test starts at. source-kselftest's splat case is in
# a suite of its own.
SUITES = {"debian-module": "gup_null_mapping", "source-kselftest": "0_kselftest-mm"}
KERNEL_SUITE = "1_gupnm-kernel"
START = {"debian-module": "GUPNM-TEST-BEGIN",
         "source-kselftest": "<LAVA_SIGNAL_STARTRUN 0_kselftest-mm"}
# The lab job's case for the test's exit status: run_vmtests.sh's line for
# ./gup_null_mapping (0 ok, 4 skip, else not ok), flattened by Linaro's
# parse-output.py.
EXIT_CASE = "mm_ksft_gup_test_sh_gup_null_mapping"
SPLAT_CASE = "kernel-splats"
# The first step of the splat definition (a negative control puts a step
# before it).
SPLAT_STEP = "          - dmesg > /tmp/gupnm-dmesg.txt\n"
SYSTEM_PYTHON = "/usr/bin/python3"
LAVA_RUN = "/usr/bin/lava-run"
TIMEOUT = 900.0

VALIDATE = """
import sys, yaml
from lava_common.schemas import validate
bad = 0
for path in sys.argv[1:]:
    try:
        validate(yaml.safe_load(open(path)), strict=True)
        print("valid", path)
    except Exception as err:
        bad += 1
        print("invalid", path, ":", err)
sys.exit(1 if bad else 0)
"""


@dataclass
class Case:
    definition: str
    case: str
    result: str


@dataclass
class LavaRun:
    job: str
    spec: str
    release: str
    cases: list[Case]
    returncode: int | None
    seconds: float
    outdir: Path
    # How the kernel was obtained (kernels.prepare's source: packages,
    # versions, sha256 of each and of the image booted).
    source: dict = field(default_factory=dict)

    def suite(self, definition: str) -> list[Case]:
        return [c for c in self.cases if c.definition == definition]

    def ours(self) -> list[Case]:
        """gup_null_mapping's cases: the monitor's all; of kselftest.yaml's
        suite, the test's own (its category also runs upstream's gup_test
        and gup_longterm: reported, not judged)."""
        cases = self.suite(SUITES[self.job])
        if self.job == "source-kselftest":
            return [c for c in cases if kselftest_paths.is_ours(c.case)]
        return cases

    def skipped_by_skipfile(self) -> list[Case]:
        """The kselftest-list entries kselftest.sh's SKIPFILE skipped
        (`collection:test skip`)."""
        return [c for c in self.suite(SUITES[self.job])
                if ":" in c.case and c.result == "skip"]

    def job_result(self) -> str | None:
        for c in self.cases:
            if c.definition == "lava" and c.case == "job":
                return c.result
        return None


def died_before_user_space(r: LavaRun) -> str | None:
    """The guest's first Oops or panic line when the kernel never started
    /init: multi-vCPU TCG now and then Oopses in early-boot text patching
    (int3 in sched_clock_cpu), an emulation artefact, not a result."""
    log = r.outdir / "lava-run.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    if "Run /init as init process" in text:
        return None
    m = re.search(r"(Oops: [^\"]*|Kernel panic - not syncing[^\"]*)", text)
    return m.group(1) if m else None


def run_again_if_died(job: str, spec: str, outdir: Path, again: Path,
                      edit: Callable[[str], str] | None = None,
                      export: lava_export.Export | None = None,
                      byo: lava_byo.Byo | None = None
                      ) -> tuple["LavaRun", list[str]]:
    """run(); when the guest died before /init (died_before_user_space),
    once more in @again, and a note that says so. The device has one boot
    try, as labs' do; a guest that never reached /init proves nothing."""
    r = run(job, spec, outdir, edit=edit, export=export, byo=byo)
    died = died_before_user_space(r)
    if not died:
        return r, []
    note = f"boot 1 died before /init ({died}): booted again"
    progress(note)
    return run(job, spec, again, edit=edit, export=export, byo=byo), [note]


def spec_problem(job: str, spec: str) -> str | None:
    """Why @spec cannot go with @job (None: it can), before anything is
    fetched or built."""
    if job not in JOBS:
        return f"unknown LAVA job '{job}': use one of {', '.join(JOBS)}"
    if job == "source-kselftest":
        try:
            linaro.locate()         # Linaro's test-definitions, for from: git
        except UsageError as err:
            return str(err)
        return kselftest_paths.spec_problem(spec)
    kernels.parse_spec(spec)        # UsageError for a bad spec
    return None


def available() -> str | None:
    """None when lava-run can run here, else what to do."""
    if not Path(LAVA_RUN).exists():
        return "lava-run not found: apt-get install lava-dispatcher (Debian 12)"
    return None


def validate(paths: list[Path]) -> tuple[bool, str]:
    """lava-dispatcher's own strict schema check of each job file."""
    proc = subprocess.run([SYSTEM_PYTHON, "-c", VALIDATE, *map(str, paths)],
                          capture_output=True, text=True)
    return proc.returncode == 0, proc.stdout + proc.stderr


def render(template: Path, values: dict[str, str]) -> str:
    """@template with every @KEY@ filled from @values; RunnerError when the
    template lacks @ARTIFACTS@ or @JOB_NAME@ or holds a key with no value."""
    text = template.read_text()
    for key in ("ARTIFACTS", "JOB_NAME"):
        if f"@{key}@" not in text:
            raise RunnerError(f"{template}: no @{key}@ to fill in")
    for key in sorted(set(re.findall(r"@([A-Z_]+)@", text))):
        if key not in values:
            raise RunnerError(f"{template}: no value for @{key}@")
        text = text.replace(f"@{key}@", str(values[key]))
    return text


RESULT_LINE = re.compile(r"""["']?lvl["']?: ["']?results\b""")
FIELD = {k: re.compile(rf"""\b{k}["']?: ["']?([^,}}'"]+)""")
         for k in ("definition", "case", "result")}


def parse_results(stdout: str) -> list[Case]:
    """The `lvl: results` lines of lava-run, one per line: JSON objects
    (2023.01) or YAML flow mappings (other releases)."""
    cases = []
    for line in stdout.splitlines():
        if not RESULT_LINE.search(line):
            continue
        try:
            msg = json.loads(line).get("msg", {})
            got = {k: msg.get(k) for k in FIELD}
        except (ValueError, AttributeError):
            got = {k: (m.group(1).strip() if (m := rx.search(line)) else None)
                   for k, rx in FIELD.items()}
        if all(got.values()):
            cases.append(Case(str(got["definition"]), str(got["case"]),
                              str(got["result"])))
    return cases


@dataclass
class Staged:
    """One job ready for lava-run: its artifacts, job and device files."""
    art: Path
    release: str
    source: dict
    job_file: Path
    device: Path


def _artifacts(job: str, spec: str, art: Path, scratch: Path,
               byo: lava_byo.Byo | None = None) -> tuple[str, dict, dict]:
    """@job's artifacts for @spec (or the lab's, @byo) in @art: the kernel,
    and the runner's ramdisk (debian-module) or the lab's rootfs, modules,
    tarball and skipfile (source-kselftest); the release; the job's other
    values; how the kernel was obtained (its summary's kernel.source)."""
    art.mkdir(parents=True, exist_ok=True)
    values: dict[str, str] = {}
    if job == "debian-module":
        prep = kernels.prepare(spec)
        contents = initramfs.Contents(prep.release, prep.module,
                                      {"gup_null_mapping": prep.test_binary},
                                      "./gup_null_mapping")
        cpio = initramfs.build(contents, scratch / "initramfs")
        shutil.move(str(cpio), art / "ramdisk.cpio")
        shutil.rmtree(scratch / "initramfs", ignore_errors=True)
        image, release, source = prep.image, prep.release, dict(prep.source)
    elif job == "source-kselftest":
        image, release, source, built = _lab_kernel(spec, scratch, byo)
        td = linaro.locate()
        labroot.build(release, None, built, td, art)
        if byo and byo.modules:
            lava_byo.modules_tar(byo.modules, art / "modules.tar")
        repo = linaro.git_copy(td)
        values["TEST_DEFINITIONS"] = str(repo)
        values["TEST_DEFINITIONS_REVISION"] = lava_export.head(repo)
        values["SKIPFILE_ARG"] = labroot.SKIPFILE_ARG
    else:
        raise RunnerError(f"unknown LAVA job {job}: use {', '.join(JOBS)}")
    shutil.copy2(image, art / "kernel")
    return release, values, source


def _lab_kernel(spec: str, scratch: Path, byo: lava_byo.Byo | None):
    """(image, release, source, built selftests) of the lab job: SPEC's
    kernel and tarball, or the lab's own (@byo)."""
    if byo is None:
        k, built = kselftest_paths.prepared(spec)
        return k.image, k.release, kselftest_paths.kernel_source(k, built), built
    built = lava_byo.built(byo, lava_byo.scratch(scratch))
    source = {"kind": "lab-built", "boot_image": str(byo.image),
              "boot_image_sha256": lava_export.sha256(byo.image),
              "modules": str(byo.modules) if byo.modules else None,
              "kselftest_tarball": str(byo.tarball), "wrapper": byo.wrapper}
    return byo.image, byo.release, source, built


def job_text(job: str, name: str, base: str, art: Path, values: dict) -> str:
    """@job filled: artifacts at URL @base (files in @art, whose sha256sum
    each url gets), @values, job name @name."""
    text = render(JOBS[job], {**values, "ARTIFACTS": base, "JOB_NAME": name})
    return lava_export.with_checksums(text, base, art)


def stage(job: str, spec: str, outdir: Path,
          edit: Callable[[str], str] | None = None,
          export: lava_export.Export | None = None,
          byo: lava_byo.Byo | None = None) -> Staged:
    """@job's artifacts, job.yaml and device.yaml in @outdir, ready for
    lava-run; with @export, the artifacts in its DIR and the job to submit
    (its URLs under the base URL) written there too."""
    outdir.mkdir(parents=True, exist_ok=True)
    art = lava_export.prepare(export) if export else outdir / "artifacts"
    release, values, source = _artifacts(job, spec, art, outdir, byo)
    what = byo.label() if byo else spec
    name = f"gup_null_mapping {job} {what}"
    job_file = outdir / "job.yaml"
    text = job_text(job, name, "file://" + str(art.resolve()), art, values)
    job_file.write_text(edit(text) if edit else text)
    if edit:
        ok, why = validate([job_file])
        if not ok:
            raise RunnerError(f"the edited job fails the schema: {why}")
    device = outdir / "device.yaml"
    device.write_text(lava_device.render(job_file))
    if export:
        _export(job, name, what, export, art, values, device, source)
    return Staged(art, release, source, job_file, device)


def _export(job: str, name: str, what: str, export: lava_export.Export,
            art: Path, values: dict, device: Path, source: dict) -> Path:
    """The job to submit into the export's DIR, checked by LAVA's schema."""
    if "TEST_DEFINITIONS" in values:
        lava_export.bare_copy(Path(values["TEST_DEFINITIONS"]),
                              art / lava_export.TEST_DEFINITIONS)
        values = {**values, "TEST_DEFINITIONS":
                  f"{export.base_url}/{lava_export.TEST_DEFINITIONS}"}
    text = job_text(job, name, export.base_url, art, values)
    path = lava_export.write(export, job, what, text, device.read_text(),
                             {"kernel_source": source})
    ok, why = validate([path])
    if not ok:
        raise RunnerError(f"the exported job fails LAVA's schema: {why}")
    progress(f"exported {job} to {export.dir} (files at {export.base_url})")
    return path


# Put at the top of a results folder's job.yaml once its artifacts are gone.
GONE = ("# The artifacts this job names were deleted after the run (GUPNM_KEEP_WORK=1\n"
        "# keeps them). For a job to submit to a lab, with its artifacts kept:\n"
        "#   gupnm-run lava JOB SPEC --export DIR --base-url URL\n")


def run(job: str, spec: str, outdir: Path, job_id: int = 1,
        edit: Callable[[str], str] | None = None,
        export: lava_export.Export | None = None,
        byo: lava_byo.Byo | None = None) -> LavaRun:
    """Prepare @spec for @job, run it with lava-run, parse LAVA's results.
    @edit: applied to the filled job's text (make check's negative
    control), which must still pass the strict schema. @export: the
    artifacts go to (and stay in) its DIR, beside the job to submit.
    @byo: the lab job on the lab's own kernel, modules and tarball."""
    why = available()
    if why:
        raise RunnerError(why)
    s = stage(job, spec, outdir, edit, export, byo)
    lava_out = outdir / "lava"
    shutil.rmtree(lava_out, ignore_errors=True)
    progress(f"lava-run {job} on {byo.label() if byo else spec} ({s.release})")
    rc, out, seconds = lava_run(s.job_file, s.device, lava_out, job_id)
    (outdir / "lava-run.log").write_text(out)
    if export is None and not os.environ.get("GUPNM_KEEP_WORK"):
        shutil.rmtree(s.art, ignore_errors=True)
        s.job_file.write_text(GONE + s.job_file.read_text())
    return LavaRun(job, byo.label() if byo else spec, s.release, parse_results(out),
                   rc, seconds, outdir, s.source)


def lava_run(job_file: Path, device: Path, lava_out: Path, job_id: int = 1,
             cwd: Path | None = None) -> tuple[int | None, str, float]:
    """lava-run on @job_file (from @cwd): its exit status (None: timed
    out), its output, the seconds it took."""
    env = dict(os.environ, LIBGUESTFS_BACKEND_SETTINGS="force_tcg")
    t0 = time.monotonic()
    try:
        proc = subprocess.run([LAVA_RUN, "--job-id", str(job_id), "--output-dir",
                               str(lava_out), "--device", str(device),
                               str(job_file)], capture_output=True, text=True,
                              env=env, timeout=TIMEOUT, cwd=cwd)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as err:
        rc = None
        out = (err.stdout or b"").decode(errors="replace") if isinstance(
            err.stdout, bytes) else (err.stdout or "")
    return rc, out, time.monotonic() - t0


def problems(r: LavaRun, bug: bool,
             failing: Callable[[str], bool] | None = None) -> list[str]:
    """What is wrong with the per-case results LAVA recorded (r.ours()).

    @bug: the kernel has the bug: verdict_driver_{read,write} (called
    verdict_shadow_* before v4 of the test) fail, everything else passes;
    otherwise every case passes. @failing, when given, names the cases
    that must fail instead (a wrong fix fails only the driver's long-term
    writable pin). Names come from the test, so the expectation is
    a pattern on them, not a frozen list. The test's own line (its exit
    status) fails exactly when a verdict must; the lab job must also give
    that line, the kernel-splat case (passing) and the SKIPFILE's skips.
    """
    if failing is None:
        def failing(name: str) -> bool:
            return bug and kselftest_paths.is_driver(name)
    out = []
    if r.returncode != 0:
        out.append(f"lava-run exited {r.returncode} (a job error, see "
                   f"{r.outdir / 'lava-run.log'})")
    if r.job_result() != "pass":
        out.append(f"LAVA's own job result is {r.job_result()}, not pass")
    cases = r.ours()
    if not cases:
        out.append(f"LAVA recorded no result of {SUITES[r.job]}")
    if not any(kselftest_paths.is_driver(c.case) for c in cases):
        out.append("no verdict_driver_* case recorded")
    names = [c.case for c in cases]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        out.append("case names recorded twice: " + ", ".join(dups))
    verdicts = [c for c in cases if not c.case.endswith("gup_null_mapping")]
    some_fail = any(failing(c.case) for c in verdicts)
    for c in cases:
        own_line = c.case.endswith("gup_null_mapping")
        want = "fail" if (some_fail if own_line else failing(c.case)) else "pass"
        if c.result != want and not (c.result == "skip" and "verdict" not in c.case):
            out.append(f"{c.case}: {c.result}, expected {want}")
    if r.job == "source-kselftest":
        out += lab_problems(r)
    return out


def lab_problems(r: LavaRun, splat_may_fail: bool = False) -> list[str]:
    """The lab job's cases beyond the verdicts: the exit status, the
    kernel-splat case (@splat_may_fail: a failing one is a verdict, not a
    problem), the skips of the SKIPFILE."""
    out = []
    if not any(c.case == EXIT_CASE for c in r.ours()):
        out.append(f"no {EXIT_CASE} case (the test's exit status)")
    splat = [c.result for c in r.suite(KERNEL_SUITE) if c.case == SPLAT_CASE]
    if splat != ["pass"] and not (splat_may_fail and splat == ["fail"]):
        out.append(f"{KERNEL_SUITE}/{SPLAT_CASE}: {splat or 'not recorded'}, "
                   "expected one pass")
    if not r.skipped_by_skipfile():
        out.append("no `collection:test skip` case: the SKIPFILE skipped nothing")
    return out
