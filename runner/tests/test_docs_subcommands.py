"""Issue 48 item 8: docs/runner.md names every subcommand gupnm-run has
(it lacked kselftest and lava), and --version."""

import argparse
import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import cli  # noqa: E402

RUNNER_MD = Path(__file__).resolve().parents[2] / 'docs' / 'runner.md'


def subcommands() -> set:
    parser = cli._build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


class SubcommandListTest(unittest.TestCase):

    def test_runner_md_lists_every_subcommand(self):
        text = RUNNER_MD.read_text()
        m = re.search(r'Subcommands:(.*?)\(`runner/gupnm-run SUB --help`\)', text, re.S)
        self.assertIsNotNone(m, 'docs/runner.md: no "Subcommands: ..." sentence')
        listed = set(re.findall(r'`([a-z-]+)`', m.group(1)))
        have = subcommands()
        self.assertTrue({'run', 'kselftest', 'lava'} <= have)
        self.assertEqual(have - listed, set(), 'subcommands docs/runner.md does not list')
        self.assertEqual(listed - have, set(), 'listed but not subcommands')
        self.assertIn('`runner/gupnm-run --version`', text)


if __name__ == '__main__':
    unittest.main()
