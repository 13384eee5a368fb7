"""make check: the runner's word on a pipeline's bad day (round 3).

Each fault is provoked for real, against real Debian kernels, and held to
the runner's promise: a documented exit, one line saying what went wrong
and what to do, no traceback, never 0 or 4 for a kernel with the bug, and
nothing left in the cache that a later run trusts wrongly.

- several cold runs of different kernels at once on one new cache
  (debian:6.1, debian:bookworm-security): each its own verdict, 0 and 1;
  that cache is then the warm private cache of the checks below;
- Debian's archive out of reach (a network namespace with no route,
  `unshare -n`): a cold cache is 3 naming the archive, no lists kept; the
  warm cache with lists older than their refresh age judges as usual;
- the cache read-only (a read-only bind mount in a private mount
  namespace) and owned by another user (the run as nobody): the verdict,
  or 3 naming the directory;
- the warm cache at another path (CI caches move between hosts and
  folders): bound read-only there with its own path hidden, and the bug
  kernel's entries copied (cp -a), writable, both with the network cut:
  the verdict, nothing built, fetched or unpacked; that copy then cut
  short (a header file gone, the image .deb cut): each seen on use,
  fetched again once, the verdict, the summary saying it;
- a run interrupted (SIGTERM, SIGINT) while downloading, unpacking,
  building and booting, in a new cache, then run again: 143/130 each, the
  last run's verdict right, every entry passing its check;
- the results filesystem filling once the guest booted, before the test
  ended: never 0 or 4, 3 naming the filesystem;
- a guest with too little memory (--memory 48, 64, 96 on the bug kernel,
  80 on the pass kernel): the verdict or 3 saying it ran out, never a pass.

Alone: cd runner && python3 -m gupnm.check.contract_faults [--only NAME].
"""
from __future__ import annotations

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

from ..prepare import cache
from .contract_run import (BUG_KERNEL, BUG_MESSAGE, GUPNM, PASS_KERNEL, RUN_TIMEOUT, Run,
                           filled_at, qemu_processes, tmpfs, umount)

# Bookworm's kernels: their modules build with the host's gcc-12, so a new
# cache needs no build root. The bug kernel of a new cache, and its code.
COLD = {"debian:6.1": 0, "debian:bookworm-security": 1}
COLD_BUG = "debian:bookworm-security"
NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--")


def runner(args: list[str], *, cache_root: Path | None = None, prefix=(),
           env: dict | None = None, timeout: float = RUN_TIMEOUT,
           python: str | None = None) -> Run:
    """runner/gupnm-run @args, under @prefix (unshare, setpriv), with the
    cache @cache_root and @env (and another @python than this one)."""
    argv = [*prefix, *([python, *GUPNM[1:]] if python else GUPNM), *args]
    full = dict(os.environ, **(env or {}))
    if cache_root is not None:
        full["GUPNM_CACHE"] = str(cache_root)
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=full)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, str(e.stdout or ""), f"{e.stderr or ''}\n(killed after {timeout}s)"
    results = Path(args[args.index("--results") + 1]) if "--results" in args else None
    return Run(argv, rc, out, err, time.monotonic() - t0, results)


def _clean(r: Run) -> bool:
    """No traceback, and a failure says it in one 'gupnm: error:' line at most."""
    text = r.out + r.err
    return "Traceback" not in text and len(re.findall(r"^gupnm: error:", r.err, re.M)) <= 1


def _problems(r: Run) -> str:
    return " ".join((r.summary or {}).get("problems", []))


def _bad_entries(root: Path) -> list[str]:
    """Entries of @root's cache that a later run would take and that fail
    their check (cache.check), and temporaries of runs that are gone."""
    bad = [str(p) for p in cache.stale_temporaries(root)]
    for manifest in root.glob("*/*/" + cache.MANIFEST):
        why = cache.check(manifest.parent)
        if why:
            bad.append(f"{manifest.parent}: {why}")
    for marker in root.glob("debian/*/.gupnm-unpacked"):
        if (why := cache.check(marker.parent)):
            bad.append(f"{marker.parent}: {why}")
    return bad


