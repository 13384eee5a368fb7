"""Unit tests for gupnm.guest.vmrun (one VM run) and initramfs._quote (the guest's env file).

QEMU never runs: qemu.boot is replaced by a fake that writes the console and
status logs of a real boot (runner/tests/data/real) or synthetic ones.
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm import phases  # noqa: E402
from gupnm.guest import initramfs, qemu, vmrun  # noqa: E402
from gupnm.parse import tap  # noqa: E402
from gupnm.prepare import plan  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402
from gupnm.prepare.kernels import Prepared  # noqa: E402
from gupnm.prepare.payload import CrossCheck, Payload  # noqa: E402
from gupnm.parse.status import parse_status  # noqa: E402
from gupnm.guest.vmrun import VmOptions, choose_accel, unnest_run_vmtests  # noqa: E402
from parse.test_tap import recorded_today  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / 'data'
REAL = DATA / 'real'


def raw(path: Path) -> str:
    """A fixture as the runner sees it (bytes, CRLF kept)."""
    return path.read_bytes().decode(errors='replace')


def as_recorded(cases: list) -> list:
    """Summary cases as the recorded real summaries have them: they were
    written before each case kept its diagnostic lines."""
    return [{k: v for k, v in c.items() if k != 'diagnostics'} for c in cases]


def real_inner_tap() -> str:
    """The test's own output from the real Debian 6.12 boot."""
    return parse_status(raw(REAL / 'debian-6.12.status.log')).tap


def run_test_block(inner: str, *, number: int = 1, title: str = 'running ./gup_null_mapping',
                   ret: int = 1, bare_hash_for_empty: bool = False,
                   sep: str | None = None) -> list[str]:
    """Lines upstream run_vmtests.sh's run_test() prints for one test (TAP mode).

    A separator as long as the title ('tr [:graph:][:space:] -'), the title,
    the separator, the test's output through `sed s/^/# /`, then
    [PASS]/[SKIP]/[FAIL] prefixed and the ok/not ok line unprefixed.
    """
    name = title.split()[1].removeprefix('./')
    sep = '-' * len(title) if sep is None else sep
    out = [f'# {sep}', f'# {title}', f'# {sep}']
    for line in inner.splitlines():
        out.append(('#' if bare_hash_for_empty else '# ') if line == '' else '# ' + line)
    if ret == 0:
        out += ['# [PASS]', f'ok {number} {name}']
    elif ret == 4:
        out += ['# [SKIP]', f'ok {number} {name} # SKIP']
    else:
        out += ['# [FAIL]', f'not ok {number} {name} # exit={ret}']
    return out


def run_vmtests_output(inner: str, *, ret: int = 1, before: list[str] = (), **kw) -> str:
    """The whole output of run_vmtests.sh -t gup_fast, with TAP_PREFIX '# '."""
    out = ['TAP version 13', *before, *run_test_block(inner, ret=ret, **kw)]
    summary = {0: 'PASS=1 SKIP=0 FAIL=0', 4: 'PASS=0 SKIP=1 FAIL=0'}.get(ret, 'PASS=0 SKIP=0 FAIL=1')
    out += [f'# SUMMARY: {summary}', '1..1']
    return '\n'.join(out) + '\n'


class UnnestRunVmtestsTest(unittest.TestCase):

    def setUp(self):
        self.inner = real_inner_tap()

    def test_real_inner_tap_comes_back_exactly(self):
        self.assertEqual(unnest_run_vmtests(run_vmtests_output(self.inner)), self.inner)

    def test_outer_tap_is_what_run_vmtests_says(self):
        outer = tap.parse_tap(run_vmtests_output(self.inner).splitlines())
        self.assertEqual(outer.errors, [])
        self.assertEqual([(r.name, r.status, r.directive_reason) for r in outer.results],
                         [('gup_null_mapping', 'fail', 'exit=1')])
        self.assertEqual(tap.summarize(outer), 'FAIL: gup_null_mapping')
        self.assertEqual(outer.verdicts, {})        # nested verdicts are not the outer's

    def test_empty_lines_both_spellings(self):
        inner = 'TAP version 13\n1..1\n\n# between\n\nok 1 a\n'
        for bare in (False, True):
            with self.subTest(bare_hash=bare):
                text = run_vmtests_output(inner, ret=0, bare_hash_for_empty=bare)
                self.assertEqual(unnest_run_vmtests(text), inner)

    def test_nested_diagnostics_and_bare_hash(self):
        # The test's own '#' and '# x' lines are one level deeper in the outer output.
        inner = 'TAP version 13\n#\n# x\n##\n1..0 # SKIP no module\n'
        text = run_vmtests_output(inner, ret=4)
        self.assertIn('# #\n# # x\n# ##\n', text)
        self.assertEqual(unnest_run_vmtests(text), inner)

    def test_pass_and_skip_endings(self):
        for ret in (0, 4, 1, 139):
            with self.subTest(ret=ret):
                self.assertEqual(unnest_run_vmtests(run_vmtests_output(self.inner, ret=ret)),
                                 self.inner)

    def test_title_with_arguments(self):
        text = run_vmtests_output(self.inner, title='running ./gup_null_mapping -p 512 -r 5')
        self.assertEqual(unnest_run_vmtests(text), self.inner)

    def test_noise_before_the_test_ignored(self):
        noise = ['cat: can\'t open \'/proc/sys/kernel/shmmax\': No such file or directory',
                 './run_vmtests.sh: line 260: /proc/sys/kernel/shmmax: No such file or directory']
        text = run_vmtests_output(self.inner, before=noise)
        self.assertEqual(unnest_run_vmtests(text), self.inner)

    def test_only_the_named_test(self):
        other_inner = 'TAP version 13\n1..1\nok 1 other_case\n'
        # Two run_test blocks in one output (run_vmtests.sh -t gup_test -t gup_fast):
        # only gup_null_mapping's comes back.
        lines = ['TAP version 13',
                 *run_test_block(other_inner, title='running ./gup_longterm', ret=0),
                 *run_test_block(self.inner, number=2),
                 '# SUMMARY: PASS=1 SKIP=0 FAIL=1', '1..2']
        text = '\n'.join(lines) + '\n'
        self.assertEqual(tap.summarize(tap.parse_tap(text)), 'FAIL: gup_null_mapping')
        self.assertEqual(unnest_run_vmtests(text), self.inner)
        self.assertEqual(unnest_run_vmtests(text, test='gup_longterm'),
                         'TAP version 13\n1..1\nok 1 other_case\n')

    def test_similar_name_not_taken(self):
        text = run_vmtests_output('ok 1 x\n', title='running ./gup_null_mapping_v2')
        self.assertEqual(unnest_run_vmtests(text), '')

    def test_no_test_block(self):
        self.assertEqual(unnest_run_vmtests(''), '')
        self.assertEqual(unnest_run_vmtests('TAP version 13\n# SUMMARY: PASS=0 SKIP=0 FAIL=0\n1..0\n'),
                         '')
        # Plain output of the test (no run_vmtests.sh) is not unnested.
        self.assertEqual(unnest_run_vmtests(self.inner), '')

    def test_cut_short(self):
        # The guest died in the middle: everything that arrived comes back.
        text = run_vmtests_output(self.inner)
        cut = text[:text.index('# ok 20 ')]
        got = unnest_run_vmtests(cut)
        self.assertTrue(self.inner.startswith(got))
        self.assertTrue(got.endswith('ok 19 abi_verdict_bad_verdicts_ptr\n'))

    def test_real_busybox_run_vmtests_tap_parses(self):
        # A real run_vmtests.sh run in the busybox guest (source:debian-6.12:nofix).
        inner = unnest_run_vmtests(raw(REAL / 'source-6.12-nofix.run_vmtests.txt'))
        parsed = tap.parse_tap(inner.splitlines())
        self.assertEqual(parsed.errors, [])
        self.assertEqual(len(parsed.results), 46)
        self.assertTrue(tap.bug_present(parsed))
        self.assertIn('TAP version 13\n', inner)
        self.assertTrue(inner.endswith('# Totals: pass:44 fail:2 xfail:0 xpass:0 skip:0 error:0\n'))

    # Regression test (fixed bug): vmrun.py unnest_run_vmtests drops separators only when they match
    # r"^# -+$". In the guest, run_vmtests.sh's `tr "[:graph:][:space:]" -` is
    # busybox tr, which does not know [:graph:], so the real separator is
    # "# -unnin--./-u-_null_m---in-" and the line after "# running" is kept:
    # tap.txt starts with "-unnin--./-u-_null_m---in-" instead of "TAP version 13".
    def test_real_busybox_separator_dropped(self):
        text = raw(REAL / 'source-6.12-nofix.run_vmtests.txt')
        self.assertIn('# -unnin--./-u-_null_m---in-\n# running ./gup_null_mapping\n', text)
        inner = unnest_run_vmtests(text)
        self.assertTrue(inner.startswith('TAP version 13\n'), inner.splitlines()[0])

    # Regression test (fixed bug): same as above, with a synthetic busybox-tr separator.
    def test_busybox_separator_synthetic(self):
        text = run_vmtests_output(self.inner, sep='-unnin--./-u-_null_m---in-')
        self.assertEqual(unnest_run_vmtests(text), self.inner)


