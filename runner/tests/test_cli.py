"""Unit tests for gupnm.cli (argument errors, exit statuses, parse, run/compare wiring).

No VM runs: run_one() and ensure_tools() are mocked where a command would
reach them.
"""

import argparse
import contextlib
import copy
import io
import json
import re
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import cli  # noqa: E402
from gupnm.guest import vmrun  # noqa: E402
from gupnm.host import REPO, RunnerError, UsageError  # noqa: E402
from gupnm.parse.status import parse_status  # noqa: E402

DATA = Path(__file__).resolve().parent / 'data'
REAL = DATA / 'real'
BUG_VERDICT = ('verdict: driver 0/512 fast \u2192 FAIL: GUP-fast rejects NULL-mapping '
               'order-0 folios (bug present)')


def call(argv):
    """cli.main(argv) -> (return value or SystemExit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(argv)
        except SystemExit as e:
            rc = ('exit', e.code)
    return rc, out.getvalue(), err.getvalue()


def real_outcome(outdir=Path('/results/x'), exit_code=1):
    summary = json.loads((REAL / 'debian-6.12.summary.json').read_text())
    tap_text = parse_status((REAL / 'debian-6.12.status.log').read_text()).tap
    return vmrun.RunOutcome(summary, exit_code, outdir, tap_text)


class ArgumentErrorTest(unittest.TestCase):
    """Bad usage is argparse's exit 2, before anything runs."""

    def setUp(self):
        p = mock.patch.object(cli, 'run_one', side_effect=AssertionError('must not run'))
        self.run_one = p.start()
        self.addCleanup(p.stop)

    def assert_usage(self, argv, message=None):
        rc, out, err = call(argv)
        self.assertEqual(rc, ('exit', 2), (argv, out, err))
        self.assertIn('usage: gupnm', err)
        if message:
            self.assertIn(message, err)
        self.run_one.assert_not_called()

    def test_vcpus_zero(self):
        self.assert_usage(['run', '--vcpus', '0'], "argument --vcpus: '0' must be positive")

    def test_not_numbers(self):
        self.assert_usage(['run', '--vcpus', 'two'], "argument --vcpus: 'two' is not a number")
        self.assert_usage(['run', '--memory', '1G'], "'1G' is not a number")
        self.assert_usage(['run', '--timeout', '1.5'], "'1.5' is not a number")
        self.assert_usage(['run', '--retries', 'x'], 'argument --retries')

    def test_negative(self):
        self.assert_usage(['run', '--memory', '-5'], "'-5' must be positive")
        self.assert_usage(['compare', '--timeout', '0'], "'0' must be positive")

    def test_choices(self):
        self.assert_usage(['run', '--accel', 'hvf'], 'argument --accel')
        self.assert_usage(['run', '--config', 'kasan'], 'argument --config')

    def test_commands(self):
        self.assert_usage([], 'required')
        self.assert_usage(['boot'], 'invalid choice')
        self.assert_usage(['parse'], 'file')
        self.assert_usage(['run', '--no-such-option'], 'unrecognized arguments')

    def test_help_is_exit_0(self):
        rc, out, _ = call(['run', '--help'])
        self.assertEqual(rc, ('exit', 0))
        self.assertIn('debian:SERIES|RELEASE', out)     # kernels' doc: the spec forms
        self.assertIn(f'(default {cli.DEFAULT_KERNEL})', out)

    def test_top_help_names_the_real_default(self):
        rc, out, _ = call(['--help'])
        self.assertEqual(rc, ('exit', 0))
        self.assertIn(f'one kernel (default {cli.DEFAULT_KERNEL})', out)

    # Regression test (fixed bug): cli.py _vm_args: --retries is type=int, so -1 is accepted, and
    # vmrun.run() then boots zero times and crashes with UnboundLocalError
    # (see test_vmrun.RunTest.test_negative_retries_still_boots_once).
    # Expected: an argparse error (exit 2) like --vcpus 0.
    def test_negative_retries(self):
        self.assert_usage(['run', '--retries', '-1'])


