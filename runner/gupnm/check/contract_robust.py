"""make check: the runner's word under corruption, full disks and kills.

One row per class of break, each provoked for real where it can be:

- early errors: --results '' and a spec with a newline are exit 2 in one
  line, with a JSON error object on stdout under --json;
- a results filesystem that is full before the run (a small tmpfs): exit 2
  before anything is fetched or booted; one that fills while the guest
  runs (filled the moment the guest says its exit status): the verdict on
  stdout, exit 1 (the bug kernel), a line naming what was not written, no
  traceback, no initramfs left anywhere;
- a corrupt cache (a private copy of the cache, hard-linked, so the real
  one is never touched): a module with other bytes and a cut vmlinux are
  filled again and noted, exit 1; a module that passes its check but does
  not load is exit 3 with the kernel's reason, never a SKIP; a cut image:
  file is exit 2 naming it cut;
- SIGKILL of the runner once the guest runs: no QEMU left, and the next
  run removes the dead run's temporaries;
- parse: another test's TAP and a status.log cut before its exit marker
  are 3, as run says.

Each check is recorded through the Tally of tally.py.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ..host import REPO, cache_dir
from ..prepare import cache
from .contract_run import (BUG_KERNEL, BUG_MESSAGE, GUPNM, filled_at, gupnm, qemu_processes,
                           tmpfs, umount)

# Cache groups the private copy of the cache takes (hard links).
COPIED = ("apt", "debian", "debs", "modules", "selftest", "bench", "vmlinux")


def _no_traceback(run) -> bool:
    return "Traceback" not in run.out + run.err


def check_early_errors(t, tmp: Path) -> None:
    bad = []
    r = gupnm(["run", "--json", "--results", ""], timeout=60)
    try:
        obj = json.loads(r.out)
    except ValueError:
        obj = {}
    if r.rc != 2 or obj.get("exit_code") != 2 or "empty path" not in r.err \
            or not _no_traceback(r):
        bad.append(r.detail())
    r = gupnm(["run", "--json", "--kernel", "debian:6.12\nfoo", "--results",
               str(tmp / "nl")], timeout=60)
    lines = [line for line in r.err.splitlines() if line.startswith("gupnm")]
    if r.rc != 2 or len(lines) != 1 or "holds a control character" not in lines[0] \
            or (tmp / "nl").exists() or '"exit_code": 2' not in r.out:
        bad.append(r.detail())
    t.record("robust: --results '' and a spec with a newline are exit 2 in one line, "
             "a JSON error object on stdout with --json, nothing written",
             not bad, "\n".join(bad))


def check_full_disk(t, tmp: Path) -> None:
    if os.geteuid() != 0:
        t.record("robust: full results filesystem", False, "needs root (mount tmpfs)")
        return
    small = tmp / "full-before"
    if not tmpfs(small, "256k"):
        t.record("robust: full results filesystem", False, "mount -t tmpfs failed")
        return
    try:
        r = gupnm(["run", "--json", "--kernel", BUG_KERNEL, "--results", str(small / "r")],
                  timeout=120)
        ok = (r.rc == 2 and "free space there" in r.err and _no_traceback(r)
              and '"exit_code": 2' in r.out and r.seconds < 30)
        t.record("robust: exit 2, a results filesystem too full for a run (256 KiB "
                 "tmpfs) is refused before anything is fetched or booted", ok, r.detail())
    finally:
        umount(small)
    check_full_mid_run(t, tmp / "full-during")


def check_full_mid_run(t, mnt: Path) -> None:
    """The results tmpfs fills the moment the guest reports its exit
    status: the host has the verdict, the folder takes none of its files."""
    if not tmpfs(mnt, "8m"):
        t.record("robust: results filesystem full mid-run", False, "mount failed")
        return
    outdir = mnt / "r"
    before = set((cache_dir() / "tmp").glob("run-*"))
    try:
        with filled_at(mnt, outdir / "status.log", "GUPNM-EXIT:"):
            r = gupnm(["run", "--kernel", BUG_KERNEL, "--results", str(outdir)])
        left = set((cache_dir() / "tmp").glob("run-*")) - before
        ok = (r.rc == 1 and "verdict: " in r.out and BUG_MESSAGE in r.out
              and ("did not take" in r.out or "reports could not be written" in r.out)
              and _no_traceback(r)
              and not (outdir / "initramfs").exists() and not left)
        t.record("robust: the results filesystem full once the guest gave its verdict "
                 "(8 MiB tmpfs filled at GUPNM-EXIT): the verdict on stdout, exit 1, "
                 "what was not written named, no traceback, no initramfs left", ok,
                 f"work folders left: {sorted(map(str, left))}\n" + r.detail())
    finally:
        umount(mnt)


def _private_cache(dest: Path) -> Path:
    """A copy of this cache's kernel groups made of hard links: replacing
    a file there (never writing one in place) leaves the real cache as is."""
    dest.mkdir(parents=True, exist_ok=True)
    for group in COPIED:
        src = cache_dir() / group
        if src.is_dir():
            subprocess.run(["cp", "-al", str(src), str(dest / group)], check=True)
    return dest


def _replace(path: Path, data: bytes) -> None:
    """@path now holds @data, through a new file (the hard link is cut)."""
    tmp = path.with_name(path.name + ".contract")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _gupnm_in(cache_root: Path, args: list[str], **kw):
    old = os.environ.get("GUPNM_CACHE")
    os.environ["GUPNM_CACHE"] = str(cache_root)
    try:
        return gupnm(args, **kw)
    finally:
        if old is None:
            del os.environ["GUPNM_CACHE"]
        else:
            os.environ["GUPNM_CACHE"] = old


def _used_entries(summary: dict, priv: Path) -> tuple[Path | None, Path | None]:
    """The module and the vmlinux a run in @priv used, as its summary names
    them (None where it names none inside @priv)."""
    ko = (summary.get("gup_test") or {}).get("module")
    vm = ((summary.get("kernel") or {}).get("source") or {}).get("boot_image")
    return tuple(Path(p) if p and Path(p).is_file() and Path(p).is_relative_to(priv)
                 else None for p in (ko, vm))


def check_corrupt_cache(t, tmp: Path) -> None:
    # A run in the private cache first; the module and the vmlinux it used
    # (its summary names them: the module's key names the headers by their
    # place in the cache, so the copied entry serves it) are the ones cut.
    priv = _private_cache(tmp / "cache")
    warm = _gupnm_in(priv, ["run", "--kernel", BUG_KERNEL, "--results",
                            str(tmp / "cc-warm")])
    ko, vm = _used_entries(warm.summary or {}, priv)
    if warm.rc != 1 or not ko or not vm:
        t.record("robust: corrupt cache entries", False, "no warm run to corrupt:\n"
                 + warm.detail())
        return
    good_ko = ko.read_bytes()
    bad = bytearray(good_ko)
    bad[len(bad) // 2:len(bad) // 2 + 8] = b"CORRUPT!"
    _replace(ko, bytes(bad))
    _replace(vm, vm.read_bytes()[: vm.stat().st_size // 2])
    r = _gupnm_in(priv, ["run", "--kernel", BUG_KERNEL, "--results", str(tmp / "cc-1")])
    s = r.summary or {}
    notes = " ".join(s.get("notes", []))
    ok = (r.rc == 1 and "has another sha256" in notes and "when filled" in notes
          and ko.read_bytes() != bytes(bad) and _no_traceback(r))
    t.record("robust: a cached module with other bytes and a cut cached vmlinux are "
             "filled again and noted in the summary; the run says 1", ok,
             f"notes: {notes}\n" + r.detail())

    # Passes its check, does not load (its vermagic differs from the
    # kernel's past the release, which modversions kernels do not compare,
    # as a module built against the wrong headers does): the kernel's
    # reason, 3, never a skip.
    broken = bytearray(ko.read_bytes())
    i = broken.find(b"vermagic=")
    i = broken.find(b" SMP ", i) if i >= 0 else -1
    if i >= 0:
        broken[i + 1:i + 4] = b"PMS"
    _replace(ko, bytes(broken))
    cache.record(ko.parent, [ko.name])
    r = _gupnm_in(priv, ["run", "--kernel", BUG_KERNEL, "--results", str(tmp / "cc-2")])
    s = r.summary or {}
    problems = " ".join(s.get("problems", []))
    parsed = [gupnm(["parse", str(tmp / "cc-2" / f)], timeout=60).rc
              for f in ("console.log", "status.log")]
    ok = (i >= 0 and r.rc == 3 and s.get("outcome") == "error"
          and "did not load (modprobe:" in problems and parsed == [3, 3])
    t.record("robust: exit 3, a module the runner supplied that does not load "
             "(its vermagic is not the kernel's) is the kernel's reason, never a SKIP; "
             "parse of its console.log and status.log agrees", ok,
             f"parse exits {parsed}; problems: {problems}\n" + r.detail())

    cut = tmp / "cut-vmlinuz"
    image = sorted((cache_dir() / "debian").glob("*/boot/vmlinuz-*-amd64"))
    if image:
        cut.write_bytes(image[-1].read_bytes()[:3 << 20])
        r = gupnm(["run", "--kernel", f"image:{cut}:{tmp}", "--results",
                   str(tmp / "cc-3")], timeout=60)
        t.record("robust: exit 2, an image: file cut mid-payload is named cut "
                 "(it was a struct.error traceback)",
                 r.rc == 2 and "is cut short" in r.err and _no_traceback(r), r.detail())


def check_sigkill(t, tmp: Path) -> None:
    outdir = tmp / "killed"
    proc = subprocess.Popen([*GUPNM, "run", "--kernel", BUG_KERNEL, "--results",
                             str(outdir)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    booted = False
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            booted = "GUPNM-STATUS: booted" in (outdir / "status.log").read_text(
                errors="replace")
        except OSError:
            pass
        if booted:
            break
        time.sleep(0.1)
    work = sorted((cache_dir() / "tmp").glob(f"run-{proc.pid}.*"))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(3)
    left = qemu_processes(str(outdir))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    t.record("robust: SIGKILL of the runner while the guest runs leaves no QEMU "
             "(3 s later)", booted and not left,
             f"booted {booted}; qemu left: {left}")
    r = gupnm(["run", "--kernel", BUG_KERNEL, "--test-args", "-p 64 -B",
               "--results", str(tmp / "after-kill")])
    gone = [w for w in work if not w.exists()]
    t.record("robust: the next run removes the killed run's temporaries",
             bool(work) and gone == work and "temporaries of runs that are gone" in r.err,
             f"work folders of the killed run: {work}\n" + r.detail())


def check_parse_agrees(t, tmp: Path) -> None:
    other = tmp / "other.tap"
    other.write_text("TAP version 13\n1..1\nok 1 something_else\n"
                     "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n"
                     "GUPNM-TEST-END: exit 0\n")
    status = REPO / "runner/tests/data/real/table-debian-6.1.status.log"
    cut = tmp / "cut.status.log"
    text = status.read_text(errors="replace")
    cut.write_text(text[:text.index("GUPNM-EXIT")])
    rcs = [gupnm(["parse", str(f)], timeout=60).rc for f in (other, cut, status)]
    t.record("robust: parse says 3 for another test's TAP and a status.log cut before "
             "its exit marker, 0 for the whole log", rcs == [3, 3, 0], f"exits {rcs}")


def run_all(t, tmp: Path) -> None:
    check_early_errors(t, tmp)
    check_parse_agrees(t, tmp)
    check_full_disk(t, tmp)
    check_corrupt_cache(t, tmp)
    check_sigkill(t, tmp)


if __name__ == "__main__":
    import sys
    import tempfile

    from .tally import Tally
    tally = Tally()
    work = Path(tempfile.mkdtemp(prefix="robust-", dir=cache_dir()))
    try:
        run_all(tally, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(tally.end())
