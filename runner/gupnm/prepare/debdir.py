"""debs:DIR: a folder of a kernel's .deb files, as a pipeline's `make
bindeb-pkg` or Debian's archive leaves them, made into what image:KERNEL:DIR
takes, with no unpacking by hand.

DIR must hold, for one release REL:
  image    linux-image-REL_*.deb (or -unsigned), or linux-binary-REL_*.deb
           (Debian 7.x keeps the kernel there)
  headers  linux-headers-REL_*.deb
  common   linux-headers-*-common_*.deb (Debian's split headers; a folder
           whose headers package has no -common of its own, as `make
           bindeb-pkg` makes it, needs none: see needs_common)
  kbuild   linux-kbuild-*_*.deb (Debian's; bindeb-pkg's headers carry
           scripts/ themselves, see needs_kbuild)
Anything else in DIR (-dbg, linux-libc-dev, firmware) is left alone.

They are unpacked (dpkg-deb -x, nothing installed) into one folder of the
cache, keyed by the sha256 of the .debs taken:
  <cache>/debs-unpacked/<REL>-<key>/   the packages' files (boot/, usr/...)
then booted and built against as image:<that>/boot/vmlinuz-REL:<that>.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..host import RunnerError, UsageError, cache_dir, locked, progress
from . import cache

GROUP = "debs-unpacked"
DONE = ".done"          # the packages unpacked, one name a line
_IMAGE = re.compile(r"^linux-(?:image|binary)-(?P<rel>[^_]+?)(?:-unsigned)?_")
_HEADERS = re.compile(r"^linux-headers-(?P<rel>[^_]+)_")
_COMMON = re.compile(r"^linux-headers-[^_]+-common(?:-rt)?_")
_KBUILD = re.compile(r"^linux-kbuild-[^_]+_")
# Packages that share the prefixes but are not what the kernel is made of.
_NOT = re.compile(r"-dbg(?:sym)?_|^linux-image-[^_]*-dbg_")


@dataclass
class Found:
    release: str
    image: Path
    headers: Path
    common: Path | None
    kbuild: Path | None

    def debs(self) -> list[Path]:
        return [p for p in (self.image, self.headers, self.common, self.kbuild) if p]


def _debs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.deb")
                  if p.is_file() and not _NOT.search(p.name))


def find(folder: Path) -> Found:
    """The .debs of one kernel in @folder; UsageError (exit 2) naming what
    is missing, or that two kernels are there."""
    if not folder.is_dir():
        raise UsageError(f"debs:{folder}: not a directory: name the folder "
                         "holding the kernel's .deb files")
    debs = _debs(folder)
    images = [p for p in debs if _IMAGE.match(p.name)]
    headers = [p for p in debs if _HEADERS.match(p.name)
               and not _COMMON.match(p.name)]
    common = [p for p in debs if _COMMON.match(p.name)]
    kbuild = [p for p in debs if _KBUILD.match(p.name)]
    rels = sorted({_IMAGE.match(p.name).group("rel") for p in images})
    if len(rels) > 1:
        raise UsageError(f"debs:{folder} holds the images of {len(rels)} kernels "
                         f"({', '.join(rels)}): give a folder with one kernel's "
                         ".debs")
    rel = rels[0] if rels else None
    mine = [p for p in headers if rel and _HEADERS.match(p.name).group("rel") == rel]
    missing = []
    if not images:
        missing.append("the kernel image (linux-image-REL_*.deb or "
                       "linux-binary-REL_*.deb)")
    if not mine:
        missing.append(f"its headers (linux-headers-{rel or 'REL'}_*.deb)"
                       + (f"; found only {', '.join(p.name for p in headers)}"
                          if headers else ""))
    needs_c = not mine or needs_common(mine[0])
    if needs_c and not common:
        missing.append("the headers' -common package (linux-headers-*-common_*.deb)")
    needs_k = not mine or needs_kbuild(mine[0])
    if needs_k and not kbuild:
        missing.append("the kbuild tools (linux-kbuild-*_*.deb)")
    if missing:
        raise UsageError(
            f"debs:{folder} lacks " + "; ".join(missing) + ": put every "
            "package of the kernel there (Debian: apt-get download linux-image-"
            "REL-unsigned linux-headers-REL linux-headers-*-common linux-kbuild-*; "
            "make bindeb-pkg: its linux-image and linux-headers .debs)")
    for role, found in (("-common", common), ("kbuild", kbuild)):
        if len(found) > 1:
            raise UsageError(f"debs:{folder} holds {len(found)} {role} packages "
                             f"({', '.join(p.name for p in found)}): keep the one "
                             f"of {rel}")
    return Found(rel, images[0], mine[0], common[0] if needs_c else None,
                 kbuild[0] if needs_k else None)


def _depends(deb: Path) -> str:
    proc = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"],
                          capture_output=True, text=True)
    if proc.returncode:
        raise UsageError(f"{deb} is not a .deb dpkg-deb can read: "
                         + (proc.stderr.strip().splitlines() or ["?"])[-1])
    return proc.stdout


def needs_common(headers: Path) -> bool:
    """@headers (a linux-headers-REL .deb) depends on a -common package."""
    return re.search(r"linux-headers-\S+-common", _depends(headers)) is not None


def needs_kbuild(headers: Path) -> bool:
    """@headers depends on a linux-kbuild package (Debian's do)."""
    return "linux-kbuild-" in _depends(headers)


def sha256s(found: Found) -> dict[str, str]:
    """name -> sha256 of every .deb taken (summary.json's kernel.source.debs)."""
    return {d.name: cache.sha256(d) for d in found.debs()}


def key_of(shas: dict[str, str]) -> str:
    """The cache key: the sha256 of every .deb taken, by name."""
    h = hashlib.sha256()
    for name in sorted(shas):
        h.update(f"{name}\0{shas[name]}\0".encode())
    return h.hexdigest()[:16]


def unpacked(found: Found, shas: dict[str, str]) -> Path:
    """The folder of the cache @found's packages (@shas: sha256s) are
    unpacked in: unpacked once, under a lock; an entry cut short (its
    listing, cache.check_tree) is unpacked again and noted, as every cache
    entry is (cache.checked)."""
    key = key_of(shas)
    out = cache_dir() / GROUP / f"{found.release}-{key}"
    with locked(cache_dir() / "locks" / f"{GROUP}-{key}.lock"):
        why = cache.check_tree(out) if out.is_dir() else None
        if why is not None:
            cache.discard(out, why)
        cache.checked(out, lambda: _unpack(found, out), group=GROUP)
    return out


def _unpack(found: Found, out: Path) -> None:
    """dpkg-deb -x each of @found's packages into a private folder, record
    it (manifest and listing), rename it to @out."""
    progress(f"unpacking {len(found.debs())} .debs of {found.release} into {out}")
    with cache.filling(out) as tmp:
        for deb in found.debs():
            proc = subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)],
                                  capture_output=True, text=True)
            if proc.returncode:
                raise RunnerError(f"dpkg-deb -x {deb} failed: " + proc.stderr.strip())
        (tmp / DONE).write_text("".join(f"{d.name}\n" for d in found.debs()))
        cache.record(tmp, [DONE])
        cache.record_tree(tmp)


def image_in(root: Path, release: str) -> Path:
    """The kernel image the packages of @release put under @root."""
    for cand in (root / "boot" / f"vmlinuz-{release}",
                 root / "usr" / "lib" / "modules" / release / "vmlinuz"):
        if cand.is_file():
            return cand
    raise UsageError(f"the image package of {release} holds no boot/vmlinuz-"
                     f"{release} nor usr/lib/modules/{release}/vmlinuz: is it "
                     "a kernel image package?")
