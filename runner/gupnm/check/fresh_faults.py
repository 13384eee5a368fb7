"""make check: the runner's installs into a fresh host, on a bad day.

Provoked for real in the fresh Debian 12 root of the fresh-machine check
(contract.py: mmdebstrap, git, make and python3 only), where installing,
interrupting and holding apt's locks touch nothing of this host:

- `--no-install` and GUPNM_NO_INSTALL=1 on the fresh root: exit 3 naming
  what is missing; dpkg's status, apt's lists and archives untouched;
- two first runs at once (`make run` twice; parallel CI jobs on a new
  host): both the verdict, the tools downloaded and installed once, the
  kernel downloaded once, no lock of apt's failing either;
- QEMU taken out again, and the dpkg frontend lock held by another
  process (fcntl, as apt and unattended-upgrades take it): with a bound
  of 1 s, exit 3 naming the holder; within the bound, the run waits,
  naming it, then installs, and is killed with its apt and dpkg
  (SIGKILL, as a CI runner ends a cancelled job) while dpkg unpacks QEMU
  in the background: dpkg left half done;
- the next run (contract.py's second, without network) finishes dpkg's
  work (`dpkg --configure -a`, QEMU again from apt's archives) and judges.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from .contract_run import BUG_KERNEL, RUN_TIMEOUT

RUNNER = "/root/gupnm/runner/gupnm-run"
# A process that takes apt's lock as apt does (fcntl), says so, and lets
# it go after argv[2] seconds.
HOLDER = ('import fcntl, sys, time\n'
          'f = open(sys.argv[1], "w")\n'
          'fcntl.lockf(f, fcntl.LOCK_EX)\n'
          'print("held", flush=True)\n'
          'time.sleep(float(sys.argv[2]))\n')
FRONTEND = "var/lib/dpkg/lock-frontend"
TOOLS_LINE = re.compile(r"^\[\s*[\d.]+s\] downloading .* \(and what they need\)$", re.M)
KERNEL_LINE = re.compile(r"^\[\s*[\d.]+s\] downloading \S+ \([^)]*\): linux-", re.M)


def in_root(root: Path, argv: list[str], *, network: bool = True,
            env: tuple[str, ...] = ()) -> list[str]:
    """The command that runs @argv chrooted into @root as root, with
    proc, sys and dev, in a private mount namespace (the mounts vanish with
    it, whatever happens) and, without @network, a network namespace of
    its own; @env: VAR=VALUE words over a clean environment."""
    # The root is bind-mounted onto itself first: "/" of a real machine
    # is a mount point (unshare --propagation needs one).
    inner = ('set -e; r="$1"; shift; mount --bind "$r" "$r"; mount -t proc proc "$r/proc"; '
             'mount --rbind /sys "$r/sys"; mount --rbind /dev "$r/dev"; '
             'exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 '
             'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin '
             'GUPNM_CACHE=/root/.cache/gupnm "$@"')
    return ["unshare", "--mount", "--propagation", "private",
            *([] if network else ["--net"]), "bash", "-c", inner, "-", str(root),
            *env, *argv]


def run_args(*more: str) -> list[str]:
    """runner/gupnm-run run in the root, on make run's kernel."""
    kernel = ["--kernel", BUG_KERNEL] if "GUPNM_CONTRACT_BUG_KERNEL" in os.environ else []
    return [RUNNER, "run", *kernel, *more]


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "-"


def _apt_state(root: Path) -> tuple:
    """What an apt-get in @root would change: dpkg's status, the package
    lists apt fetched, the packages it downloaded."""
    return (_sha256(root / "var/lib/dpkg/status"),
            sorted(p.name for p in (root / "var/lib/apt/lists").glob("*_Packages*")),
            sorted(p.name for p in (root / "var/cache/apt/archives").glob("*.deb")))