def _prep(**kw) -> Prepared:
    args = dict(spec='debian:6.12', release='6.12.117+deb12-amd64', image=Path('/k/vmlinuz'),
                module=Path('/m/test_gup_fast.ko'), test_binary=Path('/s/gup_null_mapping'),
                run_vmtests=None, source={'kind': 'debian'})
    args.update(kw)
    return Prepared(**args)


VM_KEYS = ('accel', 'vcpus', 'memory_mb', 'append', 'timeout', 'retries')


def _payload(prep: Prepared | None = None, *, bench: Path = Path('/b/gup_fast_bench'),
             test_args: str = '', stress: str | None = None,
             program: tuple[str, Path] | None = None, gup_test: dict | None = None,
             gup_test_module: Path | None = None, gup_test_required: bool = False,
             xcheck: CrossCheck | None = None, kmemleak: bool = False) -> Payload:
    """The Payload plan.make() gives for @prep and these options, from
    plan's own pieces (nothing built: @bench stands for the benchmark)."""
    prep = prep or _prep()
    if program:
        command, binary = program
        pay = Payload(prep.spec, prep.release, prep.image, prep.arch, prep.source,
                      command, {binary.name: binary}, gup_test_module, gup_test,
                      program=True, gup_test_required=gup_test_required,
                      dynamic=(binary.name,))
    else:
        pay = plan.with_bench(plan.base(prep), {}, test_args, binary=bench)
    if stress is not None:
        pay.files[plan.STRESS] = Path('/b/gupnm_stress')
        pay.stress_command = f'./{plan.STRESS} {stress}'.strip()
    pay.xcheck, pay.kmemleak = xcheck, kmemleak
    return pay


def run_args(prep: Prepared | None = None, **opts) -> tuple[Payload, VmOptions]:
    """vmrun.run()'s Payload and VmOptions from the options as one set."""
    vm = {k: opts.pop(k) for k in VM_KEYS if k in opts}
    return _payload(prep, **opts), VmOptions(**vm)


class ChooseAccelTest(unittest.TestCase):

    def test_requested(self):
        with mock.patch.object(qemu, 'probe_accel') as probe:
            for accel in ('kvm', 'tcg'):
                self.assertEqual(choose_accel(VmOptions(accel=accel), _payload(), Path('/w')),
                                 (accel, 'requested'))
        probe.assert_not_called()

    def test_unknown(self):
        with mock.patch.object(qemu, 'probe_accel') as probe, \
                self.assertRaisesRegex(RunnerError, '--accel hvf: use auto, kvm or tcg'):
            choose_accel(VmOptions(accel='hvf'), _payload(), Path('/w'))
        probe.assert_not_called()

    def test_auto_probes_with_the_probe_initramfs(self):
        with mock.patch.object(initramfs, 'build_probe', return_value=Path('/w/probe.cpio')) as bp, \
                mock.patch.object(qemu, 'probe_accel', return_value=('tcg', 'no /dev/kvm')) as probe:
            self.assertEqual(choose_accel(VmOptions(), _payload(), Path('/w')), ('tcg', 'no /dev/kvm'))
        bp.assert_called_once_with(Path('/w'))
        probe.assert_called_once_with(Path('/k/vmlinuz'), Path('/w/probe.cpio'))


class SlugTest(unittest.TestCase):

    def test_slug(self):
        self.assertEqual(vmrun._slug('source:debian-6.12:nofix'), 'source_debian-6.12_nofix')
        self.assertEqual(vmrun._slug('debian:6.12.117+deb12-amd64'), 'debian_6.12.117+deb12-amd64')
        self.assertEqual(vmrun._slug('image:/boot/vmlinuz x:/lib/m/'), 'image_boot_vmlinuz_x_lib_m')


MINI_TAP = ('TAP version 13\n1..2\n# verdict shadow read: 512/512 pages via GUP-fast (expected 512)\n'
            'ok 1 verdict_shadow_read\nok 2 live_pages_zero\n')
# The same in v4's words: the row "driver", the tries said.
V4_TAP = ('TAP version 13\n1..2\n'
          '# verdict driver read: 512/512 pages via GUP-fast (expected 512, 1 try)\n'
          'ok 1 verdict_driver_read\n'
          '# verdict anon read: 512/512 pages via GUP-fast (expected 512, 1 try)\n'
          'ok 2 verdict_anon_read\n')


# The benchmark program's output (bench/gup_fast_bench), after the test's.
MINI_BENCH = ('TAP version 13\n1..1\n'
              '# bench: pin_user_pages_fast(FOLL_WRITE), 512 pages/thread, 512 pages/call\n'
              '# bench       1   shadow    396.5    505.9   5074.2  20043.0 187.1% noisy\n'
              '# bench       1     anon    177.7    228.5    529.3   8998.0 253.5% noisy\n'
              '# bench ratio threads=1 shadow/anon=2.21\nok 1 bench\n')


