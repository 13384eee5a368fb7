"""make patches-to-send, checked without the network: the sender's mainline
tree is stood in for by a git tree made here, whose one commit is the fix
with a changelog written for this check (never sent). What is checked is
the mechanism: upstream's words taken verbatim with its author, the
backporter's note after them, the sender's Signed-off-by last, example.*
identities refused, a stable request only for a tree the commit applies
to, and, sending against a tree, a base-commit: line, To:/Cc: from its
get_maintainer.pl and checkpatch run there.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..host import REPO
from .tally import Tally

FIX_SHA = "c494788faffe67216c56623d240541fde50139c3"
UPSTREAM_AUTHOR = "Upstream Author <upstream@kernel.invalid>"
SENDER = "A Sender <sender@kernel.invalid>"
CHANGELOG = ("mm/gup: fix GUP-fast fallback for NULL-mapping order-0 folios\n\n"
             "A changelog written for make check, standing in for upstream's.\n\n"
             f"Signed-off-by: {UPSTREAM_AUTHOR}\n")


def _run(cmd: list, cwd: Path | None = None, email: str = "sender@kernel.invalid"
         ) -> tuple[int, str]:
    env = {**os.environ, "GIT_CONFIG_COUNT": "2",
           "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "A Sender",
           "GIT_CONFIG_KEY_1": "user.email", "GIT_CONFIG_VALUE_1": email}
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode, p.stdout


def _mainline(tmp: Path, base612: Path) -> str:
    """A stand-in mainline: 6.12's tree plus the fix as one commit, with
    CHANGELOG by UPSTREAM_AUTHOR; its sha."""
    tree = tmp / "mainline"
    _run(["git", "clone", "-q", "--shared", base612, tree])
    diff = REPO / "patchgen/stable-6.12/edits/01-mm-gup-fix.diff"
    _run(["git", "-C", tree, "apply", "--index", diff])
    name, _, email = UPSTREAM_AUTHOR.partition(" <")
    _run(["git", "-C", tree, "-c", f"user.name={name}", "-c", f"user.email={email[:-1]}",
          "commit", "-q", "--author", UPSTREAM_AUTHOR, "-m", CHANGELOG])
    return _run(["git", "-C", tree, "rev-parse", "HEAD"])[1].strip()


def _patchgen(tmp: Path, sha: str) -> Path:
    """A copy of patchgen/ whose messages name the stand-in's commit."""
    repo = tmp / "repo"
    shutil.copytree(REPO / "patchgen", repo / "patchgen")
    for f in (repo / "patchgen").rglob("*"):
        if f.is_file() and FIX_SHA in f.read_text():
            f.write_text(f.read_text().replace(FIX_SHA, sha))
    return repo


def _backport(repo: Path, tmp: Path, base612: Path, sha: str) -> tuple[bool, str]:
    rc, out = _run([repo / "patchgen/gen-series.sh", "-g", "-m", tmp / "mainline",
                    "-b", base612, "-o", tmp / "out", "stable-6.12"])
    if rc:
        return False, out
    text = next((tmp / "out").glob("0001-*.patch")).read_text()
    body = text[text.index("\n\n") + 2:text.index("\n---\n")]
    want = (f"From: {UPSTREAM_AUTHOR}\n\ncommit {sha} upstream.\n\n"
            + CHANGELOG.partition("\n\n")[2] + "\n[ context-only adjustment: ")
    ok = body.startswith(want) and body.rstrip().endswith(f" ]\nSigned-off-by: {SENDER}")
    return ok, f"want the body to start with:\n{want}\ngot:\n{body}"


def _refusals(repo: Path, tmp: Path, base612: Path) -> tuple[bool, str]:
    got = [_run([repo / "patchgen/gen-series.sh", "-g", "-b", base612, "-o",
                 tmp / "x", "stable-6.12"]),
           _run([repo / "patchgen/gen-series.sh", "-g", "-b", base612, "-o",
                 tmp / "y", "upstream"], email="me@example.org")]
    ok = (got[0][0] == 1 and "give your mainline tree" in got[0][1]
          and got[1][0] == 1 and "example address" in got[1][1])
    return ok, "\n".join(out for _, out in got)


def _requests(repo: Path, tmp: Path, base612: Path, base73: Path) -> tuple[bool, str]:
    gen = repo / "patchgen/gen-request.sh"
    rc, out = _run([gen, "-g", "-m", tmp / "mainline", "-t", f"6.18={base612}", "-o",
                    tmp / "req", "stable-pick"])
    text = (tmp / "req/request.txt").read_text() if rc == 0 else ""
    rc2, out2 = _run([gen, "-g", "-m", tmp / "mainline", "-t", f"7.2={base73}", "-o",
                      tmp / "req2", "stable-pick"])
    ok = ("6.18.y as it is: checked on" in text and f"From: {SENDER}" in text
          and "Cc: John Hubbard <jhubbard@nvidia.com>" in text
          and "7.2.y: Tried on 7.2.13" in text
          and rc2 == 1 and "needs a backport" in out2
          and not (tmp / "req2/request.txt").exists())
    return ok, out + text + out2


def _send_upstream(tmp: Path, base73: Path) -> tuple[bool, str]:
    """-s against 7.3's tree: the mails carry base-commit:, To:/Cc: from its
    get_maintainer.pl; its checkpatch, without history, cannot look up the
    Fixes: ids, so the run ends 1 naming that, the files written."""
    rc, out = _run([REPO / "patchgen/gen-series.sh", "-g", "-s", "-b", base73,
                    "-o", tmp / "up", "upstream"])
    head = _run(["git", "-C", base73, "rev-parse", "HEAD"])[1].strip()
    cover = (tmp / "up/0000-cover-letter.patch")
    text = cover.read_text() if cover.exists() else ""
    ok = (rc == 1 and "is not clean" in out and f"base-commit: {head}" in text
          and "To: Andrew Morton <akpm@linux-foundation.org>" in text
          and "linux-mm@kvack.org" in text)
    return ok, out + text[:1500]


def _request_is_current(tmp: Path) -> tuple[bool, str]:
    rc, out = _run([REPO / "patchgen/gen-request.sh", "-o", tmp / "cur", "stable-pick"])
    if rc:
        return False, out
    rc, diff = _run(["diff", "-ru", REPO / "patches/stable-pick", tmp / "cur"])
    return rc == 0, "patches/stable-pick is stale: run make patches\n" + diff


def check(t: Tally, bases: dict[str, Path]) -> None:
    base612, base73 = bases["stable-6.12"], bases["upstream"]
    with tempfile.TemporaryDirectory(prefix="gupnm-send-") as d:
        tmp = Path(d)
        t.guard("send: patches/stable-pick is what patchgen/gen-request.sh makes",
                lambda: _request_is_current(tmp))
        sha = _mainline(tmp, base612)
        repo = _patchgen(tmp, sha)
        t.guard("send: the 6.12 backport carries upstream's changelog verbatim "
                "from the sender's mainline tree, its author, the note, the "
                "sender's Signed-off-by", lambda: _backport(repo, tmp, base612, sha))
        t.guard("send: refused without a mainline tree, and from an example.org "
                "identity", lambda: _refusals(repo, tmp, base612))
        t.guard("send: the 6.18 request names the tree the commit applies to; "
                "none for a tree it does not apply to",
                lambda: _requests(repo, tmp, base612, base73))
        t.guard("send: upstream against a tree: base-commit:, To:/Cc: from "
                "get_maintainer.pl, checkpatch run there",
                lambda: _send_upstream(tmp, base73))
