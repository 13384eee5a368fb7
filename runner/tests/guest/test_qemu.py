"""Unit tests for gupnm.guest.qemu (command line, KVM plausibility, accelerator probe, boot).

qemu-system-x86_64 never runs: subprocess.Popen and boot() are mocked.
"""

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

from gupnm.guest import qemu  # noqa: E402
from gupnm.host import RunnerError  # noqa: E402

CPUINFO_VMX = ('processor\t: 0\nvendor_id\t: GenuineIntel\n'
               'flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr vmx smx est tm2 ssse3\n'
               'vmx flags\t: vnmi preemption_timer invvpid ept_x_only\n\n')
CPUINFO_SVM = ('processor\t: 0\nvendor_id\t: AuthenticAMD\n'
               'flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr svm extapic cr8_legacy\n\n')
# A TCG or non-nested guest: no vmx/svm flag (the real Debian 6.12 run's host).
CPUINFO_NONE = ('processor\t: 0\nvendor_id\t: AuthenticAMD\n'
                'flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr hypervisor lahf_lm\n\n')


def command(accel, **kw):
    args = dict(accel=accel, vcpus=2, memory_mb=1024, append=qemu.BASE_APPEND,
                console=Path('/r/console.log'), status=Path('/r/status.log'))
    args.update(kw)
    return qemu.qemu_command(Path('/k/vmlinuz'), Path('/r/initramfs.cpio'), **args)


class QemuCommandTest(unittest.TestCase):

    def test_kvm(self):
        cmd = command('kvm')
        self.assertEqual(cmd[0], 'qemu-system-x86_64')
        i = cmd.index('-accel')
        self.assertEqual(cmd[i:i + 4], ['-accel', 'kvm', '-cpu', 'host'])

    def test_tcg_has_no_kvm(self):
        cmd = command('tcg')
        i = cmd.index('-accel')
        self.assertEqual(cmd[i:i + 4], ['-accel', 'tcg', '-cpu', 'max'])
        self.assertNotIn('-enable-kvm', cmd)
        self.assertFalse([a for a in cmd if 'kvm' in a], cmd)
        self.assertNotIn('host', cmd)

    def test_one_accel_only(self):
        for accel in ('kvm', 'tcg'):
            cmd = command(accel)
            self.assertEqual(cmd.count('-accel'), 1)
            self.assertEqual(cmd.count('-cpu'), 1)

    def test_unknown_accel(self):
        for accel in ('auto', 'hvf', 'KVM', '', 'xen'):
            with self.subTest(accel=accel):
                with self.assertRaisesRegex(RunnerError, 'unknown accelerator'):
                    command(accel)

    def test_common_arguments(self):
        cmd = command('tcg', vcpus=4, memory_mb=2048, append='console=ttyS0 x=1')

        def after(flag):
            return cmd[cmd.index(flag) + 1]

        self.assertEqual(after('-smp'), '4')
        self.assertEqual(after('-m'), '2048')
        self.assertEqual(after('-machine'), 'q35')
        self.assertEqual(after('-kernel'), '/k/vmlinuz')
        self.assertEqual(after('-initrd'), '/r/initramfs.cpio')
        self.assertEqual(after('-append'), 'console=ttyS0 x=1')      # one argument
        self.assertEqual(after('-display'), 'none')
        for flag in ('-nodefaults', '-no-user-config', '-no-reboot'):
            self.assertIn(flag, cmd)
        self.assertTrue(all(isinstance(a, str) for a in cmd))

    def test_console_is_ttyS0_status_is_ttyS1(self):
        cmd = command('kvm')
        serials = [cmd[i + 1] for i, a in enumerate(cmd) if a == '-serial']
        self.assertEqual(serials, ['file:/r/console.log', 'file:/r/status.log'])

    def test_base_append(self):
        # The guest's console and the status port, and a panic ends the VM.
        for word in ('console=ttyS0', 'panic=-1', 'oops=panic', 'rdinit=/init',
                     'secretmem.enable=1'):
            self.assertIn(word, qemu.BASE_APPEND.split())
        self.assertNotIn('kvm', qemu.BASE_APPEND)