def check_no_install(t, root: Path, work: Path) -> None:
    """--no-install and GUPNM_NO_INSTALL=1 on the fresh root."""
    before = _apt_state(root)
    runs = []
    for name, argv, env in (
            ("--no-install", ["make", "-C", "/root/gupnm", "run", "RUN_ARGS=--no-install"], ()),
            ("GUPNM_NO_INSTALL=1", run_args("--results", "/root/no-install"),
             ("GUPNM_NO_INSTALL=1",))):
        t0 = time.monotonic()
        proc = subprocess.run(in_root(root, argv, env=env), capture_output=True, text=True,
                              timeout=300, stdin=subprocess.DEVNULL)
        text = proc.stdout + proc.stderr
        print(f"# fresh machine: {name} {time.monotonic() - t0:.1f}s", flush=True)
        said = re.search(r"^gupnm: error: missing on this host: (.*)$", text, re.M)
        code = ("runner/gupnm-run exited 3" in text if argv[0] == "make"
                else proc.returncode == 3)
        runs.append((name, bool(code and said and "qemu-system-x86" in said.group(1)
                                and "Traceback" not in text), text))
    after = _apt_state(root)
    t.record("faults: --no-install (make run RUN_ARGS=--no-install) and GUPNM_NO_INSTALL=1 "
             "on a fresh Debian 12: exit 3 naming what is missing (qemu-system-x86 among "
             "them); dpkg's status, apt's lists and archives untouched",
             all(ok for _, ok, _ in runs) and before == after,
             f"apt state before {before}\nafter {after}\n"
             + "\n".join(f"{n}: {ok}\n{text[-2000:]}" for n, ok, text in runs))


