"""make check-host: `gupnm-run run --kernel host` on machines it was made for.

This machine's own kernel has no module support, so host mode's module
path is tried where it can run: a Debian kernel booted by virtme-ng under
TCG with this machine's root filesystem (read-only, /tmp and /usr writable
overlays), so the guest is "this machine" running another kernel. The
kernel's headers are "installed" by binding the unpacked packages where
Debian installs them. In the guest the runner runs exactly as a user runs
it on their host, and the check asserts:

- headers, unsigned modules allowed: the module is used; 6.12.117+deb12
  says the bug (exit 1), 6.1 passes (exit 0);
- the same kernel under lockdown=integrity, and without headers: the
  probe, the reason named, the same bug verdict;
- every time: no setting changed (/proc/sys/vm, transparent and huge
  pages), no module left loaded, the mounts as before.

virtme-ng is fetched through the runner's own apt view (trixie's package,
Architecture: all) and unpacked into the cache, never installed.
Alone: make check-host (cd runner && python3 -m gupnm.check.host_mode).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import probe
from ..host import REPO, cache_dir, locked
from ..hosttools import ensure_tools
from ..prepare import debian, kernels
from .tally import Tally


@dataclass
class Case:
    name: str
    spec: str
    headers: bool
    append: str
    method: str             # module or probe
    exit_code: int
    reason: str             # in the method's reason


CASES = (
    Case("module, bug", "bookworm-security", True, "", "module", 1, "headers are in"),
    Case("module, before the bug", "6.1", True, "", "module", 0, "headers are in"),
    Case("lockdown", "bookworm-security", True, "lockdown=integrity", "probe", 1,
         "lockdown=integrity"),
    Case("no headers", "bookworm-security", False, "", "probe", 1, "no headers for"),
)
# Groups of the cache the guest reads (the host's, read-only); what it
# writes (modules, locks) goes to its own /tmp.
READ_ONLY = ("src", "selftest", "probe", "busybox", "apt")
# Settings, modules and mounts; not the counters beside the settings.
STATE = ("grep -r . /proc/sys/vm /sys/kernel/mm/transparent_hugepage "
         "/sys/kernel/mm/hugepages 2>/dev/null | grep -Ev "
         "'stat_refresh|/stats/|/(pages_collapsed|full_scans|(free|resv|surplus)_hugepages):'; "
         "cut -d' ' -f1 /proc/modules | sort; cut -d' ' -f2,3 /proc/mounts | sort")

GUEST = """set -u
{binds}
mkdir -p /tmp/gc/modules /tmp/gc/locks /tmp/gc/tmp
for x in {groups}; do ln -s {cache}/$x /tmp/gc/$x; done
export GUPNM_CACHE=/tmp/gc
state() {{ {state}; }}
state >/tmp/before
python3 runner/gupnm-run run --kernel host --results /tmp/hr --json >/tmp/out.json 2>/tmp/err
rc=$?
state >/tmp/after
echo "@@host-mode rc=$rc"
echo "@@host-mode json"; cat /tmp/out.json; echo "@@host-mode end"
echo "@@host-mode diff"; diff /tmp/before /tmp/after; echo "@@host-mode end"
echo "@@host-mode err"; tail -n 5 /tmp/err; echo "@@host-mode end"
"""


def vng() -> Path:
    """virtme-ng's vng, unpacked once into the cache."""
    dest = cache_dir() / "vng"
    tool = dest / "usr/bin/vng"
    # What virtme-ng's package depends on and a bookworm host may lack.
    ensure_tools(extra_packages=("python3-argcomplete", "python3-requests", "kmod"))
    with locked(cache_dir() / "locks" / "vng.lock"):
        if not tool.exists():
            work = dest.with_suffix(".tmp")
            work.mkdir(parents=True, exist_ok=True)
            conf = subprocess.run([str(REPO / "runner/debian-apt.sh")], check=True,
                                  capture_output=True, text=True).stdout.strip()
            subprocess.run(["apt-get", "download", "-q", "virtme-ng"], cwd=work, check=True,
                           env=dict(os.environ, APT_CONFIG=conf), capture_output=True)
            deb = next(work.glob("virtme-ng_*.deb"))
            subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)
    return tool


def _binds(k: debian.DebianKernel, headers: bool) -> str:
    if not headers:
        return ": no headers"
    pieces = [p for d in ("usr/src", "usr/lib") for p in sorted((k.root / d).glob("linux-*"))]
    return "\n".join(f"mkdir -p /{p.relative_to(k.root)} && mount --bind {p} "
                     f"/{p.relative_to(k.root)}" for p in pieces)


def boot(case: Case) -> tuple[dict, str, float]:
    """One guest: the runner's JSON summary, the raw output, seconds."""
    k = debian.fetch(case.spec)
    script = GUEST.format(binds=_binds(k, case.headers), groups=" ".join(READ_ONLY),
                          cache=cache_dir(), state=STATE)
    tool = vng()
    tmp = cache_dir() / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="host-mode-", dir=tmp,
                                     delete=False) as f:
        f.write(script)
    # Debian's python3: virtme-ng's dependencies are its packages.
    cmd = ["/usr/bin/python3", str(tool), "--run", str(k.image), "--disable-kvm",
           "--cpus", "2", "--memory", "2G", "--exec", f"bash {f.name}"]
    if case.append:
        cmd += ["--append", case.append]
    env = dict(os.environ, PYTHONPATH=str(tool.parents[1] / "lib/python3/dist-packages"),
               PATH=f"{tool.parent}:{os.environ.get('PATH', '')}")
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=900)
    finally:
        os.unlink(f.name)
    out = proc.stdout + proc.stderr
    return parse(out), out, time.monotonic() - t0


def parse(out: str) -> dict:
    """The guest's rc, summary JSON, state diff and error tail."""
    got = {"rc": None, "json": None, "diff": None, "err": ""}
    m = re.search(r"@@host-mode rc=(\d+)", out)
    got["rc"] = int(m.group(1)) if m else None
    for part in ("json", "diff", "err"):
        m = re.search(rf"@@host-mode {part}\r?\n(.*?)@@host-mode end", out, re.S)
        got[part] = m.group(1).strip() if m else None
    try:
        got["json"] = json.loads(got["json"]) if got["json"] else None
    except ValueError:
        got["json"] = None
    return got


def method_of(s: dict) -> tuple[str, str]:
    """(method, reason) of a host-mode summary: the module's or the probe's."""
    src = (s.get("kernel") or {}).get("source") or {}
    if src.get("method") == "module":
        return "module", src.get("method_reason", "")
    return s.get("method", "?"), s.get("method_reason", "")


def check(t: Tally, cases=CASES) -> None:
    kernels.build_selftest(REPO / kernels.SELFTEST)
    probe.build()
    for case in cases:
        got, out, secs = boot(case)
        s = got["json"] or {}
        method, why = method_of(s)
        detail = (f"{secs:.0f} s; rc {got['rc']}; method {method}: {why}; "
                  f"stderr: {got['err']}" if got["json"] else out[-1500:])
        t.record(f"host mode in a {case.spec} guest ({case.name}): {case.method}, "
                 f"exit {case.exit_code}",
                 got["rc"] == case.exit_code and method == case.method
                 and case.reason in why, detail)
        t.record(f"host mode in a {case.spec} guest ({case.name}): no setting, "
                 "module or mount left changed",
                 got["diff"] == "" and got["json"] is not None,
                 got["diff"] if got["diff"] else "no state diff captured")


def main() -> int:
    t = Tally()
    check(t)
    return t.end()


if __name__ == "__main__":
    sys.exit(main())