def mini_status(*, exit_code=0, rmmod='ok', dmesg='[    0.000000] Linux version 6.12.117+deb12-amd64\n',
                tap_text=MINI_TAP, bench=MINI_BENCH, bench_exit=0) -> str:
    bench_part = ('' if bench is None else
                  f'GUPNM-BENCH-BEGIN\n{bench}GUPNM-BENCH-END\nGUPNM-BENCH-EXIT: {bench_exit}\n')
    return ('GUPNM-STATUS: booted\nGUPNM-TIME: init 1.00\nGUPNM-TIME: test 1.20\n'
            f'GUPNM-RMMOD: {rmmod}\nGUPNM-TAP-BEGIN\n{tap_text}GUPNM-TAP-END\n{bench_part}'
            f'GUPNM-DMESG-BEGIN\n{dmesg}GUPNM-DMESG-END\nGUPNM-EXIT: {exit_code}\n'
            ).replace('\n', '\r\n')


def mini_console(extra: str = '', tap_text=MINI_TAP) -> str:
    return ('[    0.000000] Linux version 6.12.117+deb12-amd64\n'
            '[    0.900000] Run /init as init process\n'
            f'GUPNM-TEST-BEGIN\n{tap_text}GUPNM-TEST-END: exit 0\n{extra}'
            '[    2.000000] reboot: Restarting system\n').replace('\n', '\r\n')


def warning_splat() -> str:
    text = (DATA / 'warning_splat.log').read_text()
    start = text.index('[    5.402117] ------------[ cut here ]')
    end = text.index('\n', text.index('---[ end trace', start)) + 1
    return text[start:end]


