"""Unit tests for gupnm.probe: the module-free probe's output, host mode's
choice of method, reports. The data files are real outputs of
probe/gupnm_probe (host 6.18.44, Debian kernels booted by
probe/boot-probe.sh or the runner, a tinyconfig kernel, a non-root run)."""

import argparse
import json
import os
import stat
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import probe  # noqa: E402
from gupnm.prepare import debian  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "probe"
PRODUCERS_WITH_VERDICT = {"packet_tx_ring", "io_uring_sqes", "io_uring_sq_ring",
                          "bpf_ringbuf", "bpf_array_mmap"}


def load(name, exit_status=None):
    return probe.parse((DATA / name).read_text(), exit_status)


class ParseRealOutputs(unittest.TestCase):

    def test_bug_kernels(self):
        for name, status in (("host-6.18.44.txt", 1), ("debian-6.12.117.txt", None),
                             ("debian-6.12.118.txt", None),
                             ("debian-7.1.13-runner.txt", 1)):
            with self.subTest(name=name):
                res = load(name, status)
                self.assertEqual(res.errors, [])
                self.assertIs(res.bug_present, True)
                self.assertEqual(set(res.verdicts), PRODUCERS_WITH_VERDICT)
                for v in res.verdicts.values():
                    self.assertEqual(v["slow"], v["pages"])
                self.assertEqual(res.status_of("packet_tx_ring"), "fail")
                self.assertEqual(res.status_of("kcov_area"), "skip")
                self.assertEqual(res.status_of("longterm_write_pin"), "skip")
                self.assertEqual(probe.exit_code(res), probe.EXIT_FAIL)
                self.assertIn("BUG", probe.verdict_line(res))

    def test_fixed_and_pre_bug_kernels(self):
        for name in ("debian-6.1.0-57.txt", "debian-7.3.4.txt"):
            with self.subTest(name=name):
                res = load(name)
                self.assertEqual(res.errors, [])
                self.assertEqual(res.exit_status, 0)
                self.assertIs(res.bug_present, False)
                self.assertTrue(all(v["slow"] == 0 for v in res.verdicts.values()))
                self.assertEqual(probe.exit_code(res), probe.EXIT_PASS)
                self.assertLess(res.cost["ratio"], 1.2)
                self.assertTrue(probe.verdict_line(res).startswith("no bug"))

    def test_the_table_on_real_kernels(self):
        # gupnm_probe -t: 21 cells where io_uring pins outside the mmap_lock
        # (6.12 on), the long-term column skipped on 6.1 with the reason.
        for name, status, cells in (("host-6.18.44-table.txt", 1, 18),   # no huge page
                                    ("debian-6.12.118-table.txt", None, 21),
                                    ("debian-6.19.14-table.txt", None, 21),
                                    ("debian-7.3.4-table.txt", None, 21),
                                    ("debian-6.1.0-57-table.txt", None, 14)):
            with self.subTest(name=name):
                res = load(name, status)
                self.assertEqual(res.errors, [])
                self.assertEqual(res.plan, 29)
                self.assertEqual(len(res.table), cells)
                self.assertEqual(res.status_of("table_witness"), "pass")
                shadow = {c["access"]: c["fast"] for c in res.table
                          if c["backing"] == "shadow"}
                bug = "7.3" not in name and "6.1.0" not in name
                self.assertEqual(shadow["read"], 0 if bug else 16)
                self.assertEqual(res.bug_present, bug)
                if cells == 14:
                    self.assertIn("cannot tell the paths apart", next(
                        r["reason"] for r in res.results
                        if r["name"] == "table_anon_longterm_write"))

    def test_the_witness_held_wherever_it_was_checked(self):
        # Outputs of the probe since it checks the witness (6.12.117 and
        # the 7.1.13 runner output predate it: no witness lines).
        for name in ("host-6.18.44.txt", "debian-6.1.0-57.txt",
                     "debian-6.12.118.txt", "debian-7.3.4.txt"):
            with self.subTest(name=name):
                res = load(name, 0)
                self.assertEqual(set(res.witness), PRODUCERS_WITH_VERDICT)
                for w in res.witness.values():
                    self.assertEqual(w["dirtied"], w["pages"])
        self.assertEqual(load("debian-6.12.117.txt").witness, {})

    def test_fast_verdict_with_a_broken_witness_is_an_error(self):
        text = (DATA / "debian-7.3.4.txt").read_text().replace(
            "packet_tx_ring witness: MADV_POPULATE_WRITE (slow path) dirtied 16/16",
            "packet_tx_ring witness: MADV_POPULATE_WRITE (slow path) dirtied 3/16")
        res = probe.parse(text)
        self.assertIn("packet_tx_ring: a GUP-fast verdict although the witness "
                      "did not hold", res.errors)
        self.assertEqual(probe.exit_code(res), probe.EXIT_INFRA)

    def test_source_kernels_with_networking(self):
        # linux-source-7.3 built by the runner (configs/base.config: af_packet,
        # madvise) with the fix and with it reverted: af_packet's ring is the
        # one producer there, its witness held, the rest skip saying why.
        for name, bug in (("source-7.3-all-net.txt", False),
                          ("source-7.3-nofix-net.txt", True)):
            with self.subTest(name=name):
                # The exit status the probe gave (1: the bug), which parse()
                # checks against the results.
                res = load(name, 1 if bug else 0)
                self.assertEqual(res.errors, [])
                self.assertEqual(res.kernel, "7.3.4+")
                self.assertIs(res.bug_present, bug)
                self.assertEqual(res.verdicts, {"packet_tx_ring": {
                    "slow": 16 if bug else 0, "pages": 16}})
                self.assertEqual(res.witness, {"packet_tx_ring": {
                    "dirtied": 16, "pages": 16}})
                self.assertEqual(res.status_of("packet_tx_ring"), "fail" if bug else "pass")
                self.assertEqual(res.status_of("io_uring_sqes"), "skip")
                self.assertEqual(res.status_of("longterm_write_pin"), "skip")

    def test_cost_figure(self):
        res = load("debian-6.12.118.txt")
        self.assertEqual(res.cost["producer"], "packet_tx_ring")
        self.assertEqual(res.cost["rounds"], 21)
        self.assertGreater(res.cost["ratio"], 1.5)
        lo, hi = res.cost["ratio_quartiles"]
        self.assertLessEqual(lo, hi)
        self.assertEqual(res.kernel, "6.12.118+deb13-amd64")

    def test_every_skip_is_a_skip_with_its_reason(self):
        for name, why in (("host-nonroot.txt", "not root"),
                          ("source-6.12-nofix-tinyconfig.txt",
                           "af_packet is neither built in nor loaded")):
            with self.subTest(name=name):
                res = load(name, 4)
                self.assertEqual(res.errors, [])
                self.assertIsNone(res.bug_present)
                self.assertEqual(probe.exit_code(res), probe.EXIT_SKIP)
                self.assertTrue(all(r["status"] == "skip" for r in res.results))
                self.assertIn(why, probe.verdict_line(res))

    def test_result_names_are_unique_and_match_the_plan(self):
        for path in DATA.glob("*.txt"):
            with self.subTest(name=path.name):
                res = probe.parse(path.read_text(), 0)
                names = [r["name"] for r in res.results]
                self.assertEqual(len(names), res.plan)
                self.assertEqual(len(set(names)), len(names))


