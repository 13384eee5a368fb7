"""Unit tests for gupnm.guest.initramfs: what the guest's root holds."""

import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.guest import initramfs  # noqa: E402


class ModuleTest(unittest.TestCase):
    """The module the guest loads, or none (issue 33: a built-in gup_test)."""

    def build(self, module):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            prog = tmp / "gup_test"
            prog.write_text("")
            if module:
                module = tmp / module
                module.write_text("ko")
            contents = initramfs.Contents("6.12.118", module, {"gup_test": prog},
                                          "./gup_test -a")
            with mock.patch.object(initramfs, "busybox_root",
                                   lambda root, bb=None: (root / "etc").mkdir(parents=True)), \
                    mock.patch.object(initramfs, "run"), \
                    mock.patch.object(initramfs, "pack_tree"):
                initramfs.build(contents, tmp)
            root = tmp / "root"
            env = (root / "etc" / "gupnm.env").read_text()
            ko = root / "lib/modules/6.12.118/extra/gup_test.ko"
            return env, ko.exists()

    def test_a_module_is_copied_and_named(self):
        env, copied = self.build("gup_test.ko")
        self.assertTrue(copied)
        self.assertIn("GUPNM_MODULE='gup_test'\n", env)

    def test_no_module_loads_none(self):
        env, copied = self.build(None)
        self.assertFalse(copied)
        self.assertIn("GUPNM_MODULE=''\n", env)

    def test_the_guest_init_loads_only_what_it_is_told(self):
        init = initramfs.GUEST_INIT.read_text()
        self.assertIn('if [ -n "$GUPNM_MODULE" ]; then', init)
        self.assertNotIn("modprobe gup_test", init)


if __name__ == "__main__":
    unittest.main()
