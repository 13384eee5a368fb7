"""`gupnm-run cache`: what the cache and results/ hold, and cleaning them.

The cache (GUPNM_CACHE, default ~/.cache/gupnm) is grouped by what a user
would clean:

  kernels   unpacked Debian kernels, source-kernel trees and builds, modules,
            extracted vmlinux files, test, benchmark and stress binaries,
            series, the kselftest trees and tarballs of `kselftest` and the
            lab job (kselftest-paths/), patched trees, arm64's busybox (and
            what older runners kept: kselftest headers, the series' gup_test
            source, now in the repository's generated/)
  sources   downloaded packages (debs/: a Debian kernel's are dropped once
            it is unpacked and its module built), linux-source git bases
            (src/: source kernels and make patches only), the runner's own
            apt lists (apt/: every suite's, and one suite's alone in
            apt/suite-SUITE for debian:SUITE), lava-server's templates and
            Linaro's test-definitions for `lava` (lava/), virtme-ng (vng/,
            make check's host mode)
  ccache    the compiler cache of kernel builds
  chroots   per-suite build roots
  results   this clone's results/ folders (not in the cache)

Everything is keyed by content, so a removed entry is rebuilt or fetched
again on the next run that needs it. Cleaning while another run uses an
entry breaks that run: clean between runs. --older-than DAYS removes only
entries (the children of a group's folders) last modified before then.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..host import (REPO, RunnerError, UsageError, cache_dir, owner_alive, owner_tag,
                    progress)

GROUPS = {
    "kernels": ("debian", "kernels", "modules", "vmlinux", "selftest", "bench",
                "kselftest", "gup_test-source", "stress", "series", "tmp", "probe",
                "debian-image", "image-kbuild", "kselftest-paths", "patched",
                "busybox", "revision", "debs-unpacked"),
    "sources": ("debs", "src", "apt", "lava", "vng"),
    "ccache": ("ccache",),
    "chroots": ("chroots",),
}
RESULTS = "results"


def _size(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        try:
            return path.lstat().st_size
        except OSError:
            return 0
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def folders(group: str, results: Path | None = None) -> list[Path]:
    if group == RESULTS:
        return [results or REPO / "results"]
    if group not in GROUPS:
        raise UsageError(f"unknown cache group '{group}': use "
                         + ", ".join([*GROUPS, RESULTS, "all"]))
    return [cache_dir() / name for name in GROUPS[group]]


def sizes(results: Path | None = None) -> list[tuple[str, Path, int]]:
    """(group, folder, bytes) of every folder that exists, plus the rest."""
    out = []
    known = set()
    for group in [*GROUPS, RESULTS]:
        for folder in folders(group, results):
            known.add(folder.name if group != RESULTS else None)
            if folder.exists():
                out.append((group, folder, _size(folder)))
    for other in sorted(cache_dir().iterdir()):
        if other.name not in known and other.name != "locks":
            out.append(("other", other, _size(other)))
    return out


def show(results: Path | None = None) -> str:
    rows = sizes(results)
    lines = [f"{'group':8}  {'size':>10}  folder"]
    for group, folder, n in rows:
        lines.append(f"{group:8}  {human(n):>10}  {folder}")
    lines.append(f"{'total':8}  {human(sum(n for _, _, n in rows)):>10}")
    return "\n".join(lines)


def clean(groups: list[str], older_than_days: float | None = None,
          results: Path | None = None, *, now: float | None = None) -> list[tuple[Path, int]]:
    """Remove the entries of @groups ("all" = every group); returns what went."""
    if older_than_days is not None and older_than_days < 0:
        raise UsageError("--older-than takes a number of days, 0 or more")
    if "all" in groups:
        groups = [*GROUPS, RESULTS]
    cutoff = None if older_than_days is None else \
        (now or time.time()) - older_than_days * 86400
    removed = []
    for group in groups:
        for folder in folders(group, results):
            if not folder.is_dir():
                continue
            for entry in sorted(folder.iterdir()):
                try:
                    mtime = entry.lstat().st_mtime
                except OSError:
                    continue
                if cutoff is not None and mtime >= cutoff:
                    continue
                n = _size(entry)
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
                removed.append((entry, n))
    return removed


# Every entry the runner fills records the size and sha256 of its files
# here, and is checked against it on each use. The sha256 is computed again
# only when a file's change time says it may have changed (any write or
# truncation sets it; utime cannot): a warm run does not hash 60 MB.
MANIFEST = ".gupnm-manifest.json"


class CacheError(RunnerError):
    """A cache entry failed its check again after being filled afresh."""


def scratch(parent: Path, prefix: str) -> Path:
    """A new private folder in @parent whose name starts with @prefix, to be
    filled and renamed into an entry: mode 0755, not mkdtemp's 0700, so
    that a run as another user can read the entry it becomes."""
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    tmp.chmod(0o755)
    return tmp


@contextmanager
def filling(out: Path) -> Iterator[Path]:
    """A private folder beside the entry @out (scratch(), named so that
    stale_temporaries() knows its owner) to fill in the with-block; when
    the block ends normally it replaces @out whole by a rename, and in any
    case nothing of it is left."""
    tmp = scratch(out.parent, f".{out.name}-{owner_tag()}-")
    try:
        yield tmp
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def record(entry: Path, names: Iterable[str]) -> None:
    """Write @entry's manifest: size and sha256 of each of @names (paths
    relative to @entry), when the entry is filled."""
    files = {}
    for name in names:
        path = entry / name
        files[name] = {"sha256": sha256(path), "stamp": _stamp(path.stat())}
    record_files(entry, files)


def check(entry: Path) -> str | None:
    """None when every file @entry's manifest names has its recorded size
    and sha256; else what is wrong, in a few words."""
    try:
        files = json.loads((entry / MANIFEST).read_text())["files"]
    except FileNotFoundError:
        return "no record of its files' size and sha256 (filled by an older runner?)"
    except (OSError, ValueError, KeyError, TypeError):
        return f"its {MANIFEST} is unreadable"
    refreshed = False
    for name, want in files.items():
        path = entry / name
        try:
            st = path.stat()
        except OSError:
            return f"{name} is missing"
        if st.st_size != want["stamp"][0]:
            return f"{name} is {st.st_size} bytes, {want['stamp'][0]} when filled"
        if _stamp(st) == want["stamp"]:
            continue
        if sha256(path) != want["sha256"]:
            return f"{name} has another sha256 than when filled"
        want["stamp"], refreshed = _stamp(st), True
    if refreshed:           # the same bytes, touched: do not hash them again
        try:
            record_files(entry, files)
        except OSError:
            pass
    return None


# A folder entry (an unpacked Debian kernel, a build root) also lists every
# file under it with its size (a symlink: its target), so that one cut
# short after it was filled (a file gone, truncated) is seen when it is
# used: before a module is built against it (a warm run builds nothing and
# does not walk it). Only sizes: a stat per file (17,000 in 6.12's
# headers: 0.13-0.15 s at load 7 on this 2-core machine), no read.
TREE = ".gupnm-tree.json"


def _listing(entry: Path, skip: Iterable[str] = ()) -> dict[str, int | str]:
    """relative path -> size (a symlink: '-> target') of every file under
    @entry but the runner's own (.gupnm-*) and the top-level folders @skip."""
    out: dict[str, int | str] = {}

    def walk(folder: str, prefix: str, skipped) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for e in entries:
            if e.name.startswith(".gupnm-") or e.name in skipped:
                continue
            try:
                if e.is_symlink():
                    out[prefix + e.name] = f"-> {os.readlink(e.path)}"
                elif e.is_dir():
                    walk(e.path, f"{prefix}{e.name}/", ())
                else:
                    out[prefix + e.name] = e.stat(follow_symlinks=False).st_size
            except OSError:
                pass
    walk(str(entry), "", set(skip))
    return out


