"""make check-revision: a kernel carrying an earlier revision of the series
(v3) and today's test (issue 46, item 3).

v3 numbered GUP_FAST_VERDICT `_IOWR('g', 10, ...)` and answered `_PIN`
questions through the slow path; v4 is `_IOWR('g', 11, ...)`. A kernel
with v3's gup_test built in must make today's test skip, naming the
command it asked, never answer v4's question with v3's meaning; v3's own
test, built against that tree's own header, still speaks to it.

The v3 tree is linux-source-7.3 (the upstream series' base) with v3's
four patches as this repository's history holds them (V3_COMMIT's
patches/upstream), applied with `git am` in a worktree of the base kept in
the cache. Two boots of its `--config kselftest` build (v3's gup_test
built in): as `source:` (the tree's own test) and as `image:` (this
checkout's test). One kernel build (about 7 min cold, seeded by ccache
from the 7.3 builds), so not in make check.
"""
from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path

from ..host import REPO, RunnerError, cache_dir, locked, run
from ..prepare import source

# The last commit whose patches/upstream is series v3.
V3_COMMIT = "d01e166a38bcace1ae3af208904c891bf05cfbce"
V3_ASKS = "gup_test lacks GUP_FAST_VERDICT (0xc028670b)"   # v4's number, refused


def v3_tree() -> Path:
    """linux-source-7.3 with v3's patches, made once in the cache."""
    base = source.resolve_base("debian-7.3").path
    names = run(["git", "-C", str(REPO), "ls-tree", "--name-only", V3_COMMIT,
                 "patches/upstream/"]).split()
    patches = sorted(n for n in names if Path(n).name[:4].isdigit()
                     and not Path(n).name.startswith("0000"))
    if len(patches) != 4:
        raise RunnerError(f"{V3_COMMIT}:patches/upstream holds {len(patches)} patches, "
                          "not v3's four: is this a shallow clone? (git fetch --unshallow)")
    tree = cache_dir() / "revision" / f"v3-{V3_COMMIT[:12]}"
    with locked(cache_dir() / "locks" / "revision-v3.lock"):
        if (tree / ".gupnm-v3-ready").exists() and subprocess.run(
                ["git", "-C", str(tree), "rev-parse", "--verify", "HEAD"],
                capture_output=True).returncode == 0:
            return tree                 # (its base still there)
        tree.parent.mkdir(parents=True, exist_ok=True)
        if tree.exists():
            subprocess.run(["git", "-C", str(base), "worktree", "remove", "--force",
                            str(tree)], capture_output=True)
        run(["git", "-C", str(base), "worktree", "prune"])
        run(["git", "-C", str(base), "worktree", "add", "--detach", str(tree), "HEAD"])
        for p in patches:
            text = run(["git", "-C", str(REPO), "show", f"{V3_COMMIT}:{p}"])
            subprocess.run(["git", "-C", str(tree), "-c", "user.name=gupnm",
                            "-c", "user.email=gupnm@localhost", "am", "-q"],
                           input=text, text=True, check=True, capture_output=True)
        (tree / ".gupnm-v3-ready").write_text(V3_COMMIT + "\n")
    return tree


def _boot(t, label: str, spec: str, config: str):
    from ..cli import run_one
    from .matrix import _args, boot
    args = _args(config, "", spec)
    args.stress = None
    outdir = REPO / "results" / f"check-revision-{datetime.now():%Y%m%d-%H%M%S-%f}"
    return boot(t, label, spec, args, outdir, run_one), args, outdir


def check(t) -> None:
    from .. import probe
    try:
        tree = v3_tree()
    except (RunnerError, subprocess.CalledProcessError) as err:
        t.record("revision: linux-source-7.3 with series v3 applied", False, str(err))
        return
    t.record("revision: linux-source-7.3 with series v3 applied", True)
    spec = f"source:{tree}:none"
    label = "v3's gup_test built in, v3's own test"
    out, _, _ = _boot(t, label, spec, "kselftest")
    if out is None:
        return
    s = out.summary
    t.record(f"{label}: each revision speaks its own: PASS, driver taken",
             s.get("exit_code") == 0 and (s.get("gup_test") or {}).get("module") is None,
             f"exit {s.get('exit_code')}: {s.get('verdict')}; gup_test {s.get('gup_test')}")
    image = Path(s["kernel"]["source"]["boot_image"])
    spec = f"image:{image}:{image.parent}"
    label = "v3's gup_test built in, today's test"
    out, args, outdir = _boot(t, label, spec, "default")
    if out is None:
        return
    s = out.summary
    t.record(f"{label}: no module beside the built-in gup_test",
             (s.get("gup_test") or {}).get("module") is None, json.dumps(s.get("gup_test")))
    t.record(f"{label}: the test skipped, naming v4's command",
             s.get("exit_status") == 4 and (s.get("skip_reason") or "").startswith(V3_ASKS),
             f"exit status {s.get('exit_status')}, skip: {s.get('skip_reason')}")
    code = probe.judge_unasked(s, args, outdir)
    t.record(f"{label}: the probe judged the kernel instead: no bug (7.3 has the fix)",
             code == 0, f"exit {code}: {s.get('verdict')}")
