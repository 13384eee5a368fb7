"""make check: the runner's promises, proven with real runs.

- exit codes, one check per row of the README's table, each through the
  real runner (a real boot where the row needs one): 0 debian:6.1, 1
  debian:6.12, 2 bad test arguments and a non-kernel image (refused before
  anything boots), 3 a guest timeout, 4 a whole skip (the module
  blacklisted on the kernel command line), 130 SIGINT mid-run (no qemu
  left, summary says interrupted); parse refuses a forged log;
- two runs at once in one clone (own folders, same right answer), and in
  two clones with different sources (a clone whose driver fails to load
  says 3, while this one says 1): caches keyed by content;
- corruption, full disks and kills: contract_robust.py;
- a pipeline's bad day (no network, a disk filling mid-run, too little
  memory, a read-only cache, a cache moved to another path or cut short,
  cold runs at once, interrupts): contract_faults.py;
- image: with Debian's packages unpacked into one folder: own_image.py;
- every summary produced validates against runner/summary.schema.json;
- a fresh Debian 12 root (mmdebstrap: git, make, python3, nothing else)
  runs `make run` to the verdict, twice at once; the host's apt state is
  not touched; in that root, the faults of the runner's own installs
  (fresh_faults.py: --no-install, apt's lock held, an install interrupted
  and finished by the next run).

Each check records its name, ok or not, and what went wrong, through the
Tally of tally.py.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..host import REPO, cache_dir, progress
from ..report import junit_xsd, schema
from . import fresh_faults
from .contract_run import (BUG_KERNEL, BUG_MESSAGE, GUPNM, PASS_KERNEL, RUN_TIMEOUT, Run, gupnm,
                           qemu_processes)

FRESH_SUITE = "bookworm"
FRESH_SOURCES = [
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
]
FRESH_TIMEOUT = 45 * 60


def _expect(run: Run, code: int, *, outcome: str | None = None,
            verdict: str | None = None) -> tuple[bool, str]:
    s = run.summary
    problems = []
    if run.rc != code:
        problems.append(f"exit {run.rc}, expected {code}")
    if s is None:
        problems.append(f"no summary.json in {run.results}")
    else:
        if s.get("exit_code") != code:
            problems.append(f"summary exit_code {s.get('exit_code')}, expected {code}")
        if outcome and s.get("outcome") != outcome:
            problems.append(f"summary outcome {s.get('outcome')}, expected {outcome}")
        if verdict and verdict not in s.get("verdict", ""):
            problems.append(f"verdict {s.get('verdict')!r} lacks {verdict!r}")
        errs = schema.errors(s)
        if errs:
            problems.append("summary breaks runner/summary.schema.json: " + "; ".join(errs[:5]))
        for name in ("summary.json", "junit.xml", "ktap.txt"):
            f = run.results / name
            if not f.exists() or f.stat().st_mode & 0o044 != 0o044:
                problems.append(f"{f} missing or not readable by all")
        problems += _junit_problems(run.results / "junit.xml")
    return not problems, "\n".join(problems) + "\n" + run.detail()


def _junit_problems(path: Path) -> list[str]:
    """What keeps @path from being a JUnit report Jenkins and GitLab read."""
    try:
        errs = junit_xsd.errors(path.read_bytes())
    except OSError:
        return []                       # said above: missing or unreadable
    except junit_xsd.CannotCheck as err:
        return [f"cannot check {path}: {err}"]
    return [f"{path} breaks {junit_xsd.XSD.name}: " + "; ".join(errs[:5])] if errs else []


def check_exit_codes(t, tmp: Path) -> None:
    """One check per row of the README's exit-status table."""
    def res(name: str) -> str:
        return str(tmp / name)

    r = gupnm(["run", "--kernel", PASS_KERNEL, "--results", res("row0")])
    t.record(f"contract: exit 0, the test ran to its end and passed ({PASS_KERNEL})",
             *_expect(r, 0, outcome="pass", verdict="PASS"))

    # Row 1 is proven by the two parallel runs of check_parallel().

    bad = []
    for args in (["--test-args", "-p -5"], ["--test-args", "-p 999999999"],
                 ["--test-args=-h"], ["--test-args", "-x"]):
        r = gupnm(["run", "--kernel", BUG_KERNEL, *args, "--results", res("row2-args")],
                  timeout=120)
        if r.rc != 2 or "bad --test-args" not in r.err or (tmp / "row2-args").exists() \
                or r.seconds > 30:
            bad.append(r.detail())
    t.record("contract: exit 2, bad test arguments refused on the host before "
             "anything is fetched or booted (-p -5, -p 999999999, -h, -x)", not bad,
             "\n".join(bad))

    junk = tmp / "notakernel"
    junk.write_bytes(b"MZ this is no kernel\n" * 100)
    r = gupnm(["run", "--kernel", f"image:{junk}:{tmp}", "--results", res("row2-img")],
              timeout=120)
    t.record("contract: exit 2, a file that is not a kernel as image:",
             r.rc == 2 and "is not an x86 kernel image" in r.err, r.detail())

    r = gupnm(["run", "--kernel", BUG_KERNEL, "--timeout", "1", "--retries", "0",
               "--results", res("row3")])
    ok, detail = _expect(r, 3, outcome="error")
    s = r.summary or {}
    ok = ok and any("timed out after 1 s" in p for p in s.get("problems", []))
    t.record("contract: exit 3, the guest timed out (--timeout 1)", ok, detail)

    r = gupnm(["run", "--kernel", BUG_KERNEL, "--append", "module_blacklist=gup_test",
               "--results", res("row4")])
    ok, detail = _expect(r, 4, outcome="skip", verdict="SKIP")
    t.record("contract: exit 4, the whole test skipped (gup_test blacklisted on "
             "purpose with --append: the one module failure that stays a skip)", ok, detail)

    check_sigint(t, tmp / "row130")
    check_parse(t, tmp)
    check_expectations(t, tmp)