class KvmPlausibleTest(unittest.TestCase):

    def check(self, *, exists=True, access=True, cpuinfo=CPUINFO_VMX):
        with mock.patch.object(qemu.os.path, 'exists', return_value=exists) as ex, \
                mock.patch.object(qemu.os, 'access', return_value=access) as ac, \
                mock.patch.object(qemu.Path, 'read_text') as rt:
            if isinstance(cpuinfo, BaseException):
                rt.side_effect = cpuinfo
            else:
                rt.return_value = cpuinfo
            why = qemu._kvm_plausible()
        self.calls = (ex, ac, rt)
        return why

    def test_no_dev_kvm(self):
        self.assertEqual(self.check(exists=False), 'no /dev/kvm')
        ex, ac, rt = self.calls
        ex.assert_called_once_with('/dev/kvm')
        ac.assert_not_called()
        rt.assert_not_called()

    def test_not_accessible(self):
        self.assertEqual(self.check(access=False), '/dev/kvm is not accessible to this user')
        self.calls[1].assert_called_once_with('/dev/kvm', os.R_OK | os.W_OK)

    def test_cpuinfo_unreadable(self):
        self.assertEqual(self.check(cpuinfo=PermissionError('denied')), 'cannot read /proc/cpuinfo')

    def test_no_virtualization_flag(self):
        self.assertEqual(self.check(cpuinfo=CPUINFO_NONE),
                         'the CPU shows no vmx/svm flag (no nested virtualization)')
        self.assertEqual(self.check(cpuinfo=''),
                         'the CPU shows no vmx/svm flag (no nested virtualization)')

    def test_vmx_or_svm(self):
        self.assertIsNone(self.check(cpuinfo=CPUINFO_VMX))
        self.assertIsNone(self.check(cpuinfo=CPUINFO_SVM))

    def test_flag_must_be_a_word_start(self):
        # 'vmx' inside another word does not count.
        self.assertIsNotNone(self.check(cpuinfo='flags\t\t: fpu xvmx nosvm\n'))


class ProbeAccelTest(unittest.TestCase):
    """probe_accel(): KVM only after a probe boot reached user space; cached per host boot."""

    BOOT_ID = '6f1c3c4e-0000-4000-8000-123456789abc'

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-qemu-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cache = self.tmp / 'cache'
        self.status = 'GUPNM-STATUS: booted\r\n'
        self.boots = []
        real_read_text = Path.read_text
        boot_id = self.BOOT_ID

        def read_text(path, *a, **kw):
            if str(path) == '/proc/sys/kernel/random/boot_id':
                return boot_id + '\n'
            return real_read_text(path, *a, **kw)

        patches = [mock.patch.dict(os.environ, {'GUPNM_CACHE': str(self.cache)}),
                   mock.patch.object(qemu, 'progress'),
                   mock.patch.object(qemu, '_kvm_plausible', return_value=None),
                   mock.patch.object(Path, 'read_text', autospec=True, side_effect=read_text),
                   mock.patch.object(qemu, 'boot', side_effect=self._boot)]
        self.mocks = [p.start() for p in patches]
        for p in patches:
            self.addCleanup(p.stop)

    def _boot(self, kernel, initrd, outdir, **kw):
        self.boots.append(dict(kernel=kernel, initrd=initrd, **kw))
        (outdir / 'status.log').write_text(self.status)
        (outdir / 'console.log').write_text('')
        return qemu.BootResult(outdir / 'console.log', outdir / 'status.log', 0, 1.0, [])

    def probe(self):
        return qemu.probe_accel(Path('/k/vmlinuz'), Path('/w/probe.cpio'))

    def test_implausible_is_tcg_without_boot(self):
        self.mocks[2].return_value = 'no /dev/kvm'
        self.assertEqual(self.probe(), ('tcg', 'no /dev/kvm'))
        self.assertEqual(self.boots, [])
        self.assertFalse((self.cache / 'accel-probe.json').exists())

    def test_probe_boot_works(self):
        self.assertEqual(self.probe(), ('kvm', 'KVM probe boot reached user space'))
        self.assertEqual(len(self.boots), 1)
        b = self.boots[0]
        self.assertEqual((b['kernel'], b['initrd'], b['accel'], b['vcpus'], b['memory_mb']),
                         (Path('/k/vmlinuz'), Path('/w/probe.cpio'), 'kvm', 1, 256))
        self.assertLessEqual(b['timeout'], 60)
        saved = json.loads((self.cache / 'accel-probe.json').read_text())
        self.assertEqual(saved, {'boot_id': self.BOOT_ID, 'accel': 'kvm',
                                 'reason': 'KVM probe boot reached user space'})

    def test_probe_boot_fails(self):
        self.status = ''                  # KVM emulation failure: nothing on the status port
        accel, reason = self.probe()
        self.assertEqual(accel, 'tcg')
        self.assertIn('KVM probe boot failed', reason)

    def test_cached_per_host_boot(self):
        self.probe()
        self.assertEqual(self.probe(), ('kvm', 'KVM probe boot reached user space (cached probe)'))
        self.assertEqual(len(self.boots), 1)

    def test_cache_of_another_host_boot_ignored(self):
        self.cache.mkdir(parents=True)
        (self.cache / 'accel-probe.json').write_text(json.dumps(
            {'boot_id': 'another-boot', 'accel': 'tcg', 'reason': 'old'}))
        self.assertEqual(self.probe(), ('kvm', 'KVM probe boot reached user space'))
        self.assertEqual(len(self.boots), 1)

    def test_corrupt_cache_ignored(self):
        self.cache.mkdir(parents=True)
        for text in ('{not json', '{"boot_id": "6f1c', json.dumps({'boot_id': self.BOOT_ID}), ''):
            with self.subTest(text=text):
                (self.cache / 'accel-probe.json').write_text(text)
                accel, _ = self.probe()
                self.assertEqual(accel, 'kvm')

    # Regression test (fixed bug): qemu.py probe_accel ignores an unreadable cache only for OSError,
    # ValueError and KeyError; a cache file holding valid JSON that is not an
    # object ('[]', '1', 'null') raises AttributeError on saved.get() instead
    # of being ignored and re-probed.
    def test_cache_not_an_object_ignored(self):
        self.cache.mkdir(parents=True)
        (self.cache / 'accel-probe.json').write_text('[]')
        self.assertEqual(self.probe()[0], 'kvm')


