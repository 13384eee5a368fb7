"""Unit tests for gupnm.phases (the run's clock: every second in one phase)."""

import sys
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import phases  # noqa: E402


class ClockTest(unittest.TestCase):

    def test_phases_sum_to_the_total(self):
        c = phases.Clock(100.0, 'startup')
        c.switch('apt_lists', 100.4)
        c.switch('download', 101.0)
        c.switch('other', 103.25)
        c.switch('module_build', 103.5)
        c.switch('other', 110.0)
        d = c.durations(now=112.0)
        self.assertEqual(d, {'startup': 0.4, 'apt_lists': 0.6, 'download': 2.25,
                             'module_build': 6.5, 'other': 2.25, 'total': 12.0})
        self.assertEqual(list(d)[-2:], ['other', 'total'])
        self.assertAlmostEqual(sum(v for k, v in d.items() if k != 'total'), d['total'],
                               places=6)

    def test_rounding_goes_to_other(self):
        c = phases.Clock(0.0)
        for k in range(1, 200):          # 199 phases of 1/3 ms... and odd bits
            c.switch(f'p{k % 7}', k / 3000 + k * 0.0101)
        d = c.durations(now=5.0)
        self.assertEqual(d['total'], 5.0)
        self.assertAlmostEqual(sum(v for k, v in d.items() if k != 'total'), 5.0, places=6)


class RunClockTest(unittest.TestCase):

    def tearDown(self):
        phases.stop()

    def test_nested_phases_and_threads(self):
        """A block inside a block is the inner phase's, the outer resumes
        after it; a thread's blocks count nothing (the main thread's phase
        has its seconds); the phases add up to the wall clock."""
        t0 = time.monotonic()
        phases.start(first='startup')
        time.sleep(0.02)
        phases.enter('other')
        with phases.phase('download'):
            time.sleep(0.02)
            with phases.phase('unpack'):
                worker = threading.Thread(target=lambda: phases.phase('x').__enter__())
                worker.start()
                worker.join()
                time.sleep(0.03)
            time.sleep(0.02)
        d = phases.stop()
        wall = time.monotonic() - t0
        self.assertEqual(list(d), ['startup', 'download', 'unpack', 'other', 'total'])
        self.assertGreaterEqual(d['download'], 0.035)
        self.assertGreaterEqual(d['unpack'], 0.025)
        self.assertAlmostEqual(d['total'], sum(v for k, v in d.items() if k != 'total'),
                               places=6)
        self.assertLess(abs(d['total'] - wall), 0.01)
        self.assertFalse(phases.running())
        self.assertEqual(phases.durations(), {})
        with phases.phase('ignored'):     # no clock: nothing counted, no error
            pass

    def test_from_the_process_start(self):
        at = phases.process_start()
        self.assertIsNotNone(at, 'this Linux gives /proc/self/stat')
        # The interpreter started before this test, not in the future.
        self.assertLessEqual(at, time.monotonic())
        phases.start(at)
        self.assertEqual(phases.measured_from(), 'process')
        phases.start()
        self.assertEqual(phases.measured_from(), 'run')

    def test_no_proc_no_process_start(self):
        with mock.patch('builtins.open', side_effect=OSError('no /proc')):
            self.assertIsNone(phases.process_start())


if __name__ == '__main__':
    unittest.main()
