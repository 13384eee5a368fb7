"""lava --export: the base URL, the folder, the URLs and checksums, the
manifest that marks a previous export, the job to submit."""
import hashlib
import json
import subprocess
import tempfile
import unittest
from pathlib import Path

try:
    import yaml
except ImportError:          # python3-yaml comes with lava-dispatcher
    yaml = None

from gupnm.ci import labroot, lava, lava_export
from gupnm.host import UsageError


class BaseUrl(unittest.TestCase):
    def test_good(self):
        for url in ("http://127.0.0.1:8000", "https://lab.example/art/42/",
                    "file:///srv/art"):
            self.assertIsNone(lava_export.base_url_problem(url), url)

    def test_bad(self):
        for url, why in (("ftp://h/x", "not an http"), ("/srv/art", "not an http"),
                         ("file://srv/art", "three slashes"), ("http:///x", "no host"),
                         ("http://h/x?a=1", "no ?query")):
            self.assertIn(why, lava_export.base_url_problem(url) or "", url)

    def test_trailing_slash_dropped(self):
        with tempfile.TemporaryDirectory() as d:
            e = lava_export.check(Path(d) / "new", "http://h/art/")
        self.assertEqual(e.base_url, "http://h/art")


class Folder(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_new_and_empty_taken(self):
        (self.d / "empty").mkdir()
        for p in (self.d / "new", self.d / "empty"):
            self.assertIsNone(lava_export.dir_problem(p))

    def test_foreign_folder_refused(self):
        (self.d / "x").mkdir()
        (self.d / "x" / "precious").write_text("mine")
        with self.assertRaisesRegex(UsageError, "not a previous export"):
            lava_export.check(self.d / "x", "http://h")
        (self.d / "x" / lava_export.MANIFEST).write_text('{"made_by": "someone"}')
        self.assertIn("not empty", lava_export.dir_problem(self.d / "x"))

    def test_a_file_refused(self):
        (self.d / "f").write_text("")
        self.assertIn("not a directory", lava_export.dir_problem(self.d / "f"))

    def test_options_go_together(self):
        self.assertIsNone(lava_export.check(None, None))
        for args in ((self.d, None), (None, "http://h")):
            with self.assertRaisesRegex(UsageError, "go together"):
                lava_export.check(*args)

    def test_previous_export_replaced_nothing_else_touched(self):
        e = lava_export.Export(self.d / "x", "http://h")
        lava_export.prepare(e)
        (e.dir / "kernel").write_text("old kernel")
        (e.dir / "notes.txt").write_text("the user's")
        lava_export.write(e, "debian-module", "n", "job_name: n\n", "device\n", {})
        self.assertIsNone(lava_export.dir_problem(e.dir))
        lava_export.prepare(e)
        self.assertFalse((e.dir / "kernel").exists())
        self.assertFalse((e.dir / lava_export.MANIFEST).exists())
        # notes.txt was in the old manifest's files: listed, so replaced;
        # a file put there after the export stays.
        (e.dir / "later.txt").write_text("kept")
        lava_export.prepare(e)
        self.assertEqual((e.dir / "later.txt").read_text(), "kept")

    def test_manifest_lists_every_artifact_with_its_sha256(self):
        e = lava_export.Export(self.d / "x", "file:///srv")
        lava_export.prepare(e)
        (e.dir / "kernel").write_bytes(b"k" * 10)
        lava_export.write(e, "debian-module", "debian:7.3", "job_name: n\n", "dev\n",
                          {"kernel_source": {"kind": "debian"}})
        m = json.loads((e.dir / lava_export.MANIFEST).read_text())
        self.assertEqual(m["files"], {"kernel": {
            "sha256": hashlib.sha256(b"k" * 10).hexdigest(), "bytes": 10}})
        self.assertEqual((m["made_by"], m["base_url"]), (lava_export.MARK, "file:///srv"))
        readme = (e.dir / "README.txt").read_text()
        self.assertIn("file:///srv", readme)
        self.assertIn("lava-run --job-id 1", readme)


class Checksums(unittest.TestCase):
    def test_each_url_of_the_folder_gets_its_sha256(self):
        with tempfile.TemporaryDirectory() as d:
            art = Path(d)
            (art / "kernel").write_bytes(b"kernel")
            text = ('      kernel:\n        url: "http://h/a/kernel"\n'
                    '          skipfile:\n            url: "http://h/a/gone"\n'
                    '        url: "http://other/kernel"\n')
            out = lava_export.with_checksums(text, "http://h/a", art)
        want = hashlib.sha256(b"kernel").hexdigest()
        self.assertIn(f'url: "http://h/a/kernel"\n        sha256sum: {want}\n', out)
        self.assertEqual(out.count("sha256sum"), 1)


@unittest.skipIf(yaml is None, "python3-yaml not installed")
class ExportedJob(unittest.TestCase):
    """The job a lab gets: every url under the base URL with a sha256sum,
    the test definitions beside them, no placeholder, the strict schema."""

    def job(self, name):
        with tempfile.TemporaryDirectory() as d:
            art = Path(d)
            for f in ("kernel", "ramdisk.cpio", "rootfs.cpio", "modules.tar",
                      "kselftest.tar.gz", "skipfile"):
                (art / f).write_bytes(f.encode())
            base = "http://127.0.0.1:8000/job"
            text = lava.job_text(name, "n", base, art, {
                "TEST_DEFINITIONS": f"{base}/{lava_export.TEST_DEFINITIONS}",
                "TEST_DEFINITIONS_REVISION": "0" * 40,
                "SKIPFILE_ARG": labroot.SKIPFILE_ARG})
            path = art / "job.yaml"
            path.write_text(text)
            ok, why = lava.validate([path]) if lava.available() is None else (True, "")
        self.assertTrue(ok, why)
        return text, yaml.safe_load(text)

    def urls(self, node):
        if isinstance(node, dict):
            if "url" in node:
                yield node
            for v in node.values():
                yield from self.urls(v)
        elif isinstance(node, list):
            for v in node:
                yield from self.urls(v)

    def test_every_url_served_and_checked(self):
        for name in lava.JOBS:
            text, job = self.job(name)
            self.assertNotRegex(text, r"@[A-Z_]+@")
            body = "".join(l for l in text.splitlines(True) if not l.lstrip().startswith("#"))
            self.assertNotIn("file://", body)
            urls = list(self.urls(job))
            self.assertGreaterEqual(len(urls), 2)
            for u in urls:
                self.assertTrue(u["url"].startswith("http://127.0.0.1:8000/job/"), u)
                self.assertRegex(u["sha256sum"], r"^[0-9a-f]{64}$")


class BareCopy(unittest.TestCase):
    def test_clone_served_by_dumb_http(self):
        with tempfile.TemporaryDirectory() as d:
            src = Path(d) / "src"
            src.mkdir()
            (src / "f").write_text("x")
            git = ["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@t"]
            for cmd in (["init", "-q"], ["add", "f"], ["commit", "-qm", "c"]):
                subprocess.run(git + cmd, check=True)
            dest = lava_export.bare_copy(src, Path(d) / "td.git")
            self.assertTrue((dest / "info" / "refs").is_file())
            self.assertEqual(lava_export.head(dest), lava_export.head(src))


if __name__ == "__main__":
    unittest.main()
