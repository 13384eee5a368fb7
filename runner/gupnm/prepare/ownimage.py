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
import shutil
import tempfile
from pathlib import Path

from ..host import RunnerError, UsageError, cache_dir, locked, owner_tag

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


def rewritten(kdir: Path, text: str) -> str | None:
    """@text (kdir/Makefile) with every absolute include that names a copy
    unpacked beside @kdir pointed at that copy; None when nothing needs it.
    An include found neither unpacked nor on the host is refused, naming the
    package to unpack."""
    root = unpack_root(kdir)
    changed = False

    def fix(m: re.Match) -> str:
        nonlocal changed
        path = m.group(2)
        local = root / path.lstrip("/") if root else None
        if local is not None and local.exists():
            changed = True
            return f"{m.group(1)}{local}{m.group(3)}"
        if Path(path).exists():
            return m.group(0)
        pkg = Path(path).parent.name if Path(path).name == "Makefile" else path
        where = f"under {root}" if root else f"beside {kdir}"
        raise UsageError(
            f"{kdir}/Makefile includes {path}, which is neither on this "
            f"machine nor unpacked {where}: unpack the {pkg} package there too "
            f"(dpkg-deb -x {pkg}_*.deb {root or kdir.parent})")
    new = _INCLUDE.sub(fix, text)
    return new if changed else None


def _check_scripts(kdir: Path) -> None:
    """Debian's scripts/ and tools/ are links into linux-kbuild-*."""
    for name in ("scripts",):
        link = kdir / name
        if link.is_symlink() and not link.exists():
            target = os.readlink(link)
            pkg = next((p for p in Path(target).parts if p.startswith("linux-kbuild-")),
                       "linux-kbuild-*")
            raise UsageError(f"{link} points at {target}, which is missing: "
                             f"unpack the {pkg} package into the same folder "
                             f"(dpkg-deb -x {pkg}_*.deb {unpack_root(kdir) or kdir.parent})")


def kbuild_dir(kdir: Path) -> Path:
    """Where to build against @kdir: @kdir itself when its Makefile works as
    it is, else a shadow folder in the cache (links to @kdir's entries and a
    rewritten Makefile), named by @kdir and the new Makefile."""
    _check_scripts(kdir)
    new = rewritten(kdir, (kdir / "Makefile").read_text(errors="replace"))
    if new is None:
        return kdir
    key = hashlib.sha256(f"{kdir}\0{new}".encode()).hexdigest()[:16]
    out = cache_dir() / "image-kbuild" / f"{kdir.name}-{key}"
    with locked(cache_dir() / "locks" / f"image-kbuild-{key}.lock"):
        if (out / "Makefile").is_file():
            return out
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-{owner_tag()}-",
                                    dir=out.parent))
        os.chmod(tmp, 0o755)
        try:
            for entry in kdir.iterdir():
                if entry.name != "Makefile":
                    (tmp / entry.name).symlink_to(entry)
            (tmp / "Makefile").write_text(new)
            shutil.rmtree(out, ignore_errors=True)
            os.replace(tmp, out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def build_failure(err: RunnerError, kdir: Path) -> UsageError:
    """A module build against the user's headers that failed: bad input
    (exit 2), with the build's first error line and its log."""
    text = str(err)
    m = re.search(r"last lines of (\S+):", text)
    log = Path(m.group(1)) if m else None
    body = log.read_text(errors="replace") if log and log.is_file() else text
    first = first_error(body) or text.splitlines()[0]
    where = f"; the whole log: {log}" if log else ""
    return UsageError(f"the module does not build against {kdir}: {first}{where}. "
                      "Check that DIR holds the headers of KERNEL and that this "
                      "machine has the compiler they name (CONFIG_CC_VERSION_TEXT "
                      "in their .config)")


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
