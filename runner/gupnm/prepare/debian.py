"""Debian binary kernels from every suite: list, pick, download, unpack.

What `debian:` reaches is what the runner's own apt lists (apt.py) offer,
bookworm to sid. A spec names one kernel:
  debian:6.12, debian:7.3              newest release of a series
  debian:sid, debian:trixie-backports  newest release in a suite
  debian:7.3.4+deb13-amd64             an exact release (flavour suffix
  debian:7.3.4+deb13-cloud-amd64        optional for the plain one)
Only kernels whose headers are in the archive can be tested (the module is
built against them); a series or suite picks the newest such release.

Two package layouts: up to 6.12 the kernel is linux-image-<rel>-unsigned
(/boot/vmlinuz-<rel>); since 7.x linux-image-<rel> is a meta package and
the kernel is linux-binary-<rel> (/usr/lib/modules/<rel>/vmlinuz). The
packages are fetched with apt-get download and unpacked with dpkg-deb -x
into the cache, keyed by the image package's SHA256, never installed.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import phases
from ..host import RunnerError, UsageError, cache_dir, locked, progress, run
from . import apt, cache
from .debs import verified as verified_deb

SUITES = ("bookworm", "bookworm-updates", "bookworm-security", "bookworm-backports",
          "trixie", "trixie-updates", "trixie-security", "trixie-backports", "sid")
DEFAULT_FLAVOUR = {"amd64": "amd64", "arm64": "arm64"}
_REL_RE = r"\d+\.\d+[\w.+~-]*?"


@dataclass
class Offered:
    """A kernel release Debian offers."""
    release: str            # uname -r: 7.3.4+deb13-amd64
    flavour: str            # amd64, cloud-amd64, rt-amd64, arm64-16k, ...
    image_pkg: str          # linux-image-<rel>-unsigned or linux-binary-<rel>
    version: str            # package version: 7.3.4-1~bpo13+1
    suites: list[str]
    layout: str             # "unsigned" (<= 6.12) or "binary" (7.x)
    headers: bool           # linux-headers-<rel> of the same version exists
    arch: str = "amd64"

    @property
    def series(self) -> str:
        return ".".join(self.release.split(".")[:2])

    @property
    def suite(self) -> str:
        return ", ".join(self.suites)

    def to_json(self) -> dict:
        return {"release": self.release, "series": self.series,
                "flavour": self.flavour, "package": self.image_pkg,
                "version": self.version, "suites": self.suites,
                "layout": self.layout, "headers": self.headers, "arch": self.arch}


@dataclass
class DebianKernel:
    release: str          # uname -r, e.g. 7.3.4+deb13-amd64
    image: Path           # vmlinuz
    kdir: Path            # headers directory to build modules against
    root: Path            # where the packages were unpacked
    packages: list[str]   # name=version of every package unpacked
    offered: Offered | None = None
    debs: list[Path] = field(default_factory=list)   # may be dropped: present_debs()
    suite: str | None = None    # the suite whose lists alone it came through


def version_key(text: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", text))


def _flavour_of(release: str, arch: str) -> str | None:
    """'amd64', 'cloud-amd64', ... from a release; None if not this arch."""
    m = re.search(rf"-((?:[a-z][a-z0-9]*-)?{arch}(?:-16k)?)$", release)
    if not m or m.group(1).endswith("-dbg"):
        return None
    return m.group(1)


def image_names(names: list[str], arch: str = "amd64") -> dict[str, tuple[str, str]]:
    """release -> (image package, layout) from a list of package names.

    linux-binary-<rel> is preferred to linux-binary-unsigned-<rel> (same
    vmlinuz, the first signed); <=6.12 ships only linux-image-<rel>-unsigned
    besides the signed image of another source package.
    """
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        m = (re.fullmatch(rf"linux-image-({_REL_RE})-unsigned", name)
             or re.fullmatch(rf"linux-binary-(?:unsigned-)?({_REL_RE})", name))
        if not m or _flavour_of(m.group(1), arch) is None:
            continue
        rel = m.group(1)
        layout = "unsigned" if name.startswith("linux-image-") else "binary"
        if rel in out and not name.startswith("linux-binary-unsigned-"):
            if out[rel][0].startswith("linux-binary-unsigned-"):
                out[rel] = (name, layout)
            continue
        out.setdefault(rel, (name, layout))
    return out


def catalogue(arch: str = "amd64") -> list[Offered]:
    """Every kernel release Debian offers for @arch, oldest first; cached
    per state of the runner's apt lists (apt-cache takes seconds)."""
    stamp = apt.lists_stamp()
    cached = Path(apt.conf()).parent / f"catalogue-{arch}.json"
    if stamp and cached.exists():
        try:
            data = json.loads(cached.read_text())
            if data.get("stamp") == stamp:
                return [Offered(**o) for o in data["kernels"]]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            pass            # cut or corrupt: asked of apt again, and rewritten
    out = _catalogue(arch)
    if stamp:
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps({"stamp": stamp, "kernels": [
                {k: v for k, v in o.__dict__.items()} for o in out]}))
            os.replace(tmp, cached)
        except OSError:
            with contextlib.suppress(OSError):   # only a cache; a read-only one too
                tmp.unlink(missing_ok=True)
    return out


