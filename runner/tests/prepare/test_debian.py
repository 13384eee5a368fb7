"""Unit tests for gupnm.prepare.debian, gupnm.prepare.apt and gupnm.prepare.chroot (no network)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.prepare import apt, cache, chroot, debian, debs
from gupnm.host import RunnerError, UsageError

# What the runner's apt lists hold, in the forms apt-cache prints them.
NAMES = [
    "linux-image-6.1.0-57-amd64-unsigned", "linux-image-6.1.0-57-rt-amd64-unsigned",
    "linux-image-6.1.0-57-amd64-dbg", "linux-image-6.1.0-9-amd64-unsigned",
    "linux-image-6.12.117+deb12-amd64-unsigned", "linux-image-6.12.117+deb13-amd64-unsigned",
    "linux-image-6.12.118+deb13-amd64-unsigned", "linux-image-6.12.118+deb13-cloud-amd64-unsigned",
    "linux-image-6.12.118+deb13-arm64-unsigned", "linux-image-6.12.118+deb13-arm64-16k-unsigned",
    "linux-image-7.3.4+deb13-amd64", "linux-image-amd64",
    "linux-binary-7.3.4+deb13-amd64", "linux-binary-unsigned-7.3.4+deb13-amd64",
    "linux-binary-unsigned-7.1.13+deb13-amd64", "linux-binary-7.2.13+deb14-amd64",
    "linux-binary-7.3.4+deb13-amd64-dbg",
]
MADISON = """\
linux-image-6.1.0-57-amd64-unsigned |   6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.1.0-9-amd64-unsigned |   6.1.27-1 | http://deb.debian.org/debian bookworm/main amd64 Packages
linux-image-6.1.0-57-rt-amd64-unsigned |   6.1.192-3 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.12.117+deb12-amd64-unsigned | 6.12.117-1~deb12u1 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages
linux-image-6.12.117+deb13-amd64-unsigned |  6.12.117-1 | http://deb.debian.org/debian trixie/main amd64 Packages
linux-image-6.12.117+deb13-amd64-unsigned |  6.12.117-1 | http://deb.debian.org/debian-security trixie-security/main amd64 Packages
linux-image-6.12.118+deb13-amd64-unsigned |  6.12.118-1 | http://deb.debian.org/debian-security trixie-security/main amd64 Packages
linux-image-6.12.118+deb13-cloud-amd64-unsigned |  6.12.118-1 | http://deb.debian.org/debian-security trixie-security/main amd64 Packages
linux-binary-7.3.4+deb13-amd64 | 7.3.4-1~bpo13+1 | http://deb.debian.org/debian trixie-backports/main amd64 Packages
linux-binary-7.1.13+deb13-amd64 | 7.1.13-1~bpo13+1 | http://deb.debian.org/debian trixie-backports/main amd64 Packages
linux-binary-unsigned-7.1.13+deb13-amd64 | 7.1.13-1~bpo13+1 | http://deb.debian.org/debian trixie-backports/main amd64 Packages
linux-binary-7.2.13+deb14-amd64 |   7.2.13-1 | http://deb.debian.org/debian sid/main amd64 Packages
"""
HEADERS = {"6.1.0-57-amd64", "6.1.0-9-amd64", "6.12.117+deb12-amd64",
           "6.12.117+deb13-amd64", "6.12.118+deb13-amd64", "6.12.118+deb13-cloud-amd64",
           "7.3.4+deb13-amd64",
           "7.2.13+deb14-amd64"}          # not 7.1.13: dropped from the archive


def fake_madison(names, arch="amd64"):
    offers = [o for o in apt.parse_madison(MADISON) if o.name in names]
    for name in names:
        if name.startswith("linux-headers-"):
            rel = name[len("linux-headers-"):]
            for o in apt.parse_madison(MADISON):
                if rel in HEADERS and o.name.endswith(rel + "-unsigned") or \
                        rel in HEADERS and o.name.endswith("-" + rel) and \
                        o.name.startswith("linux-binary"):
                    offers.append(apt.Offer(name, o.version, o.suite, o.arch))
    return offers


class DownloadTest(unittest.TestCase):
    """apt.download names the architecture only of packages that have one."""

    def spec(self, arch_field):
        def fake_run(cmd, cwd, **_):
            (Path(cwd) / "linux-headers-6.1.0-57-common_1-1_all.deb").touch()
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(apt, "field", return_value=arch_field), \
                mock.patch.object(apt, "env", return_value={}), \
                mock.patch.object(apt, "run", side_effect=fake_run) as run:
            got = apt.download("linux-headers-6.1.0-57-common", "1-1", Path(d), "arm64")
            self.assertEqual(got.name, "linux-headers-6.1.0-57-common_1-1_all.deb")
        return run.call_args.args[0][-1]

    def test_arch_all_package_without_architecture(self):
        # Cold arm64 cache: 'linux-headers-6.1.0-57-common:arm64=6.1.192-3'
        # was not found (an Architecture: all package).
        self.assertEqual(self.spec("all"), "linux-headers-6.1.0-57-common=1-1")
        self.assertEqual(self.spec("arm64"), "linux-headers-6.1.0-57-common:arm64=1-1")


class CatalogueTest(unittest.TestCase):

    def setUp(self):
        patches = [mock.patch.object(apt, "pkgnames", side_effect=lambda p: [
                       n for n in NAMES if n.startswith(p)]),
                   mock.patch.object(apt, "madison", side_effect=fake_madison),
                   mock.patch.object(apt, "lists_stamp", return_value="")]
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        self.offers = debian.catalogue()

    def test_parse_madison_padded_columns(self):
        got = apt.parse_madison(MADISON)
        self.assertEqual(got[0], apt.Offer("linux-image-6.1.0-57-amd64-unsigned",
                                           "6.1.192-3", "bookworm-security", "amd64"))
        self.assertEqual(len(got), MADISON.count("\n"))

    def test_both_layouts_and_suites(self):
        by_rel = {o.release: o for o in self.offers}
        self.assertEqual(by_rel["6.12.117+deb13-amd64"].suites, ["trixie", "trixie-security"])
        self.assertEqual(by_rel["6.12.117+deb13-amd64"].layout, "unsigned")
        self.assertEqual(by_rel["7.3.4+deb13-amd64"].image_pkg, "linux-binary-7.3.4+deb13-amd64")
        self.assertEqual(by_rel["7.3.4+deb13-amd64"].layout, "binary")
        self.assertEqual(by_rel["6.12.118+deb13-cloud-amd64"].flavour, "cloud-amd64")
        self.assertNotIn("6.12.118+deb13-arm64", by_rel)
        self.assertFalse(any(o.release.endswith("-dbg") for o in self.offers))

    def test_signed_binary_preferred(self):
        names = ["linux-binary-unsigned-7.1.13+deb13-amd64", "linux-binary-7.1.13+deb13-amd64"]
        self.assertEqual(debian.image_names(names)["7.1.13+deb13-amd64"][0],
                         "linux-binary-7.1.13+deb13-amd64")
        self.assertEqual(debian.image_names(names[::-1])["7.1.13+deb13-amd64"][0],
                         "linux-binary-7.1.13+deb13-amd64")

    def test_numeric_order(self):
        rels = [o.release for o in self.offers if o.flavour == "amd64"]
        self.assertEqual(rels[:2], ["6.1.0-9-amd64", "6.1.0-57-amd64"])
        self.assertEqual(rels[-1], "7.3.4+deb13-amd64")

    def test_select_series_suite_release(self):
        sel = lambda s: debian.select(s, self.offers).release
        self.assertEqual(sel("6.1"), "6.1.0-57-amd64")
        self.assertEqual(sel("6.12"), "6.12.118+deb13-amd64")
        self.assertEqual(sel("7.3"), "7.3.4+deb13-amd64")
        self.assertEqual(sel("sid"), "7.2.13+deb14-amd64")
        self.assertEqual(sel("trixie"), "6.12.117+deb13-amd64")
        self.assertEqual(sel("bookworm-security"), "6.12.117+deb12-amd64")
        self.assertEqual(sel("7.3.4+deb13"), "7.3.4+deb13-amd64")
        self.assertEqual(sel("6.12.118+deb13-cloud-amd64"), "6.12.118+deb13-cloud-amd64")

    def test_no_headers_is_said(self):
        with self.assertRaisesRegex(UsageError, "not its headers"):
            debian.select("7.1", self.offers)

    def test_unknown_and_bad_specs(self):
        for spec in ("7.9", "buster", "", "latest", "6.12;x", "../6.12", "6.12/x"):
            with self.subTest(spec=spec), self.assertRaises(UsageError):
                debian.select(spec, self.offers)


class CatalogueCacheTest(unittest.TestCase):

    def test_cached_per_lists_stamp(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"GUPNM_CACHE": tmp}), \
                mock.patch.object(apt, "lists_stamp", return_value="1"), \
                mock.patch.object(apt, "conf", return_value=f"{tmp}/apt/apt.conf"), \
                mock.patch.object(debian, "_catalogue", return_value=[
                    debian.Offered("7.3.4+deb13-amd64", "amd64", "linux-binary-7.3.4+deb13-amd64",
                                   "7.3.4-1", ["sid"], "binary", True)]) as cat:
            (Path(tmp) / "apt").mkdir()
            first, second = debian.catalogue(), debian.catalogue()
            self.assertEqual(first, second)
            self.assertEqual(cat.call_count, 1)
            with mock.patch.object(apt, "lists_stamp", return_value="2"):
                debian.catalogue()
            self.assertEqual(cat.call_count, 2)
            # Cut short (a full disk, a kill): asked again, no traceback.
            (Path(tmp) / "apt" / "catalogue-amd64.json").write_text('{"stamp": "1", "ker')
            self.assertEqual(debian.catalogue(), first)
            self.assertEqual(cat.call_count, 3)


class FetchTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="gupnm-test-debian-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        p = mock.patch.dict(os.environ, {"GUPNM_CACHE": str(self.tmp)})
        p.start()
        self.addCleanup(p.stop)
        self.offered = debian.Offered("7.3.4+deb13-amd64", "amd64",
                                      "linux-binary-7.3.4+deb13-amd64", "7.3.4-1~bpo13+1",
                                      ["trixie-backports"], "binary", True)
        # .debs here are stand-ins: checked against the lists in DebCheckTest.
        p = mock.patch.object(debs, "problem", return_value=None)
        p.start()
        self.addCleanup(p.stop)

    def test_cache_keyed_by_package_sha(self):
        with mock.patch.object(debian, "catalogue", return_value=[self.offered]), \
                mock.patch.object(apt, "field", return_value="ab" * 32), \
                mock.patch.object(debian, "_fetch_locked", return_value="K") as fl:
            self.assertEqual(debian.fetch("7.3"), "K")
        self.assertEqual(fl.call_args.args[1].name, "7.3.4+deb13-amd64-" + "ab" * 8)

    def test_a_suite_is_fetched_through_its_own_lists(self):
        """debian:SUITE (make run's default) asks apt of that suite's lists
        alone; a series or a release of every suite's."""
        seen = []

        def catalogue(arch):
            seen.append(apt._SUITE.get())
            return [self.offered]
        with mock.patch.object(debian, "catalogue", side_effect=catalogue), \
                mock.patch.object(apt, "field", return_value="ab" * 32), \
                mock.patch.object(debian, "_fetch_locked", return_value="K"):
            debian.fetch("trixie-backports")
            debian.fetch("7.3")
            debian.fetch("7.3.4+deb13-amd64")
        self.assertEqual(seen, ["trixie-backports", None, None])
        self.assertIsNone(apt._SUITE.get())

    def test_drop_debs_in_a_cache_it_cannot_write_keeps_them_quietly(self):
        deb = self.tmp / "k.deb"
        deb.write_bytes(b"!<arch>")
        k = debian.DebianKernel("r", Path("/i"), Path("/k"), Path("/r"), [], self.offered,
                                [deb, self.tmp / "gone.deb"])
        erofs = OSError(30, "Read-only file system")
        with mock.patch.object(Path, "unlink", side_effect=erofs) as unlink:
            debian.drop_debs(k)              # no error: the run goes on
        unlink.assert_called_once_with()     # the missing one is not touched
        self.assertTrue(deb.exists())

    def test_debs_dropped_then_fetched_again_through_the_same_lists(self):
        debs = self.tmp / "debs"
        debs.mkdir()
        names = ["linux-binary-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb",
                 "linux-headers-7.3.4+deb13-common_7.3.4-1~bpo13+1_all.deb"]
        for n in names:
            (debs / n).write_bytes(b"!<arch>")
        k = debian.DebianKernel(self.offered.release, Path("/i"), Path("/k"), Path("/r"),
                                [], self.offered, [debs / n for n in names],
                                "trixie-backports")
        debian.drop_debs(k)
        self.assertEqual(list(debs.iterdir()), [])
        got = []

        def download(name, version, dest, arch):
            got.append((name, version, arch, apt.current_suite()))
            return dest / "x.deb"
        with mock.patch.object(apt, "download", side_effect=download):
            self.assertEqual(debian.present_debs(k), [debs / "x.deb"] * 2)
        self.assertEqual(got, [
            ("linux-binary-7.3.4+deb13-amd64", "7.3.4-1~bpo13+1", "amd64", "trixie-backports"),
            ("linux-headers-7.3.4+deb13-common", "7.3.4-1~bpo13+1", "amd64", "trixie-backports")])
        (debs / names[0]).write_bytes(b"!<arch>")         # present: not fetched
        with mock.patch.object(apt, "download") as dl:
            debian.present_debs(debian.DebianKernel(
                "r", Path("/i"), Path("/k"), Path("/r"), [], self.offered, [debs / names[0]]))
        dl.assert_not_called()

    def test_the_image_package_gives_its_image_alone(self):
        """Its modules (about 100 MB for 6.12) are never used: the guest
        loads gup_test.ko alone."""
        with mock.patch.object(debian, "extract_image") as ex, \
                mock.patch.object(debian, "run") as run:
            debian._unpack(Path("/d/img.deb"), Path("/t"), self.offered.image_pkg, self.offered)
            debian._unpack(Path("/d/hdr.deb"), Path("/t"), "linux-headers-7.3.4+deb13-amd64",
                           self.offered)
        ex.assert_called_once_with(Path("/d/img.deb"), Path("/t"), self.offered.release)
        self.assertEqual(run.call_args.args[0], ["dpkg-deb", "-x", Path("/d/hdr.deb"), Path("/t")])

    def test_binary_layout_image_path(self):
        rel = self.offered.release
        root = self.tmp / "debian" / "k"
        (root / "usr/lib/modules" / rel).mkdir(parents=True)
        (root / "usr/lib/modules" / rel / "vmlinuz").write_bytes(b"MZ")
        kdir = root / "usr/src" / f"linux-headers-{rel}"
        kdir.mkdir(parents=True)
        (kdir / "Makefile").write_text("include x\n")
        (self.tmp / "debs").mkdir()
        (root / ".gupnm-unpacked").write_text("linux-binary-7.3.4+deb13-amd64_7.3.4-1~bpo13+1_amd64.deb\n")
        cache.record(root, debian._checked_files(root, rel))
        with mock.patch.object(debian, "run") as run:
            k = debian._fetch_locked(self.offered, root)
        run.assert_not_called()
        self.assertEqual(k.image, root / "usr/lib/modules" / rel / "vmlinuz")
        self.assertEqual(k.packages, ["linux-binary-7.3.4+deb13-amd64=7.3.4-1~bpo13+1"])

    def test_incomplete_unpack(self):
        root = self.tmp / "debian" / "k"
        root.mkdir(parents=True)
        (root / ".gupnm-unpacked").write_text("")
        cache.record(root, [])
        with self.assertRaisesRegex(RunnerError, "missing after unpacking"):
            debian._fetch_locked(self.offered, root)

    def test_cut_image_in_the_cache_is_unpacked_again(self):
        # Issue 21: a cut image in the cache booted, and blamed the user.
        rel = self.offered.release
        root = self.tmp / "debian" / "k"

        def unpack(cmd, **kw):
            if cmd[:2] == ["dpkg-deb", "-x"]:
                dest = Path(cmd[3])
                (dest / "usr/lib/modules" / rel).mkdir(parents=True, exist_ok=True)
                (dest / "usr/lib/modules" / rel / "vmlinuz").write_bytes(b"MZ" * 1000)
                kdir = dest / "usr/src" / f"linux-headers-{rel}"
                kdir.mkdir(parents=True, exist_ok=True)
                (kdir / "Makefile").write_text("include /usr/src/x\n")
            elif cmd[:2] == ["rm", "-rf"]:
                shutil.rmtree(cmd[2], ignore_errors=True)
            return ""
        deb = self.tmp / "debs" / "linux-binary_1_amd64.deb"
        deb.parent.mkdir()
        deb.write_bytes(b"deb")
        with mock.patch.object(debian, "run", side_effect=unpack) as run, \
                mock.patch.object(debian, "packages_of", return_value=["linux-binary"]), \
                mock.patch.object(apt, "download", return_value=deb), \
                mock.patch.object(debian, "progress"), mock.patch.object(cache, "progress"):
            k = debian._fetch_locked(self.offered, root)
            unpacked = run.call_count
            with open(k.image, "r+b") as fh:
                fh.truncate(100)
            k = debian._fetch_locked(self.offered, root)
            self.assertGreater(run.call_count, unpacked)
        self.assertEqual(k.image.stat().st_size, 2000)
        self.assertIn("vmlinuz is 100 bytes, 2000 when filled", cache.repairs()[-1])

    def test_deb_that_does_not_unpack_is_downloaded_once_more(self):
        deb = self.tmp / "x.deb"
        deb.write_bytes(b"cut")
        fail = RunnerError("dpkg-deb -x x.deb failed (exit 2):\ndpkg-deb: error: unexpected end of file")
        with mock.patch.object(debian, "run", side_effect=[fail, ""]), \
                mock.patch.object(apt, "download", return_value=deb) as dl, \
                mock.patch.object(debian, "progress"):
            self.assertEqual(debian._unpack(deb, self.tmp, "p", self.offered), deb)
        dl.assert_called_once()
        with mock.patch.object(debian, "run", side_effect=[fail, fail]), \
                mock.patch.object(apt, "download", return_value=deb), \
                mock.patch.object(debian, "progress"):
            with self.assertRaisesRegex(cache.CacheError, "does not unpack even downloaded "
                                        "afresh .*cache --clean sources"):
                debian._unpack(deb, self.tmp, "p", self.offered)

    def test_deps_are_versioned_kernel_packages(self):
        dep = ("linux-base, linux-base-7.3.4+deb13-amd64 (= 7.3.4-1~bpo13+1), "
               "linux-headers-7.3.4+deb13-common (= 7.3.4-1~bpo13+1), "
               "linux-kbuild-7.3.4+deb13 (= 7.3.4-1~bpo13+1), gcc-14-for-host")
        with mock.patch.object(apt, "field", side_effect=lambda n, v, k, a: dep
                               if n.endswith("-amd64") and "headers" in n else ""):
            self.assertEqual(debian.packages_of(self.offered), [
                "linux-binary-7.3.4+deb13-amd64", "linux-headers-7.3.4+deb13-amd64",
                "linux-base-7.3.4+deb13-amd64", "linux-headers-7.3.4+deb13-common",
                "linux-kbuild-7.3.4+deb13"])

    def test_dependency_gone_at_the_kernels_version_takes_the_newest_allowed(self):
        # linux-headers-6.1.0-47-amd64 6.1.170-3 depends on linux-kbuild-6.1
        # (>= 6.1.170-3); the archive keeps linux-kbuild-6.1 at 6.1.176-1 and
        # 6.1.192-3 only.
        offered = debian.Offered("6.1.0-47-amd64", "amd64", "linux-image-6.1.0-47-amd64-unsigned",
                                 "6.1.170-3", ["bookworm"], "unsigned", True)
        dep = ("linux-headers-6.1.0-47-common (= 6.1.170-3), linux-kbuild-6.1 (>= 6.1.170-3), "
               "linux-compiler-gcc-12-x86")
        have = {"linux-kbuild-6.1": ["6.1.192-3", "6.1.176-1"],
                "linux-headers-6.1.0-47-common": ["6.1.170-3"]}
        pkgs = [offered.image_pkg, "linux-headers-6.1.0-47-amd64",
                "linux-headers-6.1.0-47-common", "linux-kbuild-6.1"]
        with mock.patch.object(apt, "field", side_effect=lambda n, v, k, a: dep
                               if n == "linux-headers-6.1.0-47-amd64" else ""), \
                mock.patch.object(apt, "madison", side_effect=lambda names, arch: [
                    apt.Offer(names[0], v, "bookworm", arch) for v in have.get(names[0], [])]):
            got = debian.dep_versions(offered, pkgs)
        self.assertEqual(got["linux-kbuild-6.1"], "6.1.192-3")
        self.assertEqual(got["linux-headers-6.1.0-47-common"], "6.1.170-3")   # '=' kept
        self.assertEqual(got[offered.image_pkg], "6.1.170-3")

    def test_dependency_at_the_kernels_version_is_kept(self):
        ver = self.offered.version
        with mock.patch.object(apt, "field", return_value=f"linux-kbuild-7.3 (>= {ver})"), \
                mock.patch.object(apt, "madison", return_value=[
                    apt.Offer("linux-kbuild-7.3", v, "sid", "amd64") for v in ("9.9-1", ver)]):
            got = debian.dep_versions(self.offered, ["img", "hdr", "linux-kbuild-7.3"])
        self.assertEqual(got["linux-kbuild-7.3"], ver)

    def test_arm64_dependency_asked_as_name_colon_arch(self):
        offered = debian.Offered("6.1.0-47-arm64", "arm64", "linux-image-6.1.0-47-arm64-unsigned",
                                 "6.1.170-3", ["bookworm"], "unsigned", True, "arm64")
        with mock.patch.object(apt, "field", return_value="linux-kbuild-6.1 (>= 6.1.170-3)"), \
                mock.patch.object(apt, "madison", side_effect=lambda names, arch: [
                    apt.Offer("linux-kbuild-6.1", "6.1.192-3", "bookworm-security", arch)]
                    if names == ["linux-kbuild-6.1:arm64"] else []):
            got = debian.dep_versions(offered, ["img", "hdr", "linux-kbuild-6.1"])
        self.assertEqual(got["linux-kbuild-6.1"], "6.1.192-3")

    def test_name_version_of_a_deb(self):
        self.assertEqual(debian._name_version(Path("linux-kbuild-6.1_6.1.192-3_amd64.deb")),
                         "linux-kbuild-6.1=6.1.192-3")
        self.assertEqual(debian._name_version(Path("x_1%3a2.0-1_all.deb")), "x=1:2.0-1")

    def test_fix_headers_points_beside_itself(self):
        """The -common copy is named relative to the headers' Makefile, never
        by the cache's path: a cache copied or mounted elsewhere works."""
        rel = "6.12.117+deb12-amd64"
        tmp = self.tmp / "x.tmp"
        mf = tmp / "usr/src" / f"linux-headers-{rel}" / "Makefile"
        mf.parent.mkdir(parents=True)
        mf.write_text("include /usr/src/linux-headers-6.12.117+deb12-common/Makefile\n")
        debian._fix_headers(tmp, rel)
        self.assertEqual(mf.read_text(), "include $(dir $(lastword $(MAKEFILE_LIST)))../"
                         "linux-headers-6.12.117+deb12-common/Makefile\n")
        self.assertNotIn(str(self.tmp), mf.read_text())

    def test_make_reads_the_relative_include(self):
        """make -C KDIR (oot/build-module.sh) finds the -common Makefile."""
        if not shutil.which("make"):
            self.skipTest("no make here")
        rel = "6.12.117+deb12-amd64"
        src = self.tmp / "moved/usr/src"
        (src / f"linux-headers-{rel}").mkdir(parents=True)
        (src / "linux-headers-6.12.117+deb12-common").mkdir()
        (src / "linux-headers-6.12.117+deb12-common/Makefile").write_text(
            "all:\n\t@echo common here\n")
        mf = src / f"linux-headers-{rel}" / "Makefile"
        mf.write_text("include /usr/src/linux-headers-6.12.117+deb12-common/Makefile\n")
        debian._fix_headers(self.tmp / "moved", rel)
        out = subprocess.run(["make", "-s", "-C", str(mf.parent)], capture_output=True,
                             text=True)
        self.assertEqual((out.returncode, out.stdout), (0, "common here\n"), out.stderr)

    def test_an_older_runners_absolute_include_is_made_relative_on_use(self):
        rel = self.offered.release
        root = self.tmp / "debian" / "k"
        kdir = root / "usr/src" / f"linux-headers-{rel}"
        kdir.mkdir(parents=True)
        (root / "usr/lib/modules" / rel).mkdir(parents=True)
        (root / "usr/lib/modules" / rel / "vmlinuz").write_bytes(b"MZ")
        (kdir / "Makefile").write_text(f"include /elsewhere/debian/k/usr/src/"
                                       f"linux-headers-7.3.4+deb13-common/Makefile\n")
        (root / ".gupnm-unpacked").write_text("")
        cache.record(root, debian._checked_files(root, rel))
        k = debian._fetch_locked(self.offered, root)
        self.assertTrue((kdir / "Makefile").read_text().startswith(
            "include $(dir $(lastword $(MAKEFILE_LIST)))../linux-headers-7.3.4"))
        self.assertIsNone(cache.check(root))        # recorded again
        self.assertEqual(k.kdir, kdir)

    def test_a_headers_tree_cut_short_is_unpacked_again_before_a_build(self):
        rel = self.offered.release
        root = self.tmp / "debian" / "k"
        kdir = root / "usr/src" / f"linux-headers-{rel}"
        (kdir / "include/linux").mkdir(parents=True)
        (kdir / "include/linux/mm.h").write_text("x" * 100)
        cache.record(root, [])
        k = debian.DebianKernel(rel, Path("/i"), kdir, root, [], self.offered, [],
                                "trixie-backports")
        suites = []
        with mock.patch.object(debian, "_fetch_locked",
                               side_effect=lambda *a: suites.append(apt.current_suite())
                               ) as refill:
            debian.ensure_whole(k)              # no listing (older runner): one made
            refill.assert_not_called()
            self.assertTrue((root / cache.TREE).exists())
            (kdir / "include/linux/mm.h").unlink()
            with mock.patch.object(cache, "progress"):
                debian.ensure_whole(k)
        refill.assert_called_once_with(self.offered, root)
        self.assertEqual(suites, ["trixie-backports"])    # through the lists it came by
        self.assertIn(f"1 of its 1 files missing or not of their size when filled: "
                      f"usr/src/linux-headers-{rel}/include/linux/mm.h missing",
                      cache.take_repairs()[-1])


class CompilerTest(unittest.TestCase):

    def test_cc_version_text_and_package(self):
        with tempfile.TemporaryDirectory() as tmp:
            kdir = Path(tmp)
            self.assertEqual(debian.cc_version_text(kdir), "")
            (kdir / ".config").write_text(
                'CONFIG_CC_VERSION_TEXT="x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0"\n')
            text = debian.cc_version_text(kdir)
        self.assertEqual(chroot.compiler_of(text),
                         ("x86_64-linux-gnu-gcc-14", "gcc-14"))
        with self.assertRaisesRegex(RunnerError, "only gcc-N"):
            chroot.compiler_of("clang version 19")

    def test_host_has_needs_the_same_version_line(self):
        self.assertFalse(chroot.host_has("no-such-compiler-xyz (Debian 1) 1"))

    def test_base_suite(self):
        self.assertEqual(debian.base_suite(["trixie-backports"]), "trixie")
        self.assertEqual(debian.base_suite(["sid"]), "sid")
        self.assertEqual(debian.base_suite(["bookworm-security"]), "bookworm")


if __name__ == "__main__":
    unittest.main()
