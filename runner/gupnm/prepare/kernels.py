"""Kernel specs, and what each kernel needs: the module and the test binary.

A spec names one kernel to test:
  debian:SERIES|RELEASE        a Debian binary kernel (debian:6.12, debian:6.1,
                               debian:6.12.117+deb12-amd64)
  source:TREE[:SELECTION]      a kernel built from TREE ('debian-6.12' is
                               Debian's linux-source-6.12; any git checkout
                               works) with the patches/ SELECTION applied:
                               all (default), nofix (all but the fix),
                               wrongfix (a NULL mapping always allowed),
                               anonslow (all, and GUP-fast refusing every
                               anonymous folio: a negative control), none,
                               mutant-NAME (all, and one decision of
                               gup_fast_folio_allowed() flipped:
                               runner/gupnm/check/mutants/NAME.diff)
  image:KERNEL:DIR             a kernel image, with either its headers or
                               build directory (the module is built against
                               it) or a module tree holding gup_test.ko
  debs:DIR                     a folder of the kernel's .deb files (image,
                               headers, -common, kbuild: debdir.py),
                               unpacked into the cache, then as image:
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .. import phases
from ..host import REPO, RunnerError, UsageError, cache_dir, locked, owner_tag, progress, run
from . import cache, chroot, debdir, debian, kconfig, modsource, ownimage, source, vmlinux
from .modsource import MODULE_INPUTS, gup_test_source

SELFTEST = "tools/testing/selftests/mm/gup_null_mapping.c"
# Which gup_test answers the test (Prepared.source["gup_test"],
# command.Server.kind, summary.json's gup_test.kind): the kernel's own,
# built in (a source tree with the series' GUP_FAST_VERDICT), or the
# series' gup_test built out of tree from oot/ and loaded in the guest.
GUP_TEST_BUILTIN = "built in"
GUP_TEST_RUNNERS = "the runner's module (out of tree)"


@dataclass
class Prepared:
    spec: str
    release: str
    image: Path
    module: Path | None               # the runner's gup_test.ko; None: built in
    test_binary: Path
    run_vmtests: Path | None          # set: run through run_vmtests.sh
    source: dict = field(default_factory=dict)   # how the kernel was obtained
    arch: str = "amd64"                 # the guest's: amd64 or arm64
    config: Path | None = None          # the kernel's .config, when known
    tree: Path | None = None            # a source kernel's patched tree,
    tree_commit: str | None = None      # shared: checked out at this commit


def _config_has(config: Path | None, option: str, value: str) -> bool:
    """@option is @value in the .config @config (False without one)."""
    return config is not None and config.exists() and \
        kconfig.parse(config.read_text(errors="replace")).get(option) == value


def gup_test_of(prep: Prepared) -> dict:
    """Which gup_test answers the test on @prep's kernel, as summary.json's
    gup_test and the report say it: kind (GUP_TEST_BUILTIN or
    GUP_TEST_RUNNERS), the module the guest loads (None: none) and why."""
    if prep.module is None:
        return {"kind": GUP_TEST_BUILTIN, "module": None,
                "why": f"the kernel's own gup_test in {prep.release} "
                       "(CONFIG_GUP_TEST=y); no module loaded"}
    return {"kind": GUP_TEST_RUNNERS, "module": str(prep.module),
            "why": f"{prep.module.name}, the series' gup_test from oot/ for "
                   f"{prep.release}, loaded before the test"}


def parse_spec(spec: str) -> tuple[str, list[str]]:
    kind, _, rest = spec.partition(":")
    if kind == "debian" and rest:
        return kind, [rest]
    if kind == "source" and rest and not rest.startswith(":"):
        tree, _, sel = rest.partition(":")
        sel = sel or "all"
        if sel not in source.SELECTIONS and not source.mutant_of(sel):
            raise UsageError(f"'{sel}' in '{spec}' is not a patch selection: "
                              + ", ".join(source.SELECTIONS) + ", mutant-NAME")
        return kind, [tree, sel]
    if kind == "image" and rest:
        parts = rest.split(":")
        if len(parts) == 2 and all(parts):
            return kind, parts
    if kind == "debs" and rest:
        return kind, [rest]
    raise UsageError(f"bad kernel spec '{spec}': use debian:6.12, debian:6.1, "
                      "source:debian-6.12[:all|nofix|none], "
                      "image:KERNEL:HEADERS_OR_MODULE_DIR or debs:DIR")


def build_module(kdir: Path, release: str, debian_kernel=None,
                 kbuild: tuple[str, ...] = (), bound: chroot.Bound | None = None) -> Path:
    """Build the series' gup_test.ko out of tree against @kdir (W=1, cached;
    @kbuild: extra make arguments, e.g. a cross compiler; @bound: in a build
    root of another suite, the headers bound into it).

    The cache entry is named by the content of the module's inputs and of
    the kernel side it is built against (release, Module.symvers, .config),
    never by the release alone: two clones with different sources, or two
    kernels with one release string, each get their own module. @kdir is
    named by its place in the cache (cache.ident), not by the cache's path:
    a cache copied or mounted elsewhere finds its modules. It is built in a
    private directory and renamed into place under the entry's lock.
    """
    h = hashlib.sha256(f"{release}\0{cache.ident(kdir)}\0{' '.join(kbuild)}\0".encode())
    for name in MODULE_INPUTS:
        h.update((REPO / name).read_bytes())
    for name in ("Module.symvers", ".config"):
        if (kdir / name).exists():
            h.update((kdir / name).read_bytes())
    key = h.hexdigest()[:20]
    out = cache_dir() / "modules" / f"{release}-{key}"
    with phases.phase("module_build"), \
            locked(cache_dir() / "locks" / f"module-{key}.lock"):
        return _build_module_locked(kdir, out, debian_kernel, kbuild, bound)


def _mk(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def _build_module_locked(kdir: Path, out: Path, dk=None,
                         kbuild: tuple[str, ...] = (), bound=None) -> Path:
    ko = out / "gup_test.ko"
    cache.checked(out, lambda: _fill_module(kdir, out, ko, dk, kbuild, bound),
                  group="kernels")
    return ko


def _fill_module(kdir: Path, out: Path, ko: Path, dk=None,
                 kbuild: tuple[str, ...] = (), bound=None) -> None:
    """Build @ko into a private folder, record it, rename it to @out."""
    if dk is not None:      # the headers are used: whole, or fetched again
        debian.ensure_whole(dk)
    out.parent.mkdir(parents=True, exist_ok=True)
    log = out.parent / f"{out.name}.log"
    log.write_text("")
    src = gup_test_source()
    cc = debian.cc_version_text(kdir)
    with cache.filling(out) as tmp:
        for name in ("gup_test.c", "gup_test.h"):
            shutil.copy2(src / name, tmp / name)
        if dk is not None and dk.offered and dk.offered.arch == "arm64":
            _cross_build(kdir, tmp, log, dk, cc)
        elif bound is not None:
            progress(f"building gup_test.ko with {cc.split(' ')[0]} in the "
                     f"{bound.suite} root {bound.root}, against " + ", ".join(
                         f"{host} at {inside}" for host, inside in bound.binds))
            chroot.build_module(bound.root, "", tmp, log, ["W=1"], bound)
        elif dk is not None and cc and not chroot.host_has(cc):
            # The kernel's compiler is not the host's: build in a root of
            # the kernel's own suite that has it.
            suite, root = chroot.pick_root(chroot.compiler_of(cc)[1],
                                           dk.offered.suites)
            chroot.install_headers(root, dk.debs, dk.release,
                                   lambda debs: debian.present_debs(dk, debs))
            progress(f"building gup_test.ko with {cc.split(' ')[0]} in "
                     f"the {suite} root {root}")
            chroot.build_module(root, dk.release, tmp, log, ["W=1"])
        else:
            progress(f"building gup_test.ko against {kdir}")
            run([REPO / "oot" / "build-module.sh", kdir, tmp, "W=1", *kbuild],
                log=log, what="module build")
        if not (tmp / ko.name).exists():
            raise RunnerError(f"module build left no {ko.name}; see {log}")
        cache.record(tmp, [ko.name])


def _cross_build(kdir: Path, tmp: Path, log: Path, dk, cc: str) -> None:
    """An arm64 module, cross-built with the kernel's gcc-N: on the host
    when it has that cross compiler (bookworm's gcc-12), else in a root of
    the kernel's suite with gcc-N-aarch64-linux-gnu, the arm64 headers and
    the amd64 kbuild tools unpacked inside it."""
    from . import arm64
    if arm64.host_can_cross(cc):
        progress(f"cross-building gup_test.ko against {kdir}")
        run([REPO / "oot" / "build-module.sh", kdir, tmp, "W=1",
             *arm64.kbuild_args(cc)], log=log, what="module cross-build")
        return
    suite, root = chroot.pick_root(arm64.cross_package(cc), dk.offered.suites)
    chroot.install_headers(root, dk.debs, dk.release,
                           lambda debs: debian.present_debs(dk, debs))
    versions = dict(p.split("=", 1) for p in dk.packages)
    arm64.host_kbuild(list(versions), versions, root)
    chroot.record(root)             # its arm64 kbuild tools now amd64's
    progress(f"cross-building gup_test.ko with {cc.split(' ')[0]} in the "
             f"{suite} root {root}")
    chroot.build_module(root, dk.release, tmp, log,
                        ["W=1", *arm64.kbuild_args(cc, check=False)])


def _cross_named(k) -> str:
    """Which cross compiler built an arm64 Debian kernel's module, and where."""
    from . import arm64
    cc = debian.cc_version_text(k.kdir)
    if arm64.host_can_cross(cc):
        return arm64.cross_compiler(cc)
    suite = chroot.suite_for(arm64.cross_package(cc),
                             k.offered.suites if k.offered else [])
    return f"{cc.split(' ')[0]} ({arm64.cross_package(cc)}) in a {suite} root"


def _static_build(group: str, name: str, src: Path, inputs: list[Path],
                  includes: list[Path], libs: list[str], cc: str,
                  mkdirs: tuple[Path, ...] = (), objs: tuple[Path, ...] = (),
                  srcs: tuple[Path, ...] = ()) -> Path:
    """A static binary @name from @src and @srcs (-Wall -Wextra -Werror) and @objs
    (upstream helpers, their own warnings not ours), cached by the content
    of @inputs (and the cross compiler, if any); built in a private
    temporary file and renamed into place under a lock, so parallel runs
    (or clones) never see a half-written binary or each other's."""
    for p in inputs:
        if not p.exists():
            raise RunnerError(f"{p} missing: cannot build {name}")
    h = hashlib.sha256()
    for p in inputs:
        h.update(p.read_bytes())
    if cc != "gcc":                     # a cross compiler: another binary
        h.update(cc.encode())
    key = h.hexdigest()[:20]
    out = cache_dir() / group / key / name
    if out.exists() and cache.check(out.parent) is None:
        return out

    def fill() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        for d in mkdirs:
            d.mkdir(parents=True, exist_ok=True)
        tmp = cache.scratch(out.parent, f".build-{owner_tag()}-") / out.name
        progress(f"building {name} (static)")
        incs = [a for inc in includes for a in ("-I", inc)]
        try:
            built = []
            for o in objs:
                built.append(tmp.parent / (o.stem + ".o"))
                run([cc, "-O2", *incs, "-c", "-o", built[-1], o], what=f"{name} build")
            run([cc, "-static", "-O2", "-Wall", "-Wextra", "-Werror", *incs,
                 "-o", tmp, src, *srcs, *built, *libs], what=f"{name} build")
            os.replace(tmp, out)
            cache.record(out.parent, [out.name])
        finally:
            shutil.rmtree(tmp.parent, ignore_errors=True)
    with phases.phase("test_build"), locked(cache_dir() / "locks" / f"{group}-{key}.lock"):
        cache.checked(out.parent, fill, group="kernels")
    return out


def _source_selftest(tree: Path, cc: str = "gcc") -> Path:
    """The test for a source kernel: the tree's own once the series' test
    patch is in it (the upstream series), else this checkout's (6.12, whose
    stable series is the fix alone, and selection none)."""
    if (tree / SELFTEST).exists():
        return build_selftest(tree / SELFTEST, cc, root=tree)
    return build_selftest(REPO / SELFTEST, cc)


def build_selftest(src: Path, cc: str = "gcc", root: Path | None = None) -> Path:
    """Static gup_null_mapping from @src, with what it includes and links
    from @root, a kernel tree whose own test @src is (its <mm/gup_test.h>,
    kselftest.h, vm_util.[ch], hugepage_settings.[ch]: a tree carrying
    another revision of the series gets its own test against its own ABI),
    or by default from generated/ (modsource): the series' header and the
    base's selftest files; <linux/fs.h> always the base's."""
    root = root or modsource.GENERATED
    libs = modsource.selftest_libs(root)
    sel = root / "tools/testing/selftests"
    inputs = [src, root / "mm/gup_test.h",
              modsource.GENERATED / "include/uapi/linux/fs.h",
              sel / "kselftest.h", sel / "mm/vm_util.h",
              sel / "mm/hugepage_settings.h", *libs]
    return _static_build("selftest", "gup_null_mapping", src, inputs,
                         modsource.selftest_includes(root), ["-lpthread", "-lm"], cc,
                         objs=tuple(libs))


BENCH = "bench/gup_fast_bench.c"


def build_bench(cc: str = "gcc") -> Path:
    """Static gup_fast_bench (bench/, not part of any series): its ABI from
    the series' mm/gup_test.h, kselftest.h from generated/ (modsource);
    cached by content."""
    src = REPO / BENCH
    include = modsource.include_root()
    selftests = modsource.kselftest_tree() / "tools/testing/selftests"
    # mm/ is the -I target of "../kselftest.h".
    return _static_build("bench", "gup_fast_bench", src,
                         [src, include / "mm/gup_test.h", selftests / "kselftest.h"],
                         [include, selftests / "mm"], ["-lpthread", "-lm"], cc,
                         mkdirs=(selftests / "mm",))


# The probe's C files, lowest first: each uses only those before it (KTAP
# output, a mapping under test and what /proc says of its pages, the
# GUP-fast table, main() and the producers); probe/Makefile's SRCS.
PROBE_LAYERS = ("ktap.c", "mapping.c", "table.c", "gupnm_probe.c")


def build_probe(cc: str = "gcc") -> Path:
    """Static gupnm_probe (probe/: the module-free probe, with its table),
    cached by the content of its sources."""
    srcs = [REPO / "probe" / name for name in PROBE_LAYERS]
    return _static_build("probe", "gupnm_probe", srcs[-1],
                         [*srcs, REPO / "probe" / "probe.h"], [], [], cc,
                         srcs=tuple(srcs[:-1]))


STRESS = "hardening/gupnm_stress.c"


def build_stress(cc: str = "gcc") -> Path:
    """Static gupnm_stress (hardening/, not part of any series), built like
    the test against the series' gup_test header and the kselftest.h of
    generated/ (modsource); cached by content."""
    src = REPO / STRESS
    include = modsource.include_root()
    selftests = modsource.kselftest_tree() / "tools/testing/selftests"
    return _static_build("stress", "gupnm_stress", src,
                         [src, include / "mm/gup_test.h",
                          selftests / "kselftest.h"],
                         [include, selftests], ["-lpthread"], cc)


def _release_of(kdir: Path) -> str:
    """uname -r of the kernel a build/headers directory belongs to.

    UTS_RELEASE first: Debian's headers carry the upstream version
    ("6.1.192") in include/config/kernel.release but the real release
    ("6.1.0-57-amd64") in utsrelease.h.
    """
    uts = kdir / "include" / "generated" / "utsrelease.h"
    if uts.exists():
        m = re.search(r'UTS_RELEASE\s+"([^"]+)"', uts.read_text())
        if m:
            return m.group(1)
    rel = kdir / "include" / "config" / "kernel.release"
    if rel.exists():
        return rel.read_text().strip()
    out = run(["make", "-s", "--no-print-directory", "-C", kdir, "kernelrelease"], what="make kernelrelease")
    return out.strip().splitlines()[-1]


def prepare(spec: str, *, variant: str = "default", arch: str = "amd64") -> Prepared:
    """@spec ready to boot; its source records the sha256 of the image
    booted (and a Debian kernel's, of each package)."""
    prep = _prepare(spec, variant=variant, arch=arch)
    prep.source["boot_image_sha256"] = cache.recorded_sha256(prep.image)
    return prep


def _prepare(spec: str, *, variant: str = "default", arch: str = "amd64") -> Prepared:
    kind, args = parse_spec(spec)
    if arch != "amd64":
        return _prepare_arm64(spec, kind, args, variant)
    if kind == "debian":
        if variant != "default":
            raise RunnerError(f"--config {variant} needs a kernel built from "
                              "source (source:debian-6.12)")
        return _prepare_debian(spec, args[0])
    if kind == "source":
        tree, sel = args
        with phases.phase("kernel_build"), source.held(tree, sel, variant) as k:
            # Where the kernel builds gup_test in (the series', or the
            # tree's own with --config kselftest), that one answers: a
            # module would only find its debugfs file taken.
            builtin = k.builtin or _config_has(k.config, "CONFIG_GUP_TEST", "y")
            module = None if builtin else build_module(k.build, k.release)
            binary = _source_selftest(k.tree)
        return Prepared(spec, k.release, k.image, module, binary, None,
                        {"kind": "source", "tree": str(k.base),
                         "base_commit": k.base_commit, "patches": k.patches,
                         "selection": sel, "config": variant,
                         "gup_test": GUP_TEST_BUILTIN if builtin else GUP_TEST_RUNNERS,
                         "boot_image": str(k.image)},
                        config=k.config, tree=k.tree, tree_commit=k.commit)
    if kind == "debs":
        return _prepare_debs(spec, Path(args[0]).resolve())
    return _prepare_image(spec, Path(args[0]).resolve(), Path(args[1]).resolve())


def _prepare_debs(spec: str, folder: Path) -> Prepared:
    """debs:@folder: its .debs unpacked into the cache (debdir.py), then as
    image:<unpacked>/boot/vmlinuz-REL:<unpacked>."""
    found = debdir.find(folder)
    shas = debdir.sha256s(found)
    root = debdir.unpacked(found, shas)
    prep = _prepare_image(spec, debdir.image_in(root, found.release), root)
    prep.source.update(kind="debs", debs_dir=str(folder), debs=shas)
    return prep


def _prepare_debian(spec: str, name: str) -> Prepared:
    """A Debian kernel: fetched and unpacked, its module built, its .debs
    dropped; the test and the benchmark, which take nothing from the
    kernel, built beside (2 cores: a fresh machine's first run), and the
    vmlinux extracted while the module builds. A build beside that fails
    is raised where its result is asked for."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="prepare") as pool:
        test = pool.submit(build_selftest, REPO / SELFTEST)
        pool.submit(build_bench)        # plan.make asks for it (cached by then)
        k = debian.fetch(name)
        boot = pool.submit(vmlinux.uncompressed, k.image)
        module = build_module(k.kdir, k.release, k)
        shas = debian.package_sha256(k)     # while the .debs are there
        debian.drop_debs(k)
        with phases.phase("vmlinux"):
            image = boot.result() or k.image
        with phases.phase("test_build"):
            binary = test.result()
    return Prepared(spec, k.release, image, module, binary, None,
                    {"kind": "debian", "release": k.release,
                     "packages": k.packages, "boot_image": str(image),
                     "package_sha256": shas,
                     "version": k.offered.version if k.offered else None,
                     "suites": k.offered.suites if k.offered else [],
                     "compiler": debian.cc_version_text(k.kdir)},
                    config=k.kdir / ".config")


def start_fetch(spec: str, arch: str = "amd64") -> threading.Thread | None:
    """Fetch and unpack a debian: kernel in a thread while the tools are
    installed (a fresh machine's first run): apt and dpkg-deb, which every
    Debian has, are all it needs. The caller joins it before prepare(),
    which finds the kernel in the cache; an error is left for prepare() to
    raise. None for other specs."""
    kind, args = parse_spec(spec)
    if kind != "debian":
        return None

    def fetch() -> None:
        try:
            debian.fetch(args[0], arch)
        except Exception:       # noqa: BLE001 -- prepare() reports it
            pass
    thread = threading.Thread(target=fetch, daemon=True, name="debian-prefetch")
    thread.start()
    return thread


def _image_root(kdir: Path, release: str) -> chroot.Bound | None:
    """Where image:'s module builds when this machine lacks the compiler
    the headers name: a root picked as for debian: (chroot.pick_root: the
    kernel's suite when Debian offers @release, else the oldest suite with
    the compiler), @kdir's folders bound into it; None on this machine. A
    compiler no root provides is bad input (exit 2)."""
    cc = debian.cc_version_text(kdir)
    if not cc or chroot.host_has(cc):
        return None
    try:
        package = chroot.compiler_of(cc)[1]
    except RunnerError as err:
        raise _no_root(kdir, cc, err) from None
    inside, binds = ownimage.root_binds(kdir)  # refused before a root is made
    try:
        suite, root = chroot.pick_root(package, chroot.kernel_suites(release))
    except UsageError as err:
        raise _no_root(kdir, cc, err) from None
    return chroot.Bound(suite, root, inside, tuple(binds))


def _no_root(kdir: Path, cc: str, err: RunnerError) -> UsageError:
    return UsageError(f"{kdir} names the compiler '{cc}' (CONFIG_CC_VERSION_TEXT), "
                      f"which this machine lacks and no build root provides "
                      f"({err}): give a module tree holding a gup_test.ko built "
                      "for KERNEL as DIR, or test without a module: --method probe")


def _image_module(moddir: Path) -> tuple[str, Path | None, dict, Path | None]:
    """(release, gup_test.ko or None where the headers' .config builds
    gup_test in, how it was built, the headers' .config or None) for
    image:KERNEL:@moddir:
    built against the headers or build tree in @moddir
    (ownimage.find_kdir), on this machine or in a build root of the
    compiler's suite (_image_root), or found in a module tree. A build that
    fails is bad input (exit 2): the user's headers, with the build's first
    error line."""
    kdir = ownimage.find_kdir(moddir)
    if kdir is not None:
        release = _release_of(kdir)
        build = ownimage.kbuild_dir(kdir)
        bound = _image_root(kdir, release)
        built = {"compiler": debian.cc_version_text(kdir),
                 "build_root": f"{bound.suite} ({bound.root})" if bound else "host"}
        config = kdir / ".config" if (kdir / ".config").is_file() else None
        if _config_has(config, "CONFIG_GUP_TEST", "y"):
            # gup_test built in answers (whichever revision it is): the
            # runner's module would only find its debugfs file taken.
            return release, None, {**built, "gup_test": GUP_TEST_BUILTIN}, config
        try:
            return (release, build_module(build, release, bound=bound),
                    {**built, "gup_test": GUP_TEST_RUNNERS}, config)
        except (UsageError, cache.CacheError):
            raise                       # the cache's own failure stays exit 3
        except RunnerError as err:
            raise ownimage.build_failure(
                err, kdir, f"the {bound.suite} root {bound.root}" if bound else ""
            ) from None
    found = sorted(moddir.rglob("gup_test.ko"))
    if not found:
        raise UsageError(f"{moddir} is neither a kernel build/headers directory "
                         "(no Makefile, no usr/src/linux-headers-*/ with a "
                         ".config) nor a module tree with gup_test.ko")
    vermagic = subprocess.run(["modinfo", "-F", "vermagic", str(found[0])],
                              capture_output=True, text=True).stdout.split()
    if not vermagic:
        raise RunnerError(f"cannot read the vermagic of {found[0]}")
    return vermagic[0], found[0], {}, None


def _prepare_image(spec: str, image: Path, moddir: Path) -> Prepared:
    if not image.exists():
        raise UsageError(f"kernel image {image} does not exist")
    release, module, built, config = _image_module(moddir)
    binary = build_selftest(REPO / SELFTEST)
    with phases.phase("vmlinux"):
        boot_image = vmlinux.uncompressed(image) or image
    return Prepared(spec, release, boot_image, module, binary, None,
                    {"kind": "image", "image": str(image), "modules": str(moddir),
                     "boot_image": str(boot_image), **built},
                    config=config)


def _prepare_arm64(spec: str, kind: str, args: list[str], variant: str) -> Prepared:
    """An arm64 Debian kernel: module and static test cross-built."""
    from . import arm64
    if kind == "source" and variant == "default" and args[1] != "none":
        # 64K pages (runner/configs/arm64-64k.config), cross-built; the test
        # runs directly (run_vmtests.sh needs bash, an x86 binary here).
        tree, sel = args
        with source.held(tree, sel, variant, arch=arm64.ARCH) as k:
            binary = _source_selftest(k.tree, cc=arm64.selftest_cc())
            module = None if k.builtin else build_module(
                k.build, k.release, kbuild=(f"ARCH={arm64.ARCH}",
                                            "CROSS_COMPILE=aarch64-linux-gnu-"))
        return Prepared(spec, k.release, k.image, module, binary, None,
                        {"kind": "source", "tree": str(k.base), "arch": arm64.ARCH,
                         "pages": "64K", "base_commit": k.base_commit,
                         "patches": k.patches, "selection": sel,
                         "config": "arm64-64k",
                         "gup_test": GUP_TEST_BUILTIN if k.builtin else GUP_TEST_RUNNERS},
                        arch=arm64.ARCH,
                        config=k.config, tree=k.tree, tree_commit=k.commit)
    if kind != "debian" or variant != "default":
        what = f"--config {variant}" if variant != "default" else f"'{spec}'"
        raise UsageError(f"--arch arm64 takes Debian binary kernels "
                         f"(debian:6.12.117+deb12-arm64, debian:6.12.117+deb12-"
                         f"arm64-16k, debian:6.1) and 64K-page source kernels "
                         f"(source:debian-6.12:all|nofix|wrongfix), not {what}")
    k = debian.fetch(args[0], arm64.ARCH)
    module = build_module(k.kdir, k.release, k)
    shas = debian.package_sha256(k)
    debian.drop_debs(k)
    binary = build_selftest(REPO / SELFTEST, cc=arm64.selftest_cc())
    # Debian's arm64 vmlinuz is an uncompressed Image: QEMU boots it as is.
    return Prepared(spec, k.release, k.image, module, binary, None,
                    {"kind": "debian", "release": k.release, "arch": arm64.ARCH,
                     "packages": k.packages, "boot_image": str(k.image),
                     "package_sha256": shas,
                     "version": k.offered.version if k.offered else None,
                     "suites": k.offered.suites if k.offered else [],
                     "compiler": debian.cc_version_text(k.kdir),
                     "cross_compiler": _cross_named(k)},
                    arch=arm64.ARCH, config=k.kdir / ".config")