def _catalogue(arch: str) -> list[Offered]:
    names = apt.pkgnames("linux-image-") + apt.pkgnames("linux-binary-")
    images = image_names(names, arch)
    if not images:
        return []
    offers = apt.madison(sorted(p for p, _ in images.values()), arch)
    headers = {(o.name, o.version) for o in apt.madison(
        [f"linux-headers-{rel}" for rel in images], arch)}
    by_pkg: dict[tuple[str, str], list[str]] = {}
    for o in offers:
        by_pkg.setdefault((o.name, o.version), []).append(o.suite)
    out = []
    for rel, (pkg, layout) in images.items():
        versions = [v for (n, v) in by_pkg if n == pkg]
        for ver in versions:
            suites = sorted(set(by_pkg[(pkg, ver)]), key=SUITES.index
                            if all(s in SUITES for s in by_pkg[(pkg, ver)]) else str)
            out.append(Offered(rel, _flavour_of(rel, arch) or "", pkg, ver, suites,
                               layout, (f"linux-headers-{rel}", ver) in headers,
                               arch))
    return sorted(out, key=lambda o: (version_key(o.release), o.release))


def select(spec: str, offers: list[Offered], arch: str = "amd64") -> Offered:
    """The kernel @spec names among @offers (newest with headers)."""
    plain = DEFAULT_FLAVOUR[arch]
    if re.fullmatch(r"\d+\.\d+", spec):
        pool = [o for o in offers if o.series == spec and o.flavour == plain]
        what = f"series {spec}"
    elif spec in SUITES:
        pool = [o for o in offers if spec in o.suites and o.flavour == plain]
        what = f"suite {spec}"
    elif re.fullmatch(_REL_RE, spec) and re.match(r"\d+\.\d+\.", spec):
        rel = spec if _flavour_of(spec, arch) else f"{spec}-{plain}"
        pool = [o for o in offers if o.release == rel]
        what = f"release {rel}"
    else:
        raise UsageError(f"'{spec}' is not a Debian kernel series (6.12, 7.3), "
                         f"suite ({', '.join(SUITES)}) or release "
                         "(7.3.4+deb13-amd64)")
    if not pool:
        raise UsageError(f"Debian offers no {arch} kernel for {what}: list "
                         "them with: runner/gupnm-run kernels")
    with_headers = [o for o in pool if o.headers]
    if not with_headers:
        newest = pool[-1]
        raise UsageError(f"Debian offers {newest.image_pkg} {newest.version} "
                         f"for {what}, but not its headers "
                         f"(linux-headers-{newest.release}): no module can be "
                         "built for it. Test it without a module (--method probe) "
                         "or pick another with: runner/gupnm-run kernels")
    return with_headers[-1]


