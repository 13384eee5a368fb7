"""Unit tests for gupnm.lab and gupnm.linaro: `gupnm-run kselftest` and
`gupnm-run lava` argument handling, exit-code mapping, error messages and
reports. No VM runs: the boot and lava-run are mocked where a command
would reach them (the real runs are in docs/lab-commands.md)."""

import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm import cli  # noqa: E402
from gupnm.ci import kselftest_paths, lab, lava, linaro  # noqa: E402
from gupnm.host import UsageError  # noqa: E402
from gupnm.parse import console  # noqa: E402
from gupnm.report import schema  # noqa: E402
from tests.test_cli import call  # noqa: E402  (cli.main -> rc, stdout, stderr)

PEERS = linaro.DEFAULT
OURS_PASS = [("mm_ksft_gup_test_sh_gup_null_mapping_verdict_anon_read", "pass"),
             ("mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read", "pass"),
             ("mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_longterm_write", "pass"),
             ("mm_ksft_gup_test_sh_gup_null_mapping", "pass")]


def with_result(pairs, name, result):
    return [(n, result if n.endswith(name) else r) for n, r in pairs]


class KselftestArguments(unittest.TestCase):
    """Bad input is exit 2 with a message saying what to do, before anything
    is fetched, built or booted."""

    def setUp(self):
        for target in ('prepared', 'run_kernel'):
            p = mock.patch.object(kselftest_paths, target,
                                  side_effect=AssertionError('must not run'))
            p.start()
            self.addCleanup(p.stop)

    def assert_refused(self, argv, *words):
        rc, out, err = call(argv)
        self.assertIn(rc, (2, ('exit', 2)), (argv, out, err))
        for w in words:
            self.assertIn(w, err)
        return out, err

    def test_binary_kernels_are_refused_with_the_alternative(self):
        self.assert_refused(['kselftest', 'debian:6.12'], 'source kernel',
                            'gupnm-run lava debian-module')
        self.assert_refused(['kselftest', 'image:/x:/y'], 'source kernel')

    def test_6_12_tree_has_no_selftest(self):
        self.assert_refused(['kselftest', 'source:debian-6.12:nofix'],
                            "fix alone", 'source:debian-7.3')

    def test_selection_none(self):
        self.assert_refused(['kselftest', 'source:debian-7.3:none'], 'selection none')

    def test_bad_spec_and_selection(self):
        self.assert_refused(['kselftest', 'source:debian-7.3:most'], 'not a patch selection')
        self.assert_refused(['kselftest', 'nonsense'], 'bad kernel spec')

    def test_via_choices(self):
        self.assert_refused(['kselftest', 'source:debian-7.3', '--via', 'tuxrun'],
                            'argument --via')

    def test_linaro_options_need_via_linaro(self):
        self.assert_refused(['kselftest', 'source:debian-7.3', '--select', 'cmdfiles'],
                            '--select only with --via linaro')
        self.assert_refused(['kselftest', 'source:debian-7.3', '--linaro', '/tmp'],
                            '--linaro only with --via linaro')

    def test_missing_checkout_says_what_to_do(self):
        self.assert_refused(['kselftest', 'source:debian-7.3', '--via', 'linaro',
                             '--linaro', '/nonexistent/td'],
                            'not found at /nonexistent/td', '--linaro DIR',
                            'GUPNM_LINARO')

    def test_env_var_names_itself(self):
        with mock.patch.dict(os.environ, {'GUPNM_LINARO': '/nonexistent/env'}):
            self.assert_refused(['kselftest', 'source:debian-7.3', '--via', 'linaro'],
                                '/nonexistent/env ($GUPNM_LINARO)')

    def test_missing_skipfile(self):
        with tempfile.TemporaryDirectory() as tmp:
            td = _fake_checkout(Path(tmp))
            self.assert_refused(['kselftest', 'source:debian-7.3', '--via', 'linaro',
                                 '--linaro', str(td), '--skipfile', f'{tmp}/none'],
                                '--skipfile', 'is not a file')

    def test_json_error_object(self):
        rc, out, err = call(['kselftest', 'debian:7.3', '--json'])
        self.assertEqual(rc, 2)
        obj = json.loads(out)
        self.assertEqual((obj['exit_code'], obj['outcome']), (2, 'error'))
        self.assertIn('source kernel', obj['error'])


