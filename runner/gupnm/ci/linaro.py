"""Linaro's kselftest runner (test-definitions automated/linux/kselftest),
unmodified, in the guest: what `gupnm-run kselftest --via linaro` puts
there and how it reads the answer.

LKFT and KernelCI do not call run_kselftest.sh themselves: LAVA runs
kselftest.yaml, whose one step is

    cd ./automated/linux/kselftest/
    ./kselftest.sh -c "${TST_CMDFILES}" -T "${TST_CASENAME}" -t "${TESTPROG}"
        -s "${SKIP_INSTALL}" -u "${TESTPROG_URL}" -L "${SKIPLIST}"
        -S "${SKIPFILE}" -b "${BOARD}" -g "${BRANCH}" -e "${ENVIRONMENT}"
        -p "${KSELFTEST_PATH}" -n "${SHARD_NUMBER}" -i "${SHARD_INDEX}"
        -E "${ENV}"

kselftest.sh runs run_kselftest.sh from KSELFTEST_PATH (the tarball
unpacked there), tees its output to output/kselftest.txt and pipes that
through parse-output.py (python3-tap) into output/result.txt, one
`<flat name> <pass|fail|skip>` line per result. The guest script
(runner/guest/kselftest-paths.sh, path `linaro`) makes the same call with
the parameters below and prints result.txt between markers.

The checkout is never copied into this repository: the runner takes its
path (--linaro DIR, GUPNM_LINARO, default the shared peers copy) and puts
its files, as they are, at the same absolute path in the guest's
initramfs, as a lab's overlay carries the test-definitions repository.

Traps of kselftest.sh met here: -S "" (kselftest.yaml's default SKIPFILE)
matches its http test and it runs `wget ""`, which fails the job: SKIPFILE
is always set (by default to the checkout's own empty kselftest-skipfile).
-S is read relative to kselftest.sh's directory, so our own skipfile is
passed as a relative path to where it lies in the guest.
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..host import RunnerError, UsageError, cache_dir, locked, owner_tag, run

DEFAULT = Path("/work/shared/peers/linaro-test-definitions")
ENV_VAR = "GUPNM_LINARO"
KSELFTEST_DIR = Path("automated/linux/kselftest")
# What kselftest.sh needs of the checkout (relative to it).
NEEDED = (KSELFTEST_DIR / "kselftest.sh", KSELFTEST_DIR / "parse-output.py",
          KSELFTEST_DIR / "kselftest-skipfile", Path("automated/lib/sh-test-lib"))
# Where the tarball is unpacked in the guest: kselftest.yaml's default
# KSELFTEST_PATH ("kselftests found on rootfs": no download).
KSELFTEST_PATH = "/opt/kselftests/mainline/"
# Our skipfile in the guest (selection "cmdfiles").
GUEST_SKIPFILE = "/opt/gupnm-kst/skipfile"
# parse-output.py is `#!/usr/bin/env python3` and imports tap (python3-tap):
# Debian's python3 and the modules it loads go into the guest. kselftest.sh
# also calls perl (apply_skips) and GNU split -n (busybox's has no -n).
# Once /usr/bin/perl exists, the tarball's runner.sh prefixes the nested
# TAP with kselftest/prefix.pl (use strict; use IO::Handle), which a bare
# perl binary cannot run: the nested TAP would vanish. So perl comes with
# the library of Debian's perl-base (Essential: on every Debian rootfs).
PYTHON = "/usr/bin/python3"
HOST_PACKAGES = ("python3-tap",)
GUEST_PROGRAMS = ("/usr/bin/split", "/usr/bin/perl")
SELECTIONS = ("casename", "cmdfiles")
RESULT_BEGIN = "LINARO-RESULT-BEGIN"
RESULT_END = "LINARO-RESULT-END"
RESULT_LINE = re.compile(r"^(\S+) (pass|fail|skip|unknown)$")


@dataclass(frozen=True)
class Params:
    """kselftest.yaml's parameters (its defaults unless said), as a lab
    sets them for our test; the guest passes each to kselftest.sh as the
    yaml's run step does."""
    TST_CASENAME: str = ""
    TST_CMDFILES: str = ""
    SKIPFILE: str = "kselftest-skipfile"   # never "" (wget "")
    ENV: str = ""
    TESTPROG: str = "kselftest.tar.gz"     # unused: KSELFTEST_PATH exists
    TESTPROG_URL: str = ""
    SKIP_INSTALL: str = "true"             # no network in the guest
    SKIPLIST: str = ""
    BOARD: str = ""
    BRANCH: str = ""
    ENVIRONMENT: str = ""
    KSELFTEST_PATH: str = KSELFTEST_PATH
    SHARD_NUMBER: str = "1"
    SHARD_INDEX: str = "1"

    def env_lines(self) -> list[str]:
        """Shell assignments for the guest's env file (single-quoted)."""
        for k, v in self.__dict__.items():
            if "'" in v:
                raise UsageError(f"{k} {v!r} holds a quote: not supported")
        return [f"KST_LINARO_{k}='{v}'" for k, v in self.__dict__.items()]


