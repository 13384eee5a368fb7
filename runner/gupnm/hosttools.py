"""The tools a run needs on the host, installed from Debian's archive on
first use (as root), through the host's own apt.

- One run installs at a time on the host (a lock in /run/lock): two first
  runs at once do not collide on apt's locks, and the second finds the
  tools the first installed.
- Another apt or dpkg at work (the host's unattended upgrades) is waited
  for, within a bound, naming it (aptlock.py).
- A dpkg left half done (a run interrupted while QEMU installed in the
  background) is finished first: `dpkg --configure -a`, then the install.
- `--no-install` or GUPNM_NO_INSTALL=1: the host's packages are never
  touched; what is missing is named and the run ends (exit 3).
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Sequence

from . import aptlock
from .host import RunnerError, progress

# Debian package that provides each tool the runner calls, on every path:
# a fresh Debian 12 with only git, make and python3 gets all of them.
TOOLS = {
    "qemu-system-x86_64": "qemu-system-x86",
    "cpio": "cpio",
    "gcc": "gcc",                   # the module and the static test
    "make": "make",
    "dpkg-deb": "dpkg",
    "apt-get": "apt",
    "git": "git",
    "depmod": "kmod",
    "pahole": "dwarves",            # BTF of the module (Debian's kernels have BTF)
    "perl": "perl",                 # kernel-doc under W=1 needs Pod::Usage
    "xz": "xz-utils",               # kselftest headers out of linux-source
    "zstd": "zstd",                 # vmlinux out of a zstd bzImage
    "flock": "util-linux",
}
# Packages without a command to look for: static libc for the test.
PACKAGES = ["libc6-dev"]
# What only the boot needs: installed while the run builds (ensure_tools).
BOOT_PACKAGES = ("qemu-system-x86", "qemu-system-arm")
# Extra tools for building a kernel from source.
SOURCE_TOOLS = {
    "bc": "bc", "flex": "flex", "bison": "bison", "ccache": "ccache",
}
SOURCE_PACKAGES = ["libelf-dev", "libssl-dev"]
NO_INSTALL_ENV = "GUPNM_NO_INSTALL"
DPKG_ADMIN = Path("/var/lib/dpkg")
# dpkg's states of a package it began and did not end (db:Status-Abbrev).
# Installed, triggers pending or awaited included: it works.
INSTALLED = ("i", "W", "t")
HALF_DONE = {"H": "half-installed", "U": "unpacked", "F": "half-configured"}
# No fsync per unpacked file (as debootstrap and mmdebstrap do): the
# install is most of a fresh machine's first run.
INSTALL = ["apt-get", "install", "-y", "--no-install-recommends",
           "-o", "Dpkg::Options::=--force-unsafe-io"]
ENV = {"DEBIAN_FRONTEND": "noninteractive"}
_apt_updated = False
_forbidden = False


def forbid_install() -> None:
    """--no-install: from now on, never touch the host's packages."""
    global _forbidden
    _forbidden = True


def install_allowed() -> bool:
    """Whether the runner may install into the host (not --no-install,
    not GUPNM_NO_INSTALL=1)."""
    said = os.environ.get(NO_INSTALL_ENV, "").strip().lower()
    return not _forbidden and said in ("", "0", "no", "false")


def states(packages: Sequence[str]) -> dict[str, str]:
    """dpkg's state letter of each of @packages it knows (db:Status-Abbrev's
    second: i installed, U unpacked, H half-installed, ...), in one query."""
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${db:Status-Abbrev}\n",
                           *packages], capture_output=True, text=True)
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        name, _, abbrev = line.partition(" ")
        if len(abbrev) >= 2 and out.get(name) != "i":   # one arch installed will do
            out[name] = abbrev[1]
    return out


def _missing_packages(tools: dict, packages: Sequence[str]) -> list[str]:
    """The packages of @tools (absent, or their package half done) and of
    @packages (not installed) that the host lacks."""
    # A dynamically linked busybox would not run in the initramfs.
    wanted = ["busybox-static", *packages]
    state = states(sorted({*tools.values(), *wanted}))
    missing = {pkg for tool, pkg in tools.items()
               if not shutil.which(tool) or state.get(pkg) in HALF_DONE}
    missing |= {pkg for pkg in wanted if state.get(pkg) not in INSTALLED}
    return sorted(missing)