# A file that expects Debian's 6.12 fixed: the default's rules, then the
# line the day Debian backports c494788faffe would add (the last rule wins).
FIXED_612 = "6.12  verdict_driver_*  pass  # as if Debian had backported the fix\n"


def check_expectations(t, tmp: Path) -> None:
    """--expect gates a Debian 6.12 job on 'as expected' (docs/expectations.md):
    the bug with Debian's file is exit 0, a file expecting the fix turns it
    red (exit 1), a bad line is exit 2 before anything runs."""
    default = REPO / "runner" / "expectations" / "debian.txt"
    r = gupnm(["run", "--kernel", BUG_KERNEL, "--expect", str(default),
               "--results", str(tmp / "expect-default")])
    ok, detail = _expect(r, 0, outcome="fail", verdict=BUG_MESSAGE)
    e, s = (r.summary or {}).get("expected") or {}, r.summary or {}
    known = sorted(c["name"] for c in e.get("cases", []) if c["kind"] == "known failure")
    junit = (r.results / "junit.xml").read_text() if r.results and \
        (r.results / "junit.xml").exists() else ""
    ok = ok and s.get("as_expected") is True and e.get("test_exit_code") == 1 \
        and known == ["verdict_driver_read", "verdict_driver_write"] \
        and "known failure: verdict_driver_read (expected: fail" in r.out \
        and junit.count("<skipped>known failure (expected: fail") == 2
    t.record(f"expectations: {BUG_KERNEL} (the bug) with --expect "
             "runner/expectations/debian.txt is exit 0, as expected: its two "
             "known failures named in the report, summary.json and junit.xml "
             "(skipped)", ok, detail)
    fixed = tmp / "expect-fixed.txt"
    fixed.write_text(default.read_text() + FIXED_612)
    r = gupnm(["run", "--kernel", BUG_KERNEL, "--expect", str(fixed),
               "--results", str(tmp / "expect-fixed")])
    ok, detail = _expect(r, 1, outcome="fail", verdict=BUG_MESSAGE)
    ok = ok and (r.summary or {}).get("as_expected") is False \
        and "NEW FAILURE: verdict_driver_read (expected: pass" in r.out
    t.record(f"expectations: {BUG_KERNEL} with a file expecting the fix is exit 1, "
             "NEW FAILURE named", ok, detail)
    bad = tmp / "expect-bad.txt"
    bad.write_text("# a typo on line 2\n6.12 verdict_driver_read fial\n")
    r = gupnm(["run", "--kernel", BUG_KERNEL, "--expect", str(bad),
               "--results", str(tmp / "expect-bad")], timeout=60)
    t.record("expectations: a bad line is exit 2 naming FILE:LINE, nothing run",
             r.rc == 2 and f"{bad}:2: expectation 'fial'" in r.err
             and not (tmp / "expect-bad").exists(), r.detail())