def record_tree(entry: Path, skip: Iterable[str] = ()) -> None:
    """Write @entry's listing (TREE): every file's size, when filled."""
    skip = sorted(skip)
    tmp = entry / f"{TREE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"skip": skip, "files": _listing(entry, skip)}))
    os.replace(tmp, entry / TREE)


def check_tree(entry: Path) -> str | None:
    """None when every file @entry's listing names is there with its size
    (or when it has no listing); else what is wrong, in a few words."""
    try:
        data = json.loads((entry / TREE).read_text())
        want, skip = data["files"], data.get("skip", [])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return f"its {TREE} is unreadable"
    have = _listing(entry, skip)
    bad = [name for name, size in want.items() if have.get(name) != size]
    if not bad:
        return None
    gone = [n for n in bad if n not in have]
    shown = ", ".join(f"{n} {'missing' if n in gone else 'cut or changed'}"
                      for n in bad[:3])
    return (f"{len(bad)} of its {len(want)} files missing or not of their size "
            f"when filled: {shown}" + (" ..." if len(bad) > 3 else ""))


def listed(entry: Path, skip: Iterable[str] = ()) -> None:
    """Give @entry, filled by a runner that kept no listing, one of what it
    holds now (it passed every other check): later uses check it. Left as
    is in a cache this run cannot write."""
    if not (entry / TREE).exists():
        try:
            record_tree(entry, skip)
        except OSError:
            pass


