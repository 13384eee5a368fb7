"""lava_device: the device dictionary rendered as lava-server renders it."""
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from gupnm.ci import lava, lava_device
from gupnm.host import RunnerError

HAVE_JINJA = (Path(lava_device.SYSTEM_PYTHON).exists() and os.system(
    f"{lava_device.SYSTEM_PYTHON} -c 'import jinja2, yaml' 2>/dev/null") == 0)


@unittest.skipUnless(HAVE_JINJA, "the system python3 lacks python3-jinja2/yaml")
class Render(unittest.TestCase):
    """The mechanism, on a stand-in device-type template: the dictionary's
    variables and the job's context reach the template it extends."""

    def setUp(self):
        self.d = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.d)
        (self.d / "types").mkdir()
        (self.d / "types" / "qemu.jinja2").write_text(
            "command: qemu-system-{{ arch }}\n"
            "{% if not no_kvm %}\nkvm: yes\n{% endif %}\n"
            "memory: {{ memory|default(512) }}\n")
        self.job = self.d / "job.yaml"
        self.job.write_text("context:\n  arch: x86_64\n")

    def test_variables_and_context(self):
        text = lava_device.render(self.job, lava_device.DEVICE, self.d / "types")
        self.assertIn("command: qemu-system-x86_64", text)
        self.assertIn("memory: 2048", text)
        self.assertNotIn("kvm", text)

    def test_a_missing_template_says_so(self):
        (self.d / "types" / "qemu.jinja2").unlink()
        with self.assertRaisesRegex(RunnerError, "qemu.jinja2"):
            lava_device.render(self.job, lava_device.DEVICE, self.d / "types")


@unittest.skipUnless(HAVE_JINJA and lava_device.cached_types(),
                     "lava-server's templates not in the cache yet (a lava run fetches them)")
class RealTemplates(unittest.TestCase):
    def test_every_job_gets_a_valid_tcg_device(self):
        for name, job in lava.JOBS.items():
            text = lava_device.render(job, lava_device.DEVICE, lava_device.cached_types())
            self.assertIn("qemu-system-x86_64", text, name)
            self.assertIn("-accel tcg", text)
            self.assertNotIn("-enable-kvm", text)
            self.assertIn("amd64", text)
            ok, out = lava_device.validate(text)
            self.assertTrue(ok, out)

    def test_the_schema_refuses_a_broken_device(self):
        ok, _ = lava_device.validate("actions: {}\n")
        self.assertFalse(ok)


class Download(unittest.TestCase):
    def test_an_installed_dispatcher_is_required(self):
        with mock.patch("subprocess.run") as run:
            run.return_value.returncode, run.return_value.stdout = 1, ""
            with self.assertRaisesRegex(RunnerError, "apt-get install lava-dispatcher"):
                lava_device.dispatcher_version()

    def test_templates_come_from_the_cache_once_unpacked(self):
        with tempfile.TemporaryDirectory() as d:
            types = Path(d) / "lava" / "lava-server_1.0" / lava_device.TYPES_IN_DEB
            types.mkdir(parents=True)
            (types / "qemu.jinja2").write_text("x")
            with mock.patch.dict(os.environ, {"GUPNM_CACHE": d}), \
                    mock.patch.object(lava_device.apt, "download") as dl:
                self.assertEqual(lava_device.device_types("1.0"), types)
            dl.assert_not_called()

    def test_cached_types_fetches_nothing(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {"GUPNM_CACHE": d}), \
                mock.patch.object(lava_device.apt, "download") as dl:
            self.assertIsNone(lava_device.cached_types("1:2.0"))
            types = Path(d) / "lava" / "lava-server_1%3a2.0" / lava_device.TYPES_IN_DEB
            types.mkdir(parents=True)
            (types / "qemu.jinja2").write_text("x")
            self.assertEqual(lava_device.cached_types("1:2.0"), types)
            with mock.patch.object(lava_device, "dispatcher_version",
                                   side_effect=RunnerError("not installed")):
                self.assertIsNone(lava_device.cached_types())
        dl.assert_not_called()


if __name__ == "__main__":
    unittest.main()
