"""Kernels built from a source tree: patch, configure, build with ccache.

The base is a git tree (Debian's linux-source-6.12 made into one by
runner/linux-source-base.sh, or any checkout: its HEAD commit is used).
The selected patches of patches/series are applied to a scratch index, and
one worktree per base (its commit, and the guest's arch) is moved to the
result with `git checkout`, which rewrites only the files that differ. Each
selection has its own build directory per configuration beside that tree;
a new build directory starts from a copy of a built sibling's, so a kernel
that differs from it in mm/gup.c (:nofix, :wrongfix, a mutant) rebuilds
one object and relinks (12 s on 6.12, where a build of its own took 62 s
with every object from ccache, and a tree of its own 129 s), and another
configuration rebuilds what its options change. A
build directory records the commit it was built from, so asking again for
that kernel runs no make at all. The ccache lives in the cache too, laid
out identically per key so that it hits across bases (CCACHE_BASEDIR).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..host import (REPO, RunnerError, UsageError, cache_dir, locked, progress, reaped,
                    run, spawn, stop)
from . import cache, kconfig

PATCHES = REPO / "patches"
SELECTIONS = ("all", "nofix", "wrongfix", "anonslow", "none")
# What each selection makes of gup_fast_folio_allowed()'s NULL-mapping
# test, after the series (and, on 6.12, the backported fix) is applied:
# the fix reverted (the regression), or a wrong fix that lets long-term
# writable pins through GUP-fast as well. Both must make the test fail.
FIXED_LINE = "\tif (!mapping)\n\t\treturn !reject_file_backed;\n"
MUTATIONS = {
    "nofix": "\tif (!mapping)\n\t\treturn false;\n",
    "wrongfix": "\tif (!mapping)\n\t\treturn true;\n",
}
# anonslow: the fix present, and gup_fast_folio_allowed() refusing every
# anonymous folio (its `return mapping_flags & PAGE_MAPPING_ANON;`, spelt
# FOLIO_MAPPING_ANON in 7.x, made `return false;`): a regression far larger
# than the one this project exists for, which the test's anon control must
# catch even where THP "always" makes an unchecked anon buffer a THP
# (issue 32: thp-always config).
ANON_LINE = re.compile(r"^(\s*)return mapping_flags & (?:PAGE|FOLIO)_MAPPING_ANON;$",
                       re.M)
ANONSLOW_LINE = r"\1return false;"
# make check's mutants of gup_fast_folio_allowed() (check/mutation.py): a
# small edit of 7.3's mm/gup.c each, applied after the whole series, one
# decision of the function flipped. Selection mutant-NAME is NAME.diff; all
# mutants share one build directory, so the next mutant rebuilds mm/gup.o
# and relinks.
MUTANTS = REPO / "runner" / "gupnm" / "check" / "mutants"
# Debian's source trees the runner knows, by the patch series made for them.
DEBIAN_TREES = {"debian-6.12": "stable-6.12", "debian-7.3": "upstream"}


@dataclass
class SourceKernel:
    release: str
    image: Path            # vmlinux (PVH boot, no decompression)
    builtin: bool          # the series' gup_test built in (else: out of tree)
    build: Path            # build directory (for out-of-tree modules)
    tree: Path             # patched source worktree
    base: Path
    base_commit: str
    patches: list[str]
    variant: str
    commit: str = ""       # the patched commit @tree is checked out at
    config: Path | None = None   # @build's .config


@dataclass
class Base:
    path: Path
    series: str            # patchgen/ series that applies: upstream, stable-6.12


def pinned(series: str) -> tuple[str, str]:
    """(package, version) a series is made for: patchgen/<series>/base."""
    pkg, version = (REPO / "patchgen" / series / "base").read_text().split()[:2]
    return pkg, version


def series_of_tree(path: Path) -> str:
    """The series for a kernel tree: stable-6.12 on 6.12, else upstream."""
    text = (path / "Makefile").read_text(errors="replace")[:2000]
    ver = re.search(r"^VERSION = (\d+)", text, re.M)
    lvl = re.search(r"^PATCHLEVEL = (\d+)", text, re.M)
    return "stable-6.12" if ver and lvl and \
        (ver.group(1), lvl.group(1)) == ("6", "12") else "upstream"


# What patchgen/gen-series.sh makes the series of: the new files at their
# kernel-tree paths and patchgen/ itself.
SERIES_INPUTS = ("lib", "tools", "patchgen")


def _series_key(base: Path, name: str) -> str:
    h = hashlib.sha256(_git(base, "rev-parse", "HEAD").encode() + name.encode())
    for top in SERIES_INPUTS:
        for path in sorted((REPO / top).rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(REPO)).encode() + b"\0")
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def current_series(base: Path, name: str) -> Path:
    """The patch directory of series @name that matches the working tree.

    patches/<name> when it is what patchgen/gen-series.sh makes of the
    repository now; otherwise (a file was edited and `make patches` not yet
    run) a freshly generated copy in the cache, so the kernel tested is the
    one the working tree describes, and patches/ is left alone. Generated
    once per state of the inputs.
    """
    committed = PATCHES / name
    store = cache_dir() / "series"
    store.mkdir(parents=True, exist_ok=True)
    fresh = store / f"{name}-{_series_key(base, name)}"
    if not fresh.exists():
        tmp = cache.scratch(store, ".gen-")
        try:
            run([REPO / "patchgen" / "gen-series.sh", "-o", tmp, "-b", base, name],
                what="patchgen/gen-series.sh")
        except RunnerError as err:
            shutil.rmtree(tmp, ignore_errors=True)
            # Another base than the series was made for: its hunks may not
            # apply exactly; the committed patches are what to try there.
            progress(f"cannot regenerate the {name} series on {base}; using "
                     f"{committed} as committed ({str(err).splitlines()[0]})")
            return committed
        try:
            tmp.rename(fresh)
        except OSError:             # another run made it first
            shutil.rmtree(tmp, ignore_errors=True)
    same = subprocess.run(["diff", "-rq", str(committed), str(fresh)],
                          capture_output=True).returncode == 0
    if same:
        return committed
    progress(f"patches/{name} is older than the files it is made of: testing "
             "a fresh series (run make patches to update patches/)")
    return fresh


def is_fix(patch: Path) -> bool:
    """The backported fix: the one patch of a series that makes the NULL
    mapping test return !reject_file_backed (series v4's GUP_FAST_VERDICT
    patch changes mm/gup.c too, but not that line)."""
    return "\n+\t\treturn !reject_file_backed;\n" in patch.read_text(errors="replace")


def prefix_of(selection: str) -> int | None:
    """N for "first-N" (the series' first N patches: make check-prefixes)."""
    m = re.fullmatch(r"first-([1-9]\d?)", selection)
    return int(m.group(1)) if m else None


def mutant_of(selection: str) -> Path | None:
    """The edit of "mutant-NAME" (MUTANTS/NAME.diff); None for another
    selection; UsageError for a mutant that has no file."""
    m = re.fullmatch(r"mutant-([a-z0-9-]+)", selection)
    if not m:
        return None
    edit = MUTANTS / f"{m.group(1)}.diff"
    if not edit.exists():
        raise UsageError(f"no mutant '{m.group(1)}': use one of "
                         + ", ".join(sorted(p.stem for p in MUTANTS.glob("*.diff"))))
    return edit


def series(selection: str, patch_dir: Path) -> list[Path]:
    if mutant_of(selection):
        return series("all", patch_dir)
    if prefix_of(selection):
        whole = series("all", patch_dir)
        if prefix_of(selection) > len(whole):
            raise UsageError(f"'{selection}': the series has {len(whole)} patches")
        return whole[:prefix_of(selection)]
    if selection not in SELECTIONS:
        raise UsageError(f"unknown patch selection '{selection}': use "
                         + ", ".join(SELECTIONS))
    if selection == "none":
        return []
    listing = patch_dir / "series"
    if not listing.exists():
        raise RunnerError(f"{listing} missing: run make patches")
    names = [l.strip() for l in listing.read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    patches = [patch_dir / n for n in names]
    if selection == "nofix":
        patches = [p for p in patches if not is_fix(p)]
    return patches


def _base_command(spec: str) -> tuple[list, str]:
    """linux-source-base.sh for Debian's tree @spec, and what it does."""
    pkg, version = pinned(DEBIAN_TREES[spec])
    return ([REPO / "runner" / "linux-source-base.sh", pkg[len("linux-source-"):],
             version], f"preparing {pkg} {version}")


def resolve_base(spec: str) -> Base:
    if spec == "debian":
        spec = "debian-6.12"
    if spec in DEBIAN_TREES:
        cmd, what = _base_command(spec)
        out = run(cmd, what=what)
        return Base(Path(out.strip().splitlines()[-1]), DEBIAN_TREES[spec])
    path = Path(spec).expanduser().resolve()
    if not (path / "Makefile").exists() or not (path / "mm" / "gup.c").exists():
        raise UsageError(f"{path} is not a kernel source tree (no Makefile or "
                          f"mm/gup.c); Debian's trees: {', '.join(DEBIAN_TREES)}")
    probe = subprocess.run(["git", "-C", str(path), "rev-parse", "--verify", "-q",
                            "HEAD"], capture_output=True, text=True)
    if probe.returncode:
        raise RunnerError(f"{path} is not a git tree with a commit; make it one "
                          "with: git init && git add -A -f && git commit -m base")
    return Base(path, series_of_tree(path))


def resolve_bases(specs: list[str]) -> list[Base]:
    """resolve_base() of each of @specs, Debian's trees after the first
    prepared beside it (xz and git add, a cold make check's first minutes:
    two cores, two trees). A tree that failed beside it is prepared again
    in the foreground, where its error is raised."""
    ahead = [spawn([str(c) for c in _base_command(s)[0]], term=signal.SIGTERM,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
             for s in specs[1:] if s in DEBIAN_TREES]
    try:
        first = resolve_base(specs[0])
        for proc in ahead:
            proc.wait()
    finally:
        for proc in ahead:              # its EXIT trap removes a half tree
            stop(proc, grace=10) if proc.poll() is None else reaped(proc)
    return [first] + [resolve_base(s) for s in specs[1:]]


def _git(base: Path, *args: str, env: dict | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(base), *args], capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})))
    if proc.returncode:
        raise RunnerError(f"git {' '.join(args)} failed in {base}:\n"
                          + (proc.stderr or proc.stdout).strip())
    return proc.stdout.strip()


