"""The DIR of image:KERNEL:DIR made into a directory kbuild can build in.

DIR is one of:
  - a kernel build tree (its own Makefile, .config, scripts/): used as is;
  - Debian/Ubuntu header packages unpacked into one folder (dpkg-deb -x of
    linux-image-REL, linux-headers-REL, its -common and linux-kbuild-* into
    DIR), given as DIR itself or as DIR/usr/src/linux-headers-REL;
  - a module tree holding gup_test.ko (kernels.py handles it).

Debian's linux-headers-REL/Makefile is one line, `include
/usr/src/linux-headers-REL-common/Makefile`: an absolute path that exists
only once the package is installed. The runner never installs it and never
writes into DIR: it builds in a small shadow folder of the cache, links to
every entry of the headers folder plus a Makefile whose includes name the
unpacked copies under DIR.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..host import RunnerError, UsageError, cache_dir, locked
from . import cache

# This machine's root: an absolute include DIR does not hold is looked for
# under it (the unit tests point it at an empty folder).
HOST = Path("/")
_INCLUDE = re.compile(r"^(\s*-?include\s+)(/\S+)(.*)$", re.M)
_COMPILER = re.compile(r":\s*(?:fatal )?error:")
_ERROR = re.compile(r"(?:\berror\b|\*\*\*|No such file or directory|not found)",
                    re.I)


def find_kdir(folder: Path) -> Path | None:
    """The headers/build directory in @folder: @folder itself when it has a
    Makefile, else the one usr/src/linux-headers-*/ with a .config (the
    -common package has a Makefile but no .config); None when neither."""
    if (folder / "Makefile").is_file():
        return folder
    found = sorted(p for p in (folder / "usr" / "src").glob("linux-headers-*")
                   if (p / "Makefile").is_file() and (p / ".config").is_file())
    if len(found) > 1:
        raise UsageError(f"{folder} holds the headers of {len(found)} kernels ("
                         + ", ".join(p.name for p in found) + "): give "
                         "image:KERNEL:" + str(found[0]) + " (the one matching "
                         "KERNEL) instead")
    return found[0] if found else None


def unpack_root(kdir: Path) -> Path | None:
    """The folder the packages were unpacked into: @kdir is ROOT/usr/src/NAME."""
    if kdir.parent.name == "src" and kdir.parent.parent.name == "usr":
        return kdir.parents[2]
    return None


def rewritten(kdir: Path, text: str) -> tuple[str | None, list[str]]:
    """(@text (kdir/Makefile) with every absolute include that names a copy
    unpacked beside @kdir pointed at that copy, or None when nothing needs
    it; the includes found neither unpacked nor on the host)."""
    root = unpack_root(kdir)
    changed, missing = False, []

    def fix(m: re.Match) -> str:
        nonlocal changed
        path = m.group(2)
        local = root / path.lstrip("/") if root else None
        if local is not None and local.exists():
            changed = True
            return f"{m.group(1)}{local}{m.group(3)}"
        if not (HOST / path.lstrip("/")).exists():
            missing.append(path)
        return m.group(0)
    new = _INCLUDE.sub(fix, text)
    return (new if changed else None), missing


def _package_of(path: str, prefix: str) -> str:
    """The package a missing path belongs to: its linux-headers-*/
    linux-kbuild-* component."""
    return next((p for p in Path(path).parts if p.startswith(prefix)), path)


def missing_packages(kdir: Path, missing_includes: list[str]) -> list[tuple[str, str]]:
    """(package, what needs it) for every piece @kdir refers to that is not
    there: the -common headers its Makefile includes, the linux-kbuild its
    scripts/ link points into."""
    out = [(_package_of(p, "linux-headers-"), f"its Makefile includes {p}")
           for p in missing_includes]
    link = kdir / "scripts"
    if link.is_symlink() and not link.exists():
        target = os.readlink(link)
        out.append((_package_of(target, "linux-kbuild-"), f"scripts -> {target}"))
    return out


def _refuse(kdir: Path, missing: list[tuple[str, str]],
            in_root: bool = False) -> UsageError:
    root = unpack_root(kdir) or kdir.parent
    pkgs = " ".join(pkg for pkg, _ in missing)
    debs = " ".join(f"{pkg}_*.deb" for pkg, _ in missing)
    where = (f"not unpacked under {root} (the module builds in a root of the "
             "kernel's suite, which sees only DIR's copies: " if in_root else
             f"neither on this machine nor unpacked under {root} (")
    return UsageError(
        f"{kdir} needs {pkgs}, {where}" + "; ".join(why for _, why in missing)
        + f"): unpack them there too: for d in {debs}; do dpkg-deb -x $d "
        f"{root}; done")


def kbuild_dir(kdir: Path) -> Path:
    """Where to build against @kdir: @kdir itself when its Makefile works as
    it is, else a shadow folder in the cache (links to @kdir's entries and a
    rewritten Makefile), named by @kdir and the new Makefile."""
    new, includes = rewritten(kdir, (kdir / "Makefile").read_text(errors="replace"))
    missing = missing_packages(kdir, includes)
    if missing:
        raise _refuse(kdir, missing)
    if new is None:
        return kdir
    key = hashlib.sha256(f"{kdir}\0{new}".encode()).hexdigest()[:16]
    out = cache_dir() / "image-kbuild" / f"{kdir.name}-{key}"
    with locked(cache_dir() / "locks" / f"image-kbuild-{key}.lock"):
        if _shadow_whole(out, kdir):
            return out
        with cache.filling(out) as tmp:
            for entry in kdir.iterdir():
                if entry.name != "Makefile":
                    (tmp / entry.name).symlink_to(entry)
            (tmp / "Makefile").write_text(new)
    return out


def _shadow_whole(out: Path, kdir: Path) -> bool:
    """@out, a shadow folder of @kdir, has its Makefile and a link to every
    entry of @kdir that still leads there (a shadow cut short, or whose
    links lead nowhere, is made again: it is a few links)."""
    try:
        want = {e.name for e in kdir.iterdir() if e.name != "Makefile"}
        return (out / "Makefile").is_file() and all(
            (out / name).is_symlink() and (out / name).exists() for name in want)
    except OSError:
        return False


def _outside_root(kdir: Path, root: Path) -> list[tuple[str, str]]:
    """(package, what needs it) for every piece @kdir refers to that is not
    unpacked under @root: in a build root only @root's copies are seen."""
    text = (kdir / "Makefile").read_text(errors="replace")
    out = [(_package_of(m.group(2), "linux-headers-"),
            f"its Makefile includes {m.group(2)}") for m in _INCLUDE.finditer(text)
           if not (root / m.group(2).lstrip("/")).exists()]
    link = kdir / "scripts"
    if link.is_symlink():
        target = os.readlink(link)
        there = root / target.lstrip("/") if target.startswith("/") else link.parent / target
        if not there.exists():
            out.append((_package_of(target, "linux-kbuild-"), f"scripts -> {target}"))
    return out