def ident(path: Path) -> str:
    """What names @path in a cache key: its place inside the cache
    ('cache:debian/KEY/...', the same wherever the cache is copied or
    mounted), or its absolute path when it is outside."""
    root = cache_dir().resolve()
    try:
        return "cache:" + str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def record_files(entry: Path, files: dict) -> None:
    tmp = entry / f"{MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"files": files}, indent=1, sort_keys=True))
    os.replace(tmp, entry / MANIFEST)


_repairs: list[str] = []


def note_repair(note: str) -> None:
    """Note, for the run's summary, an entry found broken and filled again."""
    _repairs.append(note)


def repairs() -> list[str]:
    """Notes on the entries this run found broken and filled again."""
    return list(_repairs)


def take_repairs() -> list[str]:
    """repairs(), forgotten once taken (one run's summary says them)."""
    taken = repairs()
    _repairs.clear()
    return taken


def checked(entry: Path, fill: Callable[[], None], *, group: str) -> None:
    """Make sure @entry is filled and passes its check: an entry that fails
    is removed and filled once more by @fill (which records its manifest);
    failing again is a CacheError naming the entry and the way out. Call
    under the entry's lock."""
    if entry.exists():
        why = check(entry)
        if why is None:
            return
        discard(entry, why)
    fill()
    verify_filled(entry, group)


def discard(entry: Path, why: str) -> None:
    """Remove @entry, which failed its check for @why, saying so; noted
    for the run's summary unless it merely predates manifests."""
    progress(f"cache entry {entry} failed its check ({why}); filling it again")
    if (entry / MANIFEST).exists():
        _repairs.append(f"cache entry {entry} failed its check ({why}) and "
                        "was filled again")
    _remove(entry)


def verify_filled(entry: Path, group: str) -> None:
    """CacheError when @entry, just filled, fails its check."""
    why = (check(entry) or check_tree(entry)) if entry.exists() \
        else "filling it left nothing"
    if why is not None:
        raise CacheError(f"cache entry {entry} fails its check after being filled "
                         f"afresh ({why}): runner/gupnm-run cache --clean {group}, "
                         "then run again; if it persists, the disk may be failing")


# A temporary named with an owner_tag: "<kind>-<pid>.<start>-<random>"
# (tmp/run-..., tmp/probe-...) or ".<entry>-<pid>.<start>-<random>" beside
# the entry being filled.
_TAGGED = re.compile(r"-(?P<tag>\d+\.\d+)-[a-z0-9_]{8}(?:\.tmp)?$")
# Where temporaries are made: the cache's folders, and one level below the
# groups whose entries are folders of their own.
_TMP_HOMES = ("tmp", "modules", "debs", "kselftest", "gup_test-source")
_TMP_NESTED = ("selftest", "stress", "vmlinux")


def stale_temporaries(root: Path | None = None) -> list[Path]:
    """Temporaries of runs that are gone (killed, even by SIGKILL)."""
    root = root or cache_dir()
    homes = [root / h for h in _TMP_HOMES]
    for group in _TMP_NESTED:
        try:
            homes += [d for d in (root / group).iterdir() if d.is_dir()]
        except OSError:
            pass
    out = []
    for home in homes:
        try:
            entries = list(home.iterdir())
        except OSError:
            continue
        for entry in entries:
            m = _TAGGED.search(entry.name)
            if m and (home.name == "tmp" or entry.name.startswith(".")) \
                    and not owner_alive(m.group("tag")):
                out.append(entry)
    return out


def sweep_stale(root: Path | None = None) -> list[Path]:
    """Remove the temporaries of dead runs; what went."""
    gone = stale_temporaries(root)
    for entry in gone:
        _remove(entry)
    if gone:
        progress(f"removed {len(gone)} temporaries of runs that are gone: "
                 + ", ".join(e.name for e in gone[:3]) + (" ..." if len(gone) > 3 else ""))
    return gone


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        try:
            entry.unlink(missing_ok=True)
        except OSError:
            pass                # a cache this run cannot write: left as is


def recorded_sha256(path: Path) -> str | None:
    """sha256 of @path: the one its cache entry's manifest recorded when
    the file is still as recorded (a warm run hashes nothing), else
    computed (a file of the user's, an entry without a record); None when
    it cannot be read (the boot that needs it says why)."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError:
        return None
    try:
        for entry in path.parents:
            manifest = entry / MANIFEST
            if manifest.exists():
                want = json.loads(manifest.read_text())["files"].get(
                    str(path.relative_to(entry)))
                if want and want.get("stamp") == _stamp(st):
                    return want["sha256"]
                break
            if entry == cache_dir() or entry == entry.parent:
                break
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    try:
        return sha256(path)
    except OSError:
        return None