def mutate_gup(text: str, selection: str) -> str:
    """mm/gup.c with the NULL-mapping test as @selection wants it (anonslow:
    the fix kept, anonymous folios refused)."""
    if selection == "anonslow":
        return _anonslow(text)
    if selection not in MUTATIONS:
        return text
    if text.count(FIXED_LINE) != 1:
        if selection == "nofix" and text.count(MUTATIONS["nofix"]) == 1:
            return text                 # the tree never had the fix
        raise RunnerError("mm/gup.c has no single 'if (!mapping) return "
                          "!reject_file_backed;': cannot make the "
                          f"'{selection}' kernel of this tree")
    return text.replace(FIXED_LINE, MUTATIONS[selection])


def _anonslow(text: str) -> str:
    """mm/gup.c with the fix and gup_fast_folio_allowed() refusing every
    anonymous folio; RunnerError when the tree lacks either line."""
    if text.count(FIXED_LINE) != 1:
        raise RunnerError("mm/gup.c has no single 'if (!mapping) return "
                          "!reject_file_backed;': the 'anonslow' kernel needs "
                          "the fix present (this tree or selection lacks it)")
    new, n = ANON_LINE.subn(ANONSLOW_LINE, text)
    if n != 1:
        raise RunnerError(f"mm/gup.c has {n} lines 'return mapping_flags & "
                          "PAGE_MAPPING_ANON;' (or FOLIO_MAPPING_ANON), not one: "
                          "cannot make the 'anonslow' kernel of this tree")
    return new