def locate(option: str | None = None, *, has_option: bool = False) -> Path:
    """The test-definitions checkout: --linaro (@has_option: the command
    has that option), else $GUPNM_LINARO, else the shared peers copy;
    UsageError (exit 2) saying what to do when it is not there or lacks a
    file kselftest.sh needs."""
    given = option or os.environ.get(ENV_VAR) or ""
    where = ("--linaro" if option else f"${ENV_VAR}" if given
             else "the default")
    path = Path(given or DEFAULT)
    how = (f"pass --linaro DIR or set {ENV_VAR}=DIR" if has_option or option
           else f"set {ENV_VAR}=DIR")
    if not path.is_dir():
        raise UsageError(
            f"Linaro's test-definitions not found at {path} ({where}): clone "
            f"https://github.com/Linaro/test-definitions and {how} (it is run "
            "from there, unmodified)")
    missing = [str(n) for n in NEEDED if not (path / n).is_file()]
    if missing:
        raise UsageError(f"{path} ({where}) is not a test-definitions checkout: "
                         f"no {', '.join(missing)}; {how}")
    return path.resolve()


def params(wrapper: str, selection: str, skipfile: str | None = None) -> Params:
    """The parameters a lab sets to run only our test.

    casename: TST_CASENAME=<wrapper> (mm:ksft_gup_test.sh on 7.3).
    cmdfiles: TST_CMDFILES=mm with a skipfile that skips every other test of
    the collection (kselftest.sh's apply_skips: one perl regex per line,
    matched against `collection:test`).
    A tree without ksft_<category>.sh wrappers (6.12) has one mm test,
    run_vmtests.sh, which runs all of mm unless VM_SELFTEST_ITEMS says
    otherwise: ENV (kselftest.sh -E) sets it, as a lab's job can.
    @skipfile: kselftest.sh's -S value (relative to its directory) of the
    caller's own skipfile, which replaces the default.
    """
    if selection not in SELECTIONS:
        raise UsageError(f"unknown selection '{selection}': use {', '.join(SELECTIONS)}")
    collection, _, test = wrapper.partition(":")
    env = "VM_SELFTEST_ITEMS=gup_test" if test == "run_vmtests.sh" else ""
    if selection == "casename":
        return Params(TST_CASENAME=wrapper, ENV=env,
                      **({"SKIPFILE": skipfile} if skipfile else {}))
    return Params(TST_CMDFILES=collection, ENV=env,
                  **({"SKIPFILE": skipfile} if skipfile else {}))


def only_ours_skipfile(wrapper: str) -> str:
    """A skipfile (kselftest.sh's format) skipping every test of the
    wrapper's collection but the wrapper."""
    collection, _, test = wrapper.partition(":")
    return (f"# every {collection} test but {test} (gupnm-run kselftest --via linaro)\n"
            f"{collection}:(?!{re.escape(test)}$).*\n")


def skipfile_arg(td: Path, guest_path: str = GUEST_SKIPFILE) -> str:
    """-S for a skipfile at @guest_path: kselftest.sh prefixes its own
    directory, so the path relative to it."""
    return os.path.relpath(guest_path, td / KSELFTEST_DIR)


def python_files(td: Path) -> list[str]:
    """Files of Debian's python3 that parse-output.py loads: the modules of
    its imports (read from the script, so a newer checkout's own), found by
    importing them on the host; and the lib-dynload directory."""
    script = td / KSELFTEST_DIR / "parse-output.py"
    tree = ast.parse(script.read_text())
    imports = [ast.unparse(n) for n in ast.walk(tree)
               if isinstance(n, (ast.Import, ast.ImportFrom))]
    mods = [i.split()[1] for i in imports]
    # lib-dynload too: python looks for it at start ("Could not find
    # platform dependent libraries" otherwise).
    code = ("import sys, sysconfig\n" + "".join(f"{i}\n" for i in imports)
            + "print('\\n'.join(sorted({getattr(m, '__file__', None) or '' "
            "for m in list(sys.modules.values())} - {''})))\n"
            "print(sysconfig.get_path('platstdlib') + '/lib-dynload')")
    proc = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True)
    if proc.returncode:
        raise RunnerError(f"{PYTHON} cannot import what parse-output.py needs "
                          f"({', '.join(mods)}): {proc.stderr.strip().splitlines()[-1:]}; "
                          "apt-get install python3-tap")
    return [f for f in proc.stdout.splitlines() if f.startswith("/")]


