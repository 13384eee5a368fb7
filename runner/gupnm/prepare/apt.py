"""Debian's archive through the runner's own apt configuration.

runner/debian-apt.sh writes an apt configuration in the cache that lists
every suite (bookworm ... sid) with package lists of its own; this module
runs apt-cache and apt-get with APT_CONFIG pointing at it, so the host's
apt sources and state are never read or changed. Within `with
only_suite(S):` every call uses the lists of suite S alone (debian-apt.sh
--suite S: a few MB where every suite's are about 650 MB), for a kernel
named by its suite.
"""
from __future__ import annotations

import atexit
import contextlib
import contextvars
import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..host import REPO, RunnerError, owner_tag, progress, run

# suite (None: every suite) -> its configuration, once per process.
_CONF: dict[str | None, str] = {}
# The suite whose lists alone apt is asked of (only_suite); None: every suite.
_SUITE: contextvars.ContextVar[str | None] = contextvars.ContextVar("suite", default=None)


SCRIPT = REPO / "runner" / "debian-apt.sh"


@contextlib.contextmanager
def only_suite(suite: str):
    """Within it, apt is asked of @suite's own lists only."""
    token = _SUITE.set(suite)
    try:
        yield
    finally:
        _SUITE.reset(token)


def current_suite() -> str | None:
    """The suite of only_suite() in force, None outside it."""
    return _SUITE.get()


def conf() -> str:
    """Path of the runner's apt configuration (lists fetched when stale):
    every suite's, or one suite's within only_suite()."""
    suite = _SUITE.get()
    if suite not in _CONF:
        _CONF[suite] = _fresh_conf(suite=suite) or _kept_conf(suite) or _update(suite)
    return _CONF[suite]


def _kept_conf(suite: str | None) -> str | None:
    """The configuration and lists of an earlier update, in a cache this run
    cannot write (read-only, another user's), where debian-apt.sh cannot
    refresh them: used as they are, and said. None otherwise."""
    base = state_dir(suite)
    path, stamp = base / "apt.conf", base / "lists" / ".gupnm-updated"
    if os.access(base, os.W_OK) or not (path.is_file() and stamp.is_file()):
        return None
    progress(f"{base} cannot be written (read-only, or another user's): its "
             "package lists of " + _when(stamp) + " are used")
    return str(path)


def _when(stamp: Path) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp.stat().st_mtime))


def _update(suite: str | None) -> str:
    """debian-apt.sh: the lists fetched when stale, its failure one line (the
    script's error: Debian's archive cannot be reached, ...). Lists once
    fetched serve when fetching them again fails (no network): a run that
    has its kernel in the cache goes on, and says so."""
    args = [SCRIPT, *(("--suite", suite) if suite else ())]
    try:
        path = run(args, what="runner/debian-apt.sh (the runner's Debian package "
                   "lists)").strip().splitlines()[-1]
    except RunnerError as err:
        old = _fresh_conf(suite=suite, max_age=float("inf"))
        said = [line.split("error: ", 1)[1] for line in str(err).splitlines()
                if line.startswith("debian-apt: error: ")]
        if not old:
            raise (RunnerError(said[-1]) if said else err) from None
        progress(f"the runner's apt lists could not be fetched again ("
                 f"{(said or str(err).splitlines())[-1]}): using the ones fetched before")
        return old
    stamp = Path(path).parent / "lists" / ".gupnm-updated"
    with contextlib.suppress(OSError, ValueError):
        max_age = float(os.environ.get("GUPNM_APT_MAX_AGE", "360")) * 60
        if max_age and time.time() - stamp.stat().st_mtime >= max_age:
            progress("Debian's archive could not be reached: the runner's "
                     f"package lists of {_when(stamp)} are used")
    return path


def state_dir(suite: str | None = None) -> Path:
    """Where debian-apt.sh keeps the lists of every suite, or of @suite."""
    base = Path(os.environ.get("GUPNM_CACHE", Path.home() / ".cache" / "gupnm")) / "apt"
    return base / f"suite-{suite}" if suite else base


def _fresh_conf(now: float | None = None, suite: str | None = None,
                max_age: float | None = None) -> str | None:
    """The configuration debian-apt.sh wrote, when running it again would
    change nothing: written by this very script (not older than it), lists
    younger than GUPNM_APT_MAX_AGE minutes (its rule; @max_age seconds
    instead when given). None otherwise."""
    base = state_dir(suite)
    path, stamp = base / "apt.conf", base / "lists" / ".gupnm-updated"
    try:
        if max_age is None:
            max_age = float(os.environ.get("GUPNM_APT_MAX_AGE", "360")) * 60
        if path.stat().st_mtime < SCRIPT.stat().st_mtime:
            return None
        age = (now or time.time()) - stamp.stat().st_mtime
    except (OSError, ValueError):
        return None
    return str(path) if 0 <= age < max_age else None


