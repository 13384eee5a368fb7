"""Unit tests for gupnm.hostmode (--kernel host: the module on this machine).

Nothing is built, loaded or run: plan.host, the test and the checks of the
machine are mocked.
"""

import argparse
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import hostmode, phases  # noqa: E402
from gupnm.prepare import plan  # noqa: E402
from gupnm.prepare.payload import Payload  # noqa: E402

TAP = 'TAP version 13\n1..1\nok 1 verdict_anon_read\n'
META = {'started': '2026-12-07T12:00:00+00:00', 'tool_version': 'x', 'qemu_version': None,
        'host': {'name': 'h', 'kernel': '6.1.0', 'cpus': 2, 'os': 'x'}}


class HostModeTest(unittest.TestCase):

    def tearDown(self):
        phases.stop()

    def test_the_prepare_steps_payload_and_every_phase_timed(self):
        """Host mode takes the module and the test from plan.host(), the
        Payload a boot gets; its durations are the run's clock, phases
        adding up to the total."""
        pay = Payload('host', '6.1.0-test', None, 'amd64',
                      {'kind': 'host', 'method': 'module', 'headers': '/h', 'module': '/m.ko'},
                      './gup_null_mapping', {plan.TEST: Path('/s/gup_null_mapping')},
                      Path('/m.ko'), None)
        done = subprocess.CompletedProcess(['t'], 0, TAP, '')
        phases.start(first='startup')
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(hostmode.probe, 'host_method', return_value=('module', 'why')), \
                mock.patch.object(hostmode.os, 'geteuid', return_value=0), \
                mock.patch.object(hostmode, 'progress'), \
                mock.patch.object(hostmode.plan, 'host', return_value=pay) as ph, \
                mock.patch.object(hostmode, '_test', return_value=done) as test:
            out = hostmode.run(argparse.Namespace(test_args=''), Path(tmp), dict(META))
        ph.assert_called_once()
        self.assertEqual(test.call_args.args[:2], (Path('/m.ko'), Path('/s/gup_null_mapping')))
        s = out.summary
        self.assertEqual((s['kernel']['source']['module'], s['kernel']['source']['method_reason']),
                         ('/m.ko', 'why'))
        d = s['durations']
        self.assertEqual(s['durations_from'], 'run')
        self.assertAlmostEqual(sum(v for k, v in d.items() if k != 'total'), d['total'], places=6)
        self.assertIn('startup', d)
        self.assertFalse(phases.running())


if __name__ == '__main__':
    unittest.main()
