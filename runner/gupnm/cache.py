"""`gupnm-run cache`: what the cache and results/ hold, and cleaning them.

The cache (GUPNM_CACHE, default ~/.cache/gupnm) is grouped by what a user
would clean:

  kernels   unpacked Debian kernels, source-kernel trees and builds, modules,
            extracted vmlinux files, test and stress binaries, kselftest
            headers, series
  sources   downloaded packages (debs/), linux-source git bases (src/), the
            runner's own apt lists (apt/)
  ccache    the compiler cache of kernel builds
  chroots   per-suite build roots
  results   this clone's results/ folders (not in the cache)

Everything is keyed by content, so a removed entry is rebuilt or fetched
again on the next run that needs it. Cleaning while another run uses an
entry breaks that run: clean between runs. --older-than DAYS removes only
entries (the children of a group's folders) last modified before then.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .host import REPO, UsageError, cache_dir

GROUPS = {
    "kernels": ("debian", "kernels", "modules", "vmlinux", "selftest",
                "kselftest", "stress", "series", "tmp", "probe", "debian-image"),
    "sources": ("debs", "src", "apt"),
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