class LavaArguments(unittest.TestCase):
    def setUp(self):
        p = mock.patch.object(lava, 'run', side_effect=AssertionError('must not run'))
        p.start()
        self.addCleanup(p.stop)

    def test_unknown_job_lists_the_jobs(self):
        rc, out, err = call(['lava', 'kselftest-mm', 'debian:6.12'])
        self.assertEqual(rc, ('exit', 2))
        self.assertIn("unknown job 'kselftest-mm': use one of debian-module, "
                      "source-kselftest", err)

    def test_unknown_job_json(self):
        rc, out, err = call(['lava', 'nojob', 'debian:6.12', '--json'])
        self.assertEqual(rc, ('exit', 2))
        self.assertEqual(json.loads(out)['exit_code'], 2)

    def test_help_lists_every_job_file(self):
        for name, path in lava.JOBS.items():
            self.assertIn(name, lab.lava_help())
            self.assertIn(str(path.relative_to(lava.REPO)), lab.lava_help())

    def test_source_job_refuses_a_binary_kernel(self):
        # Wherever Linaro's test-definitions are (or not): the spec is judged.
        with mock.patch.object(linaro, 'locate', return_value=Path('/linaro')):
            rc, out, err = call(['lava', 'source-kselftest', 'debian:7.3'])
        self.assertEqual(rc, 2)
        self.assertIn('source kernel', err)

    def test_bad_spec(self):
        rc, out, err = call(['lava', 'debian-module', 'debian'])
        self.assertEqual(rc, 2)
        self.assertIn('bad kernel spec', err)

    def test_missing_arguments(self):
        rc, out, err = call(['lava', 'debian-module'])
        self.assertEqual(rc, 2)
        self.assertIn('no SPEC', err)

    def test_export_refusals_before_anything_is_built(self):
        with tempfile.TemporaryDirectory() as d:
            full = Path(d) / 'full'
            full.mkdir()
            (full / 'mine').write_text('x')
            for extra, why in ((['--export', str(full), '--base-url', 'http://h'],
                                'not a previous export'),
                               (['--export', str(Path(d) / 'n'), '--base-url', 'scp://h'],
                                'not an http'),
                               (['--export', str(Path(d) / 'n')], 'go together'),
                               (['--no-run'], '--no-run only with --export'),
                               (['--export', str(Path(d) / 'n'), '--base-url', 'http://h',
                                 '--no-run', '--json'], 'no summary.json')):
                with mock.patch.object(lava, 'stage') as stage, \
                        mock.patch.object(lava, 'run_again_if_died') as run:
                    rc, out, err = call(['lava', 'debian-module', 'debian:7.3', *extra])
                self.assertEqual(rc, 2, err)
                self.assertIn(why, err)
                stage.assert_not_called()
                run.assert_not_called()
            self.assertEqual((full / 'mine').read_text(), 'x')

    def test_no_run_without_lava_dispatcher_says_so(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(lava, 'available', return_value='lava-run not found'), \
                mock.patch.object(lava, 'stage') as stage:
            rc, out, err = call(['lava', 'debian-module', 'debian:7.3', '--export',
                                 str(Path(d) / 'n'), '--base-url', 'http://h', '--no-run',
                                 '--results', str(Path(d) / 'r')])
        self.assertEqual(rc, 3)
        self.assertIn('lava-run not found', err)
        stage.assert_not_called()

    def test_no_run_writes_the_export_and_exits_0(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(lava, 'available', return_value=None), \
                mock.patch.object(lava, 'stage', return_value=mock.Mock(release='7.3')) as stage, \
                mock.patch.object(lava, 'run_again_if_died') as run:
            rc, out, err = call(['lava', 'debian-module', 'debian:7.3', '--export',
                                 str(Path(d) / 'n'), '--base-url', 'http://h/', '--no-run',
                                 '--results', str(Path(d) / 'r')])
        self.assertEqual(rc, 0, err)
        self.assertEqual(stage.call_args.kwargs['export'].base_url, 'http://h')
        run.assert_not_called()
        self.assertIn('exported:', out)

    def test_lab_artifacts_are_the_lab_jobs_in_place_of_spec(self):
        with tempfile.TemporaryDirectory() as d:
            image = Path(d) / 'vmlinux'
            image.write_bytes(b'Linux version 7.3.4+ (x) #1')
            tarball = Path(d) / 'k.tar'
            with tarfile.open(tarball, 'w') as tar:
                for n in ('run_kselftest.sh', 'mm/gup_null_mapping'):
                    info = tarfile.TarInfo(n)
                    tar.addfile(info, io.BytesIO(b''))
            byo = ['--kernel', str(image), '--kselftest', str(tarball)]
            for argv in (['lava', 'debian-module', *byo],
                         ['lava', 'source-kselftest', 'source:debian-7.3', *byo]):
                rc, out, err = call(argv)
                self.assertEqual(rc, 2, err)
                self.assertIn('in place of SPEC', err)


class Judge(unittest.TestCase):
    """The README's table applied to gup_null_mapping's own flat results."""

    def judge(self, ours, **kw):
        args = dict(runner_exit=0, splats=[], booted='7.3', release='7.3')
        args.update(kw)
        return lab.judge(ours, **args)

    def test_pass(self):
        code, problems, verdict = self.judge(OURS_PASS)
        self.assertEqual((code, problems), (0, []))
        self.assertIn('PASS', verdict)

    def test_bug(self):
        ours = with_result(OURS_PASS, 'verdict_shadow_read', 'fail')
        ours = with_result(ours, '_gup_null_mapping', 'fail')    # the test's line
        code, _, verdict = self.judge(ours)
        self.assertEqual(code, 1)
        self.assertIn('2 of 4 failed: GUP-fast rejects', verdict)
        self.assertIn('bug present', verdict)

    def test_wrong_fix_is_not_called_the_bug(self):
        ours = with_result(OURS_PASS, 'verdict_shadow_longterm_write', 'fail')
        code, _, verdict = self.judge(with_result(ours, '_gup_null_mapping', 'fail'))
        self.assertEqual(code, 1)
        self.assertNotIn('bug present', verdict)

    def test_the_tests_line_alone_is_not_called_the_bug(self):
        code, _, verdict = self.judge(with_result(OURS_PASS, '_gup_null_mapping', 'fail'))
        self.assertEqual(code, 1)
        self.assertNotIn('bug present', verdict)

    def test_shadow_alone_names_the_bug(self):
        code, _, verdict = self.judge(with_result(OURS_PASS, 'verdict_shadow_read', 'fail'))
        self.assertEqual(code, 1)
        self.assertIn('bug present', verdict)

    def test_a_control_failing_is_not_called_the_bug(self):
        code, _, verdict = self.judge(with_result(OURS_PASS, 'verdict_anon_read', 'fail'))
        self.assertEqual(code, 1)
        self.assertNotIn('bug present', verdict)

    def test_no_results_is_no_answer(self):
        code, problems, _ = self.judge([])
        self.assertEqual(code, 3)
        self.assertIn('no result of gup_null_mapping', problems[0])

    def test_no_driver_verdict_is_no_pass(self):
        code, problems, _ = self.judge([OURS_PASS[0], OURS_PASS[-1]])
        self.assertEqual(code, 3)
        self.assertIn('verdict_driver', problems[0])

    def test_the_v4_names(self):
        v4 = [(n.replace('verdict_shadow_', 'verdict_driver_'), r) for n, r in OURS_PASS]
        self.assertEqual(self.judge(v4)[:2], (0, []))
        ours = with_result(v4, 'verdict_driver_read', 'fail')
        code, _, verdict = self.judge(with_result(ours, '_gup_null_mapping', 'fail'))
        self.assertEqual(code, 1)
        self.assertIn('bug present', verdict)

    def test_a_pass_names_the_results_skipped(self):
        ours = with_result(OURS_PASS, 'verdict_anon_read', 'skip')
        code, _, verdict = self.judge(ours)
        self.assertEqual(code, 0)
        skipped = [n for n, r in ours if r == 'skip']
        self.assertEqual(verdict, f'PASS: {len(ours)} results of gup_null_mapping, 1 skipped '
                                  f'(not judged: {skipped[0]})')

    def test_longterm_shadow_alone_is_not_the_evidence(self):
        code, _, _ = self.judge([OURS_PASS[2]])
        self.assertEqual(code, 3)

    def test_all_skip(self):
        code, _, verdict = self.judge([(n, 'skip') for n, _ in OURS_PASS])
        self.assertEqual(code, 4)
        self.assertIn('SKIP', verdict)

    def test_every_verdict_skipped_but_the_tests_line_is_not_judged(self):
        # v4's ksft_finished() passes the test's own line when every cell
        # skipped (the runner's module without tracing): nothing was judged.
        ours = [(n, 'pass' if n.endswith('gup_null_mapping') else 'skip')
                for n, _ in OURS_PASS] + [('mm_ksft_gup_test_sh_gup_null_mapping', 'pass')]
        code, problems, verdict = self.judge(ours)
        self.assertEqual(code, 3)
        self.assertIn('no verdict_driver_* result judged', problems[0])

    def test_runner_died(self):
        code, problems, _ = self.judge(OURS_PASS, runner_exit=None)
        self.assertEqual(code, 3)
        self.assertIn('never finished', problems[0])

    def test_runner_nonzero_with_ours_passing(self):
        code, problems, _ = self.judge(OURS_PASS, runner_exit=1, runner='kselftest.sh')
        self.assertEqual(code, 3)
        self.assertIn('kselftest.sh exited 1', problems[0])

    def test_runner_nonzero_with_ours_failing_is_the_failure(self):
        code, _, _ = self.judge(with_result(OURS_PASS, 'verdict_shadow_read', 'fail'),
                                runner_exit=1)
        self.assertEqual(code, 1)

    def test_wrong_kernel(self):
        code, problems, _ = self.judge(OURS_PASS, booted='6.12')
        self.assertEqual(code, 3)
        self.assertIn('booted 6.12, not 7.3', problems[0])

    def test_wrong_kernel_even_when_failing(self):
        code, _, _ = self.judge(with_result(OURS_PASS, 'verdict_shadow_read', 'fail'),
                                booted='6.12')
        self.assertEqual(code, 3)

    def test_splat(self):
        splats = console.find_splats("KSFT-PATH-BEGIN: tarball\n"
                                     "[   12.0] BUG: kernel NULL pointer dereference, "
                                     "address: 0000000000000000\n")
        self.assertTrue(splats)
        code, _, verdict = self.judge(OURS_PASS, splats=splats)
        self.assertEqual(code, 1)
        self.assertIn('complained', verdict)

    def test_splats_before_the_test_are_not_counted(self):
        text = ("[    1.0] BUG: kernel NULL pointer dereference, address: 0\n"
                "KSFT-PATH-BEGIN: tarball\nok 1 x\n")
        self.assertEqual(lab._splats_after(text, 'KSFT-PATH-BEGIN'), [])
        self.assertEqual(lab._splats_after('no marker\n', 'KSFT-PATH-BEGIN'), [])


def _lava_run(cases, rc=0, job='pass'):
    cs = [lava.Case('lava', 'job', job)] + [lava.Case('gup_null_mapping', n, r)
                                            for n, r in cases]
    return lava.LavaRun('debian-module', 'debian:6.12', '6.12.118+deb13-amd64', cs, rc,
                        5.0, Path('/nonexistent'))


class JudgeLava(unittest.TestCase):
    CASES = [('verdict_anon_read', 'pass'), ('verdict_shadow_read', 'pass'),
             ('verdict_shadow_write', 'pass')]
    REL = '6.12.118+deb13-amd64'

    def test_pass(self):
        code, problems, _ = lab.judge_lava(_lava_run(self.CASES),
                                           self.REL, [])
        self.assertEqual((code, problems), (0, []))

    def test_bug(self):
        cases = with_result(self.CASES, 'verdict_shadow_read', 'fail')
        code, _, verdict = lab.judge_lava(_lava_run(cases),
                                          self.REL, [])
        self.assertEqual(code, 1)
        self.assertIn('bug present', verdict)

    def test_lava_run_exit_zero_alone_proves_nothing(self):
        code, problems, _ = lab.judge_lava(_lava_run([]),
                                           self.REL, [])
        self.assertEqual(code, 3)
        self.assertIn('no result of gup_null_mapping', problems[0])

    def test_job_error(self):
        code, problems, _ = lab.judge_lava(_lava_run(self.CASES, rc=1, job='fail'),
                                           self.REL, [])
        self.assertEqual(code, 3)
        self.assertTrue(any('lava-run exited 1' in p for p in problems))
        self.assertTrue(any("job result is fail" in p for p in problems))

    def test_timeout(self):
        code, problems, _ = lab.judge_lava(_lava_run(self.CASES, rc=None),
                                           self.REL, [])
        self.assertEqual(code, 3)
        self.assertTrue(any('timed out' in p for p in problems))

    def test_a_failure_stays_a_failure_beside_a_job_error(self):
        cases = with_result(self.CASES, 'verdict_shadow_read', 'fail')
        code, problems, _ = lab.judge_lava(_lava_run(cases, job='incomplete'),
                                           self.REL, [])
        self.assertEqual(code, 1)
        self.assertTrue(any('incomplete' in p for p in problems))

    def test_wrong_kernel(self):
        code, problems, _ = lab.judge_lava(_lava_run(self.CASES),
                                           '7.3.4+deb13-amd64', [])
        self.assertEqual(code, 3)

    def test_console_from_lava_log(self):
        log = ('{"dt": "t", "lvl": "info", "msg": "start"}\n'
               '{"dt": "t", "lvl": "target", "msg": "[    0.0] Linux version 6.12.118+deb13-amd64 (x)"}\n'
               '{"dt": "t", "lvl": "target", "msg": "quote \\" inside"}\n'
               'not json "target"\n')
        self.assertEqual(lab.lava_console(log),
                         '[    0.0] Linux version 6.12.118+deb13-amd64 (x)\nquote " inside\n')


LAB_DATA = Path(__file__).resolve().parents[1] / 'data/lava/lab-7.3-all.results.log'


def _lab_run(change=None, rc=0):
    """lava-run's results of the lab job on source:debian-7.3:all (a real
    run's result lines), changed by @change (name -> result, None drops)."""
    cases = []
    for c in lava.parse_results(LAB_DATA.read_text()):
        result = (change or {}).get(c.case, c.result)
        if result is not None:
            cases.append(lava.Case(c.definition, c.case, result))
    return lava.LavaRun('source-kselftest', 'source:debian-7.3:all', '7.3.4+', cases,
                        rc, 30.0, Path('/nonexistent'))


class JudgeLabJob(unittest.TestCase):
    SHADOW = ('mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read',
              'mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_write')

    def test_the_real_run_passes(self):
        self.assertEqual(lab.judge_lava(_lab_run(), '7.3.4+', [])[:2], (0, []))

    def test_the_bug(self):
        change = {n: 'fail' for n in (*self.SHADOW, lava.EXIT_CASE)}
        code, problems, verdict = lab.judge_lava(_lab_run(change), '7.3.4+', [])
        self.assertEqual((code, problems), (1, []))
        self.assertIn('bug present', verdict)

    def test_a_failing_splat_case_is_the_kernel_complaining(self):
        code, _, verdict = lab.judge_lava(_lab_run({lava.SPLAT_CASE: 'fail'}),
                                          '7.3.4+', [])
        self.assertEqual(code, 1)
        self.assertIn(lava.SPLAT_CASE, verdict)

    def test_a_missing_lab_case_is_no_answer(self):
        for change, words in (({lava.SPLAT_CASE: None}, 'not recorded'),
                              ({lava.EXIT_CASE: None}, 'exit status'),
                              ({'mm:ksft_cow.sh': 'pass'} | {
                                  c.case: None for c in _lab_run().skipped_by_skipfile()},
                               'skipped nothing')):
            code, problems, _ = lab.judge_lava(_lab_run(change), '7.3.4+', [])
            self.assertEqual(code, 3, change)
            self.assertTrue(any(words in p for p in problems), problems)


def _fake_checkout(root: Path) -> Path:
    td = root / 'td'
    for n in linaro.NEEDED:
        (td / n).parent.mkdir(parents=True, exist_ok=True)
        (td / n).write_text('')
    return td


class Linaro(unittest.TestCase):
    def test_locate_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            td = _fake_checkout(Path(tmp))
            self.assertEqual(linaro.locate(str(td)), td.resolve())
            with mock.patch.dict(os.environ, {'GUPNM_LINARO': str(td)}):
                self.assertEqual(linaro.locate(None), td.resolve())
            (td / linaro.NEEDED[1]).unlink()
            with self.assertRaises(UsageError) as cm:
                linaro.locate(str(td))
            self.assertIn('parse-output.py', str(cm.exception))

    def test_the_hint_names_only_what_the_command_has(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {'GUPNM_LINARO': str(Path(tmp) / 'none')}):
            with self.assertRaises(UsageError) as lava_cm:
                linaro.locate(None)             # gupnm-run lava: no --linaro
            with self.assertRaises(UsageError) as ks_cm:
                linaro.locate(None, has_option=True)
        self.assertNotIn('--linaro', str(lava_cm.exception))
        self.assertIn('GUPNM_LINARO=DIR', str(lava_cm.exception))
        self.assertIn('pass --linaro DIR', str(ks_cm.exception))

    @unittest.skipUnless(PEERS.is_dir(), 'the shared peers copy is not here')
    def test_the_shared_copy_is_complete(self):
        self.assertEqual(linaro.locate(str(PEERS)), PEERS.resolve())

    def test_casename(self):
        p = linaro.params('mm:ksft_gup_test.sh', 'casename')
        self.assertEqual((p.TST_CASENAME, p.TST_CMDFILES, p.ENV),
                         ('mm:ksft_gup_test.sh', '', ''))
        self.assertEqual(p.SKIPFILE, 'kselftest-skipfile')

    def test_skipfile_is_never_empty(self):
        for sel in linaro.SELECTIONS:
            self.assertTrue(linaro.params('mm:ksft_gup_test.sh', sel).SKIPFILE)

    def test_6_12_style_tree_sets_vm_selftest_items_through_env(self):
        p = linaro.params('mm:run_vmtests.sh', 'casename')
        self.assertEqual(p.ENV, 'VM_SELFTEST_ITEMS=gup_test')

    def test_cmdfiles_keeps_only_ours(self):
        td = Path('/work/shared/peers/linaro-test-definitions')
        g = linaro.guest(td, 'mm:ksft_gup_test.sh', 'cmdfiles')
        self.assertEqual(g.params.TST_CMDFILES, 'mm')
        self.assertEqual(g.params.TST_CASENAME, '')
        self.assertEqual(os.path.normpath(td / linaro.KSELFTEST_DIR / g.params.SKIPFILE),
                         linaro.GUEST_SKIPFILE)
        # kselftest.sh's apply_skips: perl's ^(regex)$ on collection:test
        regex = [l for l in g.skipfile.splitlines() if not l.startswith('#')]
        self.assertEqual(len(regex), 1)
        import re
        pat = re.compile('^(' + regex[0] + ')$')
        self.assertIsNone(pat.match('mm:ksft_gup_test.sh'))
        for other in ('mm:ksft_cow.sh', 'mm:run_vmtests.sh', 'mm:ksft_gup_test.sh.x'):
            self.assertIsNotNone(pat.match(other), other)
        self.assertIsNone(pat.match('net:ksft_cow.sh'))

    def test_callers_skipfile(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / 'skip'
            f.write_text('mm:ksft_cow.sh\n')
            g = linaro.guest(Path('/td'), 'mm:ksft_gup_test.sh', 'casename', f)
            self.assertEqual(g.skipfile, 'mm:ksft_cow.sh\n')
            self.assertNotEqual(g.params.SKIPFILE, 'kselftest-skipfile')

    def test_env_lines_refuse_quotes(self):
        self.assertIn("KST_LINARO_TST_CASENAME='mm:ksft_gup_test.sh'",
                      linaro.params('mm:ksft_gup_test.sh', 'casename').env_lines())
        with self.assertRaises(UsageError):
            linaro.Params(ENV="A='b'").env_lines()

    def test_results(self):
        text = ("noise\nLINARO-RESULT-BEGIN\nshardfile-mm pass\n"
                "mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read fail\n"
                "mm:ksft_cow.sh skip\ngarbage line here\nLINARO-RESULT-END\n")
        self.assertEqual(linaro.results(text), [
            ('shardfile-mm', 'pass'),
            ('mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read', 'fail'),
            ('mm:ksft_cow.sh', 'skip')])
        self.assertIsNone(linaro.results('kselftest.sh died\n'))

    @unittest.skipUnless(Path(linaro.PYTHON).exists() and PEERS.is_dir(),
                         'no Debian python3 or no peers copy')
    def test_python_files_of_parse_output(self):
        try:
            files = linaro.python_files(PEERS)
        except Exception as err:        # python3-tap not installed here
            self.assertIn('python3-tap', str(err))
            return
        self.assertTrue(any(f.endswith('/tap/parser.py') for f in files))
        self.assertTrue(any(f.endswith('/re/__init__.py') or f.endswith('/re.py')
                            for f in files))


class Reports(unittest.TestCase):
    """summary.json of both commands is valid against the schema."""

    def test_summary_is_valid(self):
        meta = cli.run_meta(__import__('datetime').datetime.now())
        s = lab.summary(spec='source:debian-7.3:all', code=1, verdict='FAIL: x (bug present)',
                        problems=[], cases=OURS_PASS + [('weird', 'unknown')],
                        release='7.3', booted='7.3', source={'kind': 'source'},
                        memory_mb=2048, cmdline='console=ttyS0', exit_status=0,
                        command='./run_kselftest.sh -t mm:ksft_gup_test.sh', splats=[],
                        durations={'total': 1.0}, notes=['n'], meta=meta, attempts=1,
                        files={'flat': 'flat.txt'})
        self.assertEqual(schema.errors(s, schema.load()), [])
        self.assertEqual(s['counts']['total'], 5)
        self.assertEqual(s['counts']['error'], 1)
        self.assertIs(s['bug_present'], True)


class LavaCommand(unittest.TestCase):
    """cmd_lava end to end with lava-run mocked: printed cases, exit code,
    reports."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        for target, value in (('ensure_tools', None),):
            p = mock.patch.object(lab, target, return_value=value)
            p.start()
            self.addCleanup(p.stop)

    def fake(self, cases, rc=0):
        def run(job, spec, outdir, again, export=None, byo=None):
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / 'lava-run.log').write_text(
                '{"dt": "t", "lvl": "target", "msg": "Linux version 6.12.118+deb13-amd64 (x)"}\n'
                '{"dt": "t", "lvl": "target", "msg": "GUPNM-TEST-BEGIN"}\n')
            r = _lava_run(cases, rc=rc)
            r.outdir = outdir
            return r, []
        return mock.patch.object(lava, 'run_again_if_died', side_effect=run)

    def test_bug_is_exit_1_with_cases_printed(self):
        cases = [('verdict_shadow_read', 'fail'), ('verdict_anon_read', 'pass')]
        with self.fake(cases):
            rc, out, err = call(['lava', 'debian-module', 'debian:6.12',
                                 '--results', str(self.tmp / 'r')])
        self.assertEqual(rc, 1, err)
        self.assertIn('gup_null_mapping/verdict_shadow_read: fail', out)
        self.assertIn('exit:    1', out)
        s = json.loads((self.tmp / 'r' / 'summary.json').read_text())
        self.assertEqual(schema.errors(s, schema.load()), [])
        self.assertEqual((s['exit_code'], s['kernel']['booted_release']),
                         (1, '6.12.118+deb13-amd64'))
        self.assertTrue((self.tmp / 'r' / 'junit.xml').exists())

    def test_json_on_stdout(self):
        with self.fake([('verdict_shadow_read', 'pass')]):
            rc, out, err = call(['lava', 'debian-module', 'debian:6.12', '--json',
                                 '--results', str(self.tmp / 'r')])
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)['outcome'], 'pass')

    def test_job_error_is_3(self):
        with self.fake([], rc=2):
            rc, out, err = call(['lava', 'debian-module', 'debian:6.12',
                                 '--results', str(self.tmp / 'r')])
        self.assertEqual(rc, 3)
        self.assertIn('PROBLEM: lava-run exited 2', out)


if __name__ == '__main__':
    unittest.main()


class KselftestCommand(unittest.TestCase):
    """cmd_kselftest with the build and boot mocked."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        p = mock.patch.object(lab, 'ensure_tools', return_value=None)
        p.start()
        self.addCleanup(p.stop)

    def test_build_failure_is_3_with_a_summary(self):
        from gupnm.host import RunnerError
        with mock.patch.object(kselftest_paths, 'prepared',
                               side_effect=RunnerError('make failed: see build.log')):
            rc, out, err = call(['kselftest', 'source:debian-7.3', '--json',
                                 '--results', str(self.tmp / 'r')])
        self.assertEqual(rc, 3)
        obj = json.loads(out)            # one JSON object, not two
        self.assertEqual((obj['exit_code'], obj['outcome']), (3, 'error'))
        self.assertIn('make failed', obj['problems'][0])
        s = json.loads((self.tmp / 'r' / 'summary.json').read_text())
        self.assertEqual(schema.errors(s, schema.load()), [])

    def test_tarball_path_judged(self):
        from gupnm.ci import tapflat
        from gupnm.prepare import kselftest_build
        built = kselftest_build.Built('c0ffee', Path('/t'), Path('/i'), Path('/k.tgz'),
                                      'mm:ksft_gup_test.sh', [], '', Path('/l'))
        k = mock.Mock(release='7.3.0', image=Path('/nonexistent/vmlinux'), base=Path('/src'),
                      base_commit='c0ffee', patches=['0001-x.patch'])
        text = ("# # ok 1 verdict_anon_read\n# # not ok 2 verdict_shadow_read\n"
                "# not ok 1 gup_null_mapping\n# ok 2 gup_longterm\n"
                "ok 1 selftests: mm: ksft_gup_test.sh\n")
        path = kselftest_paths.PathResult('tarball', 0, 3.0, text, tapflat.flatten(text))

        def run_kernel(spec, k_, built_, outdir, paths, lin):
            self.assertEqual((paths, lin), (('tarball',), None))
            outdir.mkdir(parents=True, exist_ok=True)
            return kselftest_paths.Outcome(spec, '7.3.0', built_.wrapper, {'tarball': path},
                                           0, 9.0, 'Linux version 7.3.0\nKSFT-PATH-BEGIN: tarball\n',
                                           outdir, '7.3.0')
        with mock.patch.object(kselftest_paths, 'prepared', return_value=(k, built)), \
                mock.patch.object(kselftest_paths, 'run_kernel', side_effect=run_kernel):
            rc, out, err = call(['kselftest', 'source:debian-7.3:nofix',
                                 '--results', str(self.tmp / 'r')])
        self.assertEqual(rc, 1, out + err)
        self.assertIn('mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read: fail', out)
        self.assertIn('other results of the category in flat.txt', out)
        flat = (self.tmp / 'r' / 'flat.txt').read_text()
        self.assertIn('mm_ksft_gup_test_sh_gup_longterm pass', flat)
        s = json.loads((self.tmp / 'r' / 'summary.json').read_text())
        self.assertEqual(schema.errors(s, schema.load()), [])
        self.assertEqual(s['command'], './run_kselftest.sh -t mm:ksft_gup_test.sh')


class LavaAgain(unittest.TestCase):
    """lava.run_again_if_died: once more only when the guest died before /init."""

    def test_died_is_run_again_and_said(self):
        first, second = _lava_run([]), _lava_run([('verdict_shadow_read', 'pass')])
        with mock.patch.object(lava, 'run', side_effect=[first, second]) as run, \
                mock.patch.object(lava, 'died_before_user_space',
                                  side_effect=['Oops: int3', None]):
            r, notes = lava.run_again_if_died('debian-module', 'debian:6.12',
                                              Path('/a'), Path('/b'))
        self.assertIs(r, second)
        self.assertEqual(run.call_args_list[1].args[2], Path('/b'))
        self.assertIn('died before /init (Oops: int3): booted again', notes[0])

    def test_alive_is_run_once(self):
        first = _lava_run([])
        with mock.patch.object(lava, 'run', return_value=first) as run, \
                mock.patch.object(lava, 'died_before_user_space', return_value=None):
            r, notes = lava.run_again_if_died('debian-module', 'debian:6.12',
                                              Path('/a'), Path('/b'))
        self.assertEqual((r, notes, run.call_count), (first, [], 1))

    @mock.patch.object(linaro, 'locate', return_value=Path('/linaro'))
    def test_spec_problem(self, _located):
        self.assertIn('unknown LAVA job', lava.spec_problem('nojob', 'debian:6.12'))
        self.assertIsNone(lava.spec_problem('debian-module', 'debian:6.12'))
        self.assertIn('fix alone', lava.spec_problem('source-kselftest',
                                                     'source:debian-6.12'))
        self.assertIsNone(lava.spec_problem('source-kselftest', 'source:debian-7.3:nofix'))


class Expectations(unittest.TestCase):
    """--expect on kselftest and lava: their flattened names compared with
    an expectations file, the exit the comparison's (lab._finish)."""

    def finish(self, ours, exp):
        from gupnm.report import expect
        code, problems, verdict = lab.judge(ours, runner_exit=0, splats=[],
                                            booted='7.3.4+', release='7.3.4+')
        s = lab.summary(spec='source:debian-7.3:nofix', code=code, verdict=verdict,
                        problems=problems, cases=ours, release='7.3.4+', booted='7.3.4+',
                        source={'kind': 'source'}, memory_mb=2048, cmdline='x',
                        exit_status=0, command='c', splats=[], durations={'total': 1.0},
                        notes=[], meta={}, attempts=1, files={})
        args = mock.Mock(json=False,
                         expect=expect.Expectations('e.txt', expect.parse(exp, 'e.txt')))
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch('sys.stdout', new_callable=io.StringIO) as out:
            rc = lab._finish(args, Path(tmp), s, [])
        root = schema.load()
        self.assertEqual(schema.errors(s['expected'], root['properties']['expected'],
                                       root=root), [])
        return rc, s, out.getvalue()

    def test_the_bug_expected_is_0_and_the_tests_own_line_not_compared(self):
        ours = with_result(OURS_PASS, 'verdict_shadow_read', 'fail')
        ours = with_result(ours, '_gup_null_mapping', 'fail')
        rc, s, out = self.finish(ours, '7.3 verdict_driver_read fail # nofix\n')
        self.assertEqual((rc, s['exit_code'], s['as_expected']), (0, 0, True))
        self.assertEqual(len(s['expected']['cases']), 3)
        self.assertIn('known failure: mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read '
                      '(expected: fail, e.txt:1: nofix)', out)

    def test_a_pass_expected_to_fail_is_1(self):
        rc, s, out = self.finish(OURS_PASS, '7.3 verdict_driver_read fail\n')
        self.assertEqual((rc, s['as_expected']), (1, False))
        self.assertIn('UNEXPECTED PASS: mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read',
                      out)
