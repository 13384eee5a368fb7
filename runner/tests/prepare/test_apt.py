"""Unit tests for gupnm.prepare.apt's kept records: a warm run starts no apt process."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.prepare import apt

SHOW = """\
Package: linux-image-6.12.117+deb12-amd64-unsigned
Version: 6.12.117-1~deb12u1
Architecture: amd64
Depends: kmod, linux-base (>= 4.3~)
SHA256: 5de3e329c887173d00
Description: Linux 6.12 for 64-bit PCs
 continued description line

Package: linux-image-6.12.117+deb12-amd64-unsigned
Version: 6.12.117-1~deb12u1
SHA256: second-record
"""


class FieldTest(unittest.TestCase):
    """apt.field asks apt-cache once per record and lists state."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.stamp = "1"
        self.patches = [
            mock.patch.object(apt, "conf", return_value=str(self.tmp / "apt.conf")),
            mock.patch.object(apt, "lists_stamp", side_effect=lambda: self.stamp)]
        for p in self.patches:
            p.start()
        self.calls = []

        def fake(*args):
            self.calls.append(args)
            return SHOW
        p = mock.patch.object(apt, "apt_cache", side_effect=fake)
        p.start()
        self.patches.append(p)

    def tearDown(self):
        for p in self.patches:
            p.stop()

    def test_first_record_only(self):
        rec = apt.parse_record(SHOW)
        self.assertEqual(rec["SHA256"], "5de3e329c887173d00")
        self.assertEqual(rec["Description"], "Linux 6.12 for 64-bit PCs")

    def test_kept_while_lists_unchanged(self):
        name, ver = "linux-image-6.12.117+deb12-amd64-unsigned", "6.12.117-1~deb12u1"
        self.assertEqual(apt.field(name, ver, "SHA256"), "5de3e329c887173d00")
        self.assertEqual(apt.field(name, ver, "Depends"), "kmod, linux-base (>= 4.3~)")
        self.assertEqual(len(self.calls), 1, "the second field came from the kept record")
        self.stamp = "2"                    # the lists were updated
        apt.field(name, ver, "SHA256")
        self.assertEqual(len(self.calls), 2)

    def test_corrupt_records_file_is_asked_again(self):
        (self.tmp / "records.json").write_text("{not json")
        self.assertEqual(apt.field("p", "1", "SHA256"), "5de3e329c887173d00")
        data = json.loads((self.tmp / "records.json").read_text())
        self.assertEqual(data["stamp"], "1")

    def test_no_stamp_nothing_kept(self):
        self.stamp = ""
        apt.field("p", "1", "SHA256")
        self.assertFalse((self.tmp / "records.json").exists())