class ParseBrokenOutputs(unittest.TestCase):

    def text(self):
        return (DATA / "debian-7.3.4.txt").read_text()

    def test_truncated_run_is_not_a_verdict(self):
        lines = self.text().splitlines()
        cut = next(i for i, l in enumerate(lines) if l.startswith("ok 3 "))
        res = probe.parse("\n".join(lines[:cut + 1]), None)
        self.assertTrue(any("did not run to its end" in e for e in res.errors))
        self.assertEqual(probe.exit_code(res), probe.EXIT_INFRA)

    def test_nothing_at_all(self):
        res = probe.parse("", None)
        self.assertIn("no KTAP plan: the probe did not start", res.errors)
        self.assertEqual(probe.exit_code(res), probe.EXIT_INFRA)
        self.assertIsNone(res.bug_present)

    def test_exit_status_must_agree_with_the_lines(self):
        text = self.text().replace("GUPNM-PROBE-EXIT: 0", "")
        res = probe.parse(text, 1)          # exit 1 but every line ok
        self.assertTrue(any("disagrees" in e for e in res.errors))
        self.assertEqual(probe.exit_code(res), probe.EXIT_INFRA)

    def test_a_pass_without_its_verdict_line_is_an_error(self):
        text = "\n".join(l for l in self.text().splitlines()
                         if not l.startswith("# verdict packet_tx_ring"))
        res = probe.parse(text, 0)
        self.assertIn("packet_tx_ring passed without a verdict line", res.errors)

    def test_duplicate_names(self):
        text = self.text().replace("ok 2 io_uring_sqes", "ok 2 packet_tx_ring")
        res = probe.parse(text, 0)
        self.assertIn("result names are not unique", res.errors)

    def test_unknown_exit_status(self):
        res = probe.parse(self.text().replace("GUPNM-PROBE-EXIT: 0", ""), 139)
        self.assertEqual(probe.exit_code(res), probe.EXIT_INFRA)

    def test_mixed_slow_and_fast_is_a_bug(self):
        res = load("debian-6.12.118.txt")
        res.verdicts["packet_tx_ring"]["slow"] = 0
        self.assertIs(res.bug_present, True)