_STAMPS: dict[str, str] = {}


def lists_stamp() -> str:
    """Identity of the current package lists ('' if none): the sha256 of
    their Release files, which give every list's own sha256. By content,
    not by a time: a cache copied elsewhere (cp -a, tar, CI caches) keeps
    what apt said of each package. Once per process and configuration."""
    path = conf()
    if path not in _STAMPS:
        lists = Path(path).parent / "lists"
        h = hashlib.sha256()
        if (lists / ".gupnm-updated").exists():
            for release in sorted(lists.glob("*Release")):
                h.update(release.name.encode() + b"\0" + release.read_bytes())
        _STAMPS[path] = h.hexdigest() if (lists / ".gupnm-updated").exists() else ""
    return _STAMPS[path]


_HERE: dict[str, str] = {}


def _relocated(path: str) -> str:
    """@path (an apt.conf debian-apt.sh wrote), or, when it names another
    folder than its own (the cache was copied or mounted elsewhere, and is
    read-only or its lists are fresh, so the script did not write it
    again), a copy naming its own folder, in the system's temporary folder
    for this process."""
    if path not in _HERE:
        _HERE[path] = path
        text = Path(path).read_text()
        m = re.search(r'^Dir::State::Lists "(.*)/lists";$', text, re.M)
        here = str(Path(path).parent)
        if m and m.group(1) != here:
            fd, copy = tempfile.mkstemp(prefix=f"gupnm-apt-{owner_tag()}-", suffix=".conf")
            with os.fdopen(fd, "w") as fh:
                fh.write(text.replace(f'"{m.group(1)}/', f'"{here}/'))
            atexit.register(lambda: Path(copy).unlink(missing_ok=True))
            _HERE[path] = copy
    return _HERE[path]


def env() -> dict:
    return {"APT_CONFIG": _relocated(conf())}


def apt_cache(*args: str) -> str:
    proc = subprocess.run(["apt-cache", *args], capture_output=True, text=True,
                          env=dict(os.environ, **env()))
    return proc.stdout


@dataclass(frozen=True)
class Offer:
    """One version of one package in one suite of the archive."""
    name: str
    version: str
    suite: str        # bookworm-security, trixie-backports, sid, ...
    arch: str


_MADISON_RE = re.compile(
    r"^\s*(?P<name>\S+)\s*\|\s*(?P<version>\S+)\s*\|\s*\S+ "
    r"(?P<suite>[\w.-]+)/\S+ (?P<arch>\S+) Packages$")


def parse_madison(text: str) -> list[Offer]:
    out = []
    for line in text.splitlines():
        m = _MADISON_RE.match(line)
        if m:
            # A foreign architecture's package is listed as name:arch.
            name = m["name"].split(":")[0]
            out.append(Offer(name, m["version"], m["suite"], m["arch"]))
    return out


def madison(names: list[str], arch: str = "amd64") -> list[Offer]:
    """Every (version, suite) the archive offers for @names, for @arch."""
    offers: list[Offer] = []
    for i in range(0, len(names), 200):
        offers += parse_madison(apt_cache("madison", *names[i:i + 200]))
    return [o for o in offers if o.arch in (arch, "all")]


def pkgnames(prefix: str) -> list[str]:
    return sorted(set(apt_cache("pkgnames", prefix).split()))


def field(name: str, version: str, key: str, arch: str = "amd64") -> str:
    """One field (SHA256, Depends, ...) of @name=@version from the lists.

    apt-cache show reads every suite's lists (seconds): a record once
    read is kept in the cache for as long as the lists do not change, so
    a warm run starts no apt process at all.
    """
    record = _records().get(f"{name}:{arch}={version}")
    if record is None:
        text = apt_cache("show", f"{name}:{arch}={version}")
        if not text.strip():
            text = apt_cache("show", f"{name}={version}")
        record = parse_record(text)
        _remember(f"{name}:{arch}={version}", record)
    return record.get(key, "")


def parse_record(text: str) -> dict[str, str]:
    """The fields of the first record of apt-cache show output (one line
    each: continuation lines are dropped)."""
    out: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        m = re.match(r"^([\w-]+): (.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def _records_file() -> Path:
    return Path(conf()).parent / "records.json"


def _records() -> dict[str, dict[str, str]]:
    """Records read from the current lists ({} when they changed)."""
    try:
        data = json.loads(_records_file().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("stamp") != lists_stamp() \
            or not isinstance(data.get("records"), dict):
        return {}
    return data["records"]


def _remember(key: str, record: dict[str, str]) -> None:
    """Add @record to the kept records (written whole, renamed into place:
    a parallel run reads the old file or the new one). Nothing is kept for
    an empty record, nor when the lists have no stamp."""
    stamp = lists_stamp()
    if not record or not stamp:
        return
    records = dict(_records(), **{key: record})
    path = _records_file()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"stamp": stamp, "records": records}))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):   # only a cache; a read-only one too
            tmp.unlink(missing_ok=True)


