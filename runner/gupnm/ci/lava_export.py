"""`gupnm-run lava --export DIR --base-url URL`: a LAVA job to submit.

A lab's dispatcher fetches every artifact by URL, from its own working
directory. The export folder DIR holds the job's artifacts (kernel,
ramdisk or rootfs, modules, kselftest tarball, skipfile; for the lab job
a bare git copy of Linaro's test-definitions, served by git's dumb HTTP
protocol too) and job.yaml, whose URLs are URL/<file> with the sha256sum
LAVA's download action checks. Put DIR's files at URL (or name DIR itself
with file://DIR) and submit job.yaml unchanged. Beside them: README.txt
(how), manifest.json (what: the files, sizes, sha256, the run that made
them; it marks DIR as an export, so a later export may replace it) and
device.yaml (the local QEMU device, for lava-run on one machine).

Nothing here deletes DIR's artifacts: the runner's own run reads them from
DIR and leaves them.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

from ..host import RunnerError, UsageError
from ..prepare.cache import sha256

MANIFEST = "manifest.json"
MARK = "gupnm-lava-export"
TEST_DEFINITIONS = "test-definitions.git"
SCHEMES = ("http", "https", "file")


@dataclass
class Export:
    dir: Path
    base_url: str


def base_url_problem(url: str) -> str | None:
    """Why @url cannot be the artifacts' base URL (None: it can)."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        return (f"--base-url {url!r}: not an http://, https:// or file:// URL "
                "(where the lab's dispatcher will fetch DIR's files)")
    if parts.scheme == "file" and (parts.netloc or not parts.path.startswith("/")):
        return (f"--base-url {url!r}: a file URL names an absolute path, "
                "file:///path (three slashes)")
    if parts.scheme != "file" and not parts.netloc:
        return f"--base-url {url!r}: no host in the URL"
    if parts.query or parts.fragment:
        return f"--base-url {url!r}: a base URL takes no ?query or #fragment"
    return None


def is_export(path: Path) -> bool:
    """@path holds a manifest this runner wrote."""
    try:
        return json.loads((path / MANIFEST).read_text()).get("made_by") == MARK
    except (OSError, ValueError, AttributeError):
        return False


def dir_problem(path: Path) -> str | None:
    """Why @path cannot take an export (None: new, empty, or an export)."""
    if path.exists() and not path.is_dir():
        return f"--export {path}: not a directory"
    if path.is_dir() and any(path.iterdir()) and not is_export(path):
        return (f"--export {path}: not empty and not a previous export of "
                f"gupnm-run lava (no {MANIFEST} of ours): name a new or empty "
                "directory")
    return None


def check(export_dir: Path | None, base_url: str | None) -> Export | None:
    """The export asked for, checked before anything is built (UsageError)."""
    if export_dir is None and base_url is None:
        return None
    if export_dir is None or base_url is None:
        raise UsageError("--export DIR and --base-url URL go together: DIR's "
                         "files are served at URL")
    why = base_url_problem(base_url) or dir_problem(export_dir)
    if why:
        raise UsageError(why)
    return Export(export_dir.resolve(), base_url.rstrip("/"))


def prepare(e: Export) -> Path:
    """DIR made (a previous export's files taken away, nothing else)."""
    if is_export(e.dir):
        old = json.loads((e.dir / MANIFEST).read_text()).get("files", {})
        for name in [*old, MANIFEST, "README.txt", "job.yaml", "device.yaml"]:
            p = e.dir / os.path.basename(name)
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    e.dir.mkdir(parents=True, exist_ok=True)
    return e.dir


URL_LINE = re.compile(r'^(?P<indent>\s*)url: "?(?P<url>[^"\s]+)"?\s*$', re.M)


def with_checksums(text: str, base: str, art: Path) -> str:
    """A `sha256sum:` beside every `url: BASE/<file>` whose file is in @art
    (LAVA's download action checks it; the schema allows it on images and
    overlays alike)."""
    def add(m: re.Match) -> str:
        url = m.group("url")
        if not url.startswith(base + "/"):
            return m.group(0)
        f = art / url[len(base) + 1:]
        if not f.is_file():
            return m.group(0)
        return f"{m.group(0)}\n{m.group('indent')}sha256sum: {sha256(f)}"
    return URL_LINE.sub(add, text)


def head(repo: Path) -> str:
    """The commit @repo's HEAD names."""
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                          capture_output=True, text=True)
    if proc.returncode:
        raise RunnerError(f"git rev-parse HEAD in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def bare_copy(repo: Path, dest: Path) -> Path:
    """A bare clone of @repo at @dest, servable over dumb HTTP and file://."""
    for cmd in (["git", "clone", "-q", "--bare", "--no-hardlinks", str(repo), str(dest)],
                ["git", "-C", str(dest), "update-server-info"]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise RunnerError(f"{' '.join(cmd)}: {proc.stderr.strip()}")
    return dest


README = """\
A LAVA job of gup_null_mapping, exported by gupnm-run (runner/gupnm/ci/lava_export.py).

  job:       {job}
  kernel:    {spec}
  base URL:  {base}

job.yaml fetches every file below from the base URL (with its sha256sum):
{files}
Serve this folder at the base URL ({base}), then submit job.yaml
unchanged, e.g.

  lavacli jobs submit job.yaml

It needs a device of type qemu (x86_64, context arch amd64) that boots
under TCG or KVM. On one machine, without a server:

  lava-run --job-id 1 --output-dir OUT --device device.yaml job.yaml

(device.yaml: the runner's local QEMU device). lava-run exits 0 even when
test cases fail: the results are its `lvl: results` lines.
"""


def write(e: Export, job: str, spec: str, job_text: str, device_text: str,
          made: dict) -> Path:
    """job.yaml, device.yaml, README.txt and manifest.json into DIR."""
    files = {p.name: {"sha256": sha256(p), "bytes": p.stat().st_size}
             for p in sorted(e.dir.iterdir())
             if p.is_file() and p.name not in (MANIFEST, "README.txt", "job.yaml",
                                               "device.yaml")}
    if (e.dir / TEST_DEFINITIONS).is_dir():
        files[TEST_DEFINITIONS] = {"git": True}
    (e.dir / "job.yaml").write_text(job_text)
    (e.dir / "device.yaml").write_text(device_text)
    listing = "".join(f"  {n}\n" for n in files)
    (e.dir / "README.txt").write_text(README.format(job=job, spec=spec, base=e.base_url,
                                                    files=listing))
    manifest = {"made_by": MARK, "job": job, "kernel": spec, "base_url": e.base_url,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "files": files, **made}
    (e.dir / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return e.dir / "job.yaml"