# gup_test's init replaced by one that fails: the module cannot load.
# <linux/module.h> first: it defines late_initcall() for modules, and its
# include guard then keeps gup_test.c's own include from undoing this.
BROKEN_INIT = ("/* broken on purpose by make check */\n"
               "#include <linux/module.h>\n#undef late_initcall\n"
               "#define late_initcall(fn) static int __init gupnm_broken_init(void) "
               "{ return -ENODEV; } module_init(gupnm_broken_init)\n")


def check_sigint(t, outdir: Path) -> None:
    """SIGINT once the guest runs: exit 130, no qemu left, summary interrupted."""
    argv = [*GUPNM, "run", "--kernel", BUG_KERNEL, "--results", str(outdir)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True)
    reader = threading.Thread(target=lambda: setattr(proc, "text", proc.stdout.read()))
    reader.start()
    deadline = time.monotonic() + RUN_TIMEOUT
    running = False
    while time.monotonic() < deadline and proc.poll() is None:
        status = outdir / "status.log"
        if status.exists() and "GUPNM-STATUS: booted" in status.read_text(errors="replace"):
            running = True
            break
        time.sleep(0.2)
    detail = ""
    if running:
        # At once: the whole test can end within a second of "booted"
        # (the guest ran it 0.5 s after init once), and a SIGINT after it
        # tests nothing (a run here ended with exit 1 that way).
        time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
    try:
        rc = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
        detail += "the runner did not end within 60 s of SIGINT\n"
    reader.join(10)
    time.sleep(0.5)
    left = qemu_processes(str(outdir))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    summary = None
    try:
        summary = json.loads((outdir / "summary.json").read_text())
    except (OSError, ValueError):
        pass
    ok = (running and rc == 130 and not left and summary is not None
          and summary.get("outcome") == "interrupted" and summary.get("exit_code") == 130
          and not schema.errors(summary))
    if not running:
        detail += "the guest never reported booted; SIGINT not sent\n"
    detail += (f"exit {rc}; qemu left: {left}; summary outcome "
               f"{(summary or {}).get('outcome')}\n" + getattr(proc, "text", "")[-3000:])
    t.record("contract: exit 130, SIGINT mid-run stops qemu (none left) and the "
             "summary says interrupted", ok, detail)


def check_parse(t, tmp: Path) -> None:
    """parse: same table; a forged log and non-logs never exit 0."""
    real = REPO / "runner/tests/data/real/debian-6.12.console.log"
    text = real.read_text(errors="replace")
    # The driver row's failures (named "shadow" by the test before v4, as
    # in this real log; "driver" since) rewritten as ok.
    forged = re.sub(r"^not ok (\d+) (verdict_(?:shadow|driver)_\w+)", r"ok \1 \2", text,
                    flags=re.M)
    cases = [("forged.log", forged, 1), ("real.log", text, 1), ("empty.log", "", 2),
             ("binary.log", None, 2)]
    bad = []
    for name, content, want in cases:
        f = tmp / name
        if content is None:
            f.write_bytes(bytes(range(256)) * 64)
        else:
            f.write_text(content)
        r = gupnm(["parse", str(f)], timeout=60)
        if r.rc != want:
            bad.append(f"{name}: exit {r.rc}, expected {want}\n{r.out}{r.err}")
    t.record("contract: parse exits 1 on a forged log (failures rewritten as ok), "
             "2 on an empty or binary file, never 0", not bad and forged != text,
             "\n".join(bad))