def _deps(name: str, version: str, arch: str) -> list[str]:
    """The versioned linux-* packages @name depends on (headers' common
    tree, kbuild tools, base files)."""
    depends = apt.field(name, version, "Depends", arch)
    out = []
    for alt in depends.split(","):
        dep = alt.split("|")[0].strip().split(" ")[0].split(":")[0]
        if re.match(r"linux-(headers|kbuild|compiler|base)-\d", dep):
            out.append(dep)
    return out


def _relations(name: str, version: str, arch: str) -> dict[str, tuple[str, str]]:
    """dep -> (relation, version) of @name's versioned Depends."""
    out = {}
    for alt in apt.field(name, version, "Depends", arch).split(","):
        m = re.match(r"\s*([\w.+-]+)(?::\w+)?\s*\((>=|<=|=|>>|<<)\s*([^)\s]+)\)",
                     alt.split("|")[0])
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def _at_least(a: str, b: str) -> bool:
    """dpkg --compare-versions @a ge @b."""
    return subprocess.run(["dpkg", "--compare-versions", a, "ge", b]).returncode == 0


def dep_versions(offered: Offered, pkgs: list[str]) -> dict[str, str]:
    """The version to fetch of each of @pkgs: the kernel's own, except a
    dependency declared `>= V` that the archive no longer has at V: the
    newest version it has that satisfies it, as apt would install.
    linux-kbuild-6.1 is one package for every 6.1 release, kept at two
    versions only: linux-headers-6.1.0-47-amd64 (6.1.170-3) depends on
    linux-kbuild-6.1 (>= 6.1.170-3), which the archive has at 6.1.192-3."""
    ver, arch = offered.version, offered.arch
    relations: dict[str, tuple[str, str]] = {}
    for name in pkgs[1:]:
        relations.update(_relations(name, ver, arch))
    out = {}
    for name in pkgs:
        out[name] = ver
        op, least = relations.get(name, ("=", ver))
        if op != ">=":
            continue
        # apt-cache madison lists a foreign arch's package only as name:arch
        query = name if arch == "amd64" else f"{name}:{arch}"
        have = [o.version for o in apt.madison([query], arch)]
        if ver in have:
            continue
        newer = [v for v in have if _at_least(v, least)]
        for v in newer:
            if all(_at_least(v, w) for w in newer):
                out[name] = v
    return out


def fetch(spec: str, arch: str = "amd64") -> DebianKernel:
    """Download and unpack a Debian kernel with its headers; cached. A
    kernel named by its suite (debian:bookworm-security, make run's
    default) is picked, downloaded and unpacked through that suite's lists
    alone: the newest of a suite is in the suite, and so are its headers'
    packages."""
    if spec in SUITES:
        with apt.only_suite(spec):
            return _fetch(spec, arch)
    return _fetch(spec, arch)


def _fetch(spec: str, arch: str) -> DebianKernel:
    with phases.phase("apt_lists"):
        offered = select(spec, catalogue(arch), arch)
        sha = apt.field(offered.image_pkg, offered.version, "SHA256", arch)
    if not sha:
        raise RunnerError(f"no SHA256 for {offered.image_pkg} {offered.version} "
                          "in the package lists: run runner/debian-apt.sh --refresh")
    key = f"{offered.release}-{sha[:16]}"
    with locked(_lock(key)):
        return _fetch_locked(offered, cache_dir() / "debian" / key)


def _lock(key: str) -> Path:
    return cache_dir() / "locks" / f"debian-{key}.lock"