def check_cold_parallel(t, base: Path) -> Path | None:
    """Two cold runs of different kernels at once on one new cache."""
    warm = base / "cache"
    runs: dict[str, Run] = {}

    def one(spec: str) -> None:
        out = base / f"cold-{spec.split(':')[1]}"
        runs[spec] = runner(["run", "--kernel", spec, "--results", str(out)],
                            cache_root=warm)
    threads = [threading.Thread(target=one, args=(spec,)) for spec in COLD]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ok = all(spec in runs and runs[spec].rc == code and _clean(runs[spec])
             and (runs[spec].summary or {}).get("spec") == spec
             for spec, code in COLD.items())
    bad = _bad_entries(warm)
    t.record("faults: two cold runs of different kernels at once on one new cache "
             f"({', '.join(COLD)}): each its verdict ({', '.join(map(str, COLD.values()))}), "
             "every entry passing its check", ok and not bad,
             f"bad entries: {bad}\n" + "\n".join(r.detail() for r in runs.values()))
    return warm if ok else None


def _stamps(cache_root: Path) -> list[Path]:
    """The update stamps of @cache_root's package lists: every suite's
    (apt/lists) and one suite's (apt/suite-S/lists, first contact)."""
    return sorted((cache_root / "apt").glob("**/lists/.gupnm-updated"))


def _stale_lists(cache_root: Path) -> None:
    """Every list of @cache_root older than its refresh age (6 h)."""
    old = time.time() - 2 * 86400
    for stamp in _stamps(cache_root):
        os.utime(stamp, (old, old))


def check_archive_away(t, base: Path, warm: Path | None) -> None:
    cold = base / "cold-offline"
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(base / "offline-cold")],
               cache_root=cold, prefix=("unshare", "-n"), timeout=300)
    ok = (r.rc == 3 and _clean(r) and "Debian's archive (http" in r.err
          and "cannot be reached" in r.err and not _stamps(cold)
          and not list((cold / "apt").glob("**/catalogue-*.json")))
    t.record("faults: exit 3, Debian's archive out of reach with a cold cache "
             "(unshare -n): one line naming the archive, no package lists kept",
             ok, r.detail())
    if warm is None:
        t.record("faults: Debian's archive out of reach, warm cache", False,
                 "no warm cache (the cold runs failed)")
        return
    _stale_lists(warm)
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(base / "offline-warm")],
               cache_root=warm, prefix=("unshare", "-n"))
    ok = (r.rc == 1 and BUG_MESSAGE in r.out and _clean(r)
          and "could not be reached" in r.err)
    t.record("faults: exit 1, Debian's archive out of reach with a warm cache whose "
             "lists are past their refresh age (unshare -n): judged as usual, the "
             "lists kept said", ok, r.detail())


def check_readonly_cache(t, base: Path, warm: Path | None) -> None:
    if warm is None:
        t.record("faults: read-only cache", False, "no warm cache (the cold runs failed)")
        return
    out = base / "readonly"
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && '
              'shift && exec "$@"')
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(out)], cache_root=warm,
               prefix=("unshare", "-m", "--propagation", "private", "sh", "-c", script,
                       "-", str(warm)))
    t.record("faults: exit 1, a read-only cache (a read-only bind mount): the "
             "verdict, worked from it", _clean(r) and r.rc == 1 and BUG_MESSAGE in r.out
             and "cannot be written" in r.err, r.detail())
    # A kernel the cache does not hold: the entry cannot be filled there.
    r = runner(["run", "--kernel", "debian:7.3", "--results", str(base / "readonly-new")],
               cache_root=warm, prefix=("unshare", "-m", "--propagation", "private", "sh",
                                        "-c", script, "-", str(warm)), timeout=300)
    t.record("faults: exit 3, a read-only cache that lacks the kernel: one line naming "
             "the directory and the reason",
             _clean(r) and r.rc == 3 and f"Read-only file system ({warm}/" in r.err,
             r.detail())
    out = base / "nobody"
    out.mkdir()
    shutil.chown(out, "nobody", "nogroup")
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(out)], cache_root=warm,
               prefix=NOBODY, env={"HOME": "/nonexistent"}, python="/usr/bin/python3")
    t.record("faults: exit 1, a cache owned by another user (the run as nobody, "
             "the cache root's): the verdict, worked from it",
             _clean(r) and r.rc == 1 and BUG_MESSAGE in r.out, r.detail())