def missing_tools(*, source_build: bool = False, extra: dict | None = None,
                  extra_packages: Sequence[str] = ()) -> list[str]:
    """The Debian packages ensure_tools() would install (none: [])."""
    tools = dict(TOOLS)
    packages: list[str] = [*PACKAGES, *extra_packages]
    if source_build:
        tools.update(SOURCE_TOOLS)
        packages += SOURCE_PACKAGES
    tools.update(extra or {})
    return _missing_packages(tools, packages)


def _not_installed(packages: Sequence[str]) -> list[str]:
    state = states(packages)
    return [p for p in packages if state.get(p) not in INSTALLED]


def half_done(admin: Path = DPKG_ADMIN) -> str:
    """What dpkg left unfinished ('' for nothing): its journal of an
    interrupted run (updates/, what makes apt say "dpkg was interrupted"),
    or packages it began and did not end (half-installed, unpacked,
    half-configured: one dpkg-query of every package)."""
    try:
        journal = [n for n in os.listdir(admin / "updates") if n.isdigit()]
    except OSError:
        journal = []
    if journal:
        return "dpkg was interrupted"
    proc = subprocess.run(["dpkg-query", f"--admindir={admin}", "-W",
                           "-f=${db:Status-Abbrev} ${Package}\n"],
                          capture_output=True, text=True)
    # "iU  name": the abbreviation is three letters, the last one a space.
    pkgs = [words[-1] for words in map(str.split, proc.stdout.splitlines())
            if len(words) == 2 and len(words[0]) >= 2 and words[0][1] in HALF_DONE]
    if not pkgs:
        return ""
    return ("dpkg left packages half done: " + " ".join(pkgs[:6])
            + (f" and {len(pkgs) - 6} more" if len(pkgs) > 6 else ""))


def refuse(missing: Sequence[str]) -> None:
    """RunnerError naming @missing when this run may not install them
    (--no-install, or not root); nothing when it may."""
    allowed, root = install_allowed(), os.geteuid() == 0
    if allowed and root:
        return
    cmd = "apt-get install -y --no-install-recommends " + " ".join(missing)
    unfinished = half_done()
    fix = "dpkg --configure -a && " if unfinished else ""
    if not allowed:
        raise RunnerError(
            "missing on this host: " + " ".join(missing)
            + (f" ({unfinished})" if unfinished else "")
            + f"; the runner leaves the host's packages alone (--no-install or "
            f"{NO_INSTALL_ENV}): as root run `{fix}apt-get update && {cmd}`, "
            "then run again")
    raise RunnerError(f"missing tools; as root run:\n  {fix}apt-get update && {cmd}")


def lock_path() -> Path:
    """The host-wide lock of the runner's installs: /run/lock's, or the
    system's temporary folder's where there is none."""
    base = Path("/run/lock")
    return (base if base.is_dir() else Path(tempfile.gettempdir())) / "gupnm-install.lock"


