"""The LAVA device, rendered from its device dictionary as lava-server does.

lava/devices/qemu-tcg.jinja2 is a device dictionary as labs write them:
`{% extends 'qemu.jinja2' %}` and a few variables. lava-server renders it
with a sandboxed jinja2 environment (autoescape off, trim_blocks) whose
FileSystemLoader searches the devices directory, then the device-types
directory, with the job's `context` as the template's variables
(lava_server/files.py, lava_scheduler_app/environment.py and
Device.load_configuration in lava-server 2023.01). lava-server itself is
not installed: its .deb, the release of the installed lava-dispatcher, is
downloaded with the runner's apt configuration and unpacked into the cache
(`dpkg-deb -x`); its device-types directory holds qemu.jinja2 and
base.jinja2. The rendering runs under the system python3, whose
python3-jinja2 is the one lava-server uses.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..host import REPO, RunnerError, cache_dir, locked, progress, run
from ..prepare import apt, cache

DEVICES = REPO / "lava" / "devices"
DEVICE = DEVICES / "qemu-tcg.jinja2"
SYSTEM_PYTHON = "/usr/bin/python3"
PACKAGE = "lava-server"
TYPES_IN_DEB = Path("usr/share/lava-server/device-types")

RENDER = """
import json, sys, yaml
from jinja2 import FileSystemLoader
from jinja2.sandbox import SandboxedEnvironment
name, dirs = sys.argv[1], json.loads(sys.argv[2])
context = (yaml.safe_load(open(sys.argv[3])) or {}).get("context") or {}
env = SandboxedEnvironment(loader=FileSystemLoader(dirs), autoescape=False,
                           trim_blocks=True)
sys.stdout.write(env.get_template(name).render(**context))
"""


def dispatcher_version() -> str:
    """The installed lava-dispatcher's Debian version (lava-server's must
    match: the templates and the dispatcher move together)."""
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "lava-dispatcher"],
                          capture_output=True, text=True)
    if proc.returncode or not proc.stdout.strip():
        raise RunnerError("lava-dispatcher is not installed: apt-get install "
                          "lava-dispatcher (Debian 12)")
    return proc.stdout.strip()


def _unpacked(version: str) -> Path:
    """Where lava-server @version is unpacked in the cache."""
    return cache_dir() / "lava" / f"{PACKAGE}_{version.replace(':', '%3a')}"


def cached_types(version: str | None = None) -> Path | None:
    """lava-server's device-types directory of @version (default: the
    installed dispatcher's) when the cache holds it, else None (none, too,
    without a version asked or installed); fetches nothing."""
    if version is None:
        try:
            version = dispatcher_version()
        except RunnerError:
            return None
    types = _unpacked(version) / TYPES_IN_DEB
    return types if (types / "qemu.jinja2").is_file() else None


def device_types(version: str | None = None) -> Path:
    """lava-server's device-types directory of @version (default: the
    installed dispatcher's), unpacked once into the cache."""
    version = version or dispatcher_version()
    top = _unpacked(version)
    types = top / TYPES_IN_DEB
    if cached_types(version):
        return types
    with locked(cache_dir() / "locks" / "lava-server.lock"):
        if cached_types(version):
            return types
        progress(f"lava-server {version}: downloading its device-type templates")
        deb = apt.download(PACKAGE, version, cache_dir() / "debs")
        with cache.filling(top) as tmp:
            run(["dpkg-deb", "-x", deb, tmp], what=f"dpkg-deb -x {deb.name}")
            if not (tmp / TYPES_IN_DEB / "qemu.jinja2").is_file():
                raise RunnerError(f"{deb} has no {TYPES_IN_DEB}/qemu.jinja2: "
                                  "delete the .deb and run again to fetch it anew")
    return types


def render(job: Path, device: Path = DEVICE, types: Path | None = None) -> str:
    """The device's YAML for the job file @job (its `context` is the
    template's variables, as lava-server renders it for that job)."""
    types = types or device_types()
    proc = subprocess.run([SYSTEM_PYTHON, "-c", RENDER, device.name,
                           json.dumps([str(device.parent), str(types)]),
                           str(job)], capture_output=True, text=True)
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise RunnerError(f"rendering {device} over {types} failed: {last} "
                          "(python3-jinja2 is installed with lava-dispatcher)")
    return proc.stdout


VALIDATE = """
import sys, yaml
from lava_common.schemas import device
try:
    device.validate(yaml.safe_load(sys.stdin))
except Exception as err:
    print("invalid:", err)
    sys.exit(1)
print("valid")
"""


def validate(text: str) -> tuple[bool, str]:
    """lava-dispatcher's own device schema (lava_common.schemas.device)
    on a rendered device."""
    proc = subprocess.run([SYSTEM_PYTHON, "-c", VALIDATE], input=text,
                          capture_output=True, text=True)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()