def _patched_commit(base: Path, head: str, patches: list[Path], kroot: Path,
                    selection: str = "all") -> str:
    """Apply @patches to @head in a scratch index, then the @selection
    change of mm/gup.c; return the new commit."""
    index = kroot / "scratch.index"
    env = {"GIT_INDEX_FILE": str(index)}
    _git(base, "read-tree", head, env=env)
    for patch in patches:
        proc = subprocess.run(["git", "-C", str(base), "apply", "--cached",
                               str(patch)], capture_output=True, text=True,
                              env=dict(os.environ, **env))
        if proc.returncode:
            raise RunnerError(f"patch {patch.name} does not apply to {base} "
                              f"({head[:12]}):\n{proc.stderr.strip()}")
    if selection in MUTATIONS or selection == "anonslow":
        text = _git(base, "show", ":mm/gup.c", env=env) + "\n"
        new = mutate_gup(text, selection)
        if new != text:
            blob = subprocess.run(["git", "-C", str(base), "hash-object", "-w",
                                   "--stdin"], input=new, capture_output=True,
                                  text=True, check=True).stdout.strip()
            _git(base, "update-index", "--cacheinfo", f"100644,{blob},mm/gup.c",
                 env=env)
    edit = mutant_of(selection)
    if edit:
        proc = subprocess.run(["git", "-C", str(base), "apply", "--cached", str(edit)],
                              capture_output=True, text=True, env=dict(os.environ, **env))
        if proc.returncode:
            raise RunnerError(f"mutant {edit.name} does not apply to {base} "
                              f"({head[:12]}) + the series:\n{proc.stderr.strip()}")
    tree = _git(base, "write-tree", env=env)
    index.unlink(missing_ok=True)
    ident = {"GIT_AUTHOR_NAME": "gupnm", "GIT_AUTHOR_EMAIL": "gupnm@localhost",
             "GIT_COMMITTER_NAME": "gupnm", "GIT_COMMITTER_EMAIL": "gupnm@localhost",
             "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
             "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000"}
    msg = "gupnm: " + (", ".join(p.name for p in patches) or "no patches") \
        + (f" ({selection})" if selection in MUTATIONS or
           selection == "anonslow" or edit else "")
    return _git(base, "commit-tree", tree, "-p", head, "-m", msg, env=ident)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_")[:60]