class RelocatedTest(unittest.TestCase):
    """A cache copied or mounted elsewhere: apt is pointed at its own lists,
    and what apt said of each package still holds (the lists' identity is
    their content, not a time)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        apt._HERE.clear()
        apt._STAMPS.clear()

    def conf(self, base: Path, named: Path) -> Path:
        (base / "lists").mkdir(parents=True)
        path = base / "apt.conf"
        path.write_text(f'Dir::Etc::SourceList "{named}/sources.list";\n'
                        f'Dir::State::Lists "{named}/lists";\n')
        return path

    def test_a_conf_naming_another_folder_is_copied_naming_its_own(self):
        home, moved = self.tmp / "home", self.tmp / "moved"
        path = self.conf(moved, home)
        copy = apt._relocated(str(path))
        self.assertNotEqual(copy, str(path))
        self.assertEqual(Path(copy).read_text(),
                         f'Dir::Etc::SourceList "{moved}/sources.list";\n'
                         f'Dir::State::Lists "{moved}/lists";\n')
        Path(copy).unlink()

    def test_a_conf_at_home_is_used_as_it_is(self):
        home = self.tmp / "home"
        path = self.conf(home, home)
        self.assertEqual(apt._relocated(str(path)), str(path))

    def test_lists_stamp_is_their_release_files_content(self):
        stamps = []
        for where in ("home", "moved"):
            base = self.tmp / where
            path = self.conf(base, base)
            (base / "lists/deb_dists_sid_InRelease").write_text("SHA256: abc\n")
            (base / "lists/.gupnm-updated").write_text("")
            os.utime(base / "lists/.gupnm-updated", (len(where), len(where)))
            with mock.patch.object(apt, "conf", return_value=str(path)):
                stamps.append(apt.lists_stamp())
        self.assertEqual(stamps[0], stamps[1])
        self.assertTrue(stamps[0])
        (self.tmp / "moved/lists/deb_dists_sid_InRelease").write_text("SHA256: def\n")
        apt._STAMPS.clear()
        with mock.patch.object(apt, "conf", return_value=str(self.tmp / "moved/apt.conf")):
            self.assertNotEqual(apt.lists_stamp(), stamps[0])
        (self.tmp / "moved/lists/.gupnm-updated").unlink()
        apt._STAMPS.clear()
        with mock.patch.object(apt, "conf", return_value=str(self.tmp / "moved/apt.conf")):
            self.assertEqual(apt.lists_stamp(), "")


class FreshConfTest(unittest.TestCase):
    """conf() runs debian-apt.sh only when it would change something."""

    def test_rules(self):
        with tempfile.TemporaryDirectory() as d:
            base = Path(d) / 'apt'
            (base / 'lists').mkdir(parents=True)
            conf, stamp = base / 'apt.conf', base / 'lists' / '.gupnm-updated'
            with mock.patch.dict(os.environ, {'GUPNM_CACHE': d, 'GUPNM_APT_MAX_AGE': '360'}):
                self.assertIsNone(apt._fresh_conf())             # never written
                conf.write_text('x')
                stamp.write_text('')
                now = stamp.stat().st_mtime
                self.assertEqual(apt._fresh_conf(now + 60), str(conf))
                self.assertIsNone(apt._fresh_conf(now + 361 * 60))  # lists stale
                old = apt.SCRIPT.stat().st_mtime - 10
                os.utime(conf, (old, old))                       # script changed since
                self.assertIsNone(apt._fresh_conf(now + 60))


class OnlySuiteTest(unittest.TestCase):
    """Within only_suite(S) apt is asked of S's own lists (debian-apt.sh
    --suite S, a state of its own), outside it of every suite's."""

    def test_conf_per_suite(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {'GUPNM_CACHE': d}), \
                mock.patch.dict(apt._CONF, clear=True), \
                mock.patch.object(apt, 'run', side_effect=lambda args, **kw:
                                  f"x\n{args[-1]}.conf\n") as run:
            with apt.only_suite('bookworm-security'):
                self.assertEqual(apt.conf(), 'bookworm-security.conf')
                self.assertEqual(apt.conf(), 'bookworm-security.conf')   # once
                self.assertEqual(run.call_args.args[0][1:],
                                 ['--suite', 'bookworm-security'])
            self.assertEqual(apt.conf(), f'{apt.SCRIPT}.conf')
            self.assertEqual(run.call_count, 2)
            self.assertEqual(apt.state_dir('sid'), Path(d) / 'apt' / 'suite-sid')
            self.assertEqual(apt.state_dir(), Path(d) / 'apt')

    def test_stale_lists_serve_when_they_cannot_be_fetched_again(self):
        """No network: a warm run goes on with the lists it has, and says so."""
        with tempfile.TemporaryDirectory() as d:
            base = Path(d) / 'apt' / 'suite-sid'
            (base / 'lists').mkdir(parents=True)
            (base / 'apt.conf').write_text('x')
            stamp = base / 'lists' / '.gupnm-updated'
            stamp.write_text('')
            os.utime(stamp, (1, 1))                           # decades stale
            with mock.patch.dict(os.environ, {'GUPNM_CACHE': d}), \
                    mock.patch.dict(apt._CONF, clear=True), \
                    mock.patch.object(apt, 'progress') as said, \
                    mock.patch.object(apt, 'run', side_effect=apt.RunnerError(
                        'debian-apt: error: apt-get update failed')):
                with apt.only_suite('sid'):
                    self.assertEqual(apt.conf(), str(base / 'apt.conf'))
                self.assertIn('using the ones fetched before', said.call_args.args[0])
                with self.assertRaises(apt.RunnerError):      # never fetched: no lists
                    apt.conf()

    def test_fresh_conf_of_a_suite_is_its_own(self):
        with tempfile.TemporaryDirectory() as d:
            base = Path(d) / 'apt' / 'suite-sid'
            (base / 'lists').mkdir(parents=True)
            (base / 'apt.conf').write_text('x')
            (base / 'lists' / '.gupnm-updated').write_text('')
            with mock.patch.dict(os.environ, {'GUPNM_CACHE': d}):
                self.assertEqual(apt._fresh_conf(suite='sid'), str(base / 'apt.conf'))
                self.assertIsNone(apt._fresh_conf())