# A step that fills an entry: none of these in a run of a warm cache.
FILLING = re.compile(r"\] (building|downloading|unpacking|extracted|making|fetching)", re.M)


def check_moved_cache(t, base: Path, warm: Path | None) -> Path | None:
    """The warm cache at another path (CI systems move caches between hosts
    and folders): bound read-only there with its own path hidden, then a
    copy of the bug kernel's entries, writable; both with the network cut.
    Returns the copy (check_cut_entries cuts it)."""
    if warm is None:
        t.record("faults: a warm cache at another path", False,
                 "no warm cache (the cold runs failed)")
        return None
    moved = base / "moved-ro"
    moved.mkdir()
    # Bound at another path, read-only; its own path hidden under an empty tmpfs.
    script = ('mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && '
              'mount -t tmpfs -o size=1m none "$1" && shift 2 && exec "$@"')
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(base / "moved-ro-run")],
               cache_root=moved, prefix=("unshare", "-n", "-m", "--propagation", "private",
                                         "sh", "-c", script, "-", str(warm), str(moved)))
    filled = FILLING.findall(r.err)
    t.record("faults: exit 1, a warm cache bound read-only at another path, its own "
             "path hidden, the network cut: the verdict, nothing built, fetched or "
             f"unpacked ({r.seconds:.0f} s)",
             _clean(r) and r.rc == 1 and BUG_MESSAGE in r.out and not filled,
             f"filling steps: {filled}\n" + r.detail())
    s = r.summary or {}
    used = [Path(s.get("kernel", {}).get("source", {}).get("boot_image", "")),
            Path((s.get("gup_test") or {}).get("module") or "")]
    release = s.get("kernel", {}).get("release")
    if r.rc != 1 or not release or not all(p.is_relative_to(moved) for p in used):
        return None
    copy = base / "copied"
    names = [p.parent.relative_to(moved) for p in used] + [
        Path(g) for g in ("selftest", "bench", "stress", f"apt/suite-{COLD_BUG.split(':')[1]}")]
    names += [p.relative_to(warm) for p in (warm / "debian").glob(f"{release}-*")]
    t0 = time.monotonic()
    for name in names:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        if (warm / name).exists():
            subprocess.run(["cp", "-a", str(warm / name), str(copy / name)], check=True)
    du = subprocess.run(["du", "-sm", str(copy)], capture_output=True, text=True).stdout.split()[0]
    took = time.monotonic() - t0
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(base / "copied-run")],
               cache_root=copy, prefix=("unshare", "-n"))
    filled = FILLING.findall(r.err)
    t.record(f"faults: exit 1, the bug kernel's entries copied (cp -a, {du} MiB in "
             f"{took:.0f} s) to another path, writable, the network cut: the verdict, "
             f"nothing built, fetched or unpacked ({r.seconds:.0f} s)",
             _clean(r) and r.rc == 1 and BUG_MESSAGE in r.out and not filled,
             f"filling steps: {filled}\n" + r.detail())
    return copy if r.rc == 1 else None