def make_env(kroot: Path) -> dict:
    return {"CCACHE_DIR": str(cache_dir() / "ccache"),
            "CCACHE_BASEDIR": str(kroot), "CCACHE_NOHASHDIR": "1",
            "KBUILD_BUILD_USER": "gupnm", "KBUILD_BUILD_HOST": "gupnm",
            "KBUILD_BUILD_TIMESTAMP": "2026-01-01"}


def _resolve(spec: str, selection: str) -> tuple[Path, str, list[Path], str]:
    """(base git tree, its HEAD, the patches of @selection, the key's stem
    <base>-<head>) of @spec."""
    resolved = resolve_base(spec)
    base = resolved.path
    head = _git(base, "rev-parse", "HEAD")
    patches = series(selection, current_series(base, resolved.series)
                     if selection != "none" else PATCHES / resolved.series)
    return base, head, patches, f"{_slug(base.name)}-{head[:12]}"


def prepare(spec: str, selection: str, variant: str = "default",
            arch: str = "amd64") -> SourceKernel:
    """@spec's kernel built (or found built): its image and module are its
    selection's own, but its tree is shared with the base's other
    selections, which may check it out elsewhere as soon as this returns:
    what reads the tree or the build directory afterwards uses held()."""
    with held(spec, selection, variant, arch) as k:
        return k


@contextmanager
def held(spec: str, selection: str, variant: str = "default", arch: str = "amd64"):
    """prepare(), with the base's tree kept at the kernel's commit and its
    build directory untouched until the block ends (out-of-tree modules
    built against it, the tree's own selftests)."""
    base, head, patches, key = _resolve(spec, selection)
    if arch != "amd64":
        key += f"-{arch}"
    kroot = cache_dir() / "kernels" / key
    kroot.mkdir(parents=True, exist_ok=True)
    with locked(cache_dir() / "locks" / f"{key}.lock"):
        yield _prepare_locked(base, head, patches, selection, variant, kroot, arch)


def patched_commit(spec: str, selection: str) -> tuple[Path, str]:
    """(base git tree, commit) of @spec with @selection applied: the commit
    `prepare(spec, selection)` builds, made in a scratch index of its own
    (no checkout, no wait on a kernel build's lock), for what only reads
    the tree (selftests built from it: kselftest_build)."""
    base, head, patches, key = _resolve(spec, selection)
    scratch = cache_dir() / "patched" / key
    scratch.mkdir(parents=True, exist_ok=True)
    with locked(cache_dir() / "locks" / f"patched-{key}.lock"):
        return base, _patched_commit(base, head, patches, scratch, selection)


