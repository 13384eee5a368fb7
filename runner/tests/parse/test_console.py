"""Unit tests for gupnm.parse.console (splat detection and boot classification)."""

import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gupnm.parse import console  # noqa: E402
from gupnm.parse.console import early_boot_death, find_splats, guest_reached_test  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / 'data'
TS_RE = re.compile(r'\[\s*\d+\.\d+\]')


def fixture(name: str) -> str:
    return (DATA / name).read_text(encoding='utf-8')


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.split('\n'), 1):
        if needle in line:
            return i
    raise AssertionError(f'{needle!r} not in text')


def kmsg(lines, start=10.0, step=0.0001):
    """Render printk lines with console timestamps."""
    return '\n'.join('[%12.6f] %s' % (start + i * step, s) for i, s in enumerate(lines))


class FixtureSplatTest(unittest.TestCase):

    def test_clean_runs_have_no_splats(self):
        for name in ('pass.log', 'bug_present.log', 'whole_skip.log', 'interleaved_timestamps.log'):
            with self.subTest(name=name):
                self.assertEqual(find_splats(fixture(name)), [])

    def test_warning_fixture(self):
        text = fixture('warning_splat.log')
        # The debug kernel's benign banners are present and must not be flagged.
        for banner in ('kasan: KernelAddressSanitizer initialized', 'kfence: initialized',
                       'kmemleak: Kernel memory leak detector initialized',
                       'Lock dependency validator', 'Booting paravirtualized kernel'):
            self.assertIn(banner, text)
        splats = find_splats(text)
        self.assertEqual([(s.kind, s.line_no) for s in splats],
                         [('warning', line_of(text, 'WARNING: CPU: 1 PID: 203'))])
        lines = splats[0].excerpt.split('\n')
        self.assertEqual(len(lines), console.EXCERPT_LINES)
        self.assertEqual(lines[0], 'WARNING: CPU: 1 PID: 203 at lib/test_gup_fast.c:187 '
                                   'gup_fast_shadow_close+0x9c/0xb0 [test_gup_fast]')
        self.assertEqual(lines[1], 'Modules linked in: test_gup_fast')
        self.assertIsNone(TS_RE.search(splats[0].excerpt))

    def test_kasan_fixture(self):
        text = fixture('kasan_report.log')
        splats = find_splats(text)
        self.assertEqual([(s.kind, s.line_no) for s in splats],
                         [('kasan', line_of(text, 'BUG: KASAN: slab-use-after-free'))])
        excerpt = splats[0].excerpt
        self.assertTrue(excerpt.startswith('BUG: KASAN: slab-use-after-free in '
                                           'gup_fast_shadow_close+0x2e/0xb0 [test_gup_fast]\n'
                                           'Read of size 8 at addr ffff888005e2b850 by task '
                                           'gup_null_mappin/203\n\nCPU: 0 UID: 0 PID: 203'))
        self.assertNotIn('Disabling lock debugging', excerpt)
        self.assertNotIn('ok 3', excerpt)
        self.assertIsNone(TS_RE.search(excerpt))

    def test_early_panic_fixture(self):
        text = fixture('early_panic.log')
        splats = find_splats(text)
        self.assertEqual([(s.kind, s.line_no) for s in splats],
                         [('oops', line_of(text, 'Oops: int3')),
                          ('panic', line_of(text, 'Kernel panic - not syncing'))])
        self.assertIn('RIP: 0010:sched_clock_cpu+0xd/0x1b0', splats[0].excerpt)
        self.assertEqual(splats[1].excerpt.split('\n'), [
            'Kernel panic - not syncing: Fatal exception in interrupt',
            'Kernel Offset: 0x1c000000 from 0xffffffff81000000 '
            '(relocation range: 0xffffffff80000000-0xffffffffbfffffff)'])