class HostMethod(unittest.TestCase):

    def tree(self, *, modules=True, headers=True, lockdown=None, sig=None):
        root = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(root))
        if modules:
            (root / "proc").mkdir()
            (root / "proc/modules").write_text("")
        if headers:
            b = root / "lib/modules/9.9.9/build"
            b.mkdir(parents=True)
            (b / "Makefile").write_text("")
        if lockdown:
            d = root / "sys/kernel/security"
            d.mkdir(parents=True)
            (d / "lockdown").write_text(lockdown)
        if sig:
            d = root / "sys/module/module/parameters"
            d.mkdir(parents=True)
            (d / "sig_enforce").write_text(sig)
        return root

    def test_the_module_when_nothing_stands_in_its_way(self):
        method, why = probe.host_method(self.tree(), "9.9.9")
        self.assertEqual(method, "module")
        self.assertIn("loads unsigned modules", why)

    def test_gup_test_loaded_or_built_in_is_left_alone(self):
        root = self.tree()
        (root / "proc/modules").write_text("gup_test 16384 0 - Live 0x0\n")
        self.assertIn("loaded already", probe.host_method(root, "9.9.9")[1])
        root = self.tree()
        (root / "lib/modules/9.9.9/modules.builtin").write_text("kernel/mm/gup_test.ko\n")
        method, why = probe.host_method(root, "9.9.9")
        self.assertEqual((method, "built into" in why), ("probe", True))

    def test_the_probe_when_something_blocks_and_says_why(self):
        cases = (
            ({"modules": False}, "no module support"),
            ({"headers": False}, "no headers for 9.9.9"),
            ({"lockdown": "none [integrity] confidentiality\n"}, "lockdown=integrity"),
            ({"sig": "Y\n"}, "sig_enforce"),
        )
        for kw, want in cases:
            with self.subTest(kw=kw):
                method, why = probe.host_method(self.tree(**kw), "9.9.9")
                self.assertEqual(method, "probe")
                self.assertIn(want, why)

    def test_lockdown_none_is_no_blocker(self):
        _, why = probe.host_method(self.tree(lockdown="[none] integrity\n"), "9.9.9")
        self.assertNotIn("lockdown", why)