def build_dir(kroot: Path, frags: list[tuple[str, str]], arch: str = "amd64",
              selection: str = "all") -> Path:
    """A build directory per selection and configuration beside the base's
    one tree: named by the selection (all mutants share one) and the digest
    of the options @frags ask for (kconfig.options_key), so a changed
    fragment builds beside the old build (which runs of another clone or
    branch may still use) instead of reconfiguring it, variants asking the
    same options (default and selftests) share one build, and all share the
    tree (1.8 GB) and ccache (the same ../src layout)."""
    sel = "mutants" if mutant_of(selection) else selection
    return kroot / f"build-{sel}-{kconfig.options_key(frags, arch)}"


def _prepare_locked(base: Path, head: str, patches: list[Path], selection: str,
                    variant: str, kroot: Path, arch: str = "amd64") -> SourceKernel:
    """The steps of a source kernel: the patched tree checked out, the
    configuration, the build, the module snapshot."""
    tree = kroot / "src"
    progress(f"source {base} ({head[:12]}) + patches: {selection} "
             f"({len(patches)}), config: {variant}")
    commit = _checkout(base, head, patches, kroot, selection, tree)

    # The series' gup_test built in once the tree has its command (any
    # prefix from that patch on); otherwise, and with --config oot,
    # kernels.prepare builds the series' gup_test out of tree against this
    # build. kselftest: the tree's gup_test built in (kconfig.fragments).
    builtin = (selection != "none" and variant not in ("kselftest", "oot")
               and kconfig.series_gup_test(tree))
    frags = kconfig.fragments(variant, tree, builtin, arch)
    build = build_dir(kroot, frags, arch, selection)
    log = kroot / f"{build.name}.log"
    env = make_env(kroot)
    make = _make_command(tree, build, arch)
    image = build / _image(variant, arch)
    stamp = build / BUILT_STAMP
    if not (image.exists() and stamp.exists() and stamp.read_text().strip() == commit):
        log.write_text("")
        _seed(build)
        _configure(make, frags, kroot, build, tree, log, env)
        stamp.unlink(missing_ok=True)
        _build(make, build, variant, arch, log, env)
        stamp.write_text(commit + "\n")
    release = run([*make, "-s", "--no-print-directory", "kernelrelease"], env=env).strip().splitlines()[-1]
    return SourceKernel(release, image, builtin, build, tree, base,
                        head, [p.name for p in patches], variant, commit,
                        build / ".config")


# In a build directory: the patched commit its objects were built from.
BUILT_STAMP = ".gupnm-built"


def _seed(build: Path) -> None:
    """A new build directory starts as a copy of a built sibling (_sibling),
    the same tree's objects: make then rebuilds only what the selections'
    commits or the configurations change (kbuild's per-option dependencies).
    The copy is moved to its place: the paths the tools/ build (objtool)
    records are absolute, and a stale one would relink objtool and with it
    every object (measured: 1062 objects, 62 s, against 3 and 12 s)."""
    if build.exists():
        return
    sibling = _sibling(build)
    if not sibling:
        return
    progress(f"starting {build.name} from a copy of {sibling.name}")
    tmp = build.with_name(build.name + ".seed")
    shutil.rmtree(tmp, ignore_errors=True)
    run(["cp", "-a", str(sibling), str(tmp)], what="copying a build directory")
    (tmp / BUILT_STAMP).unlink()
    old, new = str(sibling.resolve()).encode(), str(build.resolve()).encode()
    for cmd in (tmp / "tools").rglob(".*.cmd"):
        text = cmd.read_bytes()
        if old in text:
            cmd.write_bytes(text.replace(old, new))
    tmp.rename(build)


def _sibling(build: Path) -> Path | None:
    """The built directory beside @build (build-SELECTION-cfgDIGEST) nearest
    to it: the same configuration (a selection differs in a few files), else
    the same selection (a configuration differs in a few options), else any;
    the newest build of those."""
    sel, cfg = build.name.rsplit("-", 1)
    built = [b for b in build.parent.glob("build-*-cfg*")
             if b.is_dir() and (b / BUILT_STAMP).exists()]
    if not built:
        return None
    return max(built, key=lambda b: (b.name.endswith(f"-{cfg}"),
                                     b.name.rsplit("-", 1)[0] == sel,
                                     (b / BUILT_STAMP).stat().st_mtime))