def download(name: str, version: str, dest: Path, arch: str = "amd64") -> Path:
    """apt-get download one exact package into @dest; the .deb's path."""
    dest.mkdir(parents=True, exist_ok=True)
    stem = f"{name}_{version.replace(':', '%3a')}"

    def present() -> list[Path]:
        return [p for a in (arch, "all") if (p := dest / f"{stem}_{a}.deb").exists()]
    found = present()
    if found:
        return found[0]
    # An Architecture: all package (headers' -common) is listed under the
    # native architecture only: name:arm64=version does not find it.
    spec = (f"{name}={version}" if field(name, version, "Architecture", arch) == "all"
            else f"{name}:{arch}={version}")
    # Into a scratch directory first: a concurrent run never sees half a file.
    with tempfile.TemporaryDirectory(dir=dest, prefix=f".dl-{owner_tag()}-") as tmp:
        fetch(["apt-get", "download", "-q", spec], cwd=Path(tmp), env=env(),
              what=f"apt-get download {name}={version}")
        for deb in Path(tmp).glob("*.deb"):
            os.replace(deb, dest / deb.name)
    found = present()
    if not found:
        raise RunnerError(f"apt-get download gave no .deb for {name}={version} "
                          f"in {dest}")
    return found[0]


# What the host's apt-cache policy answers from: a change to any of these
# can change a candidate.
HOST_APT_STATE = ("/var/lib/apt/lists", "/var/lib/dpkg/status", "/etc/apt/sources.list",
                  "/etc/apt/sources.list.d", "/etc/apt/preferences",
                  "/etc/apt/preferences.d")


def fetch(cmd: list, *, what: str, **kw) -> str:
    """run(@cmd), an apt-get that downloads: when it fails for the archive
    (apt's "Failed to fetch URL  REASON"), one line naming the archive and
    the reason (fetch_failure) instead of apt's output."""
    try:
        return run(cmd, what=what, **kw)
    except RunnerError as err:
        said = [line.split("error: ", 1)[1] for line in str(err).splitlines()
                if line.startswith("debian-apt: error: ")]
        if said:                        # the lists' own script, run inside
            raise RunnerError(said[-1]) from None
        raise fetch_failure(what, str(err)) or err from None


def fetch_failure(what: str, text: str) -> RunnerError | None:
    """The error to give for apt output @text that says a download failed
    ("Failed to fetch URL  REASON"); None when it does not say so."""
    m = re.search(r"Failed to fetch (\S+)\s+(.*)", text)
    if not m:
        return None
    url, why = m.group(1), m.group(2).strip()
    parts = urlsplit(url)
    archive = f"{parts.scheme}://{parts.netloc}"
    if re.match(r"\d{3} ", why):           # the archive answered: not there
        return RunnerError(f"{what}: Debian's archive ({archive}) does not have "
                           f"{parts.path.rsplit('/', 1)[-1]} ({why}): the package "
                           "lists are older than the archive; runner/debian-apt.sh "
                           "--refresh, then run again")
    return RunnerError(f"{what}: Debian's archive ({archive}) cannot be reached "
                       f"({why}): check the network (or GUPNM_DEBIAN_MIRROR), "
                       "then run again")


# What the host's apt-cache policy answers from: a change to any of these
# can change a candidate.
HOST_APT_STATE = ("/var/lib/apt/lists", "/var/lib/dpkg/status", "/etc/apt/sources.list",
                  "/etc/apt/sources.list.d", "/etc/apt/preferences",
                  "/etc/apt/preferences.d")


def host_stamp() -> str:
    """Identity of the host's apt state: the mtimes of what it reads."""
    stamps = []
    for path in HOST_APT_STATE:
        try:
            stamps.append(f"{path}={os.stat(path).st_mtime_ns}")
        except OSError:
            stamps.append(f"{path}=-")
    return " ".join(stamps)


def host_candidate(pkg: str, store: Path) -> str | None:
    """The host's candidate version of @pkg (apt-cache policy, read only),
    kept in @store while the host's apt state is unchanged; None if none."""
    memo = store / f"{pkg}.candidate.json"
    stamp = host_stamp()
    try:
        saved = json.loads(memo.read_text())
        if saved.get("stamp") == stamp:
            return saved.get("version")
    except (OSError, ValueError, AttributeError):
        pass
    policy = subprocess.run(["apt-cache", "policy", pkg], capture_output=True,
                            text=True).stdout
    m = re.search(r"Candidate: (\S+)", policy)
    version = m.group(1) if m and m.group(1) != "(none)" else None
    tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
    try:
        store.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"stamp": stamp, "version": version}))
        os.replace(tmp, memo)
    except OSError:
        with contextlib.suppress(OSError):   # only a cache; a read-only one too
            tmp.unlink(missing_ok=True)
    return version
