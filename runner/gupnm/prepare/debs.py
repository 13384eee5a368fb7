"""Downloaded .deb files, checked before they are used.

A .deb in the cache (debs/) may have been cut short since apt-get download
verified it: by a full disk long ago, a copy, a kill. Before one is
unpacked or installed into a build root it is checked against the package
lists' Size and SHA256 (what apt itself checked when it downloaded it); one
that fails is downloaded once more, and failing again is exit 3 naming it
and the way out.
"""
from __future__ import annotations

from pathlib import Path

from ..host import progress
from . import apt, cache


def problem(deb: Path, name: str, version: str, arch: str) -> str | None:
    """What is wrong with the downloaded @deb by the package lists' Size and
    SHA256 of @name=@version (None: whole, or the lists do not say)."""
    want = apt.field(name, version, "SHA256", arch)
    size = apt.field(name, version, "Size", arch)
    try:
        have = deb.stat().st_size
    except OSError:
        return f"{deb.name} is missing"
    if size.isdigit() and have != int(size):
        return f"{deb.name} is {have} bytes where the package lists say {size}"
    if want and cache.sha256(deb) != want:
        return f"{deb.name} has another sha256 than the package lists give"
    return None


def verified(deb: Path, name: str, version: str, arch: str) -> Path:
    """@deb, checked against the package lists before it is unpacked (cut
    short in the cache since it was downloaded: by a full disk, a copy); one
    that fails is downloaded once more, and failing again is exit 3."""
    why = problem(deb, name, version, arch)
    if why is None:
        return deb
    progress(f"{deb} fails its check ({why}); downloading it again")
    cache.note_repair(f"{deb} failed its check ({why}) and was downloaded again")
    deb.unlink(missing_ok=True)
    deb = apt.download(name, version, deb.parent, arch)
    if (why := problem(deb, name, version, arch)):
        raise cache.CacheError(f"{deb} fails its check even downloaded afresh "
                               f"({why}): runner/gupnm-run cache --clean sources, "
                               "then run again; if it persists, the disk may be failing")
    return deb