def _copy_tree(dest: Path) -> None:
    """This working tree (tracked files, as they are now) into @dest."""
    files = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True,
                           check=True).stdout.split(b"\0")
    for rel in filter(None, files):
        src = REPO / rel.decode()
        if src.is_file():
            out = dest / rel.decode()
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, out)


def _parallel(runs: list[tuple[list[str], Path]]) -> list[Run]:
    out: list[Run | None] = [None] * len(runs)

    def one(i, args, repo):
        out[i] = gupnm(args, repo=repo)
    threads = [threading.Thread(target=one, args=(i, a, r)) for i, (a, r) in enumerate(runs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return out


def check_parallel(t, tmp: Path) -> None:
    # Two runs in this clone at once, default results folders.
    a, b = _parallel([(["run", "--kernel", BUG_KERNEL], REPO)] * 2)
    for r, label in ((a, "first"), (b, "second")):
        t.record(f"contract: exit 1, bug present ({BUG_KERNEL}; the {label} of two "
                 "parallel runs)", *_expect(r, 1, outcome="fail", verdict=BUG_MESSAGE)) \
            if r.results else t.record(f"contract: exit 1 ({label} parallel run)", False,
                                       r.detail())
    t.record("parallel: two runs in one clone at once get their own results folders",
             bool(a.results and b.results and a.results != b.results),
             f"{a.results} {b.results}")

    # Two clones with different sources at once: one whose driver cannot
    # load (its test skips, 4) beside this one (1). Shared caches keyed by
    # anything but content would hand one clone the other's module.
    other = tmp / "clone-broken"
    _copy_tree(other)
    # The module's source is the series' gup_test; its out-of-tree shim
    # header is this clone's own, so the break goes there.
    drv = other / "oot/gup_test_compat.h"
    text = drv.read_text()
    broken = text.replace("#endif /* _GUP_TEST_COMPAT_H */", BROKEN_INIT + "#endif /* _GUP_TEST_COMPAT_H */")
    if broken == text:
        t.record("parallel: two clones with different sources at once", False,
                 f"could not break {drv}: its include guard's #endif not found")
        return
    drv.write_text(broken)
    mine, theirs = _parallel([(["run", "--kernel", BUG_KERNEL, "--results",
                                str(tmp / "par-mine")], REPO),
                              (["run", "--kernel", BUG_KERNEL, "--results",
                                str(tmp / "par-broken")], other)])
    ok1, d1 = _expect(mine, 1, verdict=BUG_MESSAGE)
    ok2, d2 = _expect(theirs, 3, outcome="error")
    ok2 = ok2 and "did not load" in " ".join((theirs.summary or {}).get("problems", []))
    t.record("parallel: two clones with different sources at once: this one says 1 "
             "(bug present), the one with a driver that cannot load says 3 (the "
             "runner's module did not load: never a skip)", ok1 and ok2,
             d1 + "\n" + d2)


def check_fresh_machine(t) -> None:
    """`make run` in a fresh Debian 12 root holding git, make and python3 only."""
    if os.geteuid() != 0:
        t.record("fresh machine: make run on a fresh Debian 12", False,
                 "needs root (mmdebstrap, chroot): run make check as root")
        return
    if not shutil.which("mmdebstrap"):
        t.record("fresh machine: make run on a fresh Debian 12", False,
                 "mmdebstrap not found: apt-get install mmdebstrap (.ci/run does)")
        return
    work = Path(tempfile.mkdtemp(prefix="fresh-", dir=cache_dir()))
    root = work / "root"
    log = work / "make-run.log"
    try:
        failed, setup_s = _fresh_root(root)
        if failed:
            t.record("fresh machine: make run on a fresh Debian 12", False, failed)
            return
        fresh_faults.check_no_install(t, root, work)
        # Two first runs at once (parallel CI jobs on a new host): the
        # figures are the first's.
        progress("fresh machine: make run inside it, twice at once (tools, kernel "
                 "and headers downloaded from nothing)")
        logs = [log, work / "make-run-beside.log"]
        (rc, total), (_, beside) = fresh_faults.first_runs(root, logs, _make_run_argv())
        print(f"# fresh machine: the make run beside it ended at {beside:.0f}s", flush=True)
        ok = _record_fresh_run(t, log, rc, setup_s, total)
        ok = fresh_faults.record_first_runs(t, logs, BUG_MESSAGE) and ok
        ok = _record_fresh_cache(t, root / "root/.cache/gupnm", log) and ok
        interrupted = fresh_faults.check_interrupted_install(t, root, work)
        warm = work / "make-run-warm.log"
        ok = _record_warm_run(t, root, warm) and interrupted and ok
        fresh_faults.record_repaired(t, root, warm, interrupted)
        if ok:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        if _mounted_under(root):
            t.record("fresh machine: no mount left behind", False,
                     "\n".join(_mounted_under(root)))
        # Keep the log of a failure (in the cache's fresh-* folder), drop the root.
        shutil.rmtree(root, ignore_errors=True)


def _fresh_root(root: Path) -> tuple[str, float]:
    """A Debian 12 root at @root (mmdebstrap: git, make, python3) holding a
    clone of this working tree: what failed ("" when it is ready) and the
    seconds mmdebstrap took."""
    progress(f"fresh machine: mmdebstrap {FRESH_SUITE} (git, make, python3) into {root}")
    t0 = time.monotonic()
    proc = subprocess.run(["mmdebstrap", "--variant=apt", "--include=git,make,python3",
                           "--mode=root", FRESH_SUITE, str(root), *FRESH_SOURCES],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode:
        return "mmdebstrap failed:\n" + (proc.stdout + proc.stderr)[-3000:], 0.0
    setup_s = time.monotonic() - t0
    subprocess.run(["git", "clone", "-q", "--no-local", str(REPO), str(root / "root/gupnm")],
                   check=True, capture_output=True)
    _copy_tree(root / "root/gupnm")       # what the working tree is now
    shutil.copy2("/etc/resolv.conf", root / "etc/resolv.conf")
    return "", setup_s


def _record_warm_run(t, root: Path, log: Path) -> bool:
    """make run again in @root, in a network namespace of its own (no
    network at all): the warm path reaches the same verdict; ok?"""
    t0 = time.monotonic()
    rc = _make_run_in(root, log, network=False)
    total = time.monotonic() - t0
    text = log.read_text(errors="replace")
    verdict = re.search(r"^verdict: (.*)$", text, re.M)
    code = re.search(r"^exit:\s+(\d+)$", text, re.M)
    ok = bool(verdict and BUG_MESSAGE in verdict.group(1) and code
              and code.group(1) == "1")
    print(f"# fresh machine: a second make run, without network: {total:.1f}s; "
          f"make exit {rc}", flush=True)
    t.record("fresh machine: a second make run needs no network (a network "
             "namespace of its own): the same verdict (exit 1, bug present)", ok,
             f"make exit {rc}; see {log}\n" + text[-3000:])
    return ok


def _make_run_argv() -> list[str]:
    """`make run` as the README writes it: make run's own default kernel
    (a bug kernel), unless the bug kernel is overridden."""
    return ["make", "-C", "/root/gupnm", "run",
            *([f"KERNEL={BUG_KERNEL}"] if "GUPNM_CONTRACT_BUG_KERNEL" in os.environ else [])]


def _make_run_in(root: Path, log: Path, network: bool = True) -> int | None:
    """`make run` chrooted into @root (fresh_faults.in_root: its mounts in
    a private mount namespace, vanishing with it), output to @log; make's
    exit code (None: timed out). @network False: in a network namespace
    of its own, with no interface up but lo's."""
    progress("fresh machine: make run inside it (tools, kernel and headers "
             "downloaded from nothing)" if network else
             "fresh machine: make run inside it again, without network")
    with open(log, "w") as fh:
        try:
            return subprocess.run(fresh_faults.in_root(root, _make_run_argv(), network=network),
                                  stdout=fh, stderr=subprocess.STDOUT,
                                  timeout=FRESH_TIMEOUT).returncode
        except subprocess.TimeoutExpired:
            return None


def _record_fresh_run(t, log: Path, rc: int | None, setup_s: float, total: float) -> bool:
    """The verdict make run reached in the fresh root, and its times; ok?"""
    text = log.read_text(errors="replace")
    download = downloading_seconds(text)
    verdict = re.search(r"^verdict: (.*)$", text, re.M)
    code = re.search(r"^exit:\s+(\d+)$", text, re.M)
    ok = bool(verdict and BUG_MESSAGE in verdict.group(1) and code
              and code.group(1) == "1")
    print(f"# fresh machine: mmdebstrap {setup_s:.0f}s (not counted); make run to "
          f"the verdict {total:.0f}s: {download:.0f}s downloading, "
          f"{total - download:.0f}s the rest; make exit {rc}, runner "
          f"exit {code.group(1) if code else '?'}", flush=True)
    t.record("fresh machine: make run on a fresh Debian 12 (git, make, python3 only) "
             "reaches the verdict (exit 1, bug present)", ok,
             f"make exit {rc}; see {log}\n" + text[-4000:])
    return ok


# What one make run may leave in the cache of a fresh machine (issue 30):
# the unpacked kernel and headers, the module, the test, a vmlinux, one
# suite's apt lists; never a kernel source.
FRESH_CACHE_LIMIT = 600 * 1024 * 1024


def _record_fresh_cache(t, cache: Path, log: Path) -> bool:
    """What make run left in the fresh root's cache: no linux-source
    package fetched or unpacked, and under FRESH_CACHE_LIMIT; ok?"""
    sources = sorted(str(p.relative_to(cache)) for p in cache.rglob("linux-source*"))
    said = [line for line in log.read_text(errors="replace").splitlines()
            if "linux-source" in line]
    t.record("fresh machine: make run's default path fetched no linux-source "
             "package", cache.is_dir() and not sources and not said,
             "\n".join(sources + said) or f"no cache at {cache}")
    size = _tree_bytes(cache)
    print(f"# fresh machine: the cache after make run holds {size / 2**20:.0f} MiB "
          + ", ".join(f"{p.name} {_tree_bytes(p) / 2**20:.0f}"
                      for p in sorted(cache.iterdir()) if p.is_dir())
          if cache.is_dir() else "# fresh machine: no cache", flush=True)
    t.record(f"fresh machine: the cache after make run holds at most "
             f"{FRESH_CACHE_LIMIT // 2**20} MiB", cache.is_dir()
             and size <= FRESH_CACHE_LIMIT, f"{size / 2**20:.0f} MiB in {cache}")
    return not sources and not said and size <= FRESH_CACHE_LIMIT


def _tree_bytes(path: Path) -> int:
    """Bytes of the files under @path (each hard link once)."""
    seen, total = set(), 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def downloading_seconds(text: str) -> float:
    """Seconds the runner's progress lines spent downloading: from each
    "downloading ..." line to the line after it."""
    stamps = [(float(m.group(1)), m.group(2)) for m in
              re.finditer(r"^\[\s*([\d.]+)s\] (.*)$", text, re.M)]
    total = 0.0
    for (ts, msg), (nxt, _) in zip(stamps, stamps[1:]):
        if msg.startswith("downloading"):
            total += nxt - ts
    return total


def _mounted_under(root: Path) -> list[str]:
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    return [m for m in mounts if f" {root}/" in m or f" {root} " in m]


def run_all(t, *, fresh: bool = True) -> None:
    from . import contract_faults, contract_robust, own_image
    tmp = Path(tempfile.mkdtemp(prefix="contract-", dir=cache_dir()))
    try:
        check_exit_codes(t, tmp)
        contract_robust.run_all(t, tmp)
        contract_faults.run_all(t)
        own_image.check(t, tmp)
        check_parallel(t, tmp)
        if fresh:
            check_fresh_machine(t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Only these checks: python3 -m gupnm.check.contract [--no-fresh | --fresh-only]."""
    import argparse

    from .tally import Tally
    ap = argparse.ArgumentParser(prog="gupnm-contract", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-fresh", action="store_true")
    ap.add_argument("--fresh-only", action="store_true")
    args = ap.parse_args(argv)
    t = Tally()
    if args.fresh_only:
        check_fresh_machine(t)
    else:
        run_all(t, fresh=not args.no_fresh)
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