def ensure_whole(k: DebianKernel) -> None:
    """Before a module is built against @k's headers: every file unpacked
    is still there with its size (cache.TREE), else the kernel is unpacked
    afresh, once (a second failure is exit 3 naming the entry). An entry
    unpacked by a runner that kept no listing gets one of what it holds."""
    with locked(_lock(k.root.name)):
        why = cache.check_tree(k.root)
        if why is None:
            cache.listed(k.root)
            return
        cache.discard(k.root, why)
        if k.offered is None:
            raise cache.CacheError(f"cache entry {k.root} failed its check ({why}): "
                                   "runner/gupnm-run cache --clean kernels, then run again")
        # Through the lists it came through (debian:SUITE: that suite's alone).
        with apt.only_suite(k.suite) if k.suite else contextlib.nullcontext():
            _fetch_locked(k.offered, k.root)


def packages_of(offered: Offered) -> list[str]:
    """Image, headers and their versioned dependencies, in unpack order."""
    arch, ver = offered.arch, offered.version
    pkgs = [offered.image_pkg, f"linux-headers-{offered.release}"]
    todo = list(pkgs[1:])
    while todo:
        for dep in _deps(todo.pop(), ver, arch):
            if dep not in pkgs:
                pkgs.append(dep)
                todo.append(dep)
    return pkgs


def _fetch_locked(offered: Offered, root: Path) -> DebianKernel:
    marker = root / ".gupnm-unpacked"
    debs_dir = cache_dir() / "debs"
    if marker.exists():
        why = cache.check(root)
        if why:
            cache.discard(root, why)
    if not marker.exists():
        with phases.phase("apt_lists"):
            pkgs = packages_of(offered)
            versions = dep_versions(offered, pkgs)
        other = [f"{p}={v}" for p, v in versions.items() if v != offered.version]
        progress(f"downloading {offered.release} ({offered.version}, "
                 f"{offered.suite}): {' '.join(pkgs)}"
                 + (f"; as their Depends allow: {' '.join(other)}" if other else ""))
        with phases.phase("download"):
            debs = [apt.download(p, versions[p], debs_dir, offered.arch)
                    for p in pkgs]
        with phases.phase("unpack"):
            progress(f"unpacking {len(debs)} packages for {offered.release}")
            tmp = root.with_name(root.name + ".tmp")
            run(["rm", "-rf", tmp])
            tmp.mkdir(parents=True)
            for i, deb in enumerate(debs):
                debs[i] = _unpack(deb, tmp, pkgs[i], offered, versions[pkgs[i]])
            if offered.arch == "arm64":     # kbuild tools the amd64 host can run
                from . import arm64
                arm64.host_kbuild(pkgs, versions, tmp)
            _fix_headers(tmp, offered.release)
            cache.record(tmp, _checked_files(tmp, offered.release))
            cache.record_tree(tmp)
            run(["rm", "-rf", root])
            tmp.rename(root)
            # Whole or not at all: the marker says the entry is complete.
            part = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
            part.write_text("\n".join(d.name for d in debs) + "\n")
            os.replace(part, marker)
            cache.verify_filled(root, "kernels")
    debs = [debs_dir / n for n in marker.read_text().split()]
    rel = offered.release
    _relocatable(root, rel)
    images = [root / "boot" / f"vmlinuz-{rel}",
              root / "usr" / "lib" / "modules" / rel / "vmlinuz"]
    image = next((p for p in images if p.exists()), images[0])
    kdir = root / "usr" / "src" / f"linux-headers-{rel}"
    for path, what in ((image, offered.image_pkg),
                       (kdir / "Makefile", f"linux-headers-{rel}")):
        if not path.exists():
            raise RunnerError(f"{path} missing after unpacking {what}; remove "
                              f"{root} and retry")
    return DebianKernel(rel, image, kdir, root,
                        [_name_version(d) for d in debs],
                        offered, debs, apt.current_suite())