class RunHost(unittest.TestCase):

    def fake(self, text, status):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        data = d / "out.txt"
        data.write_text(text)
        exe = d / "gupnm_probe"
        exe.write_text(f"#!/bin/sh\ncat {data}\nexit {status}\n")
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
        return d, exe

    def test_reports_of_a_host_run(self):
        d, exe = self.fake((DATA / "host-6.18.44.txt").read_text(), 1)
        res, where = probe.run_host(d, [], binary=exe)
        self.assertEqual(where, "host")
        self.assertEqual(res.exit_status, 1)
        self.assertIs(res.bug_present, True)
        s = probe.summary("host", res, where=where, why="probe: test",
                          release="6.18.44-fc-v782")
        probe.write_reports(d, s)
        got = json.loads((d / "probe-summary.json").read_text())
        self.assertEqual(got["exit_code"], probe.EXIT_FAIL)
        self.assertEqual(got["outcome"], "fail")
        self.assertEqual(got["method"], "probe")
        self.assertIn("FOLL_LONGTERM", got["cannot_see"])
        self.assertEqual((d / "ktap.txt").read_text(), (d / "probe.txt").read_text())

    def test_a_hung_probe_is_killed_and_no_verdict(self):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        exe = d / "gupnm_probe"
        exe.write_text("#!/bin/sh\necho 'TAP version 13'\necho 1..7\nexec sleep 30\n")
        exe.chmod(0o755)
        res, _ = probe.run_host(d, [], binary=exe, timeout=0.5)
        self.assertTrue(any("did not finish" in e for e in res.errors))
        self.assertEqual(probe.exit_code(res), probe.EXIT_INFRA)

    def test_probe_on_another_kernel_than_named(self):
        res = load("debian-6.12.118.txt")
        s = probe.summary("debian:7.3", res, where="qemu-tcg", why="x",
                          release="7.3.4+deb13-amd64")
        self.assertEqual(s["exit_code"], probe.EXIT_INFRA)
        self.assertTrue(any("not 7.3.4" in p for p in s["problems"]))


class Survey(unittest.TestCase):

    def test_expected_bug_from_debians_file(self):
        # probe-survey's expectations: runner/expectations/debian.txt.
        from gupnm.prepare import debian
        offers = [debian.Offered(rel, "amd64", "linux-image-" + rel, "1", ["sid"], "binary",
                                 False) for rel in ("6.1.0-57-amd64", "6.12.118+deb13-amd64",
                                                     "7.2.13+deb14-amd64", "7.3.4+deb13-amd64")]
        rows = probe.survey_rows(offers, lambda o: (_ for _ in ()).throw(
            probe.RunnerError("x")))
        self.assertEqual([r["expected_bug"] for r in rows], [False, True, True, False])

    def test_rows_and_mismatches(self):
        from gupnm.prepare import debian
        offers = [debian.Offered(rel, "amd64", "linux-binary-" + rel, "1",
                                 ["sid"], "binary", hdr)
                  for rel, hdr in (("6.19.6+deb13-amd64", False),
                                   ("7.3.4+deb13-amd64", True),
                                   ("7.2.13+deb14-amd64", True))]
        fixed = load("debian-7.3.4.txt")
        bug = load("debian-6.12.118.txt")

        def one(o):
            if o.release.startswith("7.2"):
                raise probe.RunnerError("download failed")
            return fixed if o.release.startswith("6.19") else fixed

        rows = probe.survey_rows(offers, one)
        self.assertEqual([r["agrees"] for r in rows], [False, True, None])
        self.assertEqual(rows[2]["exit_code"], probe.EXIT_INFRA)
        self.assertIn("download failed", rows[2]["errors"][0])
        self.assertIn("MISMATCH", probe.format_rows(rows))
        rows = probe.survey_rows(offers, lambda o: bug, headerless_only=True)
        self.assertEqual(len(rows), 1)
        self.assertIs(rows[0]["agrees"], True)
        self.assertEqual(rows[0]["method"], "probe")


