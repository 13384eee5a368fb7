"""Debian binary kernels: pick, download and unpack, never install.

A kernel is named by series ("6.12", "6.1") or by release
("6.12.117+deb12-amd64", "6.1.0-57-amd64"). Its linux-image-*-unsigned
package and the headers needed to build a module against it are fetched
with `apt-get download` into the cache and unpacked with `dpkg-deb -x`.
Installing them would write /boot and run initramfs hooks on the host.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .host import RunnerError, UsageError, cache_dir, locked, progress, run

FLAVOUR = "amd64"


@dataclass
class DebianKernel:
    release: str          # uname -r, e.g. 6.12.117+deb12-amd64
    image: Path           # vmlinuz
    kdir: Path            # headers directory to build modules against
    root: Path            # where the packages were unpacked
    packages: list[str]


def _apt_names(pattern: str) -> list[str]:
    out = subprocess.run(["apt-cache", "search", "--names-only", pattern],
                         capture_output=True, text=True).stdout
    return [line.split(" ", 1)[0] for line in out.splitlines() if line.strip()]


def _version_key(release: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", release))


def release_candidates(spec: str) -> list[str]:
    """Kernel releases Debian offers for a series or release spec, oldest first."""
    if re.fullmatch(r"\d+\.\d+", spec):
        series = re.escape(spec)
        pattern = rf"^linux-image-{series}[.][0-9].*-{FLAVOUR}-unsigned$"
    elif re.fullmatch(r"\d+\.\d+[\w.+~-]*", spec):
        rel = spec if spec.endswith(f"-{FLAVOUR}") else f"{spec}-{FLAVOUR}"
        pattern = f"^linux-image-{re.escape(rel)}-unsigned$"
    else:
        raise UsageError(f"'{spec}' is not a kernel series (6.12) or release "
                          "(6.12.117+deb12-amd64)")
    names = _apt_names(pattern)
    rels = [n[len("linux-image-"):-len("-unsigned")] for n in names]
    # Only the plain flavour: not -rt-amd64 or -cloud-amd64.
    rels = [r for r in rels if not re.search(r"-(rt|cloud)-", r)]
    return sorted(rels, key=_version_key)


def _depends(pkg: str) -> list[str]:
    out = subprocess.run(["apt-cache", "depends", pkg], capture_output=True,
                         text=True).stdout
    deps = re.findall(r"^\s+\|?Depends: (\S+)", out, re.M)
    return [d for d in deps if re.match(r"linux-(headers|kbuild|compiler)-", d)]


def _download(pkgs: list[str], debs: Path) -> list[Path]:
    debs.mkdir(parents=True, exist_ok=True)
    files = []
    want = []
    for pkg in pkgs:
        found = sorted(debs.glob(f"{pkg}_*.deb"))
        if found:
            files.append(found[-1])
        else:
            want.append(pkg)
    if want:
        progress(f"downloading {' '.join(want)}")
        run(["apt-get", "download", "-q", *want], cwd=debs,
            what="apt-get download")
        for pkg in want:
            found = sorted(debs.glob(f"{pkg}_*.deb"))
            if not found:
                raise RunnerError(f"apt-get download gave no .deb for {pkg}")
            files.append(found[-1])
    return files


def fetch(spec: str) -> DebianKernel:
    """Download and unpack a Debian kernel with its headers; cached."""
    rels = release_candidates(spec)
    if not rels:
        raise UsageError(
            f"no Debian kernel package matches '{spec}': try 6.1 or 6.12, or "
            "list them with: apt-cache search --names-only "
            f"'^linux-image-.*-{FLAVOUR}-unsigned$' (run apt-get update first "
            "if the list is empty)")
    release = rels[-1]
    with locked(cache_dir() / "locks" / f"debian-{release}.lock"):
        return _fetch_locked(release)


def _fetch_locked(release: str) -> DebianKernel:
    root = cache_dir() / "debian" / release
    marker = root / ".gupnm-unpacked"
    image_pkg = f"linux-image-{release}-unsigned"
    headers_pkg = f"linux-headers-{release}"
    pkgs = [image_pkg, headers_pkg]
    if not marker.exists():
        deps = [d for d in _depends(headers_pkg) if d not in pkgs]
        for dep in list(deps):
            deps += [d for d in _depends(dep) if d not in deps and d not in pkgs]
        pkgs += deps
        debs = _download(pkgs, cache_dir() / "debs")
        progress(f"unpacking {len(debs)} packages for {release}")
        tmp = root.with_name(root.name + ".tmp")
        run(["rm", "-rf", tmp])
        tmp.mkdir(parents=True)
        for deb in debs:
            run(["dpkg-deb", "-x", deb, tmp], what=f"dpkg-deb -x {deb.name}")
        run(["rm", "-rf", root])
        tmp.rename(root)
        _fix_headers(root, release)
        marker.write_text("\n".join(pkgs) + "\n")
    else:
        pkgs = marker.read_text().split()
    image = root / "boot" / f"vmlinuz-{release}"
    kdir = root / "usr" / "src" / f"linux-headers-{release}"
    for path, what in ((image, image_pkg), (kdir / "Makefile", headers_pkg)):
        if not path.exists():
            raise RunnerError(f"{path} missing after unpacking {what}; remove "
                              f"{root} and retry")
    return DebianKernel(release, image, kdir, root, pkgs)


def _fix_headers(root: Path, release: str) -> None:
    """Point the headers' Makefile at the unpacked -common tree.

    Debian's linux-headers-<release>/Makefile is a single include of an
    absolute /usr/src path; unpacked elsewhere it must name the copy here.
    """
    makefile = root / "usr" / "src" / f"linux-headers-{release}" / "Makefile"
    if not makefile.exists():
        raise RunnerError(f"linux-headers-{release} has no Makefile")
    text = makefile.read_text()
    new = f"include {root / 'usr' / 'src'}/"
    fixed = re.sub(r"^include /usr/src/", lambda _m: new, text, flags=re.M)
    makefile.write_text(fixed)
