"""Issue 48 item 5: every subcommand's --json prints JSON alone on stdout
(json.loads takes it whole), the human report on stderr.

No VM boots: each path runs on recorded data (tests/data) with the boot,
the build and the archive faked where the command would reach them. The
shapes: run, compare, kselftest and lava print their summary (compare its
compare.json); survey prints survey.json's document, probe-survey
probe-survey.json's rows, kernels the catalogue; an error before a
summary exists prints the error object.
"""

import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import cli, hostmode, probe  # noqa: E402
from gupnm.ci import lab, lava  # noqa: E402
from gupnm.prepare import cache, debian  # noqa: E402
from tests.test_cli import call, real_outcome  # noqa: E402

DATA = Path(__file__).resolve().parent / 'data'


def offer(rel, headers=True):
    return debian.Offered(rel, 'amd64', f'linux-image-{rel}-unsigned', rel + '-1',
                          ['trixie'], 'unsigned', headers)


class JsonStdoutTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-json-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        for target, obj in (('sweep_stale', cache), ('ensure_tools', lab)):
            p = mock.patch.object(obj, target, return_value=None)
            p.start()
            self.addCleanup(p.stop)

    def loads(self, argv, code=None):
        """Run @argv; its stdout parsed as one JSON document."""
        rc, out, err = call(argv)
        if code is not None:
            self.assertEqual(rc, code, err)
        try:
            return json.loads(out), err
        except ValueError as e:
            self.fail(f'{argv}: stdout is not JSON ({e}): {out[:300]!r}')

    def test_run(self):
        with mock.patch.object(cli, 'run_one', return_value=real_outcome(self.tmp / 'r')):
            doc, err = self.loads(['run', '--kernel', 'debian:6.12', '--json',
                                   '--results', str(self.tmp / 'r')], 1)
        self.assertEqual(doc['exit_code'], 1)
        self.assertIn('verdict: shadow 0/512 fast', err)

    def test_run_bad_input_is_the_error_object(self):
        doc, _ = self.loads(['run', '--kernel', 'nonsense:1', '--json'], 2)
        self.assertEqual((doc['exit_code'], doc['outcome']), (2, 'error'))

    def test_run_host(self):
        with mock.patch.object(hostmode, 'run', return_value=real_outcome(self.tmp / 'h')):
            doc, err = self.loads(['run', '--kernel', 'host', '--json',
                                   '--results', str(self.tmp / 'h')], 1)
        self.assertEqual(doc['spec'], 'debian:6.12')
        self.assertIn('exit:    1', err)

    def test_run_method_probe(self):
        res = probe.parse((DATA / 'probe' / 'debian-6.12.118.txt').read_text(), None)
        with mock.patch.object(probe, 'image_for', return_value=(
                '6.12.118+deb13-amd64', Path('/nonexistent'), {'kind': 'debian'})), \
                mock.patch.object(probe, 'run_guest', return_value=(res, 'guest', [])):
            doc, err = self.loads(['run', '--kernel', 'debian:6.12', '--method', 'probe',
                                   '--json', '--results', str(self.tmp / 'p')], 1)
        self.assertEqual(doc['method'], 'probe')
        self.assertIn('verdict ', err)

    def test_compare(self):
        (self.tmp / 'c').mkdir()          # run_one, faked, makes no folder
        outs = iter([real_outcome(self.tmp / 'c' / 'a'), real_outcome(self.tmp / 'c' / 'b')])
        with mock.patch.object(cli, 'run_one', side_effect=lambda *a, **k: next(outs)), \
                mock.patch.object(cli, 'plot', return_value=None):
            doc, err = self.loads(['compare', '--a', 'debian:6.12', '--b', 'debian:7.3',
                                   '--json', '--results', str(self.tmp / 'c')], 0)
        self.assertEqual((doc['a'], doc['b']), ('debian:6.12', 'debian:7.3'))
        self.assertEqual(doc, json.loads((self.tmp / 'c' / 'compare.json').read_text()))
        self.assertIn('plot:    skipped', err)

    def test_survey_is_survey_json(self):
        def outcome(spec, args, outdir, **_):
            return real_outcome(outdir)
        with mock.patch.object(debian, 'catalogue', return_value=[offer('6.12.117+deb12-amd64')]), \
                mock.patch.object(cli, 'run_one', side_effect=outcome):
            doc, err = self.loads(['survey', '--json', '--results', str(self.tmp / 's')], 0)
        self.assertEqual(doc, json.loads((self.tmp / 's' / 'survey.json').read_text()))
        self.assertEqual([k['release'] for k in doc['kernels']], ['6.12.117+deb12-amd64'])
        self.assertIn('1 amd64 kernels (1 module, 0 probe)', err)

    def test_probe_survey_is_probe_survey_json(self):
        res = probe.parse((DATA / 'probe' / 'debian-6.12.118.txt').read_text(), None)
        with mock.patch.object(debian, 'catalogue', return_value=[offer('6.12.118+deb13-amd64')]), \
                mock.patch.object(probe, 'fetch_image', return_value=(
                    '6.12.118+deb13-amd64', Path('/nonexistent'), {})), \
                mock.patch.object(probe, 'run_guest', return_value=(res, 'guest', [])):
            doc, err = self.loads(['probe-survey', '--json', '--results',
                                   str(self.tmp / 'ps')], 0)
        self.assertEqual(doc, json.loads((self.tmp / 'ps' / 'probe-survey.json').read_text()))
        self.assertEqual(doc[0]['bug_present'], True)
        self.assertIn('1 kernels; results in', err)

    def test_kernels(self):
        with mock.patch.object(debian, 'catalogue', return_value=[offer('7.3.4+deb13-amd64')]):
            doc, _ = self.loads(['kernels', '--json'], 0)
        self.assertEqual(doc[0]['release'], '7.3.4+deb13-amd64')

    def test_lava(self):
        def run(job, spec, outdir, again, export=None, byo=None):
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / 'lava-run.log').write_text(
                '{"dt": "t", "lvl": "target", "msg": "Linux version 6.12.118+deb13-amd64 (x)"}\n')
            cases = [lava.Case('lava', 'job', 'pass'),
                     lava.Case('gup_null_mapping', 'verdict_shadow_read', 'fail')]
            return lava.LavaRun(job, spec, '6.12.118+deb13-amd64', cases, 0, 5.0, outdir), []
        with mock.patch.object(lava, 'run_again_if_died', side_effect=run):
            doc, err = self.loads(['lava', 'debian-module', 'debian:6.12', '--json',
                                   '--results', str(self.tmp / 'l')], 1)
        self.assertEqual(doc['cases'][0]['name'], 'verdict_shadow_read')
        self.assertIn('gup_null_mapping/verdict_shadow_read: fail', err)

    def test_kselftest_failure_before_the_boot(self):
        from gupnm.ci import kselftest_paths
        from gupnm.host import RunnerError
        with mock.patch.object(kselftest_paths, 'prepared',
                               side_effect=RunnerError('make failed: see build.log')):
            doc, _ = self.loads(['kselftest', 'source:debian-7.3', '--json',
                                 '--results', str(self.tmp / 'k')], 3)
        self.assertEqual(doc['exit_code'], 3)


if __name__ == '__main__':
    unittest.main()