class VmFake:
    """Set-up of vmrun.run() with the initramfs build and QEMU faked."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-vmrun-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.outdir = self.tmp / 'out'
        self.boots = []        # (console text, status text, returncode) per boot
        self.boot_calls = []
        patches = [
            mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.tmp / 'cache')}),
            mock.patch.object(vmrun, 'progress'),
            mock.patch.object(initramfs, 'build', return_value=self.tmp / 'initramfs.cpio'),
            mock.patch.object(initramfs, 'build_probe', return_value=self.tmp / 'probe.cpio'),
            mock.patch.object(qemu, 'probe_accel', return_value=(
                'tcg', 'the CPU shows no vmx/svm flag (no nested virtualization)')),
            mock.patch.object(qemu, 'boot', side_effect=self._boot),
        ]
        self.mocks = [p.start() for p in patches]
        for p in patches:
            self.addCleanup(p.stop)
        self.build = self.mocks[2]

    def _boot(self, kernel, initrd, outdir, *, accel, vcpus, memory_mb, append, timeout,
              watch=None):
        self.boot_calls.append(dict(kernel=kernel, initrd=initrd, accel=accel, vcpus=vcpus,
                                    memory_mb=memory_mb, append=append, timeout=timeout))
        con, status, rc = self.boots.pop(0)
        outdir.mkdir(parents=True, exist_ok=True)
        (outdir / 'console.log').write_bytes(con.encode())
        (outdir / 'status.log').write_bytes(status.encode())
        if con.startswith('HANG') and watch:
            watch()                     # a hung boot: the deadline's watch raises
        return qemu.BootResult(outdir / 'console.log', outdir / 'status.log', rc,
                               self.boot_seconds, ['qemu-system-x86_64'])

    boot_seconds = 10.401
    prepare_seconds = 7.864


class RunTest(VmFake, unittest.TestCase):
    """vmrun.run() end to end, with the initramfs build and QEMU faked."""

    def run_vm(self, prep=None, **opts):
        opts.setdefault('bench', self.tmp / 'gup_fast_bench')
        return vmrun.run(*run_args(prep, **opts), self.outdir,
                         durations={'prepare': self.prepare_seconds})

    def assert_like_real(self, got: dict, want: dict, changed: tuple = ()):
        """Every key of the real summary, as the runner wrote it then
        (@changed: keys the runner has changed on purpose since; the
        driver row, "shadow" then, is "driver" today: recorded_today)."""
        want = recorded_today(want)
        for key in sorted(want):
            if key in ('durations', 'vm', *changed):
                continue
            with self.subTest(key=key):
                self.assertEqual(as_recorded(got[key]) if key == 'cases' else got[key],
                                 want[key])
        self.assertEqual({k: v for k, v in got['vm'].items() if k != 'cmdline'},
                         {k: v for k, v in want['vm'].items() if k != 'cmdline'})
        self.assertEqual(got['vm']['cmdline'], qemu.BASE_APPEND)
        d_got = {k: v for k, v in got['durations'].items() if k not in ('initramfs', 'total')}
        d_want = {k: v for k, v in want['durations'].items() if k not in ('initramfs', 'total')}
        self.assertEqual(d_got, d_want)

    def test_real_debian_boot_reproduces_real_summary(self):
        want = json.loads((REAL / 'debian-6.12.summary.json').read_text())
        self.boot_seconds = want['durations']['boot_and_test']
        self.prepare_seconds = want['durations']['prepare']
        self.boots.append((raw(REAL / 'debian-6.12.console.log'),
                           raw(REAL / 'debian-6.12.status.log'), 0))
        out = self.run_vm(_prep(source=want['kernel']['source']))
        self.assertEqual(out.exit_code, 1)
        self.assert_like_real(out.summary, want)
        self.assertEqual(out.tap_text, real_inner_tap())
        # What was written, and what was booted.
        self.assertEqual((self.outdir / 'tap.txt').read_text(), out.tap_text)
        self.assertEqual(json.loads((self.outdir / 'summary.json').read_text()), out.summary)
        self.assertTrue((self.outdir / 'dmesg.txt').read_text().startswith(
            '[    0.000000] Linux version 6.12.117+deb12-amd64'))
        self.assertFalse((self.outdir / 'run_vmtests.txt').exists())
        self.assertEqual(self.boot_calls, [dict(
            kernel=Path('/k/vmlinuz'), initrd=self.tmp / 'initramfs.cpio', accel='tcg', vcpus=2,
            memory_mb=1024, append=qemu.BASE_APPEND, timeout=300.0)])
        contents, workdir = self.build.call_args.args
        self.assertEqual(contents, initramfs.Contents(
            '6.12.117+deb12-amd64', Path('/m/test_gup_fast.ko'),
            {'gup_null_mapping': Path('/s/gup_null_mapping'),
             'gup_fast_bench': self.tmp / 'gup_fast_bench'}, './gup_null_mapping',
            need_bash=False, kmemleak=False,
            extra_env={'GUPNM_BENCH_CMD': './gup_fast_bench'}))
        # Recorded when the benchmark was the test's: no bench section.
        self.assertEqual(out.summary['notes'],
                         ['the guest printed no output of ./gup_fast_bench'])
        # Per run, never shared between runs: a folder of the run's own in
        # the cache's tmp/ (named for its owner), gone when the run ends.
        self.assertEqual(workdir.parent, self.tmp / 'cache' / 'tmp')
        self.assertRegex(workdir.name, r'^run-\d+\.\d+-')
        self.assertFalse(workdir.exists())

    def test_real_run_vmtests_boot_reproduces_real_summary(self):
        want = json.loads((REAL / 'source-6.12-nofix.summary.json').read_text())
        self.boot_seconds = want['durations']['boot_and_test']
        self.prepare_seconds = want['durations']['prepare']
        self.boots.append((raw(REAL / 'source-6.12-nofix.console.log'),
                           raw(REAL / 'source-6.12-nofix.status.log'), 0))
        prep = _prep(spec='source:debian-6.12:nofix', release='6.12.117+',
                     run_vmtests=Path('/tree/run_vmtests.sh'), source=want['kernel']['source'])
        out = self.run_vm(prep)
        self.assertEqual(out.exit_code, 1)
        # Recorded when the test had a gup_fast category of its own; it runs
        # in the gup_test category now.
        self.assert_like_real(out.summary, want, changed=('command',))
        self.assertEqual(want['command'], 'bash ./run_vmtests.sh -t gup_fast')
        self.assertEqual(out.summary['run_vmtests'], {'outer': 'FAIL: gup_null_mapping'})
        self.assertEqual(out.summary['command'], 'bash ./run_vmtests.sh -t gup_test')
        self.assertEqual((self.outdir / 'run_vmtests.txt').read_text(),
                         raw(REAL / 'source-6.12-nofix.run_vmtests.txt'))
        payload = self.build.call_args.args[0]
        self.assertEqual(payload.files, {'gup_null_mapping': Path('/s/gup_null_mapping'),
                                         'run_vmtests.sh': Path('/tree/run_vmtests.sh'),
                                         'gup_fast_bench': self.tmp / 'gup_fast_bench'})
        self.assertTrue(payload.need_bash)

    def test_test_args_go_to_the_benchmark_after_the_test(self):
        # The selftest takes no arguments (series v2): run_vmtests.sh still
        # runs it, and bench/gup_fast_bench gets them.
        self.boots.append((mini_console(), mini_status(), 0))
        prep = _prep(spec='source:debian-6.12:all', run_vmtests=Path('/tree/run_vmtests.sh'))
        out = self.run_vm(prep, test_args='-p 32 -r 5 1 2')
        self.assertEqual(out.summary['command'], 'bash ./run_vmtests.sh -t gup_test')
        payload = self.build.call_args.args[0]
        self.assertEqual(payload.extra_env['GUPNM_BENCH_CMD'], './gup_fast_bench -p 32 -r 5 1 2')
        self.assertEqual(payload.files['gup_fast_bench'], self.tmp / 'gup_fast_bench')
        self.assertEqual(out.summary['bench_run'], {
            'command': './gup_fast_bench -p 32 -r 5 1 2', 'exit': 0, 'output': 'bench.txt'})
        self.assertEqual((self.outdir / 'bench.txt').read_text().replace('\r', ''), MINI_BENCH)

    def test_benchmark_rows_and_result_join_the_tests(self):
        self.boots.append((mini_console(), mini_status(), 0))
        out = self.run_vm(test_args='-r 10 1')
        s = out.summary
        self.assertEqual((out.exit_code, s['outcome'], s['tap_errors']), (0, 'pass', []))
        self.assertEqual([c['name'] for c in s['cases']],
                         ['verdict_shadow_read', 'live_pages_zero', 'bench'])
        self.assertEqual([(b['threads'], b['backing'], b['median']) for b in s['bench']],
                         [(1, 'shadow', 505.9), (1, 'anon', 228.5)])
        self.assertEqual(s['bench_ratio'][0]['shadow_anon_ratio'], 2.214)
        self.assertEqual(out.bench_text.replace('\r', ''), MINI_BENCH)

    def test_a_failed_benchmark_fails_the_run(self):
        # -t: shadow/anon above the bound; the test itself passed.
        failed = MINI_BENCH.replace('ok 1 bench', 'not ok 1 bench')
        self.boots.append((mini_console(), mini_status(bench=failed, bench_exit=1), 0))
        out = self.run_vm(test_args='-t 1.5 1')
        self.assertEqual((out.exit_code, out.summary['outcome'], out.summary['exit_status']),
                         (1, 'fail', 0))

    def test_a_skipped_benchmark_adds_no_result(self):
        skipped = 'TAP version 13\n1..0 # SKIP disabled with -B\n'
        self.boots.append((mini_console(), mini_status(bench=skipped, bench_exit=4), 0))
        out = self.run_vm(test_args='-B')
        self.assertEqual((out.exit_code, out.summary['bench'], len(out.summary['cases'])),
                         (0, [], 2))

    def test_pass(self):
        self.boots.append((mini_console(), mini_status(), 0))
        out = self.run_vm()
        self.assertEqual(out.exit_code, 0)
        s = out.summary
        self.assertEqual((s['outcome'], s['problems'], s['splats'], s['boot_attempts']),
                         ('pass', [], [], 1))
        self.assertNotIn('notes', s)
        self.assertEqual(s['guest_uptime']['init'], 1.0)
        self.assertNotIn('guest_init', s['durations'])
        self.assertEqual(out.tap_text, MINI_TAP)

    def test_the_runs_clock_every_phase_summed(self):
        """Issue 46 item 7: with the run's clock running (phases), the
        summary's durations are its phases, the guest's among them, their
        sum the total; the clock ends with the run."""
        self.boots.append((mini_console(), mini_status(), 0))
        phases.start(first='startup')
        self.addCleanup(phases.stop)
        out = self.run_vm()
        d = out.summary['durations']
        self.assertEqual(out.summary['durations_from'], 'run')
        self.assertLessEqual({'startup', 'initramfs', 'boot_and_test', 'parse', 'other'},
                             set(d))
        self.assertEqual(list(d)[-1], 'total')
        self.assertAlmostEqual(sum(v for k, v in d.items() if k != 'total'), d['total'],
                               places=6)
        self.assertFalse(phases.running())
        self.assertEqual(json.loads((self.outdir / 'summary.json').read_text()), out.summary)

    def test_options_reach_payload_and_qemu(self):
        self.boots.append((mini_console(), mini_status(), 0))
        self.run_vm(accel='kvm', vcpus=4, memory_mb=2048, append='nokaslr', timeout=60,
                    test_args='-p 512 -r 5', kmemleak=True)
        payload = self.build.call_args.args[0]
        self.assertEqual(payload.command, './gup_null_mapping')
        self.assertEqual(payload.extra_env['GUPNM_BENCH_CMD'], './gup_fast_bench -p 512 -r 5')
        self.assertTrue(payload.kmemleak)
        self.assertEqual(self.boot_calls[0]['append'], qemu.BASE_APPEND + ' nokaslr')
        self.assertEqual({k: self.boot_calls[0][k] for k in ('accel', 'vcpus', 'memory_mb', 'timeout')},
                         {'accel': 'kvm', 'vcpus': 4, 'memory_mb': 2048, 'timeout': 60})
        self.mocks[4].assert_not_called()           # kvm requested: no probe

    def test_retry_after_early_boot_death(self):
        early = (DATA / 'early_panic.log').read_text()
        self.boots += [(early, '', 0), (mini_console(), mini_status(), 0)]
        out = self.run_vm()
        self.assertEqual(out.exit_code, 0)
        self.assertEqual(len(self.boot_calls), 2)
        self.assertEqual(out.summary['boot_attempts'], 2)
        self.assertEqual(out.summary['notes'], ['1 retried boot(s) (early-boot death)'])
        self.assertEqual(out.summary['problems'], [])
        self.assertEqual((self.outdir / 'console.attempt1.log').read_text(), early)

    def test_a_boot_hung_before_user_space_is_booted_again(self):
        hung = 'HANG [    1.035453] hpet0: 3 comparators, 64-bit 100.000000 MHz counter\n'
        self.boots += [(hung, '', None), (mini_console(), mini_status(), 0)]
        with mock.patch.object(vmrun, 'BOOT_DEADLINE', 0.0):
            out = self.run_vm()
        self.assertEqual(out.exit_code, 0)
        self.assertEqual(len(self.boot_calls), 2)
        self.assertEqual((self.outdir / 'console.attempt1.log').read_text(), hung)

    def test_the_last_attempt_has_no_boot_deadline(self):
        # Without a retry left, a hung boot runs to the run's timeout and is
        # exit 3 as before: never a pass, never an endless loop.
        self.boots += [('HANG nothing more\n', '', None)]
        with mock.patch.object(vmrun, 'BOOT_DEADLINE', 0.0):
            out = self.run_vm(retries=0)
        self.assertEqual(len(self.boot_calls), 1)
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)

    OOM = ('[   10.766540] Out of memory: Killed process 155 (gup_fast_bench) '
           'total-vm:25764kB, anon-rss:1856kB\n')

    def test_out_of_memory_is_never_a_pass(self):
        self.boots.append((mini_console(self.OOM), mini_status(), 0))
        out = self.run_vm(memory_mb=72)
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertTrue(out.summary['problems'][0].startswith(
            'the guest ran out of memory (72 MiB, --memory): Out of memory: Killed '
            'process 155 (gup_fast_bench)'), out.summary['problems'])

    def test_out_of_memory_beside_a_finished_failure_is_a_note(self):
        self.boots.append((raw(REAL / 'debian-6.12.console.log') + self.OOM,
                           raw(REAL / 'debian-6.12.status.log'), 0))
        out = self.run_vm(memory_mb=72)
        self.assertEqual(out.exit_code, 1)
        self.assertIn('the guest ran out of memory (72 MiB): Out of memory: Killed '
                      'process 155 (gup_fast_bench) total-vm:25764kB, anon-rss:1856kB',
                      out.summary['notes'])

    def test_out_of_memory_in_boot_is_said_and_not_retried(self):
        self.boots.append(((DATA / 'oom_boot_panic.log').read_text(), '', 0))
        out = self.run_vm(_prep(release='6.12.118+deb13-amd64'), memory_mb=64)
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertEqual(len(self.boot_calls), 1)
        self.assertTrue(out.summary['problems'][0].startswith(
            'the guest ran out of memory (64 MiB, --memory): Out of memory and no '
            'killable processes'), out.summary['problems'])

    def test_silent_guest_with_little_memory(self):
        self.boots.append(('', '', 0))
        out = self.run_vm(memory_mb=48, retries=0)
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertIn('printed nothing with 48 MiB of memory', out.summary['problems'][0])
        self.boots.append(('', '', 0))
        shutil.rmtree(self.outdir)
        out = self.run_vm(memory_mb=1024, retries=0)
        self.assertEqual(out.summary['problems'], ['the guest never reached user space'])

    def test_results_filesystem_full_while_the_guest_ran(self):
        # The status log cut before its exit marker by a full results disk:
        # named so, 3, never "the guest died".
        status = mini_status().split('GUPNM-EXIT')[0]
        self.boots.append((mini_console(), status, 0))
        full = mock.Mock(f_bavail=0, f_files=100, f_favail=50)
        with mock.patch.object(vmrun.os, 'statvfs', return_value=full):
            out = self.run_vm()
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertTrue(out.summary['problems'][0].startswith(
            f"the guest's logs are cut: the filesystem of {self.outdir} is full"),
            out.summary['problems'])

    def test_no_retry_left(self):
        early = (DATA / 'early_panic.log').read_text()
        self.boots += [(early, '', 0)]
        out = self.run_vm(retries=0)
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertEqual(out.summary['problems'], ['the guest never reached user space'])
        self.assertEqual(out.summary['boot_attempts'], 1)
        self.assertEqual({s['kind'] for s in out.summary['splats']}, {'oops', 'panic'})

    def test_retries_exhausted(self):
        early = (DATA / 'early_panic.log').read_text()
        self.boots += [(early, '', 0)] * 3
        out = self.run_vm(retries=2)
        self.assertEqual(len(self.boot_calls), 3)
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertEqual(out.summary['notes'], ['2 retried boot(s) (early-boot death)'])

    def test_timeout_mid_test_takes_tap_from_console(self):
        con = raw(REAL / 'debian-6.12.console.log')
        con = con[:con.index('ok 20 abi_verdict_ro_verdicts')]
        status = ''.join(raw(REAL / 'debian-6.12.status.log').splitlines(True)[:5])
        self.boots.append((con, status, None))
        out = self.run_vm(timeout=42)
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertEqual(out.summary['problems'], ['timed out after 42 s',
                                                   'the guest died before the test finished'])
        self.assertEqual(out.summary['counts']['total'], 19)
        self.assertTrue(out.tap_text.lstrip().startswith('TAP version 13'))
        self.assertIsNone(out.summary['exit_status'])

    def test_died_before_test(self):
        self.boots.append(('[    0.9] Run /init as init process\n', 'GUPNM-STATUS: booted\n', 0))
        out = self.run_vm()
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertEqual(out.summary['problems'], ['the guest died before the test started'])
        self.assertEqual(out.tap_text, '')

    def test_rmmod_failed(self):
        self.boots.append((mini_console(), mini_status(rmmod='failed'), 0))
        out = self.run_vm()
        self.assertEqual(out.exit_code, vmrun.EXIT_INFRA)
        self.assertEqual(out.summary['problems'], ['rmmod gup_test failed after the test'])
        self.assertEqual(out.summary['rmmod'], 'failed')

    def test_splat_only_in_dmesg(self):
        self.boots.append((mini_console(), mini_status(dmesg=warning_splat()), 0))
        out = self.run_vm()
        self.assertEqual(out.exit_code, 1)
        self.assertEqual([s['kind'] for s in out.summary['splats']], ['warning'])
        self.assertEqual(out.summary['problems'], [])

    def test_memfree_delta(self):
        # MemFree before modprobe and after rmmod, as matrix.assertions() reads it.
        status = mini_status().replace('GUPNM-RMMOD: ok\r\n', 'GUPNM-RMMOD: ok\r\n'
                                       'GUPNM-MEMFREE: after 902480\r\n')
        status = status.replace('GUPNM-TIME: init 1.00\r\n', 'GUPNM-TIME: init 1.00\r\n'
                                'GUPNM-MEMFREE: before 903112\r\n')
        self.boots.append((mini_console(), status, 0))
        s = self.run_vm().summary
        self.assertEqual(s['memfree_kb'], {'before': 903112, 'after': 902480})
        self.assertEqual(s['memfree_delta_kb'], 632)

    def test_memfree_absent(self):
        self.boots.append((mini_console(), mini_status(), 0))
        s = self.run_vm().summary
        self.assertEqual(s['memfree_kb'], {})
        self.assertNotIn('memfree_delta_kb', s)

    def test_whole_skip_is_4(self):
        skip = 'TAP version 13\n1..0 # SKIP test_gup_fast module not available\n'
        self.boots.append((mini_console(tap_text=skip),
                           mini_status(exit_code=4, rmmod='failed', tap_text=skip), 0))
        out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['outcome']), (4, 'skip'))
        self.assertEqual(out.summary['problems'], [])    # no module: rmmod fails, as it must

    def test_module_that_did_not_load_is_3_never_a_skip(self):
        # Issue 21: a corrupt cached module ended SKIP, exit 4: green in CI.
        skip = 'TAP version 13\n1..0 # SKIP /sys/kernel/debug/test_gup_fast/shadow missing\n'
        failed = ('[    4.3] test_gup_fast: loading out-of-tree module taints kernel.\n'
                  '[    4.4] test_gup_fast: disagrees about version of symbol module_layout\n'
                  "modprobe: can't load module test_gup_fast (extra/test_gup_fast.ko): "
                  'Invalid argument\ngupnm: modprobe test_gup_fast failed\n')
        self.boots.append((failed + mini_console(tap_text=skip),
                           mini_status(exit_code=4, rmmod='failed', tap_text=skip), 0))
        out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['outcome']), (3, 'error'))
        self.assertIn('did not load (modprobe: Invalid argument; kernel: test_gup_fast: '
                      'disagrees about version of symbol module_layout)',
                      out.summary['problems'][0])
        self.assertIn('cache --clean kernels', out.summary['problems'][0])

    def test_module_blacklisted_on_purpose_stays_a_skip(self):
        skip = 'TAP version 13\n1..0 # SKIP /sys/kernel/debug/test_gup_fast/shadow missing\n'
        console = ('[    0.0] Kernel command line: rdinit=/init module_blacklist=test_gup_fast\n'
                   '[    4.4] Module test_gup_fast is blacklisted\n'
                   "modprobe: can't load module test_gup_fast (extra/test_gup_fast.ko): "
                   'Operation not permitted\ngupnm: modprobe test_gup_fast failed\n')
        self.boots.append((console + mini_console(tap_text=skip),
                           mini_status(exit_code=4, rmmod='failed', tap_text=skip), 0))
        out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['problems']), (4, []))
        self.assertIn('blacklisted on the kernel command line', out.summary['notes'][0])

    def test_pass_needs_the_driver_verdict(self):
        other = 'TAP version 13\n1..1\nok 1 something_else\n'
        self.boots.append((mini_console(tap_text=other), mini_status(tap_text=other), 0))
        out = self.run_vm()
        self.assertEqual(out.exit_code, 3)
        self.assertIn("the test's own driver verdict", out.summary['problems'][0])

    def test_which_gup_test_answered(self):
        # v4 of the series: built into a source kernel whose tree has
        # GUP_FAST_VERDICT (nothing loaded, no rmmod), else the runner's
        # module; summary.json and the report say which.
        from gupnm import cli
        from gupnm.report import schema
        ko = Path('/m/gup_test.ko')
        for module, kind, word in ((None, 'built in', 'no module loaded'),
                                   (ko, "the runner's module (out of tree)", 'gup_test.ko')):
            with self.subTest(kind=kind):
                self.outdir = self.tmp / f'out-{module is None}'
                status = mini_status(tap_text=V4_TAP)
                if module is None:          # init says nothing of rmmod then
                    status = status.replace('GUPNM-RMMOD: ok\r\n', '')
                self.boots.append((mini_console(tap_text=V4_TAP), status, 0))
                out = self.run_vm(_prep(spec='source:debian-7.3', module=module,
                                        source={'kind': 'source', 'gup_test': kind}))
                payload, _ = self.build.call_args.args
                self.assertEqual(payload.module, module)
                self.assertEqual(out.exit_code, 0, out.summary['problems'])
                self.assertEqual(out.summary['gup_test']['kind'], kind)
                self.assertEqual(out.summary['gup_test']['module'], module and str(module))
                self.assertIn(word, out.summary['gup_test']['why'])
                self.assertEqual(out.summary['rmmod'], None if module is None else 'ok')
                meta = {'started': '2026-12-01T10:21:50+00:00', 'tool_version': 'x',
                        'qemu_version': '7.2.19',
                        'host': {'name': 'vm', 'kernel': '6.18.44', 'cpus': 2, 'os': 'x'}}
                self.assertEqual(schema.errors({**out.summary, **meta}), [])
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    cli.report(out, show_tap=False)
                self.assertIn(f'\ngup_test: {kind}: ', buf.getvalue())

    def test_v4_cells_skipped_are_named_in_a_pass(self):
        tap_text = V4_TAP.replace('1..2\n', '1..3\n') + \
            'ok 3 verdict_driver_longterm_write # SKIP GUP_FAST_VERDICT: EOPNOTSUPP\n'
        self.boots.append((mini_console(tap_text=tap_text), mini_status(tap_text=tap_text), 0))
        out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['outcome']), (0, 'pass'))
        # 3 passed: the benchmark's own result is counted after the test's.
        self.assertEqual(out.summary['verdict'], (
            'driver 512/512 fast \u2192 PASS: GUP-fast takes NULL-mapping order-0 folios; '
            '3 passed, 1 skipped (not judged: verdict_driver_longterm_write: '
            'GUP_FAST_VERDICT: EOPNOTSUPP)'))

    def test_v4_every_cell_skipped_is_not_judged(self):
        # ksft_finished() exits 0 when every cell SKIPped: nothing judged,
        # the driver row neither: 3, never a skip (4) nor a pass.
        tap_text = ('TAP version 13\n1..2\n'
                    'ok 1 verdict_driver_read # SKIP GUP_FAST_VERDICT: EOPNOTSUPP\n'
                    'ok 2 verdict_anon_read # SKIP GUP_FAST_VERDICT: EOPNOTSUPP\n')
        self.boots.append((mini_console(tap_text=tap_text), mini_status(tap_text=tap_text), 0))
        out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['outcome'], out.summary['problems']),
                         (3, 'error', []))
        self.assertEqual(out.summary['verdict'], 'NOT JUDGED: every cell skipped: '
                                                 'verdict_driver_read, verdict_anon_read: '
                                                 'GUP_FAST_VERDICT: EOPNOTSUPP')

    def test_a_command_needs_no_shadow_verdict(self):
        other = 'TAP version 13\n1..1\nok 1 something_else\n'
        self.boots.append((mini_console(tap_text=other), mini_status(tap_text=other), 0))
        out = self.run_vm(program=('./gup_test -a', self.tmp / 'gup_test'))
        self.assertEqual(out.exit_code, 0, out.summary['problems'])

    def test_a_command_loads_the_module_that_serves_gup_test(self):
        # Issue 33: the module command.gup_test_server chose, or none at all.
        for module in (self.tmp / 'runners' / 'gup_test.ko', None):
            with self.subTest(module=module):
                self.boots.append((mini_console(), mini_status(), 0))
                served = {'kind': 'built in', 'module': None, 'why': 'built in'}
                out = self.run_vm(program=('./gup_test -a', self.tmp / 'gup_test'),
                                  gup_test=served, gup_test_module=module,
                                  gup_test_required=True)
                payload, _ = self.build.call_args.args
                self.assertEqual(payload.module, module)
                self.assertEqual(out.summary['gup_test'], served)
                self.outdir = self.tmp / f'out-{module is None}'

    def test_a_command_whose_gup_test_module_did_not_load_is_3(self):
        failed = ('[    4.4] gup_test: disagrees about version of symbol module_layout\n'
                  "modprobe: can't load module gup_test (extra/gup_test.ko): "
                  'Invalid argument\ngupnm: modprobe gup_test failed\n')
        self.boots.append((failed + mini_console(), mini_status(), 0))
        out = self.run_vm(program=('./gup_test -a', self.tmp / 'gup_test'),
                          gup_test_module=self.tmp / 'gup_test.ko',
                          gup_test_required=True)
        self.assertEqual(out.exit_code, 3)
        self.assertIn('gup_test did not load (modprobe: Invalid argument',
                      out.summary['problems'][0])

    def test_a_command_without_gup_test_only_notes_the_module(self):
        failed = ("modprobe: can't load module gup_test (extra/gup_test.ko): "
                  'Invalid argument\ngupnm: modprobe gup_test failed\n')
        self.boots.append((failed + mini_console(), mini_status(), 0))
        out = self.run_vm(program=('./ksm_tests -D', self.tmp / 'ksm_tests'),
                          gup_test_module=self.tmp / 'gup_test.ko')
        self.assertEqual((out.exit_code, out.summary['problems']), (0, []))
        self.assertIn('ksm_tests runs without it', ' '.join(out.summary['notes']))

    def test_logs_the_results_folder_does_not_take_keep_the_verdict(self):
        # Issue 21: a full results disk after the guest ran: the verdict was
        # lost ("not run" in summary.json, no junit.xml).
        self.boots.append((mini_console(), mini_status(), 0))
        real_write = Path.write_text

        def full(path, *a, **kw):
            if path.name in ('tap.txt', 'dmesg.txt'):
                raise OSError(28, 'No space left on device', str(path))
            return real_write(path, *a, **kw)
        with mock.patch.object(Path, 'write_text', full):
            out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['outcome']), (0, 'pass'))
        self.assertIn('did not take tap.txt (No space left on device), dmesg.txt',
                      out.summary['problems'][-1])
        self.assertFalse((self.outdir / 'tap.txt').exists())

    def test_reports_the_folder_does_not_take_keep_the_verdict(self):
        self.boots.append((mini_console(), mini_status(), 0))
        with mock.patch.object(vmrun.junit, 'write',
                               side_effect=OSError(28, 'No space left on device')):
            out = self.run_vm()
        self.assertEqual(out.exit_code, 0)
        self.assertIn('the reports could not be written', out.summary['problems'][-1])

    def test_initramfs_that_cannot_be_built_leaves_nothing(self):
        def half(payload, work):
            (work / 'root').mkdir()
            (work / 'initramfs.cpio').write_bytes(b'half')
            raise OSError(28, 'No space left on device', str(work / 'initramfs.cpio'))
        self.build.side_effect = half
        with self.assertRaises(OSError):
            self.run_vm()
        self.assertEqual(list((self.tmp / 'cache' / 'tmp').iterdir()), [])
        self.assertFalse((self.outdir / 'initramfs').exists())

    def test_cached_image_qemu_refuses_is_3_naming_the_cache(self):
        (self.tmp / 'out').mkdir()
        (self.tmp / 'out' / 'qemu.log').write_text(
            'qemu-system-x86_64: Error loading uncompressed kernel without PVH ELF Note\n')
        self.boots.append(('', '', 1))
        out = self.run_vm()
        self.assertEqual(out.exit_code, 3)
        self.assertIn('cache --clean kernels', out.summary['problems'][0])

    def test_exit_status_that_contradicts_the_tap_is_3(self):
        self.boots.append((mini_console(), mini_status(exit_code=4), 0))
        self.assertEqual(self.run_vm().exit_code, 3)

    def test_exit_0_without_tap_did_not_run(self):
        # e.g. -h: the test printed its usage and exited 0; nothing ran.
        self.boots.append((mini_console(tap_text='usage: gup_null_mapping\n'),
                           mini_status(exit_code=0, tap_text='usage: gup_null_mapping\n'), 0))
        out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['outcome']), (3, 'error'))

    def test_test_exit_1_without_tap_did_not_run(self):
        self.boots.append((mini_console(tap_text=''), mini_status(exit_code=1, tap_text=''), 0))
        self.assertEqual(self.run_vm().exit_code, 3)

    def test_bail_out_after_results_is_1(self):
        t = 'TAP version 13\n1..3\nok 1 a\nBail out! cannot open\n'
        self.boots.append((mini_console(tap_text=t), mini_status(exit_code=1, tap_text=t), 0))
        self.assertEqual(self.run_vm().exit_code, 1)

    def test_another_kernel_booted_is_3(self):
        self.boots.append((mini_console(), mini_status(), 0))
        out = self.run_vm(_prep(release='7.2.13-amd64'))
        self.assertEqual(out.exit_code, 3)
        self.assertEqual(out.summary['kernel']['booted_release'], '6.12.117+deb12-amd64')
        self.assertIn('the guest booted kernel 6.12.117+deb12-amd64, not the expected '
                      '7.2.13-amd64', out.summary['problems'][0])

    def test_qemu_error_is_2_with_its_message(self):
        def refuse(kernel, initrd, outdir, **kw):
            outdir.mkdir(parents=True, exist_ok=True)
            for name in ('console.log', 'status.log'):
                (outdir / name).write_text('')
            (outdir / 'qemu.log').write_text(
                'qemu-system-x86_64: initrd is too large: reduce it or add memory\n')
            return qemu.BootResult(outdir / 'console.log', outdir / 'status.log', 1, 0.1, [])
        self.mocks[5].side_effect = refuse
        out = self.run_vm()
        self.assertEqual(out.exit_code, 2)
        self.assertEqual(out.summary['problems'], [
            'qemu refused to start the guest: qemu-system-x86_64: initrd is too large: '
            'reduce it or add memory'])

    def test_interrupted_boot_is_130_with_a_summary(self):
        from gupnm.host import Interrupted

        def interrupted(kernel, initrd, outdir, **kw):
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / 'console.log').write_text(mini_console())
            raise Interrupted(2)
        self.mocks[5].side_effect = interrupted
        out = self.run_vm()
        self.assertEqual((out.exit_code, out.summary['outcome']), (130, 'interrupted'))
        self.assertEqual(out.summary['problems'], ['interrupted by SIGINT; qemu stopped'])
        on_disk = json.loads((self.outdir / 'summary.json').read_text())
        self.assertEqual(on_disk['outcome'], 'interrupted')
        self.assertIn('not ok 1 gup_null_mapping # ERROR interrupted',
                      (self.outdir / 'ktap.txt').read_text())

    def test_reports_are_written_and_readable_by_all(self):
        self.boots.append((mini_console(), mini_status(), 0))
        self.run_vm()
        for name in ('summary.json', 'junit.xml', 'ktap.txt'):
            with self.subTest(name=name):
                self.assertEqual((self.outdir / name).stat().st_mode & 0o777, 0o644)

    def test_live_progress_follows_the_test_lines(self):
        lines = []
        self.boots.append((mini_console(), mini_status(), 0))

        def boot(kernel, initrd, outdir, watch=None, **kw):
            res = self._boot(kernel, initrd, outdir, **kw)
            watch()
            return res
        self.mocks[5].side_effect = boot
        self.run_vm_live(lines.append)
        self.assertEqual(lines, MINI_TAP.splitlines())

    def run_vm_live(self, live):
        return vmrun.run(_payload(), VmOptions(), self.outdir, durations={}, live=live)

    # Regression test (fixed bug): cli.py accepts --retries -1 (type=int) and vmrun.run() then runs
    # `for attempt in range(1 + opts.retries)` zero times: it never boots and
    # dies with UnboundLocalError on `res` (not a RunnerError, so a traceback).
    # Expected: at least one boot (or a RunnerError/UsageError).
    def test_negative_retries_still_boots_once(self):
        self.boots.append((mini_console(), mini_status(), 0))
        try:
            out = self.run_vm(retries=-1)
        except RunnerError:
            return
        self.assertEqual(out.exit_code, 0)


class QuoteTest(unittest.TestCase):
    """initramfs._quote: values of /etc/gupnm.env, which the guest's init sources."""

    VALUES = ['', 'plain', './gup_null_mapping -p 512 -r 5 1 2', "it's", "''", '$HOME `id` $(id)',
              'back\\slash "dq" \\n', 'new\nline', '*', ';&|<>', ' lead and trail ']

    def test_forms(self):
        self.assertEqual(initramfs._quote('abc'), "'abc'")
        self.assertEqual(initramfs._quote(''), "''")
        self.assertEqual(initramfs._quote("it's"), "'it'\\''s'")

    def test_sh_round_trip(self):
        sh = shutil.which('sh')
        if not sh:
            self.skipTest('no sh')
        with tempfile.TemporaryDirectory() as tmp:
            env = Path(tmp) / 'gupnm.env'
            env.write_text(''.join(f'V{i}={initramfs._quote(v)}\n' for i, v in enumerate(self.VALUES)))
            script = '. "$1"; ' + '; '.join(f'printf "%s\\0" "$V{i}"' for i in range(len(self.VALUES)))
            out = subprocess.run([sh, '-c', script, 'sh', str(env)], capture_output=True,
                                 timeout=10, env={'PATH': os.environ.get('PATH', '/bin')})
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.decode().split('\0')[:-1], self.VALUES)