def first_runs(root: Path, logs: list[Path], argv: list[str]) -> list[tuple[int | None, float]]:
    """@argv in @root once per log of @logs, all at once: each run's exit
    code (None: timed out) and seconds."""
    t0 = time.monotonic()
    procs = []
    for log in logs:
        with open(log, "w") as fh:
            procs.append(subprocess.Popen(in_root(root, argv), stdout=fh,
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    out = []
    for proc in procs:
        try:
            rc = proc.wait(timeout=max(1.0, 45 * 60 - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = None
        out.append((rc, time.monotonic() - t0))
    return out


def record_first_runs(t, logs: list[Path], bug_message: str) -> bool:
    """Two first runs at once: both the verdict, tools and kernel once; ok?"""
    texts = [log.read_text(errors="replace") for log in logs]
    verdicts = [bool(re.search(rf"^verdict: .*{re.escape(bug_message)}", x, re.M)
                     and re.search(r"^exit:\s+1$", x, re.M)) for x in texts]
    tools = sum(len(TOOLS_LINE.findall(x)) for x in texts)
    kernels = sum(len(KERNEL_LINE.findall(x)) for x in texts)
    locked = [x for x in texts if "Could not get lock" in x or "Traceback" in x]
    ok = all(verdicts) and tools == 1 and kernels == 1 and not locked
    t.record("faults: two first runs at once on a fresh Debian 12 (make run twice): both "
             "the verdict (exit 1), the tools downloaded and installed once, the kernel "
             "downloaded once, no apt lock failing", ok,
             f"verdicts {verdicts}, tool downloads {tools}, kernel downloads {kernels}\n"
             + "\n".join(f"--- {log}\n{x[-2500:]}" for log, x in zip(logs, texts)))
    return ok


def _hold(path: Path, seconds: float) -> subprocess.Popen:
    """A process holding the fcntl lock of @path for @seconds, once it holds it."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    return proc


def _in_root(root: Path) -> dict[int, list[bytes]]:
    """pid -> argv of every process whose root is @root."""
    real, out = os.path.realpath(root), {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/root") == real:
                out[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
    return out


def _dpkg_at_work(root: Path) -> str | None:
    """The command line of a dpkg unpacking or configuring in @root."""
    for argv in _in_root(root).values():
        if argv and Path(argv[0].decode(errors="replace")).name == "dpkg" and \
                (b"--unpack" in argv or b"--configure" in argv):
            return " ".join(a.decode(errors="replace") for a in argv if a)
    return None


def _interrupted_run(root: Path, log: Path) -> tuple[int | None, str | None]:
    """The runner in @root, killed with all its processes (SIGKILL, as a
    CI runner ends a cancelled job's) once a dpkg of its works there:
    (exit code, dpkg's command line; None when none was seen). SIGTERM to
    the runner alone may let dpkg end its work (the runner gives its
    children a grace): not a fault to count on."""
    with open(log, "w") as fh:
        proc = subprocess.Popen(in_root(root, run_args("--results", "/root/interrupted")),
                                stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    seen = None
    # Once dpkg began to change the package (its journal holds an entry):
    # killed at its start, it would leave nothing undone.
    while proc.poll() is None and not (seen and _journal(root)):
        seen = seen or _dpkg_at_work(root)
        time.sleep(0.005)
    if seen:
        for pid in _in_root(root):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    try:
        return proc.wait(timeout=RUN_TIMEOUT), seen
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(), seen


def _journal(root: Path) -> list[str]:
    """dpkg's journal in @root: the entries of a run not yet folded into
    its status file (what makes apt say "dpkg was interrupted")."""
    try:
        return [n for n in os.listdir(root / "var/lib/dpkg/updates") if n.isdigit()]
    except OSError:
        return []


def half_done(root: Path) -> str:
    """What dpkg left unfinished in @root ('' for nothing): its journal,
    and what dpkg --audit says."""
    admin = root / "var/lib/dpkg"
    journal = _journal(root)
    audit = subprocess.run(["dpkg", f"--admindir={admin}", "--audit"],
                           capture_output=True, text=True).stdout.strip()
    return " ".join(filter(None, [f"journal {journal}" if journal else "", audit]))


def check_interrupted_install(t, root: Path, work: Path) -> bool:
    """QEMU out, the frontend lock held: past the bound 3 naming the
    holder; within it the run waits, installs, and is interrupted while
    dpkg unpacks QEMU; ok (dpkg left half done for the next run)?"""
    t0 = time.monotonic()
    subprocess.run(in_root(root, ["apt-get", "purge", "-y", "-q", "qemu-system-x86"]),
                   capture_output=True, stdin=subprocess.DEVNULL, timeout=300)
    holder = _hold(root / FRONTEND, 6)
    try:
        proc = subprocess.run(in_root(root, run_args("--results", "/root/lock-bound"),
                                      env=("GUPNM_APT_LOCK_WAIT=1",)),
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        said = f"process {holder.pid} (" in proc.stderr and "holds /var/lib/dpkg/lock-frontend" \
            in proc.stderr and "after waiting 1s" in proc.stderr
        t.record("faults: the dpkg frontend lock held by another process past the bound "
                 "(GUPNM_APT_LOCK_WAIT=1): exit 3 naming the holder's pid and command",
                 proc.returncode == 3 and said and "Traceback" not in proc.stderr,
                 f"exit {proc.returncode}, holder {holder.pid}\n{proc.stderr[-2500:]}")
        log = work / "interrupted.log"
        rc, seen = _interrupted_run(root, log)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    text = log.read_text(errors="replace")
    waited = re.search(rf"installing tools: waiting, process {holder.pid} \(.*\) holds "
                       r"/var/lib/dpkg/lock-frontend", text)
    free, fetch = text.find("the lock is free"), text.find("downloading qemu-system-x86")
    waited = waited and 0 <= free < fetch
    t.record("faults: the dpkg frontend lock held by another process (a host's unattended "
             "upgrades): the run waits, a progress line naming the holder, then installs",
             bool(waited), text[-2500:])
    left = half_done(root)
    print(f"# fresh machine: lock bound, lock wait and interrupted install "
          f"{time.monotonic() - t0:.1f}s", flush=True)
    ok = rc == -signal.SIGKILL and bool(seen) and bool(left)
    t.record("faults: a run killed with its apt and dpkg (SIGKILL, as a CI runner ends a "
             "cancelled job) while QEMU installs in the background: dpkg left half done, "
             "for the next run to finish", ok,
             f"exit {rc}; dpkg seen: {seen}; dpkg left: {left or 'nothing'}\n{text[-2500:]}")
    return ok


def record_repaired(t, root: Path, log: Path, interrupted: bool) -> None:
    """The run after the interrupted one finished dpkg's work and judged."""
    text = log.read_text(errors="replace")
    left = half_done(root)
    state = subprocess.run(["dpkg-query", f"--admindir={root / 'var/lib/dpkg'}", "-W",
                            "-f=${db:Status-Abbrev}", "qemu-system-x86"],
                           capture_output=True, text=True).stdout.strip()
    ok = (interrupted and "finishing it (dpkg --configure -a)" in text and not left
          and state == "ii" and bool(re.search(r"^exit:\s+1$", text, re.M)))
    t.record("faults: the run after it (without network) finishes dpkg's work "
             "(dpkg --configure -a, QEMU from apt's archives) and gives the verdict (1)",
             ok, f"interrupted first: {interrupted}; dpkg left: {left or 'nothing'}; "
             f"qemu-system-x86 {state!r}\n{text[-2500:]}")
