"""Build the test VM's initramfs: busybox, the init script, the module, the test.

The archive is an uncompressed newc cpio, which every kernel unpacks without
a decompressor; the guest runs entirely from it.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..host import REPO, RunnerError, run

GUEST_INIT = REPO / "runner" / "guest" / "init"
TESTDIR = "/opt/selftests/mm"
# The programs run in the guest whose leftover pages page_owner counts.
PROGRAMS = ("gup_null_mapping", "gup_fast_bench", "gupnm_stress")


@dataclass
class Contents:
    release: str                 # uname -r of the kernel to boot
    module: Path | None          # gup_test.ko; None: none loaded (built in)
    files: dict[str, Path]       # name in TESTDIR -> host file
    command: str                 # run in TESTDIR, e.g. "./gup_null_mapping -p 512"
    need_bash: bool = False      # run_vmtests.sh needs bash
    kmemleak: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)
    busybox: Path | None = None  # the guest's, when not the host's (arm64)
    # Names in @files linked dynamically (selftests/mm programs): their
    # libraries come along.
    dynamic: tuple[str, ...] = ()


def _busybox() -> Path:
    path = shutil.which("busybox") or "/bin/busybox"
    if not Path(path).exists():
        raise RunnerError("busybox not found: apt-get install busybox-static")
    return Path(path)


def copy_with_libs(binary: Path | str, root: Path) -> None:
    """Copy a dynamically linked binary and the libraries ldd names."""
    dest = root / str(binary).lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, dest)
    copy_libs(binary, root)


def copy_libs(binary: Path | str, root: Path) -> None:
    """The libraries (and loader) ldd names for @binary, at their paths."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    for lib in re.findall(r"(/\S+\.so[\w.]*)", out):
        lib_dest = root / lib.lstrip("/")
        lib_dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(lib), lib_dest)


def busybox_root(root: Path, busybox: Path | None = None) -> None:
    """A fresh @root with the directories a guest mounts on and busybox
    (@busybox, else the host's static one) with a link per applet."""
    if root.exists():
        shutil.rmtree(root)
    for d in ("bin", "sbin", "etc", "proc", "sys", "dev", "tmp", "usr/bin",
              "usr/sbin"):
        (root / d).mkdir(parents=True, exist_ok=True)
    host = _busybox()
    shutil.copy2(busybox or host, root / "bin" / "busybox")
    # The host's busybox names the applets (a foreign one cannot run here).
    applets = subprocess.run([str(host), "--list"], capture_output=True,
                             text=True).stdout.split()
    for applet in applets:
        link = root / "bin" / applet
        if not link.exists():
            link.symlink_to("busybox")


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def build(contents: Contents, workdir: Path) -> Path:
    """Lay out the root in @workdir/root and pack it; returns the cpio path."""
    root = workdir / "root"
    busybox_root(root, contents.busybox)
    (root / TESTDIR.lstrip("/")).mkdir(parents=True, exist_ok=True)
    if contents.need_bash:
        copy_with_libs(Path(shutil.which("bash") or "/bin/bash"), root)

    shutil.copy2(GUEST_INIT, root / "init")
    (root / "init").chmod(0o755)

    moddir = root / "lib" / "modules" / contents.release
    (moddir / "extra").mkdir(parents=True, exist_ok=True)
    if contents.module is not None:
        shutil.copy2(contents.module, moddir / "extra" / "gup_test.ko")
    run(["depmod", "-b", root, contents.release], what="depmod")

    for name, src in contents.files.items():
        dst = root / TESTDIR.lstrip("/") / name
        shutil.copy2(src, dst)
        dst.chmod(0o755)
        if name in contents.dynamic:
            copy_libs(src, root)

    env = {"GUPNM_TESTDIR": TESTDIR, "GUPNM_CMD": contents.command,
           # Empty: the guest loads no module (the kernel's gup_test is
           # built in, or the --command program runs without it).
           "GUPNM_MODULE": "gup_test" if contents.module is not None else "",
           # The kernel keeps 15 characters of a command name; page_owner
           # counts the pages of the test's and the stress program's.
           "GUPNM_COMM": " ".join(c[:15] for c in PROGRAMS),
           "GUPNM_KMEMLEAK": "1" if contents.kmemleak else ""}
    env.update(contents.extra_env)
    (root / "etc" / "gupnm.env").write_text(
        "".join(f"{k}={_quote(v)}\n" for k, v in env.items()))

    return pack_tree(root, workdir / "initramfs.cpio")


PROBE_INIT = """#!/bin/sh
mount -t devtmpfs devtmpfs /dev 2>/dev/null
echo "GUPNM-STATUS: booted" >/dev/ttyS1
reboot -f
"""


def build_probe(workdir: Path) -> Path:
    """An initramfs that only reports "booted" and reboots (accel probe)."""
    root = workdir / "probe-root"
    if root.exists():
        shutil.rmtree(root)
    (root / "bin").mkdir(parents=True)
    (root / "dev").mkdir()
    shutil.copy2(_busybox(), root / "bin" / "busybox")
    for applet in ("sh", "mount", "echo", "reboot"):
        (root / "bin" / applet).symlink_to("busybox")
    (root / "init").write_text(PROBE_INIT)
    (root / "init").chmod(0o755)
    return pack_tree(root, workdir / "probe.cpio")


def pack_tree(root: Path, cpio: Path) -> Path:
    """Everything under @root as an uncompressed newc cpio owned by root."""
    names = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for name in sorted(dirnames + filenames):
            names.append(os.path.normpath(os.path.join(rel, name)))
    pack_names(names, root, cpio)
    return cpio


def pack_names(names: list[str], cwd: Path, out: Path) -> None:
    """@names (relative to @cwd) as an uncompressed newc cpio owned by root."""
    with open(out, "wb") as fh:
        proc = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"],
                              input="\n".join(names).encode(), cwd=cwd,
                              stdout=fh, stderr=subprocess.PIPE)
    if proc.returncode:
        raise RunnerError("cpio failed: " + proc.stderr.decode(errors="replace"))