def drop_debs(k: DebianKernel) -> None:
    """Remove @k's .deb files: unpacked, checked (cache.record) and its
    module built, the kernel needs them no more (present_debs() fetches
    them again for a build root or a copy of the packages). A cache this
    run cannot write (read-only, another user's) keeps them: unlink() fails
    there even for a file that is gone (EROFS)."""
    for deb in k.debs:
        if deb.exists():
            with contextlib.suppress(OSError):
                deb.unlink()


PACKAGE_SHA256 = ".gupnm-packages.json"


def package_sha256(k: DebianKernel) -> dict[str, str | None]:
    """sha256 of each package @k was unpacked from, by name=version: of the
    .deb itself while it is there (the archive's SHA256, which apt checked
    when it downloaded it), else the SHA256 the package lists give; kept
    beside the unpacked kernel once known, so a warm run asks apt nothing."""
    kept = k.root / PACKAGE_SHA256
    try:
        data = json.loads(kept.read_text())
        if isinstance(data, dict) and sorted(data) == sorted(k.packages):
            return data
    except (OSError, ValueError):
        pass
    arch = k.offered.arch if k.offered else "amd64"
    out: dict[str, str | None] = {}
    for deb in k.debs:
        nv = _name_version(deb)
        if deb.exists():
            out[nv] = cache.sha256(deb)
            continue
        name, version = nv.split("=", 1)
        with apt.only_suite(k.suite) if k.suite else contextlib.nullcontext():
            out[nv] = apt.field(name, version, "SHA256", arch) or None
    if all(out.values()):
        tmp = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
            os.replace(tmp, kept)
    return out


def present_debs(k: DebianKernel, debs: list[Path] | None = None) -> list[Path]:
    """@k's .deb files (@debs of them only, when given), each downloaded
    again if drop_debs() removed it, through the lists @k came through."""
    out = []
    for deb in k.debs if debs is None else debs:
        name, version = _name_version(deb).split("=", 1)
        arch = deb.name.rsplit("_", 1)[-1].removesuffix(".deb")
        arch = k.offered.arch if arch == "all" and k.offered else arch
        with apt.only_suite(k.suite) if k.suite else contextlib.nullcontext():
            if not deb.exists():
                progress(f"downloading {name} {version} again (dropped once "
                         f"{k.release} was unpacked)")
                deb = apt.download(name, version, deb.parent, arch)
            out.append(verified_deb(deb, name, version, arch))
    return out


def _name_version(deb: Path) -> str:
    """name=version of a .deb file named name_version_arch.deb."""
    name, version = deb.name.split("_")[:2]
    return f"{name}={version.replace('%3a', ':')}"


def _checked_files(tree: Path, release: str) -> list[str]:
    """What a use of an unpacked kernel checks (cache.check): the image
    and the headers' files a module build depends on."""
    names = [f"boot/vmlinuz-{release}", f"usr/lib/modules/{release}/vmlinuz"]
    kdir = f"usr/src/linux-headers-{release}"
    names += [f"{kdir}/{n}" for n in ("Makefile", ".config", "Module.symvers")]
    return [n for n in names if (tree / n).is_file()]


def _unpack(deb: Path, dest: Path, pkg: str, offered: Offered,
            version: str | None = None) -> Path:
    """dpkg-deb -x @deb into @dest (of the image package, the image
    alone: extract_image); a .deb that does not unpack (cut or corrupt in
    the cache) is downloaded once more, then reported."""
    deb = verified_deb(deb, pkg, version or offered.version, offered.arch)

    def unpack(deb: Path) -> None:
        if pkg == offered.image_pkg:
            extract_image(deb, dest, offered.release)
        else:
            run(["dpkg-deb", "-x", deb, dest], what=f"dpkg-deb -x {deb.name}")
    try:
        unpack(deb)
        return deb
    except RunnerError as err:
        first = str(err).splitlines()[-1] if str(err) else "dpkg-deb failed"
    progress(f"{deb} does not unpack ({first}); downloading it again")
    deb.unlink(missing_ok=True)
    deb = apt.download(pkg, version or offered.version, deb.parent, offered.arch)
    try:
        unpack(deb)
    except RunnerError as err:
        raise cache.CacheError(
            f"{deb.name} does not unpack even downloaded afresh "
            f"({str(err).splitlines()[-1]}): runner/gupnm-run cache --clean "
            "sources, then run again") from None
    return deb