def check_cut_entries(t, base: Path, copy: Path | None) -> None:
    """Entries cut short after they were verified: the unpacked kernel's
    headers missing a file (its module gone, so that it is built again)
    and its image .deb cut (as a full disk, long ago, leaves it): each seen
    on use and fetched again once, the run judged, the summary saying it."""
    if copy is None:
        t.record("faults: cached entries cut short", False, "no copied warm cache")
        return
    roots = sorted((copy / "debian").glob("*/.gupnm-unpacked"))
    headers = sorted((copy / "debian").glob("*/usr/src/linux-headers-*-common/include/"
                                           "linux/mm.h"))
    if not roots or not headers:
        t.record("faults: cached entries cut short", False, f"no kernel in {copy}")
        return
    debs = roots[0].read_text().split()
    headers[0].unlink()
    shutil.rmtree(copy / "modules")
    (copy / "debs").mkdir(exist_ok=True)
    (copy / "debs" / debs[0]).write_bytes(b"!<arch>\n" + b"\0" * (1 << 20))
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(base / "cut-run")],
               cache_root=copy)
    notes = " ".join((r.summary or {}).get("notes", []))
    ok = (_clean(r) and r.rc == 1 and BUG_MESSAGE in r.out
          and "include/linux/mm.h missing" in notes
          and f"{debs[0]} failed its check ({debs[0]} is" in notes
          and headers[0].exists() and not _bad_entries(copy))
    t.record("faults: exit 1, a cached kernel whose headers miss a file and whose "
             "image .deb is cut: each seen on use (the headers before the module is "
             "built, the .deb against the lists' Size and SHA256), fetched again once, "
             f"noted in the summary ({r.seconds:.0f} s)", ok,
             f"notes: {notes}\n" + r.detail())


def _downloading(cache_root: Path) -> bool:
    """A package is on its way into the cache: a .deb of over 1 MiB in
    debs/ or a scratch folder of it (apt-get download writes as it goes)."""
    try:
        return any(p.stat().st_size > 1 << 20 for p in (cache_root / "debs").rglob("*.deb"))
    except OSError:
        return False


# The steps a run is interrupted in, in order: the progress line that
# starts each, the signal, and when to send it: the seconds after that
# line, or once a test on the cache holds (a download under way).
STEPS = (("downloading", r"\] downloading ", signal.SIGTERM, _downloading),
         ("unpacking", r"\] (unpacking|taking the kselftest)", signal.SIGINT, 0.5),
         ("building", r"\] building ", signal.SIGTERM, 1.0),
         ("booting", r"\] booting ", signal.SIGINT, 1.5))