def perl_base() -> str:
    """The directory of perl-base's modules (strict.pm's), as the host's
    perl says."""
    proc = subprocess.run(["/usr/bin/perl", "-Mstrict", "-e", 'print $INC{"strict.pm"}'],
                          capture_output=True, text=True)
    if proc.returncode or not proc.stdout.startswith("/"):
        raise RunnerError("/usr/bin/perl does not say where strict.pm is: "
                          + proc.stderr.strip())
    return os.path.dirname(proc.stdout)


def results(text: str) -> list[tuple[str, str]] | None:
    """(name, result) of result.txt as the guest printed it; None when the
    guest printed no result.txt (kselftest.sh died before writing it)."""
    if RESULT_BEGIN not in text:
        return None
    body = text.split(RESULT_BEGIN, 1)[1].split(RESULT_END, 1)[0]
    out = []
    for line in body.splitlines():
        m = RESULT_LINE.match(line.strip())
        if m:
            out.append((m.group(1), m.group(2)))
    return out


_SIGNAL = re.compile(r"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=(\S+) RESULT=(pass|fail|skip|unknown)>")
_OURS = re.compile(r"(?:^|_)gup_null_mapping(?:_(?P<case>\S+))?$")


def tap_of_results(text: str) -> str | None:
    """gup_null_mapping's cases as TAP, out of a log that holds only their
    flat results: parse-output.py's result.txt lines (`NAME pass|fail|skip`)
    or LAVA's `<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=NAME RESULT=...>`; None
    when it holds none of ours. The verdict lines (pages via GUP-fast) are
    not in such a log: the TAP carries the results alone."""
    cases: dict[str, str] = {}
    for line in text.splitlines():
        m = _SIGNAL.search(line) or RESULT_LINE.match(line.strip())
        if not m:
            continue
        ours = _OURS.search(m.group(1))
        if ours and ours.group("case"):
            cases.setdefault(ours.group("case"), m.group(2))
    if not cases:
        return None
    lines = ["TAP version 13", f"1..{len(cases)}"]
    for i, (name, result) in enumerate(cases.items(), 1):
        ok = "ok" if result in ("pass", "skip") else "not ok"
        lines.append(f"{ok} {i} {name}" + (" # SKIP from result.txt" if result == "skip"
                                             else ""))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Guest:
    """What the guest's linaro path needs: the checkout (put at its own
    absolute path), kselftest.yaml's parameters, our skipfile's text."""
    td: Path
    params: Params
    skipfile: str | None = None


def guest(td: Path, wrapper: str, selection: str = "casename",
          skipfile: Path | None = None) -> Guest:
    """The Guest for @wrapper: a caller's --skipfile (a host file) or, for
    cmdfiles, one that keeps only our test; else the checkout's own."""
    text = None
    if skipfile is not None:
        try:
            text = skipfile.read_text()
        except OSError as err:
            raise UsageError(f"--skipfile {skipfile}: {err.strerror}") from None
    elif selection == "cmdfiles":
        text = only_ours_skipfile(wrapper)
    arg = skipfile_arg(td) if text is not None else None
    return Guest(td, params(wrapper, selection, arg), text)


def digest(td: Path) -> str:
    """A hash of the checkout's files (names and bytes, .git aside)."""
    h = hashlib.sha256()
    for f in sorted(p for p in td.rglob("*")
                    if p.is_file() and ".git" not in p.relative_to(td).parts):
        h.update(str(f.relative_to(td)).encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:16]


def git_copy(td: Path) -> Path:
    """A git repository holding an unmodified copy of the checkout @td, in
    the cache (keyed by its files): LAVA's `from: git` clones a repository,
    and the checkout need not be one. One commit of every file, as is."""
    dest = cache_dir() / "lava" / f"test-definitions-{digest(td)}"
    if (dest / ".git").is_dir():
        return dest
    with locked(cache_dir() / "locks" / "lava-test-definitions.lock"):
        if (dest / ".git").is_dir():
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".td-{owner_tag()}-", dir=dest.parent))
        try:
            shutil.copytree(td, tmp, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns(".git"))
            git = ["git", "-C", str(tmp), "-c", "user.name=gupnm",
                   "-c", "user.email=gupnm@localhost"]
            run([*git, "init", "-q"], what="git init")
            run([*git, "add", "-A", "-f"], what="git add")
            run([*git, "commit", "-q", "-m", f"unmodified copy of {td}"],
                what="git commit")
            os.replace(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dest