class Agreement(unittest.TestCase):

    def sums(self, diag, bug, rel_m="6.12.117+deb12-amd64", rel_p=None):
        return ({"kernel": {"release": rel_m}, "diagnosis": diag},
                {"kernel_release": rel_p or rel_m, "bug_present": bug})

    def test_cases(self):
        cases = (("regression", True, True), ("pass", False, True),
                 ("regression", False, False), ("pass", True, False),
                 ("wrongfix", False, None), ("secretmem", True, None),
                 ("skip", True, None), ("regression", None, None))
        for diag, bug, want in cases:
            with self.subTest(diag=diag, bug=bug):
                got = probe.agreement(*self.sums(diag, bug))
                self.assertIs(got["agree"], want)
                self.assertTrue(got["why"])

    def test_wrongfix_the_half_both_see(self):
        # A wrong fix: GUP-fast takes NULL-mapping pages (the probe: no bug),
        # the long-term writable pin it also lets through the probe cannot see.
        got = probe.agreement(*self.sums("wrongfix", False))
        self.assertIsNone(got["agree"])
        self.assertIs(got["seen_half_agrees"], True)
        self.assertIn("cannot see", got["why"])
        got = probe.agreement(*self.sums("wrongfix", True))
        self.assertIs(got["seen_half_agrees"], False)
        self.assertIn("the probe says bug", got["why"])
        self.assertNotIn("seen_half_agrees", probe.agreement(*self.sums("secretmem", True)))

    def test_other_kernel(self):
        got = probe.agreement(*self.sums("pass", False, rel_p="7.3.4+deb13-amd64"))
        self.assertIsNone(got["agree"])
        self.assertIn("not the same kernel", got["why"])


