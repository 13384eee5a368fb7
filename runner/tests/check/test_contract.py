"""Tests of gupnm.check.contract's fresh-machine assertions that need no
root: what the first make run left in the cache (no linux-source, at most
600 MiB) and the second run without network."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.check import contract
from gupnm.check.tally import Tally

VERDICT = ("verdict: shadow 0/512 fast \u2192 FAIL: GUP-fast rejects NULL-mapping "
           "order-0 folios (bug present)\nexit:    1\n")


def records(fn, *args):
    t = Tally()
    with contextlib.redirect_stdout(io.StringIO()):
        ok = fn(t, *args)
    return ok, t


class FreshCacheTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="gupnm-test-contract-"))
        self.addCleanup(__import__("shutil").rmtree, self.tmp, True)
        self.cache = self.tmp / "cache"
        (self.cache / "debian/k").mkdir(parents=True)
        (self.cache / "debian/k/vmlinuz").write_bytes(b"x" * 4096)
        self.log = self.tmp / "make-run.log"
        self.log.write_text("[ 2.0s] downloading 6.12.118+deb12-amd64\n" + VERDICT)

    def test_a_small_cache_without_kernel_source_passes(self):
        ok, t = records(contract._record_fresh_cache, self.cache, self.log)
        self.assertTrue(ok)
        self.assertEqual(t.failures, [])

    def test_a_linux_source_package_fails(self):
        (self.cache / "debs").mkdir()
        (self.cache / "debs/linux-source-6.12_6.12.118-1_all.deb").write_bytes(b"!")
        ok, t = records(contract._record_fresh_cache, self.cache, self.log)
        self.assertFalse(ok)
        self.assertEqual(len(t.failures), 1)
        self.assertIn("no linux-source", t.failures[0])

    def test_a_log_naming_linux_source_fails(self):
        self.log.write_text("[ 3.0s] downloading linux-source-7.3\n" + VERDICT)
        ok, _ = records(contract._record_fresh_cache, self.cache, self.log)
        self.assertFalse(ok)

    def test_over_the_limit_fails(self):
        with mock.patch.object(contract, "FRESH_CACHE_LIMIT", 1024):
            ok, t = records(contract._record_fresh_cache, self.cache, self.log)
        self.assertFalse(ok)
        self.assertIn("at most", t.failures[0])


class WarmRunTest(unittest.TestCase):

    def test_without_network_and_the_same_verdict(self):
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "warm.log"

            def make_run(root, out, network=True):
                self.assertFalse(network)
                out.write_text(VERDICT)
                return 2
            with mock.patch.object(contract, "_make_run_in", side_effect=make_run):
                ok, t = records(contract._record_warm_run, Path("/root"), log)
            self.assertTrue(ok)
            with mock.patch.object(contract, "_make_run_in",
                                   side_effect=lambda r, o, network=True:
                                   o.write_text("debian-apt: error: apt-get update failed\n")):
                ok, t = records(contract._record_warm_run, Path("/root"), log)
            self.assertFalse(ok)


if __name__ == "__main__":
    unittest.main()