IMAGE_MEMBERS = ("boot/vmlinuz-{rel}", "usr/lib/modules/{rel}/vmlinuz")


def extract_image(deb: Path, dest: Path, rel: str) -> None:
    """Only the kernel image out of @deb (an -unsigned package also holds
    every module: about 100 MB for 6.12 that no run uses: the guest loads
    gup_test.ko alone)."""
    wanted = {m.format(rel=rel) for m in IMAGE_MEMBERS}
    proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)],
                            stdout=subprocess.PIPE)
    found = False
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|*") as tar:
            for member in tar:
                name = member.name.lstrip("./")
                if name in wanted and member.isfile():
                    out = dest / name
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with tar.extractfile(member) as src, open(out, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    found = True
    finally:
        proc.stdout.close()
        rc = proc.wait()
    if rc or not found:
        raise RunnerError(f"{deb.name}: no {' or '.join(sorted(wanted))} "
                          f"(dpkg-deb --fsys-tarfile exit {rc})")


# The include of the -common tree's Makefile, relative to the headers'
# Makefile itself (make -C KDIR reads it as "Makefile"): the entry works
# wherever the cache is copied or mounted.
_HERE = "include $(dir $(lastword $(MAKEFILE_LIST)))../"
# Debian's packaged include, or what runners before it wrote: the absolute
# path of the -common copy in the cache where it was unpacked.
_ABSOLUTE = re.compile(r"^include (?:/\S*)?/usr/src/", re.M)


def _fix_headers(tmp: Path, release: str) -> None:
    """Point the headers' Makefile at the unpacked -common tree.

    Debian's linux-headers-<release>/Makefile is a single include of an
    absolute /usr/src path; unpacked elsewhere it must name the copy beside
    it, by a path relative to itself (_HERE), never the cache's own path.
    """
    makefile = tmp / "usr" / "src" / f"linux-headers-{release}" / "Makefile"
    if not makefile.exists():
        raise RunnerError(f"linux-headers-{release} has no Makefile")
    text = makefile.read_text()
    part = makefile.with_name(f".gupnm-Makefile.{os.getpid()}.tmp")
    part.write_text(_ABSOLUTE.sub(lambda _m: _HERE, text))
    os.replace(part, makefile)


def _relocatable(root: Path, release: str) -> None:
    """An entry unpacked by an older runner names its own absolute path in
    the headers' Makefile: made relative (_fix_headers) and recorded again,
    where the cache can be written (a read-only one serves its modules as
    they are)."""
    makefile = root / "usr" / "src" / f"linux-headers-{release}" / "Makefile"
    try:
        if not _ABSOLUTE.search(makefile.read_text()):
            return
        _fix_headers(root, release)
        cache.record(root, _checked_files(root, release))
        if (root / cache.TREE).exists():
            cache.record_tree(root)
    except OSError:
        pass


def cc_version_text(kdir: Path) -> str:
    """CONFIG_CC_VERSION_TEXT of a headers/build directory ('' if unknown)."""
    config = kdir / ".config"
    if not config.exists():
        return ""
    m = re.search(r'^CONFIG_CC_VERSION_TEXT="([^"]*)"', config.read_text(), re.M)
    return m.group(1) if m else ""


def base_suite(suites: list[str]) -> str:
    """The distribution a kernel was built on: bookworm, trixie or sid."""
    for s in suites:
        if s.startswith("trixie"):
            return "trixie"
    for s in suites:
        if s == "sid":
            return "sid"
    return "bookworm"