def _checkout(base: Path, head: str, patches: list[Path], kroot: Path,
              selection: str, tree: Path) -> str:
    """The patched commit checked out (clean) in @tree, a worktree of @base;
    the commit."""
    commit = _patched_commit(base, head, patches, kroot, selection)
    if not (tree / ".git").exists():
        _git(base, "worktree", "prune")
        progress(f"checking out the tree into {tree}")
        _git(base, "worktree", "add", "-f", "--detach", str(tree), commit)
    elif _git(tree, "rev-parse", "HEAD") != commit or _git(tree, "status",
                                                             "--porcelain", "-uno"):
        _git(tree, "checkout", "-q", "-f", "--detach", commit)
    return commit


def _make_command(tree: Path, build: Path, arch: str) -> list[str]:
    target_args = (["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-",
                    "CC=ccache aarch64-linux-gnu-gcc"] if arch == "arm64" else
                   ["ARCH=x86_64", "CC=ccache gcc"])
    return ["make", "-C", str(tree), f"O={build}", *target_args, "HOSTCC=ccache gcc"]


def _configure(make: list[str], frags: list[tuple[str, str]], kroot: Path, build: Path,
               tree: Path, log: Path, env: dict) -> None:
    """tinyconfig + @frags, olddefconfig, every option checked; skipped when
    the build's .config was made from the same options."""
    digest = kconfig.options_key(frags)   # the options, not the names that ask
    stamp = build / ".gupnm-config"
    if (build / ".config").exists() and stamp.exists() and \
            stamp.read_text().strip() == digest:
        return
    progress(f"configuring: tinyconfig + {', '.join(n for n, _ in frags)}")
    build.mkdir(parents=True, exist_ok=True)
    run([*make, "tinyconfig"], log=log, env=env, what="make tinyconfig")
    frag_dir = kroot / "fragments"
    frag_dir.mkdir(exist_ok=True)
    paths = []
    for i, (name, text) in enumerate(frags):
        p = frag_dir / f"{i:02d}.config"
        p.write_text(f"# {name}\n{text}")
        paths.append(str(p))
    run([tree / "scripts/kconfig/merge_config.sh", "-m", "-O", build,
         build / ".config", *paths], log=log, env=env, cwd=tree,
        what="merge_config.sh")
    run([*make, "olddefconfig"], log=log, env=env, what="make olddefconfig")
    bad = kconfig.missing(frags, (build / ".config").read_text(), tree)
    if bad:
        raise RunnerError("config options did not survive olddefconfig "
                          "(missing dependency?):\n  " + "\n  ".join(bad))
    stamp.write_text(digest + "\n")


def _image(variant: str, arch: str) -> str:
    """The image the build makes and the guest boots, under the build
    directory: vmlinux boots via PVH without the emulated decompressor;
    KASAN kernels cannot (see configs/debug.config), so the debug variant
    boots bzImage."""
    if arch == "arm64":
        return "arch/arm64/boot/Image"
    return "arch/x86/boot/bzImage" if variant == "debug" else "vmlinux"


def _build(make: list[str], build: Path, variant: str, arch: str, log: Path,
           env: dict) -> None:
    """The kernel image and the modules, one kernel build at a time."""
    jobs = str(os.cpu_count() or 1)
    cold = not (build / "vmlinux").exists()
    progress(f"building linux in {build} (make -j{jobs}; log {log})"
             + ("; a cold build took 4.5-12 min on 2 cores (docs/measured.md), "
                "under 1 with a warm ccache" if cold else ""))
    target = Path(_image(variant, arch)).name
    # One kernel build at a time on this machine, whichever run or clone
    # asks: two parallel builds on 2 cores only make both slower. Runs with
    # caches of their own share it through GUPNM_BUILD_LOCK.
    lock = os.environ.get("GUPNM_BUILD_LOCK") or \
        cache_dir() / "locks" / "kernel-build.lock"
    with locked(Path(lock)):
        run([*make, f"-j{jobs}", target, "modules"], log=log, env=env,
            what="kernel build", tail=40)