class Guest(unittest.TestCase):

    def test_init_quotes_the_probe_arguments(self):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        exe = d / "gupnm_probe"
        exe.write_text("")
        packed = []
        with mock.patch("gupnm.guest.initramfs.pack_tree",
                        side_effect=lambda root, cpio: packed.append(root) or cpio):
            # A stand-in busybox: the host need not have busybox-static.
            (d / "busybox").write_text("")
            probe.initramfs(d, exe, ["-n", "8", "it's"], busybox=d / "busybox")
        init = (packed[0] / "init").read_text()
        self.assertIn("/bin/gupnm_probe '-n' '8' 'it'\\''s'", init)
        self.assertIn(">/dev/ttyS1", init)
        self.assertTrue(os.access(packed[0] / "init", os.X_OK))

    def test_select_any_takes_kernels_without_headers(self):
        from gupnm.prepare import debian
        offers = [debian.Offered("7.1.13+deb13-amd64", "amd64",
                                 "linux-binary-7.1.13+deb13-amd64",
                                 "7.1.13-1~bpo13+1", ["trixie-backports"],
                                 "binary", False)]
        with self.assertRaises(Exception):
            debian.select("7.1", offers)
        got = probe.select_any("7.1", offers)
        self.assertIs(got, offers[0])
        self.assertFalse(got.headers)

    def test_image_specs(self):
        with self.assertRaises(probe.UsageError):
            probe.image_of("image:")
        with self.assertRaises(probe.UsageError):
            probe.image_of("image:/nonexistent/vmlinuz")
        with self.assertRaises(probe.UsageError):      # not a kernel
            probe.image_of(f"image:{__file__}")
        d = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        img = d / "vmlinuz"
        # A bzImage header and the 5 sectors its zero fields ask for.
        img.write_bytes(b"\0" * 0x202 + b"HdrS" + b"\0" * (2560 - 0x206))
        self.assertEqual(probe.image_of(f"image:{img}"), img)
        self.assertEqual(probe.image_of(f"image:{img}:{d}"), img)   # DIR unused
        self.assertEqual(probe.image_of(f"image:{__file__}", "arm64"),
                         Path(__file__))       # not checked for arm64

    def deb(self, files):
        d = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        root = d / "pkg"
        (root / "DEBIAN").mkdir(parents=True)
        (root / "DEBIAN/control").write_text(
            "Package: fake\nVersion: 1\nArchitecture: all\n"
            "Maintainer: t <t@t>\nDescription: t\n")
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        import subprocess
        subprocess.run(["dpkg-deb", "-b", "--root-owner-group", str(root),
                        str(d / "fake.deb")], check=True, capture_output=True)
        return d / "fake.deb", d

    def test_only_the_image_comes_out_of_the_package(self):
        for image in ("boot/vmlinuz-9.9.9", "usr/lib/modules/9.9.9/vmlinuz"):
            with self.subTest(image=image):
                deb, d = self.deb({image: "kernel",
                                   "lib/modules/9.9.9/kernel/x.ko": "module"})
                out = d / "out"
                out.mkdir()
                debian.extract_image(deb, out, "9.9.9")
                self.assertEqual((out / image).read_text(), "kernel")
                self.assertFalse((out / "lib").exists())

    def test_a_package_without_the_image(self):
        deb, d = self.deb({"boot/vmlinuz-1.0.0": "another kernel"})
        with self.assertRaises(probe.RunnerError):
            debian.extract_image(deb, d, "9.9.9")

    def test_only_debian_specs_are_fetched(self):
        with self.assertRaises(probe.UsageError):
            probe.fetch_image("source:debian-6.12:nofix")

    def test_image_for_a_source_kernel_builds_it_with_the_default_config(self):
        from gupnm.prepare import source
        k = source.SourceKernel("7.3.4", Path("/k/vmlinux"), None, Path("/k"),
                                Path("/k/src"), Path("/base"), "c" * 40,
                                ["0001.patch"], "default")
        with mock.patch.object(source, "prepare", return_value=k) as prep, \
                mock.patch.object(probe, "fetch_image") as fetch:
            rel, image, src = probe.image_for("source:debian-7.3:nofix")
        prep.assert_called_once_with("debian-7.3", "nofix", "default", arch="amd64")
        fetch.assert_not_called()
        self.assertEqual((rel, image), ("7.3.4", Path("/k/vmlinux")))
        self.assertEqual((src["kind"], src["selection"], src["config"]),
                         ("source", "nofix", "default"))
        with mock.patch.object(source, "prepare") as prep:
            with self.assertRaises(probe.UsageError):       # not a selection
                probe.image_for("source:debian-7.3:nosuch")
        prep.assert_not_called()

    def test_an_image_only_entry_cut_short_is_fetched_again(self):
        from gupnm.prepare import apt, cache, debs
        d = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        offered = debian.Offered("9.9.9-amd64", "amd64", "img", "1", ["sid"], "binary", False)
        fetched = []

        def extract(deb, dest, rel):
            fetched.append(rel)
            (dest / "boot").mkdir(parents=True)
            (dest / f"boot/vmlinuz-{rel}").write_bytes(b"MZ" * 500)

        def run(cmd, **kw):
            for p in cmd[2:]:
                __import__("shutil").rmtree(p, ignore_errors=True)
        with mock.patch.dict(os.environ, {"GUPNM_CACHE": str(d)}), \
                mock.patch.object(debian, "catalogue", return_value=[offered]), \
                mock.patch.object(apt, "field", return_value="ab" * 32), \
                mock.patch.object(apt, "download", return_value=d / "img.deb"), \
                mock.patch.object(debs, "verified", side_effect=lambda deb, *a: deb), \
                mock.patch.object(debian, "extract_image", side_effect=extract), \
                mock.patch.object(probe, "run", side_effect=run), \
                mock.patch.object(probe, "progress"), mock.patch.object(cache, "progress"):
            rel, image, _ = probe.fetch_image("debian:9.9.9")
            self.assertEqual(probe.fetch_image("debian:9.9.9")[1], image)
            self.assertEqual(len(fetched), 1)
            with open(image, "r+b") as fh:
                fh.truncate(10)
            self.assertEqual(probe.fetch_image("debian:9.9.9")[1], image)
        self.assertEqual(len(fetched), 2)
        self.assertEqual(image.stat().st_size, 1000)
        self.assertIn("vmlinuz-9.9.9-amd64 is 10 bytes, 1000 when filled", cache.take_repairs()[-1])

    def test_image_for_a_debian_kernel_fetches_it(self):
        with mock.patch.object(probe, "fetch_image", return_value=("r", Path("/i"), {})) as f:
            self.assertEqual(probe.image_for("debian:7.3", "arm64"), ("r", Path("/i"), {}))
        f.assert_called_once_with("debian:7.3", "arm64")