class CrossCheckTest(unittest.TestCase):
    """gup_test -a against the test's anon control."""

    def test_no_output_no_verdict(self):
        xc = CrossCheck("g", Path("/x/gup_test"), 512, "t", 5)
        got = vmrun.crosscheck(xc, "", 1)
        self.assertIsNone(got["agree"])
        self.assertEqual((got["exit"], got["round_ratios"]), (1, []))

    def test_a_round_without_figures_is_left_out(self):
        # gup_test's median of 100, 102, 300 us is 102: 199.2 ns/page.
        xc = CrossCheck("g", Path("/x/gup_test"), 512, "t", 2)
        out = (self.gup_round(0, [100, 102, 300]) + self.bench_round(1, 200.0)
               + self.gup_round(1, [100, 102, 300])
               + "GUPNM-XCHECK-ROUND: test 2\nnot ok 1 gup_null_mapping\n"
               + self.gup_round(2, [100, 102, 300]))
        got = vmrun.crosscheck(xc, out, 0)
        self.assertEqual(len(got["round_ratios"]), 1)
        self.assertAlmostEqual(got["ratio"], 102 * 1000 / 512 / 200.0)
        self.assertTrue(got["agree"])

    @staticmethod
    def gup_round(k, gets):
        return f"GUPNM-XCHECK-ROUND: gup_test {k}\nTAP version 13\n" + "".join(
            f"# PIN_FAST_BENCHMARK: Time: get:{g} put:20 us# \n" for g in gets)

    @staticmethod
    def bench_round(k, anon):
        return (f"GUPNM-XCHECK-ROUND: test {k}\nok 1 verdict_anon_read\n"
                "# bench threads  backing      min   median      p90      max     cv\n"
                f"# bench       1   shadow    900.0    950.0    990.0    999.0   3.0%\n"
                f"# bench       1     anon    {anon - 5:.1f}    {anon:.1f}    {anon + 5:.1f}"
                f"    {anon + 9:.1f}   3.0%\n")

    def test_rounds_in_turn_against_the_gup_test_runs_either_side(self):
        # The host slows down steadily (gup_test 100, 150, 200 us): each test
        # round agrees with the mean of the gup_test runs either side of it.
        xc = CrossCheck("g", Path("/x/gup_test"), 512, "t", 2)
        g = [v * 1000 / 512 for v in (100, 150, 200)]
        out = (self.gup_round(0, [99, 100, 101]) + self.bench_round(1, (g[0] + g[1]) / 2)
               + self.gup_round(1, [149, 150, 151]) + self.bench_round(2, (g[1] + g[2]) / 2)
               + self.gup_round(2, [199, 200, 201]))
        got = vmrun.crosscheck(xc, out, 0)
        self.assertEqual(len(got["round_ratios"]), 2)
        for r in got["round_ratios"] + [got["ratio"]]:
            self.assertAlmostEqual(r, 1.0, places=2)    # anon printed to 0.1 ns
        self.assertTrue(got["agree"])
        self.assertAlmostEqual(got["gup_test_ns_per_page"], g[1])
        self.assertEqual(got["gup_test_samples"], 9)
        # Twice as slow in every round: disagree.
        out = (self.gup_round(0, [100]) + self.bench_round(1, 2 * g[0])
               + self.gup_round(1, [100]))
        got = vmrun.crosscheck(xc, out, 0)
        self.assertAlmostEqual(got["ratio"], 0.5, places=3)
        self.assertFalse(got["agree"])


if __name__ == '__main__':
    unittest.main()