def _interrupted(cache_root: Path, out: Path, pattern: str, sig: int,
                 when) -> tuple[bool, int | None, str]:
    """A run of the cold bug kernel stopped by @sig @when (seconds after
    its progress line matching @pattern, or once @when(cache) is true):
    (signal sent, exit code, stderr)."""
    env = dict(os.environ, GUPNM_CACHE=str(cache_root))
    proc = subprocess.Popen([*GUPNM, "run", "--kernel", COLD_BUG, "--results", str(out)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)
    reader.start()
    sent, since = False, None
    while proc.poll() is None and not sent:
        if since is None and any(re.search(pattern, line) for line in list(err)):
            since = time.monotonic()
        if callable(when) and when(cache_root) or \
                not callable(when) and since is not None and time.monotonic() - since >= when:
            proc.send_signal(sig)
            sent = True
        time.sleep(0.02)
    try:
        rc = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    reader.join(10)
    return sent, rc, "".join(err)


def check_interrupts(t, base: Path, warm: Path | None) -> None:
    """Interrupted in each step in turn, in a new cache, then run again."""
    new = base / "cache-interrupted"
    new.mkdir()
    if warm is not None:            # its package lists: no apt-get update again
        subprocess.run(["cp", "-a", str(warm / "apt"), str(new / "apt")], check=True)
    bad = []
    for name, pattern, sig, when in STEPS:
        seen, rc, err = _interrupted(new, base / f"int-{name}", pattern, sig, when)
        left = qemu_processes(str(base / f"int-{name}"))
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        if not seen or rc != 128 + sig or left or "Traceback" in err:
            bad.append(f"{name}: signal sent {seen}, exit {rc}, qemu left {left}\n"
                       + err[-2000:])
    r = runner(["run", "--kernel", COLD_BUG, "--results", str(base / "int-after")],
               cache_root=new)
    entries = _bad_entries(new)
    ok = not bad and r.rc == 1 and BUG_MESSAGE in r.out and _clean(r) and not entries
    t.record("faults: a run interrupted while downloading (TERM), unpacking (INT), "
             "building (TERM) and booting (INT), in a new cache: 143/130 each, no "
             "QEMU left, and the run after them gives the verdict (1), every entry "
             "passing its check", ok,
             "\n".join(bad) + f"\nbad entries: {entries}\n" + r.detail())


def check_full_during_boot(t, base: Path) -> None:
    """The results tmpfs fills once the guest booted, before the test ends."""
    mnt = base / "full-boot"
    if not tmpfs(mnt, "8m"):
        t.record("faults: results filesystem full during the boot", False, "mount failed")
        return
    outdir = mnt / "r"
    try:
        with filled_at(mnt, outdir / "status.log", "GUPNM-STATUS: booted"):
            r = runner(["run", "--kernel", BUG_KERNEL, "--results", str(outdir)])
        ok = _clean(r) and ((r.rc == 1 and BUG_MESSAGE in r.out)
                            or (r.rc == 3 and "is full" in _problems(r) + r.out))
        t.record("faults: the results filesystem full once the guest booted, before "
                 "the test ended (8 MiB tmpfs): never 0 or 4, 3 naming the filesystem "
                 "(or the verdict, 1)", ok, r.detail())
    finally:
        umount(mnt)


MEMORY = ((BUG_KERNEL, 48), (BUG_KERNEL, 64), (BUG_KERNEL, 96), (PASS_KERNEL, 80))


def check_small_memory(t, base: Path) -> None:
    """--memory too small: the verdict, or 3 saying the guest ran out;
    never a pass for the bug kernel, never a pass beside an OOM."""
    for spec, mb in MEMORY:
        out = base / f"memory-{mb}-{spec.replace(':', '-')}"
        r = runner(["run", "--kernel", spec, "--memory", str(mb), "--results", str(out),
                    "--timeout", "120"])
        said = "out of memory" in _problems(r) or "printed nothing" in _problems(r)
        try:
            oom = "Out of memory" in (out / "console.log").read_text(errors="replace")
        except OSError:
            oom = False
        judged = (r.rc == 1 and BUG_MESSAGE in r.out if spec == BUG_KERNEL
                  else r.rc == 0 and not oom)
        t.record(f"faults: --memory {mb} on {spec}: the verdict ("
                 f"{1 if spec == BUG_KERNEL else 0}) or 3 saying the guest ran out "
                 f"of memory, never a pass beside an OOM (got {r.rc})",
                 _clean(r) and (judged or (r.rc == 3 and said)), r.detail())


CHECKS = ("cold", "offline", "readonly", "moved", "interrupt", "full", "memory")


def run_all(t, *, only: tuple[str, ...] = CHECKS) -> None:
    # Outside /root (mode 700), so that nobody can reach the warm cache.
    base = Path(tempfile.mkdtemp(prefix="gupnm-faults-", dir="/var/tmp"))
    base.chmod(0o755)
    try:
        warm = None
        if {"cold", "offline", "readonly", "moved"} & set(only):
            warm = _timed("cold", check_cold_parallel, t, base)
        steps = (("offline", check_archive_away, (t, base, warm)),
                 ("readonly", check_readonly_cache, (t, base, warm)),
                 ("moved", check_moved, (t, base, warm)),
                 ("interrupt", check_interrupts, (t, base, warm)),
                 ("full", check_full_during_boot, (t, base)),
                 ("memory", check_small_memory, (t, base)))
        for name, fn, args in steps:
            if name in only:
                _timed(name, fn, *args)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def check_moved(t, base: Path, warm: Path | None) -> None:
    """The warm cache moved (read-only, then copied), then cut short."""
    check_cut_entries(t, base, check_moved_cache(t, base, warm))


def _timed(name: str, fn, *args):
    """@fn(*args), its wall time said on stderr (docs/measured.md)."""
    t0 = time.monotonic()
    try:
        return fn(*args)
    finally:
        print(f"# faults {name}: {time.monotonic() - t0:.0f} s", file=sys.stderr,
              flush=True)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from .tally import Tally
    ap = argparse.ArgumentParser(prog="gupnm-faults", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=CHECKS, default=list(CHECKS))
    args = ap.parse_args(argv)
    t = Tally()
    run_all(t, only=tuple(args.only))
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
