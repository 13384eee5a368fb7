"""Unit tests for gupnm.prepare.debs: a .deb checked against the package
lists before it is used, downloaded once more when cut."""
import hashlib
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.prepare import apt, cache, debian, debs


class DebCheckTest(unittest.TestCase):
    """A .deb is checked against the package lists' Size and SHA256 before
    it is unpacked: one cut short in the cache is downloaded once more."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="gupnm-test-deb-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.whole = b"!<arch>\n" + b"x" * 1000
        self.lists = {"SHA256": hashlib.sha256(self.whole).hexdigest(),
                      "Size": str(len(self.whole))}
        p = mock.patch.object(apt, "field", side_effect=lambda n, v, k, a="amd64":
                              self.lists.get(k, ""))
        p.start()
        self.addCleanup(p.stop)
        for mod in (debs, cache):
            p = mock.patch.object(mod, "progress")
            p.start()
            self.addCleanup(p.stop)
        self.deb = self.tmp / "p_1_amd64.deb"

    def test_whole_deb_is_not_downloaded(self):
        self.deb.write_bytes(self.whole)
        with mock.patch.object(apt, "download") as dl:
            self.assertEqual(debs.verified(self.deb, "p", "1", "amd64"), self.deb)
        dl.assert_not_called()

    def test_cut_deb_is_downloaded_again_and_noted(self):
        self.deb.write_bytes(self.whole[:100])

        def download(name, version, dest, arch):
            self.assertFalse(self.deb.exists())       # the cut one went first
            self.deb.write_bytes(self.whole)
            return self.deb
        cache.take_repairs()
        with mock.patch.object(apt, "download", side_effect=download) as dl:
            self.assertEqual(debs.verified(self.deb, "p", "1", "amd64"), self.deb)
        dl.assert_called_once_with("p", "1", self.tmp, "amd64")
        self.assertIn("p_1_amd64.deb is 100 bytes where the package lists say 1008",
                      cache.take_repairs()[-1])

    def test_other_bytes_of_the_same_size_are_seen(self):
        self.deb.write_bytes(self.whole[:-1] + b"!")
        self.assertEqual(debs.problem(self.deb, "p", "1", "amd64"),
                         "p_1_amd64.deb has another sha256 than the package lists give")

    def test_failing_again_is_exit_3_naming_the_deb_and_the_way_out(self):
        self.deb.write_bytes(self.whole[:100])
        with mock.patch.object(apt, "download", return_value=self.deb):
            with self.assertRaises(cache.CacheError) as err:
                debs.verified(self.deb, "p", "1", "amd64")
        self.assertIn(f"{self.deb} fails its check even downloaded afresh", str(err.exception))
        self.assertIn("runner/gupnm-run cache --clean sources", str(err.exception))

    def test_unpack_checks_first(self):
        self.deb.write_bytes(self.whole[:100])
        offered = debian.Offered("r", "amd64", "img", "1", ["sid"], "binary", True)
        with mock.patch.object(apt, "download", return_value=self.deb), \
                mock.patch.object(debian, "run") as run:
            with self.assertRaises(cache.CacheError):
                debian._unpack(self.deb, self.tmp, "p", offered)
        run.assert_not_called()


if __name__ == "__main__":
    unittest.main()