class KindTest(unittest.TestCase):
    CASES = [
        ('panic', 'Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)'),
        ('oops', 'Oops: general protection fault, probably for non-canonical address '
                 '0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN NOPTI'),
        ('oops', 'general protection fault, probably for non-canonical address 0x6b6b6b6b6b6b6b6b: 0000 [#1] SMP'),
        ('oops', 'BUG: unable to handle page fault for address: ffffffffc0201000'),
        ('oops', 'BUG: kernel NULL pointer dereference, address: 0000000000000008'),
        ('oops', 'int3: 0000 [#1] SMP NOPTI'),
        ('bug', 'kernel BUG at mm/slub.c:553!'),
        ('bug', 'BUG: Bad page state in process gup_null_mappin  pfn:05e2b'),
        ('bug', 'BUG kmalloc-64 (Tainted: G    B            ): Object already free'),
        ('warning', 'WARNING: CPU: 0 PID: 1 at mm/gup.c:2770 gup_fast_folio_allowed+0x9e/0xb0'),
        ('warning', 'WARNING: at kernel/sched/core.c:1234 foo+0x1/0x2()'),
        ('kasan', 'BUG: KASAN: slab-out-of-bounds in foo+0x12/0x40'),
        ('kfence', 'BUG: KFENCE: use-after-free read in gup_fast_shadow_close+0x2e/0xb0'),
        ('lockdep', 'WARNING: possible circular locking dependency detected'),
        ('lockdep', 'WARNING: possible recursive locking detected'),
        ('lockdep', 'WARNING: inconsistent lock state'),
        ('lockdep', 'BUG: sleeping function called from invalid context at mm/gup.c:1234'),
        ('kmemleak', 'unreferenced object 0xffff888005e2b840 (size 64):'),
        ('kmemleak', 'kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'),
        ('ubsan', 'UBSAN: array-index-out-of-bounds in lib/test_gup_fast.c:120:9'),
        ('hung', 'INFO: task gup_null_mappin:203 blocked for more than 120 seconds.'),
        ('rcu', 'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'),
        ('rcu', 'rcu: INFO: rcu_sched self-detected stall on CPU'),
        ('softlockup', 'watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [gup_null_mappin:203]'),
    ]

    def test_each_kind(self):
        for kind, header in self.CASES:
            with self.subTest(header=header):
                splats = find_splats(kmsg(['random: crng init done', header,
                                           'CPU: 1 UID: 0 PID: 203 Comm: gup_null_mappin Not tainted 6.12.117 #1']))
                self.assertEqual([(s.kind, s.line_no) for s in splats], [(kind, 2)])
                self.assertEqual(splats[0].excerpt.split('\n')[0], header)

    def test_every_kind_is_covered(self):
        self.assertEqual({k for k, _ in self.CASES}, set(console.KINDS))

    def test_benign_lines(self):
        benign = [
            'Booting paravirtualized kernel on KVM',
            'Booting paravirtualized kernel on bare hardware',
            'kasan: KernelAddressSanitizer initialized (generic)',
            'KASAN: initialized with generic mode',
            'kfence: initialized - using 2097152 bytes for 255 objects at 0x(____ptrval____)',
            'kmemleak: Kernel memory leak detector initialized (mempool available: 16106)',
            'Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar',
            '	BUG_ON(!folio_test_locked(folio));',
            'BUG_ON(x) is used in lib/test_gup_fast.c',
            'ok 3 race_bug_fixed',
            'not ok 1 verdict_shadow_read',
            '# FAIL: GUP-fast rejects NULL-mapping order-0 folios: 0/512 shadow pages via GUP-fast',
            '# WARNING: CPU: this is a TAP diagnostic',
            'traps: gup_null_mappin[203] general protection fault ip:7f5a3cc6f8a7 sp:7ffc6d3a2e18 error:0',
            'x86/mm: Checked W+X mappings: passed, no W+X pages found.',
            '------------[ cut here ]------------',
        ]
        self.assertEqual(find_splats(kmsg(benign)), [])
        self.assertEqual(find_splats('\n'.join(benign)), [])

    def test_warning_after_cut_here_only(self):
        cut = kmsg(['------------[ cut here ]------------', 'WARNING: refcount_t: underflow; use-after-free.',
                    'Modules linked in:'])
        self.assertEqual([(s.kind, s.line_no) for s in find_splats(cut)], [('warning', 2)])
        self.assertEqual(find_splats(kmsg(['WARNING: refcount_t: underflow; use-after-free.'])), [])

    def test_oops_after_kernel_bug_is_one_report(self):
        text = kmsg(['------------[ cut here ]------------', 'kernel BUG at mm/slub.c:553!',
                     'Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI',
                     'CPU: 0 UID: 0 PID: 203 Comm: gup_null_mappin Not tainted 6.12.117 #3',
                     'RIP: 0010:__slab_free+0x1f5/0x2c0', '---[ end trace 0000000000000000 ]---',
                     'RIP: 0010:__slab_free+0x1f5/0x2c0', 'Kernel panic - not syncing: Fatal exception'])
        self.assertEqual([(s.kind, s.line_no) for s in find_splats(text)], [('bug', 2), ('panic', 8)])
        self.assertEqual(len(find_splats(text)[0].excerpt.split('\n')), 5)

    def test_page_fault_report_is_one_oops(self):
        text = kmsg(['BUG: unable to handle page fault for address: ffffffffc0201000',
                     '#PF: supervisor write access in kernel mode',
                     '#PF: error_code(0x0003) - permissions violation',
                     'PGD 2a3e067 P4D 2a3e067 PUD 2a40063 PMD 4c36067 PTE 8000000004b4f161',
                     'Oops: 0003 [#1] PREEMPT SMP NOPTI', 'CPU: 1 UID: 0 PID: 203 Comm: x Not tainted 6.12.117 #1',
                     '---[ end trace 0000000000000000 ]---'])
        splats = find_splats(text)
        self.assertEqual([(s.kind, s.line_no) for s in splats], [('oops', 1)])
        self.assertEqual(splats[0].excerpt.split('\n')[-1], '---[ end trace 0000000000000000 ]---')

    def test_kmemleak_dump_one_splat_per_object(self):
        dump = '\n'.join([
            'unreferenced object 0xffff888005e2b840 (size 64):',
            '  comm "gup_null_mappin", pid 203, jiffies 4294893311',
            '  hex dump (first 32 bytes):',
            '    00 10 9c 05 80 88 ff ff 00 00 00 00 00 00 00 00  ................',
            '  backtrace (crc 6a1d2c3b):',
            '    __kmalloc_cache_noprof+0x2b4/0x380',
            '    gup_fast_shadow_mmap+0x7d/0x2a0 [test_gup_fast]',
            'unreferenced object 0xffff888005e2b880 (size 64):',
            '  comm "gup_null_mappin", pid 203, jiffies 4294893311',
            '  backtrace (crc 1b2c3d4e):',
            '    gup_fast_shadow_mmap+0x7d/0x2a0 [test_gup_fast]'])
        splats = find_splats(dump)
        self.assertEqual([(s.kind, s.line_no) for s in splats], [('kmemleak', 1), ('kmemleak', 8)])
        self.assertEqual(len(splats[0].excerpt.split('\n')), 7)

    def test_report_ends_at_user_space_or_tap_line(self):
        report = kmsg(['INFO: task gup_null_mappin:203 blocked for more than 120 seconds.',
                       '      Not tainted 6.12.117+deb12-amd64 #1'])
        for after in (['gupnm-init: timeout, dumping state', 'ok 4 live_pages_zero'],
                      ['ok 4 live_pages_zero', 'gupnm-init: done'],
                      [kmsg(['# live_pages: 0'], start=10.0002)]):
            with self.subTest(after=after):
                splats = find_splats('\n'.join([report] + after))
                self.assertEqual([s.kind for s in splats], ['hung'])
                self.assertEqual(splats[0].excerpt.split('\n'), [
                    'INFO: task gup_null_mappin:203 blocked for more than 120 seconds.',
                    '      Not tainted 6.12.117+deb12-amd64 #1'])

    def test_report_ends_at_time_gap(self):
        text = '\n'.join([kmsg(['watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [x:1]',
                                'Modules linked in: test_gup_fast'], start=50.0),
                          kmsg(['random: crng reseeded'], start=70.0)])
        self.assertEqual(find_splats(text)[0].excerpt.split('\n'),
                         ['watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [x:1]',
                          'Modules linked in: test_gup_fast'])

    def test_next_header_starts_new_report(self):
        text = kmsg(['BUG: sleeping function called from invalid context at mm/gup.c:1', 'in_atomic(): 1',
                     'BUG: KASAN: use-after-free in foo+0x1/0x2', 'Read of size 8'])
        self.assertEqual([(s.kind, s.line_no) for s in find_splats(text)], [('lockdep', 1), ('kasan', 3)])

    def test_printk_record_glued_after_user_output(self):
        text = 'ok 2 verdict_anon_read[    5.118430] BUG: KASAN: use-after-free in foo+0x1/0x2'
        self.assertEqual([s.kind for s in find_splats(text)], ['kasan'])

    def test_crlf_and_syslog_prefix(self):
        text = '<4>[    5.000000] ------------[ cut here ]------------\r\n' \
               '<4>[    5.000100] WARNING: CPU: 0 PID: 1 at mm/gup.c:1 f+0x1/0x2\r\n'
        splats = find_splats(text)
        self.assertEqual([(s.kind, s.line_no, s.excerpt) for s in splats],
                         [('warning', 2, 'WARNING: CPU: 0 PID: 1 at mm/gup.c:1 f+0x1/0x2')])


