"""Debian's archive through the runner's own apt configuration.

runner/debian-apt.sh writes an apt configuration in the cache that lists
every suite (bookworm ... sid) with package lists of its own; this module
runs apt-cache and apt-get with APT_CONFIG pointing at it, so the host's
apt sources and state are never read or changed.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .host import REPO, RunnerError, run

_CONF: str | None = None


def conf() -> str:
    """Path of the runner's apt configuration (lists fetched when stale)."""
    global _CONF
    if _CONF is None:
        out = run([REPO / "runner" / "debian-apt.sh"],
                  what="runner/debian-apt.sh (the runner's Debian package lists)")
        _CONF = out.strip().splitlines()[-1]
    return _CONF


def lists_stamp() -> str:
    """Identity of the current package lists ('' if unknown): the mtime of
    the stamp debian-apt.sh touches after each update."""
    stamp = Path(conf()).parent / "lists" / ".gupnm-updated"
    return str(stamp.stat().st_mtime_ns) if stamp.exists() else ""


def env() -> dict:
    return {"APT_CONFIG": conf()}


def apt_cache(*args: str) -> str:
    proc = subprocess.run(["apt-cache", *args], capture_output=True, text=True,
                          env=dict(os.environ, **env()))
    return proc.stdout


@dataclass(frozen=True)
class Offer:
    """One version of one package in one suite of the archive."""
    name: str
    version: str
    suite: str        # bookworm-security, trixie-backports, sid, ...
    arch: str


_MADISON_RE = re.compile(
    r"^\s*(?P<name>\S+)\s*\|\s*(?P<version>\S+)\s*\|\s*\S+ "
    r"(?P<suite>[\w.-]+)/\S+ (?P<arch>\S+) Packages$")


def parse_madison(text: str) -> list[Offer]:
    out = []
    for line in text.splitlines():
        m = _MADISON_RE.match(line)
        if m:
            # A foreign architecture's package is listed as name:arch.
            name = m["name"].split(":")[0]
            out.append(Offer(name, m["version"], m["suite"], m["arch"]))
    return out


def madison(names: list[str], arch: str = "amd64") -> list[Offer]:
    """Every (version, suite) the archive offers for @names, for @arch."""
    offers: list[Offer] = []
    for i in range(0, len(names), 200):
        offers += parse_madison(apt_cache("madison", *names[i:i + 200]))
    return [o for o in offers if o.arch in (arch, "all")]


def pkgnames(prefix: str) -> list[str]:
    return sorted(set(apt_cache("pkgnames", prefix).split()))


def field(name: str, version: str, key: str, arch: str = "amd64") -> str:
    """One field (SHA256, Depends, ...) of @name=@version from the lists."""
    text = apt_cache("show", f"{name}:{arch}={version}")
    if not text.strip():
        text = apt_cache("show", f"{name}={version}")
    m = re.search(rf"^{re.escape(key)}: (.*)$", text, re.M)
    return m.group(1).strip() if m else ""


def download(name: str, version: str, dest: Path, arch: str = "amd64") -> Path:
    """apt-get download one exact package into @dest; the .deb's path."""
    dest.mkdir(parents=True, exist_ok=True)
    stem = f"{name}_{version.replace(':', '%3a')}"

    def present() -> list[Path]:
        return [p for a in (arch, "all") if (p := dest / f"{stem}_{a}.deb").exists()]
    found = present()
    if found:
        return found[0]
    # An Architecture: all package (headers' -common) is listed under the
    # native architecture only: name:arm64=version does not find it.
    spec = (f"{name}={version}" if field(name, version, "Architecture", arch) == "all"
            else f"{name}:{arch}={version}")
    # Into a scratch directory first: a concurrent run never sees half a file.
    with tempfile.TemporaryDirectory(dir=dest, prefix=".dl-") as tmp:
        run(["apt-get", "download", "-q", spec],
            cwd=Path(tmp), env=env(), what=f"apt-get download {name}={version}")
        for deb in Path(tmp).glob("*.deb"):
            os.replace(deb, dest / deb.name)
    found = present()
    if not found:
        raise RunnerError(f"apt-get download gave no .deb for {name}={version} "
                          f"in {dest}")
    return found[0]
