"""Host side plumbing: progress lines, commands, cache paths, tool installs.

Everything the runner downloads or builds lives under the cache directory
(GUPNM_CACHE, default ~/.cache/gupnm), never in the repository and never in
the host's own /boot or /lib/modules.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parents[2]


class RunnerError(Exception):
    """An error the user can act on; the message says what to do."""


class UsageError(RunnerError):
    """Bad input from the user: a spec, option or file that makes no sense."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``signum`` says which."""

    def __init__(self, signum: int = 2) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def cache_dir() -> Path:
    path = Path(os.environ.get("GUPNM_CACHE", Path.home() / ".cache" / "gupnm"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive lock on @path: two runs never share a cache entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"waiting for another run to release {path}")
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


_T0 = time.monotonic()


def progress(msg: str) -> None:
    """A progress line on stderr, with the seconds since the runner started."""
    print(f"[{time.monotonic() - _T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


def run(cmd: Sequence[str], *, log: Path | None = None, cwd: Path | None = None,
        env: dict | None = None, what: str | None = None, tail: int = 30) -> str:
    """Run a command; on failure raise RunnerError with the log's tail.

    Output goes to @log when given (appended), else is captured; returns the
    captured stdout (empty when logging to a file).
    """
    full_env = dict(os.environ, **(env or {}))
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a") as fh:
            fh.write(f"$ {' '.join(map(str, cmd))}\n")
            fh.flush()
            proc = subprocess.run(list(map(str, cmd)), cwd=cwd, env=full_env,
                                  stdout=fh, stderr=subprocess.STDOUT)
        if proc.returncode:
            lines = log.read_text(errors="replace").splitlines()[-tail:]
            raise RunnerError(f"{what or cmd[0]} failed (exit {proc.returncode}); "
                              f"last lines of {log}:\n" + "\n".join(lines))
        return ""
    proc = subprocess.run(list(map(str, cmd)), cwd=cwd, env=full_env,
                          capture_output=True, text=True)
    if proc.returncode:
        out = (proc.stdout + proc.stderr).strip().splitlines()[-tail:]
        raise RunnerError(f"{what or cmd[0]} failed (exit {proc.returncode}):\n"
                          + "\n".join(out))
    return proc.stdout


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
# Extra tools for building a kernel from source.
SOURCE_TOOLS = {
    "bc": "bc", "flex": "flex", "bison": "bison", "ccache": "ccache",
}
SOURCE_PACKAGES = ["libelf-dev", "libssl-dev"]
_apt_updated = False


def _missing_packages(tools: dict, packages: Sequence[str]) -> list[str]:
    missing = sorted({pkg for tool, pkg in tools.items() if not shutil.which(tool)})
    # A dynamically linked busybox would not run in the initramfs.
    for pkg in ["busybox-static", *packages]:
        if pkg in missing:
            continue
        st = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                            capture_output=True, text=True)
        if "install ok installed" not in st.stdout:
            missing.append(pkg)
    return missing


def ensure_tools(*, source_build: bool = False, extra: dict | None = None) -> None:
    """Install the Debian packages of missing tools (as root), else explain."""
    global _apt_updated
    tools = dict(TOOLS)
    packages: list[str] = list(PACKAGES)
    if source_build:
        tools.update(SOURCE_TOOLS)
        packages += SOURCE_PACKAGES
    tools.update(extra or {})
    missing = _missing_packages(tools, packages)
    if not missing:
        return
    # No fsync per unpacked file (as debootstrap and mmdebstrap do): the
    # install is most of a fresh machine's first run.
    cmd = ["apt-get", "install", "-y", "--no-install-recommends",
           "-o", "Dpkg::Options::=--force-unsafe-io", *missing]
    if os.geteuid() != 0:
        raise RunnerError("missing tools; as root run:\n  apt-get update && "
                          "apt-get install -y --no-install-recommends "
                          + " ".join(missing))
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    fetch = [*cmd[:3], "--download-only", *cmd[3:]]
    t0 = time.monotonic()
    progress(f"downloading {' '.join(missing)} (and what they need)")
    try:
        run(fetch, env=env, what="apt-get install --download-only")
    except RunnerError:
        if _apt_updated:
            raise
        run(["apt-get", "update", "-q"], env=env, what="apt-get update")
        _apt_updated = True
        run(fetch, env=env, what="apt-get install --download-only")
    progress(f"downloaded the packages in {time.monotonic() - t0:.1f}s; installing")
    run(cmd, env=env, what="apt-get install")