def root_binds(kdir: Path) -> tuple[str, list[tuple[Path, str]]]:
    """(@kdir's path inside a build root of another suite, the folders to
    bind there) when the module builds in such a root (chroot.Bound).

    Unpacked packages keep their packaged paths, so their absolute includes
    and relative links work as they do installed: DIR/usr/src at /usr/src,
    DIR/usr/lib/linux-kbuild-* at /usr/lib; every piece must be unpacked in
    DIR (exit 2 naming the rest). A build tree, and the source tree its
    Makefile includes (O= builds), keep their own paths."""
    kdir = kdir.resolve()
    root = unpack_root(kdir)
    if root is not None:
        missing = _outside_root(kdir, root)
        if missing:
            raise _refuse(kdir, missing, in_root=True)
        lib = root / "usr" / "lib"
        return f"/usr/src/{kdir.name}", [(root / "usr" / "src", "/usr/src")] + [
            (p, f"/usr/lib/{p.name}") for p in sorted(lib.glob("linux-kbuild-*"))
            if p.is_dir() and not p.is_symlink()]
    folders = {kdir}
    text = (kdir / "Makefile").read_text(errors="replace")
    folders |= {Path(m.group(2)).resolve().parent for m in _INCLUDE.finditer(text)}
    if (kdir / "source").is_symlink():
        folders.add((kdir / "source").resolve())
    keep = sorted(f for f in folders
                  if not any(o != f and f.is_relative_to(o) for o in folders))
    return str(kdir), [(f, str(f)) for f in keep]


def build_failure(err: RunnerError, kdir: Path, root: str = "") -> UsageError:
    """A module build against the user's headers that failed: bad input
    (exit 2), with the build's first error line and its log; @root names
    the build root it ran in ('' on this machine)."""
    text = str(err)
    m = re.search(r"last lines of (\S+):", text)
    log = Path(m.group(1)) if m else None
    body = log.read_text(errors="replace") if log and log.is_file() else text
    first = first_error(body) or text.splitlines()[0]
    where = f"; the whole log: {log}" if log else ""
    tail = (f"Check that DIR holds the headers of KERNEL (built with the "
            f"compiler they name, in {root})" if root else
            "Check that DIR holds the headers of KERNEL and that this machine "
            "has the compiler they name (CONFIG_CC_VERSION_TEXT in their .config)")
    return UsageError(f"the module does not build against {kdir}: {first}{where}. "
                      + tail)


def first_error(log: str) -> str:
    """The first line of a build log that reports an error ('' if none):
    the compiler's `file:line: error: ...`, else make's `*** ...`."""
    lines = [ln.strip() for ln in log.splitlines()
             if not ln.startswith("$ ")]      # the command host.run wrote
    for pattern in (_COMPILER, _ERROR):
        for line in lines:
            if pattern.search(line):
                return line
    return ""