class HostCandidateTest(unittest.TestCase):
    """The host's candidate is asked once per state of the host's apt."""

    def test_kept_until_state_changes(self):
        with tempfile.TemporaryDirectory() as d:
            state = Path(d) / "lists"
            state.mkdir()
            out = mock.Mock(stdout="linux-source-6.12:\n  Candidate: 6.12.117-1\n")
            with mock.patch.object(apt, "HOST_APT_STATE", (str(state),)), \
                    mock.patch.object(apt.subprocess, "run", return_value=out) as run:
                self.assertEqual(apt.host_candidate("linux-source-6.12", Path(d)), "6.12.117-1")
                self.assertEqual(apt.host_candidate("linux-source-6.12", Path(d)), "6.12.117-1")
                self.assertEqual(run.call_count, 1)
                st = state.stat()
                os.utime(state, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
                apt.host_candidate("linux-source-6.12", Path(d))
                self.assertEqual(run.call_count, 2)

    def test_none_candidate(self):
        with tempfile.TemporaryDirectory() as d:
            out = mock.Mock(stdout="p:\n  Candidate: (none)\n")
            with mock.patch.object(apt.subprocess, "run", return_value=out):
                self.assertIsNone(apt.host_candidate("p", Path(d)))


class FetchFailureTest(unittest.TestCase):
    """A download that fails for the archive is one line naming it."""

    def test_unreachable(self):
        text = ("apt-get download x failed (exit 100):\nErr:1 http://deb.debian.org/d\n"
                "E: Failed to fetch http://deb.debian.org/debian/pool/main/l/x_1_amd64.deb"
                "  Temporary failure resolving 'deb.debian.org'\n")
        err = apt.fetch_failure("apt-get download x=1", text)
        self.assertIn("Debian's archive (http://deb.debian.org) cannot be reached "
                      "(Temporary failure resolving 'deb.debian.org')", str(err))
        self.assertNotIn("\n", str(err))

    def test_gone_from_the_archive(self):
        text = ("E: Failed to fetch http://deb.debian.org/debian/pool/main/l/x_1_amd64.deb"
                "  404  Not Found [IP: 1.2.3.4 80]")
        err = apt.fetch_failure("apt-get download x=1", text)
        self.assertIn("does not have x_1_amd64.deb", str(err))
        self.assertIn("runner/debian-apt.sh --refresh", str(err))

    def test_other_failure_is_kept(self):
        self.assertIsNone(apt.fetch_failure("w", "E: Unable to locate package x"))
        with mock.patch.object(apt, "run", side_effect=apt.RunnerError("E: nope")):
            with self.assertRaisesRegex(apt.RunnerError, "E: nope"):
                apt.fetch(["apt-get", "download", "x"], what="w")

    def test_the_lists_script_inside_is_its_one_line(self):
        err = apt.RunnerError("gup_test source failed (exit 1):\ngupnm: x\n"
                              "debian-apt: error: Debian's archive (M) cannot be reached")
        with mock.patch.object(apt, "run", side_effect=err):
            with self.assertRaises(apt.RunnerError) as got:
                apt.fetch(["oot/gup_test-source.sh", "d"], what="gup_test source")
        self.assertEqual(str(got.exception), "Debian's archive (M) cannot be reached")

    def test_script_error_is_its_one_line(self):
        err = apt.RunnerError("runner/debian-apt.sh failed (exit 1):\n"
                              "debian-apt: fetching package lists\n"
                              "debian-apt: error: Debian's archive (M) cannot be reached")
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {"GUPNM_CACHE": d}), \
                mock.patch.object(apt, "run", side_effect=err):
            with self.assertRaises(apt.RunnerError) as got:   # no lists kept
                apt._update(None)
        self.assertEqual(str(got.exception), "Debian's archive (M) cannot be reached")


class ArchiveAwayTest(unittest.TestCase):
    """runner/debian-apt.sh against an archive that cannot be reached (a
    closed port on loopback): no lists is an error naming the archive and
    leaves no stamp; lists of an earlier update are used, with a warning."""

    MIRROR = "http://127.0.0.1:9"

    def _script(self, cache: Path):
        import subprocess
        return subprocess.run([str(apt.SCRIPT)], capture_output=True, text=True,
                              env=dict(os.environ, GUPNM_CACHE=str(cache),
                                       GUPNM_DEBIAN_MIRROR=self.MIRROR), timeout=120)

    def test_cold_and_warm(self):
        with tempfile.TemporaryDirectory() as d:
            cache = Path(d)
            r = self._script(cache)
            self.assertEqual(r.returncode, 1, r.stderr)
            errors = [x for x in r.stderr.splitlines() if "error:" in x]
            self.assertEqual(len(errors), 1, r.stderr)
            self.assertIn(f"Debian's archive ({self.MIRROR}) cannot be reached", errors[0])
            stamp = cache / "apt/lists/.gupnm-updated"
            self.assertFalse(stamp.exists())
            # An earlier update's lists, 2 days old.
            (cache / "apt/lists/x_Packages").write_text("Package: x\n")
            stamp.write_text("")
            os.utime(stamp, (stamp.stat().st_mtime - 2 * 86400,) * 2)
            r = self._script(cache)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), str(cache / "apt/apt.conf"))
            self.assertIn("cannot be reached", r.stderr)
            self.assertIn("using the package lists of", r.stderr)
            self.assertTrue((cache / "apt/lists/x_Packages").exists())


class KeptConfTest(unittest.TestCase):
    """A cache this run cannot write: the lists of an earlier update are used."""

    def test_unwritable(self):
        with tempfile.TemporaryDirectory() as d:
            base = Path(d) / "apt"
            (base / "lists").mkdir(parents=True)
            with mock.patch.dict(os.environ, {"GUPNM_CACHE": d}), \
                    mock.patch.object(apt, "progress") as said:
                self.assertIsNone(apt._kept_conf(None))         # nothing there
                (base / "apt.conf").write_text("")
                (base / "lists/.gupnm-updated").write_text("")
                self.assertIsNone(apt._kept_conf(None))         # writable: refreshed
                with mock.patch.object(apt.os, "access", return_value=False):
                    self.assertEqual(apt._kept_conf(None), str(base / "apt.conf"))
                self.assertIn("cannot be written", said.call_args.args[0])


if __name__ == "__main__":
    unittest.main()