def take_lock(path: Path | None = None) -> IO:
    """Hold the runner's install lock (flock, per open file: another
    thread of this run waits too); the open file, which releases it when
    closed. Waiting for another run, a progress line names it."""
    path = path or lock_path()
    fh = open(path, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        who = fh.read().strip() or "?"
        progress("waiting for this run's install in the background (QEMU) to end"
                 if who == str(os.getpid()) else
                 f"waiting for another run (pid {who}) to finish installing tools ({path})")
        fcntl.flock(fh, fcntl.LOCK_EX)
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return fh


def finish_dpkg() -> None:
    """dpkg --configure -a when dpkg was left half done (an install
    interrupted), as apt asks before any install."""
    why = half_done()
    if not why:
        return
    progress(f"{why}: finishing it (dpkg --configure -a) before installing")
    aptlock.run_apt(["dpkg", "--configure", "-a", "--force-confdef", "--force-confold"],
                    env=ENV, what="dpkg --configure -a (dpkg was left half done)")


class Later(threading.Thread):
    """An install that goes on while the run prepares, holding the install
    lock until it ends: wait() joins it and raises its error."""

    def __init__(self, cmd: list[str], env: dict, lock: IO | None = None) -> None:
        super().__init__(daemon=True, name="apt-install-later")
        self.cmd, self.env, self.lock, self.error = cmd, env, lock, None

    def run(self) -> None:
        try:
            aptlock.run_apt(self.cmd, env=self.env, what="apt-get install")
        except RunnerError as err:
            self.error = err
        finally:
            if self.lock is not None:
                self.lock.close()

    def wait(self) -> None:
        self.join()
        if self.error is not None:
            raise self.error


def _download(missing: Sequence[str]) -> None:
    """apt-get install --download-only @missing; apt-get update first when
    the host's lists do not know them (a fresh machine's are empty)."""
    global _apt_updated
    fetch = [*INSTALL[:3], "--download-only", *INSTALL[3:], *missing]
    try:
        aptlock.run_apt(fetch, env=ENV, what="apt-get install --download-only")
    except RunnerError:
        if _apt_updated:
            raise
        aptlock.run_apt(["apt-get", "update", "-q"], env=ENV, what="apt-get update")
        _apt_updated = True
        aptlock.run_apt(fetch, env=ENV, what="apt-get install --download-only")


def ensure_tools(*, source_build: bool = False, extra: dict | None = None,
                 extra_packages: Sequence[str] = (),
                 later: Sequence[str] = ()) -> Later | None:
    """Install the Debian packages of missing tools (as root), else explain.
    The packages of @later (what only the boot needs: QEMU) are downloaded
    with the rest but installed in a thread, returned, while the caller
    builds: a fresh machine's first run. None when nothing is left to
    install."""
    want = {"source_build": source_build, "extra": extra, "extra_packages": extra_packages}
    missing = missing_tools(**want)
    if not missing:
        return None
    refuse(missing)
    lock = take_lock()
    try:
        # Another run, or the host's own apt, may have installed them meanwhile.
        aptlock.wait_free("installing tools", time.monotonic() + aptlock.bound())
        missing = missing_tools(**want)
        if not missing:
            lock.close()
            return None
        return _install(missing, later, lock)
    except BaseException:
        lock.close()
        raise


def _install(missing: list[str], later: Sequence[str], lock: IO) -> Later | None:
    """Download @missing, install all but @later now and @later in a
    thread that holds @lock until it ends (returned); else close @lock."""
    finish_dpkg()
    t0 = time.monotonic()
    progress(f"downloading {' '.join(missing)} (and what they need)")
    _download(missing)
    now = [pkg for pkg in missing if pkg not in later]
    deferred = [pkg for pkg in missing if pkg in later]
    progress(f"downloaded the packages in {time.monotonic() - t0:.1f}s; installing"
             + (f" ({', '.join(deferred)} while the run prepares)" if deferred else ""))
    if now:
        aptlock.run_apt([*INSTALL, *now], env=ENV, what="apt-get install")
    if not deferred:
        lock.close()
        return None
    thread = Later([*INSTALL, *deferred], ENV, lock)
    thread.start()
    return thread


def install_packages(packages: Sequence[str], why: str) -> None:
    """Install those of Debian's @packages that are missing, as
    ensure_tools does (@why: what needs them, for the refusal)."""
    missing = _not_installed(packages)
    if not missing:
        return
    try:
        refuse(missing)
    except RunnerError as err:
        raise RunnerError(f"{why}: {err}") from None
    with take_lock():
        aptlock.wait_free("installing tools", time.monotonic() + aptlock.bound())
        missing = _not_installed(packages)
        if missing:
            finish_dpkg()
            progress("installing " + " ".join(missing))
            _download(missing)
            aptlock.run_apt([*INSTALL, *missing], env=ENV, what="apt-get install")