class BootTest(unittest.TestCase):

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='gupnm-test-boot-'))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def boot(self, **kw):
        args = dict(accel='tcg', vcpus=2, memory_mb=1024, append=qemu.BASE_APPEND, timeout=5)
        args.update(kw)
        return qemu.boot(Path('/k/vmlinuz'), Path('/r/initramfs.cpio'), self.tmp / 'out', **args)

    def test_qemu_missing(self):
        with mock.patch.object(qemu.shutil, 'which', return_value=None), \
                mock.patch.object(qemu.subprocess, 'Popen') as popen:
            with self.assertRaisesRegex(RunnerError, 'apt-get install qemu-system-x86'):
                self.boot()
        popen.assert_not_called()

    def test_normal_exit(self):
        proc = mock.Mock()
        proc.wait.return_value = 0
        with mock.patch.object(qemu.shutil, 'which', return_value='/usr/bin/qemu-system-x86_64'), \
                mock.patch.object(qemu.subprocess, 'Popen', return_value=proc) as popen:
            res = self.boot()
        out = self.tmp / 'out'
        self.assertEqual(res.returncode, 0)
        self.assertFalse(res.timed_out)
        self.assertEqual((res.console, res.status), (out / 'console.log', out / 'status.log'))
        self.assertEqual(res.console.read_bytes(), b'')     # created empty before the boot
        self.assertEqual(res.command, command('tcg', console=out / 'console.log',
                                              status=out / 'status.log'))
        argv = popen.call_args.args[0]
        self.assertEqual(argv[-len(res.command):], res.command)
        self.assertEqual(argv[1:3], ['--pdeathsig=KILL', '--'])    # through setpriv
        self.assertEqual(popen.call_args.kwargs['stdin'], subprocess.DEVNULL)
        self.assertTrue(popen.call_args.kwargs['start_new_session'])
        proc.wait.assert_called_once_with(timeout=5)
        proc.kill.assert_not_called()

    def test_timeout_kills(self):
        proc = mock.Mock()
        proc.wait.side_effect = [subprocess.TimeoutExpired('qemu', 5), -9]
        proc.pid = 4242
        with mock.patch.object(qemu.shutil, 'which', return_value='/usr/bin/qemu-system-x86_64'), \
                mock.patch.object(qemu, 'stop') as stop, \
                mock.patch.object(qemu.subprocess, 'Popen', return_value=proc):
            res = self.boot()
        stop.assert_called_once_with(proc)          # qemu's whole group (host.stop)
        self.assertIsNone(res.returncode)
        self.assertTrue(res.timed_out)

    def test_interrupt_kills_and_propagates(self):
        proc = mock.Mock(pid=4243)
        proc.wait.side_effect = [KeyboardInterrupt, -9]
        with mock.patch.object(qemu.shutil, 'which', return_value='/usr/bin/qemu-system-x86_64'), \
                mock.patch.object(qemu, 'stop') as stop, \
                mock.patch.object(qemu.subprocess, 'Popen', return_value=proc):
            with self.assertRaises(KeyboardInterrupt):
                self.boot()
        stop.assert_called_once_with(proc)

    def test_watch_is_called_while_waiting(self):
        proc = mock.Mock(pid=1)
        proc.wait.side_effect = [subprocess.TimeoutExpired('qemu', 0.2)] * 2 + [0]
        watch = mock.Mock()
        with mock.patch.object(qemu.shutil, 'which', return_value='/usr/bin/qemu-system-x86_64'), \
                mock.patch.object(qemu.subprocess, 'Popen', return_value=proc):
            res = self.boot(watch=watch)
        self.assertEqual(res.returncode, 0)
        self.assertEqual(watch.call_count, 3)        # twice while waiting, once at the end

    def test_qemu_error_and_version(self):
        log = self.tmp / 'qemu.log'
        log.write_text('warning: something\nqemu-system-x86_64: -kernel x: not a kernel\n')
        self.assertEqual(qemu.qemu_error(log), 'qemu-system-x86_64: -kernel x: not a kernel')
        log.write_text('')
        self.assertIsNone(qemu.qemu_error(log))
        self.assertIsNone(qemu.qemu_error(self.tmp / 'missing.log'))
        with mock.patch.object(qemu.subprocess, 'run', return_value=mock.Mock(
                stdout='QEMU emulator version 7.2.19 (Debian 1:7.2+dfsg-7+deb12u18)\n')):
            self.assertEqual(qemu.version(), '7.2.19')


if __name__ == '__main__':
    unittest.main()