class ParseCommandTest(unittest.TestCase):

    def test_real_console_log(self):
        rc, out, err = call(['parse', str(REAL / 'debian-6.12.console.log')])
        self.assertEqual(rc, 1)
        lines = out.splitlines()
        self.assertEqual(lines[0], BUG_VERDICT)
        self.assertEqual(lines[1], 'counts:  pass 44, fail 2, skip 0, xfail 0, timeout 0, error 0')
        self.assertEqual(lines[2:], ['test exit status: 1', 'exit:    1'], out)
        self.assertEqual(err, '')

    def test_real_status_log(self):
        rc, out, _ = call(['parse', str(REAL / 'debian-6.12.status.log')])
        self.assertEqual(rc, 1)
        self.assertEqual(out.splitlines()[0], BUG_VERDICT)

    def test_real_run_vmtests_console_log(self):
        # Console of a real run through run_vmtests.sh: the inner TAP is judged.
        rc, out, _ = call(['parse', str(REAL / 'source-6.12-nofix.console.log')])
        self.assertEqual(rc, 1)
        self.assertEqual(out.splitlines()[:2], [
            BUG_VERDICT, 'counts:  pass 44, fail 2, skip 0, xfail 0, timeout 0, error 0'])
        self.assertNotIn('TAP problem', out)

    def test_real_v2_logs_with_the_benchmark_program(self):
        # Series v2: the test's verdicts, then bench/gup_fast_bench's section
        # (debian:bookworm-security and debian:7.3, --test-args '-r 10 1 2').
        for name, ratios in (('v2-bench-debian-6.12.console.log', [2.21, 2.52]),
                             ('v2-bench-debian-6.12.status.log', [2.21, 2.52]),
                             ('v2-bench-debian-7.3.console.log', [1.0, 1.01])):
            with self.subTest(name=name):
                parsed, splats, status = cli.parse_log((REAL / name).read_text())
                self.assertEqual(parsed.errors, [])
                self.assertEqual(parsed.results[-1].name, 'bench')
                self.assertEqual((parsed.plan, len(parsed.results)), (13, 13))
                self.assertEqual([v for _, v in sorted(parsed.bench_ratios.items())], ratios)
                self.assertEqual({b.backing for b in parsed.bench}, {'shadow', 'anon'})
        rc, out, _ = call(['parse', str(REAL / 'v2-bench-debian-6.12.console.log')])
        self.assertEqual(rc, 1)
        self.assertIn('counts:  pass 11, fail 2,', out)

    def test_plain_tap_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / 'tap.txt'
            f.write_text(parse_status((REAL / 'debian-6.12.status.log').read_text()).tap)
            rc, out, _ = call(['parse', str(f)])
        self.assertEqual((rc, out.splitlines()[0]), (1, BUG_VERDICT))

    def test_synthetic_logs(self):
        # early_panic: the kernel died before the test: it did not run (3).
        # pass.log has no exit marker: the end of the run is not in it (3).
        cases = {'pass.log': 3, 'whole_skip.log': 4, 'bug_present.log': 1,
                 'warning_splat.log': 1, 'early_panic.log': 3}
        for name, want in cases.items():
            with self.subTest(log=name):
                rc, out, _ = call(['parse', str(DATA / name)])
                self.assertEqual(rc, want, out)
        _, out, _ = call(['parse', str(DATA / 'warning_splat.log')])
        self.assertIn('SPLAT (warning) at line', out)
        _, out, _ = call(['parse', str(DATA / 'early_panic.log')])
        self.assertIn('TAP problem: no TAP output found', out)

    def test_missing_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, out, err = call(['parse', str(Path(tmp) / 'nope.log')])
        self.assertEqual(rc, 2)
        self.assertEqual(out, '')
        self.assertIn('gupnm: error: cannot read', err)
        self.assertIn('No such file or directory', err)

    def test_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, _, err = call(['parse', tmp])
        self.assertEqual(rc, 2)
        self.assertIn('cannot read', err)

    def test_empty_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / 'empty.log'
            f.write_text('')
            rc, out, err = call(['parse', str(f)])
        self.assertEqual(rc, 2)                      # bad input, not a FAIL
        self.assertIn('is empty', err)

    def test_binary_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / 'vmlinuz'
            f.write_bytes(bytes(range(256)) * 64)
            rc, out, err = call(['parse', str(f)])
        self.assertEqual(rc, 2)
        self.assertIn('is not a text log', err)

    def test_text_without_tap_did_not_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / 'console.log'
            f.write_text('[    0.000000] Linux version 6.12\nRun /init as init process\n')
            rc, out, _ = call(['parse', str(f)])
        self.assertEqual(rc, 3)
        self.assertIn('TAP problem: no TAP output found', out)

    def forged(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / 'console.log'
            f.write_text(text)
            return call(['parse', str(f)])

    def test_v4_logs(self):
        # v4 of the test: the row "driver", ksft_finished() (exit 0 with
        # skips, even all); parse judges them as run does.
        tap = (DATA / 'v4_pass_skips.tap').read_text()
        rc, out, _ = self.forged(tap + 'GUPNM-TEST-END: exit 0\n')
        self.assertEqual(rc, 0, out)
        self.assertIn('verdict: driver 512/512 fast \u2192 PASS', out)
        self.assertIn('15 passed, 6 skipped (not judged: verdict_thp_read', out)
        rc, out, _ = self.forged((DATA / 'v4_bug.tap').read_text() + 'GUPNM-TEST-END: exit 1\n')
        self.assertEqual((rc, out.splitlines()[0]), (1, BUG_VERDICT))
        skipped = ('TAP version 13\n1..1\n'
                   'ok 1 verdict_driver_read # SKIP GUP_FAST_VERDICT: EOPNOTSUPP\n'
                   '# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n'
                   'GUPNM-TEST-END: exit 0\n')
        rc, out, _ = self.forged(skipped)
        self.assertEqual(rc, 3, out)
        self.assertIn('verdict: NOT JUDGED: every cell skipped: verdict_driver_read: '
                      'GUP_FAST_VERDICT: EOPNOTSUPP', out)

    def test_forged_log_refused(self):
        # The failing results rewritten as ok; the verdict lines still say 0/512.
        real = (REAL / 'debian-6.12.console.log').read_text(errors='replace')
        forged = real.replace('not ok 1 verdict_shadow_read', 'ok 1 verdict_shadow_read') \
                     .replace('not ok 2 verdict_shadow_write', 'ok 2 verdict_shadow_write')
        self.assertNotEqual(forged, real)
        rc, out, _ = self.forged(forged)
        self.assertEqual(rc, 1, out)
        self.assertIn('FAIL', out.splitlines()[0])
        self.assertIn('verdict line says 0/512', out)

    def test_pass_without_exit_status_or_totals_is_not_a_pass(self):
        # A log cut after its last result: nothing shows the test ended.
        text = ('TAP version 13\n1..1\n# verdict shadow read: 512/512 pages via GUP-fast '
                '(expected 512)\nok 1 verdict_shadow_read\n')
        rc, out, _ = self.forged(text)
        self.assertEqual(rc, 3, out)
        self.assertIn("PROBLEM: not a pass, the log lacks the guest's exit marker", out)

    def test_pass_with_its_evidence_is_0(self):
        text = (DATA / 'pass.log').read_text() + 'GUPNM-TEST-END: exit 0\n'
        rc, out, _ = self.forged(text)
        self.assertEqual(rc, 0, out)

    def test_another_tests_tap_is_not_a_pass(self):
        # Issue 21: exited 0.
        rc, out, _ = self.forged('TAP version 13\n1..1\nok 1 something_else\n'
                                 '# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0\n'
                                 'GUPNM-TEST-END: exit 0\n')
        self.assertEqual(rc, 3, out)
        self.assertIn("the test's own driver verdict", out)

    def test_status_log_cut_before_its_exit_marker_is_3(self):
        # Issue 21: parse said 0 where run said 3 (the guest died).
        text = (REAL / 'table-debian-6.1.status.log').read_text()
        self.assertEqual(self.forged(text)[0], 0)
        cut = text[:text.index('GUPNM-EXIT')]
        rc, out, _ = self.forged(cut)
        self.assertEqual(rc, 3, out)
        self.assertIn("exit marker", out)

    def test_module_that_did_not_load_is_3_not_a_skip(self):
        text = (DATA / 'whole_skip.log').read_text()
        failed = ('[    4.4] test_gup_fast: disagrees about version of symbol module_layout\n'
                  "modprobe: can't load module test_gup_fast (extra/test_gup_fast.ko): "
                  'Invalid argument\ngupnm: modprobe test_gup_fast failed\n')
        rc, out, _ = self.forged(failed + text)
        self.assertEqual(rc, 3, out)
        self.assertIn('PROBLEM: the runner\'s test module test_gup_fast did not load '
                      '(modprobe: Invalid argument; kernel: test_gup_fast: disagrees about '
                      'version of symbol module_layout)', out)
        blacklisted = '[    0.0] Kernel command line: rdinit=/init module_blacklist=test_gup_fast\n'
        rc, out, _ = self.forged(blacklisted + failed + text)
        self.assertEqual(rc, 4, out)

    def test_status_log_of_a_module_that_did_not_load_is_3(self):
        # The console's line is not on the status port: its own line is.
        skip = 'TAP version 13\n1..0 # SKIP test_gup_fast/shadow: No such file\n'
        status = ('GUPNM-STATUS: booted\nGUPNM-MODPROBE: failed test_gup_fast\n'
                  f'GUPNM-TAP-BEGIN\n{skip}GUPNM-TAP-END\nGUPNM-DMESG-BEGIN\n'
                  '[    5.9] test_gup_fast: Unknown symbol debugfs_remove (err -22)\n'
                  'GUPNM-DMESG-END\nGUPNM-EXIT: 4\n')
        rc, out, _ = self.forged(status)
        self.assertEqual(rc, 3, out)
        self.assertIn('did not load (kernel: test_gup_fast: Unknown symbol debugfs_remove', out)


class RunCommandTest(unittest.TestCase):

    def test_run_reports_and_returns_the_exit_code(self):
        with tempfile.TemporaryDirectory() as tmp:
            with mock.patch.object(cli, 'run_one', return_value=real_outcome(Path(tmp))) as ro:
                rc, out, _ = call(['run', '--kernel', 'debian:6.12', '--results', tmp,
                                   '--vcpus', '4', '--memory', '2048', '--test-args', '-p 512'])
        self.assertEqual(rc, 1)
        spec, args, outdir = ro.call_args.args
        self.assertEqual((spec, outdir), ('debian:6.12', Path(tmp)))
        self.assertEqual(cli._options(args), vmrun.VmOptions(
            accel='auto', vcpus=4, memory_mb=2048, append='', timeout=300, retries=2))
        self.assertEqual((cli._asked(spec, args).test_args, cli._asked(spec, args).config),
                         ('-p 512', 'default'))
        self.assertTrue(out.startswith('TAP version 13\n'))
        self.assertIn('\nkernel:  6.12.117+deb12-amd64 (debian:6.12)\n', out)
        self.assertIn('\nvm:      tcg (the CPU shows no vmx/svm flag (no nested virtualization)), '
                      '2 vCPUs, 1024 MiB\n', out)
        # The summary recorded then, as it was recorded (the row "shadow").
        self.assertIn('\n' + BUG_VERDICT.replace('driver', 'shadow', 1) + '\n', out)
        self.assertIn('         1 thread(s): shadow/anon ratio = 2.29\n', out)
        self.assertTrue(out.endswith('exit:    1\n'))
        self.assertNotIn('PROBLEM', out)

    def test_default_kernel_and_results_dir(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(cli, 'REPO', Path(tmp)), \
                mock.patch.object(cli, 'run_one', return_value=real_outcome()) as ro:
            call(['run', '--config', 'debug', '--kernel', 'source:debian-6.12'])
            call(['run'])
            spec, args, outdir = ro.call_args_list[0].args
            self.assertEqual(spec, 'source:debian-6.12')
            self.assertEqual(cli._asked(spec, args).config, 'debug')
            spec, args, second = ro.call_args_list[1].args
            self.assertEqual(spec, cli.DEFAULT_KERNEL)
            self.assertEqual(outdir.parent, Path(tmp) / 'results')
            self.assertRegex(outdir.name, r'^\d{8}-\d{6}-source_debian-6\.12-\d+$')
            self.assertRegex(second.name, r'^\d{8}-\d{6}-'
                             + re.escape(cli.DEFAULT_KERNEL.replace(':', '_')) + r'-\d+$')

    def test_results_dirs_are_unique(self):
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(cli, 'REPO', Path(tmp)):
            args = argparse.Namespace(results=None)
            dirs = {cli._results_dir(args, 'debian:6.12') for _ in range(5)}
        self.assertEqual(len(dirs), 5)

    def test_unusable_results_dir_is_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            blocker = Path(tmp) / 'file'
            blocker.write_text('')
            with mock.patch.object(cli, 'run_one', side_effect=AssertionError('must not run')):
                rc, _, err = call(['run', '--results', str(blocker / 'sub')])
        self.assertEqual(rc, 2)
        self.assertIn('cannot create or write there', err)
        self.assertNotIn('Traceback', err)

    def test_results_dir_of_another_run_is_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'summary.json').write_text('{}')
            with mock.patch.object(cli, 'run_one', side_effect=AssertionError('must not run')):
                rc, _, err = call(['run', '--results', tmp])
            self.assertEqual((Path(tmp) / 'summary.json').read_text(), '{}')
        self.assertEqual(rc, 2)
        self.assertIn('already holds a run', err)

    def test_report_problems_splats_and_notes(self):
        out = real_outcome(exit_code=3)
        s = out.summary
        s['problems'] = ['timed out after 300 s']
        s['notes'] = ['1 retried boot(s) (early-boot death)']
        s['boot_attempts'] = 2
        s['splats'] = [{'kind': 'warning', 'line': 7, 'excerpt': 'WARNING: x\nRIP: y'}]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            cli.report(out, show_tap=False)
        text = buf.getvalue()
        self.assertFalse(text.startswith('TAP'))
        self.assertIn(', 2 boots\n', text)
        self.assertIn('SPLAT (warning) at console line 7:\n    WARNING: x\n    RIP: y\n', text)
        self.assertIn('PROBLEM: timed out after 300 s\n', text)
        self.assertIn('note:    1 retried boot(s) (early-boot death)\n', text)
        self.assertIn('exit:    3', text)

    def run_failing(self, exc, argv=()):
        tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-cli-'))
        self.addCleanup(shutil.rmtree, tmp, True)
        with mock.patch.object(cli, 'run_one', side_effect=exc):
            rc, out, err = call(['run', '--results', str(tmp), *argv])
        return rc, out, err, json.loads((tmp / 'summary.json').read_text())

    def test_runner_error_is_exit_3_with_a_summary(self):
        rc, _, err, s = self.run_failing(RunnerError('kernel build failed'))
        self.assertEqual(rc, vmrun.EXIT_INFRA)
        self.assertTrue(err.startswith('gupnm: error: kernel build failed\n'))
        self.assertEqual((s['exit_code'], s['outcome'], s['problems']),
                         (3, 'error', ['kernel build failed']))

    def test_a_failed_run_is_timed_from_the_process_start(self):
        """Issue 46 item 7: the summary of a run that failed before the
        guest still says where its time went, phases adding up to it."""
        rc, _, err, s = self.run_failing(RunnerError('kernel build failed'))
        d = s['durations']
        self.assertEqual((s['durations_from'], list(d)[-1]), ('process', 'total'))
        self.assertIn('startup', d)
        self.assertAlmostEqual(sum(v for k, v in d.items() if k != 'total'), d['total'],
                               places=6)
        self.assertIn('time:    startup ', err)
        self.assertIn(f"= total {d['total']:.1f}s (host wall clock, since the runner "
                      "started)", err)

    def test_time_line_names_every_phase_and_the_sum(self):
        s = {'durations': {'startup': 0.21, 'apt_lists': 1.04, 'module_build': 3.3,
                           'boot_and_test': 4.0, 'other': 0.05, 'total': 8.6},
             'durations_from': 'process'}
        self.assertEqual(cli.time_line(s), 'time:    startup 0.2s, apt_lists 1.0s, '
                         'module_build 3.3s, boot_and_test 4.0s, other 0.1s = total 8.6s '
                         '(host wall clock, since the runner started)')
        # A summary of before the clock: its steps as they were.
        self.assertEqual(cli.time_line({'durations': {'prepare': 3.4, 'total': 7.4}}),
                         'time:    prepare 3.4s = total 7.4s (host wall clock)')
        # The probe after the module's skip: a phase of its own, in the total.
        cli._add_phase(s, 'probe', 10.0)
        self.assertEqual(list(s['durations'])[-2:], ['probe', 'total'])
        self.assertEqual(s['durations']['total'], 18.6)

    def test_internal_error_is_3_never_1(self):
        rc, _, err, s = self.run_failing(ValueError('unexpected'))
        self.assertEqual((rc, s['exit_code'], s['outcome']), (3, 3, 'error'))
        self.assertIn('Traceback', err)
        self.assertIn('internal error (ValueError', err)
        with mock.patch.object(cli, 'cmd_parse', side_effect=ValueError('boom')):
            rc, _, err = call(['parse', '/dev/null'])
        self.assertEqual(rc, 3)
        self.assertIn('bug in the runner', err)

    def test_full_disk_is_3_in_one_line_without_traceback(self):
        full = OSError(28, 'No space left on device', '/cache/modules/x.ko')
        rc, out, err, s = self.run_failing(full)
        self.assertEqual((rc, s['exit_code'], s['outcome']), (3, 3, 'error'))
        self.assertNotIn('Traceback', err)
        line = err.splitlines()[0]
        self.assertTrue(line.startswith('gupnm: error: No space left on device '
                                        '(/cache/modules/x.ko): free space there'), line)
        self.assertIn('cache --clean GROUP', line)

    def test_reports_that_cannot_be_written_keep_the_verdict(self):
        tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-cli-'))
        self.addCleanup(shutil.rmtree, tmp, True)
        full = OSError(28, 'No space left on device', str(tmp / 'junit.xml'))
        with mock.patch.object(cli, 'run_one', side_effect=RunnerError('build failed')), \
                mock.patch.object(vmrun, 'write_reports', side_effect=full):
            rc, out, err = call(['run', '--results', str(tmp), '--json'])
        self.assertEqual(rc, 3)
        self.assertNotIn('Traceback', err)
        self.assertIn('the reports could not be written', err)
        self.assertEqual(json.loads(out)['exit_code'], 3)

    def test_usage_error_is_exit_2(self):
        rc, _, err, s = self.run_failing(UsageError('bad kernel spec'))
        self.assertEqual(rc, vmrun.EXIT_USAGE)
        self.assertIn('bad kernel spec', err)
        self.assertEqual(s['exit_code'], 2)

    def test_bad_spec_is_exit_2_before_anything(self):
        with mock.patch.object(cli, 'ensure_tools') as et, \
                mock.patch.object(cli, '_results_dir') as rd:
            rc, _, err = call(['run', '--kernel', 'debian'])
        self.assertEqual(rc, 2)
        self.assertIn("bad kernel spec 'debian'", err)
        et.assert_not_called()
        rd.assert_not_called()

    def test_a_fresh_machine_fetches_the_kernel_while_the_tools_install(self):
        """debian: with tools missing: the fetch starts before ensure_tools
        and is joined before prepare; with every tool there, neither."""
        order = []
        thread = mock.Mock(join=lambda: order.append('join'))
        args = argparse.Namespace(config='default', accel='tcg', vcpus=2, memory=1024,
                                  append='', timeout=300, test_args='', retries=2)
        later = mock.Mock(wait=lambda: order.append('qemu installed'))
        for missing, want in ((['qemu-system-x86'], ['fetch', 'tools', 'join', 'prepare',
                                                     'qemu installed', 'boot']),
                              ([], ['prepare', 'boot'])):
            order.clear()

            def tools(**kw):
                self.assertEqual(kw['later'], ('qemu-system-x86', 'qemu-system-arm'))
                order.append('tools')
                return later
            with mock.patch.object(cli, 'missing_tools', return_value=missing), \
                    mock.patch.object(cli.kernels, 'start_fetch',
                                      side_effect=lambda s, a: order.append('fetch') or thread), \
                    mock.patch.object(cli, 'ensure_tools', side_effect=tools), \
                    mock.patch.object(cli, 'run_meta', return_value={}), \
                    mock.patch.object(cli.plan, 'make', side_effect=lambda *a, **kw:
                                      order.append('prepare') or mock.Mock()), \
                    mock.patch.object(cli.vmrun, 'run',
                                      side_effect=lambda *a, **kw: order.append('boot')):
                cli.run_one('debian:bookworm-security', args, Path('/o'))
            self.assertEqual(order, want)

    def test_a_failed_build_waits_for_the_qemu_install_before_it_exits(self):
        """dpkg is never left half done: the error comes after the install."""
        order = []
        later = mock.Mock(join=lambda: order.append('install joined'))
        args = argparse.Namespace(config='default', accel='tcg', vcpus=2, memory=1024,
                                  append='', timeout=300, test_args='', retries=2)
        with mock.patch.object(cli, 'missing_tools', return_value=['qemu-system-x86']), \
                mock.patch.object(cli.kernels, 'start_fetch', return_value=None), \
                mock.patch.object(cli, 'ensure_tools', return_value=later), \
                mock.patch.object(cli.plan, 'make',
                                  side_effect=RunnerError('the module build failed')):
            with self.assertRaises(RunnerError):
                cli.run_one('debian:bookworm-security', args, Path('/o'))
        self.assertEqual(order, ['install joined'])

    def test_debug_config_needs_a_source_kernel(self):
        with mock.patch.object(cli, 'run_one', side_effect=AssertionError('must not run')):
            rc, _, err = call(['run', '--config', 'debug'])
        self.assertEqual(rc, 2)
        self.assertIn('--config debug needs a kernel built from source', err)

    def test_bad_test_args_are_exit_2_before_anything(self):
        for args in (['--test-args', '-p -5'], ['--test-args', '-p 999999999'],
                     ['--test-args=-h'], ['--test-args', '-x'], ['--test-args', '0']):
            with self.subTest(args=args), \
                    mock.patch.object(cli, '_results_dir') as rd, \
                    mock.patch.object(cli, 'run_one', side_effect=AssertionError('must not run')):
                rc, _, err = call(['run', *args])
                self.assertEqual(rc, 2, err)
                self.assertIn('bad --test-args', err)
                rd.assert_not_called()

    def test_test_args_starting_with_a_dash_reach_the_test(self):
        with mock.patch.object(cli, 'run_one', return_value=real_outcome()) as ro, \
                mock.patch.object(cli, '_results_dir', return_value=Path('/nonexistent')):
            call(['run', '--test-args', '-B'])
            call(['run', '--test-args=-p 8 -B', '--vcpus', '1'])
        self.assertEqual([c.args[1].test_args for c in ro.call_args_list], ['-B', '-p 8 -B'])

    def test_image_that_is_not_a_kernel_is_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'notakernel').write_text('hello\n' * 200)
            with mock.patch.object(cli, 'run_one', side_effect=AssertionError('must not run')):
                rc, _, err = call(['run', '--kernel', f'image:{tmp}/notakernel:{tmp}'])
        self.assertEqual(rc, 2)
        self.assertIn('is not an x86 kernel image', err)

    def test_interrupt_is_130_with_an_interrupted_summary(self):
        rc, _, err, s = self.run_failing(KeyboardInterrupt)
        self.assertEqual(rc, 130)
        self.assertIn('interrupted', err)
        self.assertEqual((s['outcome'], s['exit_code']), ('interrupted', 130))

    def test_sigterm_is_143(self):
        from gupnm.host import Interrupted
        rc, _, _, s = self.run_failing(Interrupted(15))
        self.assertEqual((rc, s['outcome'], s['exit_code']), (143, 'interrupted', 143))

    def test_json_prints_the_summary_on_stdout(self):
        with tempfile.TemporaryDirectory() as tmp:
            with mock.patch.object(cli, 'run_one', return_value=real_outcome(Path(tmp))):
                rc, out, err = call(['run', '--results', tmp, '--json'])
        self.assertEqual(rc, 1)
        got, want = json.loads(out), real_outcome().summary
        # A debian: kernel without --expect: Debian's expectations, for
        # information only (the exit code stays the test's 1).
        self.assertEqual((got.pop('as_expected'), got['expected']['gating']), (True, False))
        for key in ('expected', 'files'):         # files: the reports written again
            got.pop(key), want.pop(key, None)
        want.pop('as_expected')
        self.assertEqual(got, want)
        self.assertIn('verdict: ', err)
        self.assertIn('expect:  as expected (runner/expectations/debian.txt); informational', err)

    def test_expect_gates_the_exit_code(self):
        default = str(REPO / 'runner' / 'expectations' / 'debian.txt')
        with tempfile.TemporaryDirectory() as tmp:
            with mock.patch.object(cli, 'run_one', return_value=real_outcome(Path(tmp))):
                rc, out, _ = call(['run', '--results', tmp, '--expect', default])
            s = json.loads((Path(tmp) / 'summary.json').read_text())
            junit_xml = (Path(tmp) / 'junit.xml').read_text()
        self.assertEqual((rc, s['exit_code'], s['as_expected']), (0, 0, True))
        self.assertIn('known failure: verdict_shadow_read (expected: fail', out)
        self.assertIn('<skipped>known failure (expected: fail', junit_xml)
        self.assertIn('exit:    0', out)
        with tempfile.TemporaryDirectory() as tmp:
            fixed = Path(tmp) / 'fixed.txt'
            fixed.write_text('6.12 verdict_driver_* pass\n')
            with mock.patch.object(cli, 'run_one', return_value=real_outcome(Path(tmp))):
                rc, out, _ = call(['run', '--results', f'{tmp}/r', '--expect', str(fixed)])
        self.assertEqual(rc, 1)
        self.assertIn(f'NEW FAILURE: verdict_shadow_read (expected: pass, {fixed}:1', out)

    def test_expect_refuses_a_bad_file_and_the_probe(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / 'bad.txt'
            bad.write_text('6.12 verdict_driver_read fial\n')
            with mock.patch.object(cli, 'run_one', side_effect=AssertionError('must not run')):
                rc, _, err = call(['run', '--expect', str(bad)])
                self.assertEqual(rc, ('exit', 2))      # argparse's: nothing runs
                self.assertIn(f"{bad}:1: expectation 'fial'", err)
                bad.write_text('* * pass\n')
                rc, _, err = call(['run', '--method', 'probe', '--expect', str(bad)])
        self.assertEqual(rc, 2)
        self.assertIn('the probe (--method probe) has none', err)

    def test_run_one_prepares_once_and_runs(self):
        """One prepare step (plan.make) asked for everything, its Payload
        handed to vmrun.run() as it came."""
        args = argparse.Namespace(
            config='default', accel='tcg', vcpus=2, memory=1024, append='', timeout=300,
            test_args='-B', retries=2, stress='-p 8')
        pay = mock.Mock()
        with mock.patch.object(cli, 'ensure_tools') as et, \
                mock.patch.object(cli, 'missing_tools', return_value=['bc']) as mt, \
                mock.patch.object(cli, 'run_meta', return_value={}), \
                mock.patch.object(cli.plan, 'make', return_value=pay) as pm, \
                mock.patch.object(cli.vmrun, 'run', return_value='outcome') as vr:
            self.assertEqual(cli.run_one('source:debian-6.12:nofix', args, Path('/o')),
                             'outcome')
        mt.assert_called_once_with(source_build=True)
        et.assert_called_once_with(source_build=True, later=cli.BOOT_PACKAGES)
        pm.assert_called_once_with(cli.plan.Asked(
            'source:debian-6.12:nofix', config='default', arch='amd64', test_args='-B',
            stress='-p 8', command=None, selftests=None))
        self.assertIs(vr.call_args.args[0], pay)
        self.assertEqual(vr.call_args.args[1], cli.vmrun.VmOptions(
            accel='tcg', vcpus=2, memory_mb=1024, append='', timeout=300, retries=2))
        self.assertEqual(vr.call_args.args[2], Path('/o'))
        self.assertIn('prepare', vr.call_args.kwargs['durations'])


class CompareCommandTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-cli-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        p = mock.patch.object(cli, 'progress')
        p.start()
        self.addCleanup(p.stop)

    def outcomes(self):
        a = real_outcome(self.tmp / 'a')
        b = real_outcome(self.tmp / 'b', exit_code=0)
        b.summary = copy.deepcopy(b.summary)
        for row in b.summary['bench']:
            if row['backing'] == 'shadow':
                row['median'] = 300.0
        return [a, b]

    def test_compare_without_gnuplot(self):
        with mock.patch.object(cli, 'run_one', side_effect=self.outcomes()) as ro, \
                mock.patch.object(cli, 'ensure_tools', side_effect=RunnerError('missing tools')):
            rc, out, _ = call(['compare', '--results', str(self.tmp)])
        self.assertEqual(rc, 0)
        self.assertEqual([c.args[0] for c in ro.call_args_list],
                         ['source:debian-6.12:nofix', 'source:debian-6.12:all'])
        self.assertEqual([c.args[2] for c in ro.call_args_list], [self.tmp / 'a', self.tmp / 'b'])
        self.assertIn('plot:    skipped (gnuplot missing)', out)
        rows = json.loads((self.tmp / 'compare.json').read_text())['bench']
        self.assertEqual([(r['threads'], r['a_shadow'], r['b_shadow']) for r in rows],
                         [(1, 730.4, 300.0), (2, 745.8, 300.0)])
        text = (self.tmp / 'compare.txt').read_text()
        self.assertTrue(text.startswith('A = source:debian-6.12:nofix (6.12.117+deb12-amd64)\n'
                                        'B = source:debian-6.12:all (6.12.117+deb12-amd64)\n'))
        self.assertIn(text, out)

    def test_compare_plots(self):
        with mock.patch.object(cli, 'run_one', side_effect=self.outcomes()), \
                mock.patch.object(cli, 'check_input'), \
                mock.patch.object(cli, 'ensure_tools'), \
                mock.patch.object(cli.subprocess, 'run') as sp:
            rc, out, _ = call(['compare', '--results', str(self.tmp), '--a', 'debian:6.12',
                               '--b', 'image:/k"q:/d'])
        self.assertEqual(rc, 0)
        sp.assert_called_once_with(['gnuplot', str(self.tmp / 'compare.gp')], check=True)
        self.assertIn(f'plot:    {self.tmp / "compare.png"}', out)
        script = (self.tmp / 'compare.gp').read_text()
        self.assertIn('title "B shadow: image:/k\'q:/d"', script)   # quote cannot end the string
        self.assertEqual((self.tmp / 'compare.dat').read_text().splitlines(),
                         ['# threads a_shadow a_anon b_shadow b_anon',
                          '1 730.4 319.6 300.0 319.6', '2 745.8 304.3 300.0 304.3'])

    def test_repeat_interleaves_and_reports_ratio_spread(self):
        outs = []
        for i in range(3):
            outs.extend(self.outcomes())
            outs[-2].outdir = outs[-1].outdir = self.tmp / str(i)
        with mock.patch.object(cli, 'run_one', side_effect=outs) as ro, \
                mock.patch.object(cli, 'check_input'), \
                mock.patch.object(cli, 'plot', return_value=None):
            rc, out, _ = call(['compare', '--results', str(self.tmp), '--repeat', '3'])
        self.assertEqual(rc, 0)
        self.assertEqual([(c.args[0], c.args[2].relative_to(self.tmp).as_posix())
                          for c in ro.call_args_list],
                         [('source:debian-6.12:nofix', 'a/run-1'), ('source:debian-6.12:all', 'b/run-1'),
                          ('source:debian-6.12:nofix', 'a/run-2'), ('source:debian-6.12:all', 'b/run-2'),
                          ('source:debian-6.12:nofix', 'a/run-3'), ('source:debian-6.12:all', 'b/run-3')])
        data = json.loads((self.tmp / 'compare.json').read_text())
        self.assertEqual(data['repeat'], 3)
        spread = {(r['kernel'], r['figure']): r for r in data['stability']}
        self.assertTrue(spread[('A', 'shadow/anon@1')]['stable'])    # three equal runs
        self.assertEqual(spread[('A', 'shadow/anon@1')]['max_deviation'], 0.0)
        self.assertIn('3 runs per kernel, interleaved', out)
        self.assertIn('shadow/anon ratio of each run', out)

    def test_crosscheck_of_each_run_listed(self):
        a, b = self.outcomes()
        xc = {"command": "g", "test_command": "t", "pages": 512, "tolerance": 0.15,
              "gup_test_ns_per_page": 220.0, "anon_ns_per_page": 216.0,
              "gup_test_samples": 600, "round_ratios": [1.0, 1.02, 1.04]}
        a.summary = dict(a.summary, crosscheck=dict(xc, ratio=1.02, agree=True))
        b.summary = dict(b.summary, crosscheck=dict(xc, ratio=1.31, agree=False))
        with mock.patch.object(cli, 'run_one', side_effect=[a, b]), \
                mock.patch.object(cli, 'check_input'), \
                mock.patch.object(cli, 'plot', return_value=None):
            rc, out, _ = call(['compare', '--results', str(self.tmp)])
        self.assertEqual(rc, 0)
        self.assertIn('A gup_test/anon: 1.02; agree in 1 of 1 runs', out)
        self.assertIn('B gup_test/anon: 1.31; agree in 0 of 1 runs', out)
        rows = json.loads((self.tmp / 'compare.json').read_text())['crosscheck']
        self.assertEqual([(r['kernel'], r['agree'], r['runs']) for r in rows],
                         [('A', 1, 1), ('B', 0, 1)])

    def test_command_without_figures_is_an_error(self):
        a, b = self.outcomes()
        for o in (a, b):
            o.exit_code = 0
            o.summary = dict(o.summary, figures=[])
        with mock.patch.object(cli, 'run_one', side_effect=[a, b]), \
                mock.patch.object(cli, 'check_input'):
            rc, _, err = call(['compare', '--results', str(self.tmp), '--command', 'gup_test -a'])
        self.assertEqual(rc, 3)
        self.assertIn('printed no figure the runner knows', err)

    def test_compare_needs_a_bench(self):
        a, b = self.outcomes()
        b.summary['bench'] = []
        with mock.patch.object(cli, 'run_one', side_effect=[a, b]):
            rc, _, err = call(['compare', '--results', str(self.tmp)])
        self.assertEqual(rc, vmrun.EXIT_INFRA)
        self.assertIn('produced no benchmark table', err)


if __name__ == '__main__':
    unittest.main()


class EarlyErrorTest(unittest.TestCase):
    """Errors before anything runs: exit 2, one line naming the culprit,
    and with --json a JSON object on stdout (issue 21)."""

    def setUp(self):
        for name in ('run_one', 'ensure_tools'):
            p = mock.patch.object(cli, name, side_effect=AssertionError('must not run'))
            p.start()
            self.addCleanup(p.stop)
        self.cwd = Path(tempfile.mkdtemp(prefix='gupnm-test-cwd-'))
        self.addCleanup(shutil.rmtree, self.cwd, True)

    def test_empty_results_is_2_and_writes_nothing(self):
        for value in ('', ' '):
            with self.subTest(results=value):
                rc, out, err = call(['run', '--results', value])
                self.assertEqual(rc, ('exit', 2))
                self.assertIn('argument --results: an empty path', err)
        self.assertEqual(list(self.cwd.iterdir()), [])

    def test_empty_results_with_json(self):
        rc, out, err = call(['run', '--json', '--results', ''])
        self.assertEqual(rc, ('exit', 2))
        obj = json.loads(out)
        self.assertEqual((obj['exit_code'], obj['outcome']), (2, 'error'))
        self.assertIn('an empty path', obj['error'])

    def test_argparse_errors_with_json(self):
        rc, out, _ = call(['run', '--json', '--vcpus', '0'])
        self.assertEqual(rc, ('exit', 2))
        self.assertIn("'0' must be positive", json.loads(out)['error'])

    def test_spec_with_a_newline_is_one_line(self):
        for argv in (['--kernel', 'debian:6.12\nrm -rf /'], ['--append', 'a\nb'],
                     ['--test-args', '-p\n512']):
            with self.subTest(argv=argv):
                rc, out, err = call(['run', *argv, '--json'])
                self.assertEqual(rc, 2)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn('holds a control character', err)
                self.assertIn('\\n', err)          # shown escaped
                self.assertEqual(json.loads(out)['exit_code'], 2)

    def test_long_spec_is_not_blamed_on_the_results_folder(self):
        spec = 'debian:' + 'x' * 400
        with mock.patch.object(cli, 'REPO', self.cwd):
            args = argparse.Namespace(results=None)
            path = cli._results_dir(args, spec)
        self.assertLessEqual(len(path.name), 100)
        self.assertTrue(path.is_dir())

    def test_json_on_runner_error_before_results(self):
        with mock.patch.object(cli, 'check_input', side_effect=UsageError('bad spec x')):
            rc, out, err = call(['run', '--json', '--kernel', 'debian:nope'])
        self.assertEqual(rc, 2)
        self.assertEqual(json.loads(out)['error'], 'bad spec x')

    def test_results_that_is_a_file_or_a_device(self):
        for path in ('/dev/null', __file__):
            rc, _, err = call(['run', '--results', path])
            self.assertEqual(rc, 2)
            self.assertIn(f'--results {path} is not a directory', err)

    def test_image_that_is_a_device(self):
        rc, _, err = call(['run', '--kernel', 'image:/dev/null:/tmp'])
        self.assertEqual(rc, 2)
        self.assertIn('kernel image /dev/null is not a file', err)

    def test_shown(self):
        self.assertEqual(cli.shown('a\nb'), "'a\\nb'")
        self.assertEqual(cli.shown('ab'), "'ab'")
        long = cli.shown('y' * 500)
        self.assertIn('(500 characters)', long)
        self.assertLess(len(long), 130)


class CommandServerTest(unittest.TestCase):
    """run --command gup_test: who serves /sys/kernel/debug/gup_test (issue 33)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def run_one(self, config_text, spec='source:debian-6.12'):
        from gupnm.prepare.kernels import Prepared
        config = self.tmp / '.config'
        config.write_text('CONFIG_MODULES=y\nCONFIG_DEBUG_FS=y\nCONFIG_HUGETLBFS=y\n'
                          + config_text)
        ko = self.tmp / 'gup_test.ko'
        prep = Prepared(spec, '6.12.118', self.tmp / 'vmlinuz', ko, self.tmp / 't', None,
                        config=config)
        args = cli._build_parser().parse_args(
            ['run', '--kernel', spec, '--memory', '1536',
             '--command', 'gup_test -HL -m 512 -n 512 -r 5'])
        with mock.patch.object(cli, 'missing_tools', return_value=[]), \
                mock.patch.object(cli.kernels, 'prepare', return_value=prep) as prepared, \
                mock.patch.object(cli.plan, 'selftests_mm', return_value=self.tmp), \
                mock.patch.object(cli.command, 'binary', return_value=self.tmp / 'gup_test'), \
                mock.patch.object(cli.vmrun, 'run', return_value='ran') as ran:
            self.assertEqual(cli.run_one(spec, args, self.tmp / 'out'), 'ran')
        self.assertEqual(prepared.call_args.kwargs['variant'], 'selftests')
        return ran.call_args.args[0], ko

    def test_the_runners_module_when_the_selftests_config_leaves_it_off(self):
        pay, ko = self.run_one('# CONFIG_GUP_TEST is not set\n')
        self.assertEqual((pay.gup_test['kind'], pay.module),
                         ("the runner's module (out of tree)", ko))
        self.assertTrue(pay.gup_test_required)
        self.assertIn('hugepages=256', pay.append)
        self.assertEqual((pay.command, pay.files, pay.program, pay.bench_command),
                         ('./gup_test -HL -m 512 -n 512 -r 5',
                          {'gup_test': self.tmp / 'gup_test'}, True, None))

    def test_built_in_loads_nothing(self):
        pay, _ = self.run_one('CONFIG_GUP_TEST=y\n')
        self.assertEqual((pay.gup_test['kind'], pay.module), ('built in', None))

    def test_neither_is_exit_2_before_a_boot(self):
        with self.assertRaisesRegex(UsageError, "not the kernel's own gup_test.*"
                                    "not the runner's module"):
            self.run_one('# CONFIG_GUP_TEST is not set\n# CONFIG_DEBUG_FS is not set\n')