class BootTest(unittest.TestCase):

    def test_died_before_test(self):
        text = fixture('early_panic.log')
        self.assertFalse(guest_reached_test(text))
        self.assertTrue(early_boot_death(text))
        self.assertTrue(early_boot_death(text, 'gupnm-init: running'))

    def test_reached_test(self):
        for name in ('bug_present.log', 'pass.log', 'whole_skip.log', 'interleaved_timestamps.log'):
            with self.subTest(name=name):
                text = fixture(name)
                self.assertTrue(guest_reached_test(text))
                self.assertTrue(guest_reached_test(text, 'gupnm-init: running'))
                self.assertFalse(early_boot_death(text))

    def test_splat_after_marker_is_not_early_death(self):
        text = fixture('kasan_report.log')
        self.assertTrue(guest_reached_test(text))
        self.assertFalse(early_boot_death(text))
        oops_after = text + '\n' + kmsg(['Oops: 0000 [#1] PREEMPT SMP NOPTI', 'Kernel panic - not syncing: Fatal exception'])
        self.assertFalse(early_boot_death(oops_after))

    def test_marker_on_command_line_does_not_count(self):
        text = kmsg(['Command line: console=ttyS0 gupnm.marker=GUPNM-START',
                     'Kernel command line: console=ttyS0 gupnm.marker=GUPNM-START',
                     'Run /init as init process'])
        self.assertFalse(guest_reached_test(text, 'GUPNM-START'))
        self.assertTrue(guest_reached_test(text + '\nGUPNM-START', 'GUPNM-START'))
        self.assertEqual(console.marker_line(text + '\nGUPNM-START', 'GUPNM-START'), 4)

    def test_warning_before_marker_is_not_a_death(self):
        text = kmsg(['------------[ cut here ]------------', 'WARNING: CPU: 0 PID: 1 at a.c:1 f+0x1/0x2',
                     '---[ end trace 0000000000000000 ]---']) + '\nTAP version 13'
        self.assertFalse(early_boot_death(text))


if __name__ == '__main__':
    unittest.main()