if __name__ == "__main__":
    unittest.main()


class JunitTest(unittest.TestCase):
    """The probe's reports carry junit.xml, valid against Jenkins' schema."""

    def test_a_real_probe_output_as_junit(self):
        from gupnm.report import junit
        from report import test_junit
        res = load("debian-6.12.118.txt")
        s = probe.summary("debian:6.12", res, where="guest", why="probe: test",
                          release="6.12.118+deb13-amd64", seconds=4.2)
        xml = junit.to_string(probe.junit_view(s))
        test_junit.assert_valid(self, xml)
        self.assertIn('classname="gupnm.gupnm_probe"', xml)
        failed = [r["name"] for r in s["results"] if r["status"] == "fail"]
        self.assertTrue(failed)
        for name in failed:
            self.assertIn(f'name="{name}"', xml)
        self.assertEqual(xml.count("<failure"), len(failed))


class JudgeUnasked(unittest.TestCase):
    """A kernel whose built-in gup_test lacks the command: the test's skip
    is no verdict; the probe judges the same image."""

    def _summary(self, reason, code=4, release="6.12.118+"):
        return {"exit_code": code, "outcome": "skip", "skip_reason": reason,
                "verdict": "skip", "spec": "source:debian-6.12:all", "kernel": {"release": release, "source": {
                    "boot_image": "/k/vmlinux"}}}

    def _args(self):
        # as make check's matrix makes them: no kernel, the spec is the run's
        return argparse.Namespace(memory=1024, timeout=60, retries=1, append="")

    def test_a_skip_for_a_lacking_gup_test_becomes_the_probes_verdict(self):
        bug = load('debian-6.12.117.txt')
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(probe, 'run_guest', return_value=(bug, 'tcg', [])) as rg:
            s = self._summary("gup_test lacks GUP_FAST_VERDICT (Invalid argument)",
                              release=bug.kernel)
            code = probe.judge_unasked(s, self._args(), Path(d))
            self.assertEqual(rg.call_args.args[0], Path('/k/vmlinux'))   # the same image
            self.assertEqual(code, probe.EXIT_FAIL)
            self.assertEqual((s['exit_code'], s['outcome']), (1, 'fail'))
            self.assertTrue(s['verdict'].startswith('probe: '))
            self.assertIn('the kernel\'s own gup_test', s['notes'][0])
            self.assertEqual(json.loads((Path(d) / 'summary.json').read_text())['exit_code'], 1)
            probe_s = json.loads((Path(d) / 'probe-summary.json').read_text())
            self.assertEqual(probe_s['spec'], 'source:debian-6.12:all')

    def test_other_skips_and_verdicts_are_left_alone(self):
        with mock.patch.object(probe, 'run_guest') as rg:
            for s in (self._summary("needs root"), self._summary(None, code=1),
                      self._summary("gup_test lacks GUP_FAST_VERDICT", code=0)):
                self.assertIsNone(probe.judge_unasked(s, self._args(), Path('/nonexistent')))
        rg.assert_not_called()
