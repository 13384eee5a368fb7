"""Find kernel problem reports ("splats") in a serial-console log or dmesg dump.

A report starts at a header line such as ``BUG: KASAN: ...``, ``WARNING: CPU:``
or ``Kernel panic - not syncing``, matched at the start of the message (after
the printk timestamp), so source text like ``BUG_ON(x)``, test names like
``race_bug_fixed`` and init banners like ``kasan: KernelAddressSanitizer
initialized`` never match.  Header patterns are tried most specific first, so
``BUG: KASAN:`` is 'kasan' and not 'bug'.

A report runs until ``---[ end trace``/``---[ end Kernel panic``, the closing
``=====`` rule of KASAN/KFENCE/UBSAN, a raw empty line, a line without a
timestamp when the report had them (user space output), a TAP line, a gap of
more than GAP_SECONDS, a ``cut here`` line or the next report header.  The
``Oops:`` line that follows ``BUG: unable to handle ...`` or ``kernel BUG at``
belongs to the same report.  One Splat is returned per report, with up to
EXCERPT_LINES lines from its header, timestamps stripped.

Boot classification: the caller's guest prints a start marker right before
the test (by default the selftest's own ``TAP version 13``).  No marker means
the guest died before the test; a panic/Oops before the marker is the known
multi-vCPU TCG early-boot artefact (int3 in sched_clock_cpu) worth a retry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .tap import is_tap_line, split_timestamp

KINDS = ('panic', 'oops', 'bug', 'warning', 'kasan', 'kfence', 'lockdep',
         'kmemleak', 'ubsan', 'hung', 'rcu', 'softlockup')
FATAL_KINDS = ('panic', 'oops')
DEFAULT_START_MARKER = 'TAP version 13'
EXCERPT_LINES = 25
MAX_REPORT_LINES = 400
GAP_SECONDS = 2.0

# Most specific first: the first matching kind wins.
_HEADERS: list[tuple[str, re.Pattern]] = [(kind, re.compile(rx)) for kind, rx in [
    ('kasan', r'^BUG: KASAN: '),
    ('kfence', r'^BUG: KFENCE: '),
    ('softlockup', r'^watchdog: BUG: soft lockup'),
    ('lockdep', r'^(?:WARNING: )?(?:possible (?:circular|recursive) locking'
                r'|inconsistent lock state|possible irq lock inversion'
                r'|suspicious RCU usage|bad unlock balance'
                r'|\S+-safe -> \S+-unsafe lock order|lock held when returning to user space)'),
    ('lockdep', r'^BUG: (?:sleeping function called from invalid context|held lock freed)'),
    ('kmemleak', r'^unreferenced object 0x[0-9a-f]+'),
    ('kmemleak', r'^kmemleak: \d+ new suspected memory leaks?'),
    ('ubsan', r'^UBSAN: '),
    ('hung', r'^INFO: task \S.* blocked for more than \d+ seconds'),
    ('rcu', r'^rcu: INFO: rcu_\w+ (?:self-)?detected stalls?'),
    ('panic', r'^Kernel panic - not syncing'),
    ('oops', r'^(?:Oops: |general protection fault'
             r'|BUG: unable to handle |BUG: kernel NULL pointer dereference)'),
    ('oops', r'^[a-z][a-z0-9 ,-]*: [0-9a-f]{4} \[#\d+\]'),  # pre-6.9 die header
    ('bug', r'^(?:kernel BUG at |BUG: |BUG \S+ \([^)]*\): '
            r'|watchdog: Watchdog detected hard LOCKUP)'),
    ('warning', r'^WARNING: (?:CPU: |at )'),
]]
_CUT_HERE_RE = re.compile(r'^-+\[ cut here \]-+\s*$')
_RULE_RE = re.compile(r'^={20,}\s*$')
_END_RE = re.compile(r'^---\[ end (?:trace|Kernel panic)')
_MIDLINE_TS_RE = re.compile(r'\[\s*\d+\.\d{6}\]')


@dataclass(frozen=True)
class Splat:
    """One kernel report: its kind, 1-based line of its header, and an excerpt."""
    kind: str
    line_no: int
    excerpt: str


def _message(raw: str) -> tuple[Optional[float], str]:
    """Timestamp and message of a line; a printk record glued after user output counts."""
    ts, msg = split_timestamp(raw)
    if ts is None:
        m = _MIDLINE_TS_RE.search(raw)
        if m:
            ts, msg = split_timestamp(raw[m.start():])
    return ts, msg.rstrip()


def classify_line(msg: str, after_cut_here: bool = False) -> Optional[str]:
    """Kind of report whose header ``msg`` is, or None for any other line."""
    for kind, rx in _HEADERS:
        if rx.match(msg):
            return kind
    if after_cut_here and msg.startswith('WARNING:'):
        return 'warning'
    return None


class _Report:
    def __init__(self, kind: str, line_no: int, ts: Optional[float], msg: str):
        self.kind, self.line_no, self.last_ts = kind, line_no, ts
        self.has_ts = ts is not None
        self.lines = [msg]

    def splat(self) -> Splat:
        return Splat(self.kind, self.line_no, '\n'.join(self.lines[:EXCERPT_LINES]))


def _ends_before(rep: _Report, raw: str, ts: Optional[float], msg: str, kind: Optional[str]) -> bool:
    """True when this line is not part of ``rep`` any more."""
    if kind is not None:
        return not (kind == 'oops' and rep.kind in ('oops', 'bug'))
    if not raw.strip():
        return True
    if rep.has_ts and ts is None:
        return True
    if ts is not None and rep.last_ts is not None and ts - rep.last_ts > GAP_SECONDS:
        return True
    return bool(is_tap_line(msg) or _CUT_HERE_RE.match(msg) or len(rep.lines) >= MAX_REPORT_LINES)


def find_splats(text: str) -> list[Splat]:
    """All reports in ``text``, in order; see the module docstring."""
    splats: list[Splat] = []
    rep: Optional[_Report] = None
    after_cut = False
    for line_no, raw in enumerate(text.split('\n'), 1):
        raw = raw.rstrip('\r')
        ts, msg = _message(raw)
        kind = classify_line(msg, after_cut)
        after_cut = bool(_CUT_HERE_RE.match(msg))
        if rep is not None:
            if _ends_before(rep, raw, ts, msg, kind):
                splats.append(rep.splat())
                rep = None
            else:
                rep.lines.append(msg)
                rep.last_ts = ts if ts is not None else rep.last_ts
                if _END_RE.match(msg) or _RULE_RE.match(msg):
                    splats.append(rep.splat())
                    rep = None
                continue
        if kind is not None:
            rep = _Report(kind, line_no, ts, msg)
    if rep is not None:
        splats.append(rep.splat())
    return splats


def marker_line(text: str, start_marker: str = DEFAULT_START_MARKER) -> Optional[int]:
    """1-based line of the first occurrence of ``start_marker``, or None.

    Lines echoing the kernel command line are skipped, so a marker passed to
    the guest on the command line does not count as reached.
    """
    for line_no, raw in enumerate(text.split('\n'), 1):
        if start_marker in raw and 'command line' not in raw.lower():
            return line_no
    return None


def guest_reached_test(text: str, start_marker: str = DEFAULT_START_MARKER) -> bool:
    """True when the console shows the start marker, i.e. the test started."""
    return marker_line(text, start_marker) is not None


def early_boot_death(text: str, start_marker: str = DEFAULT_START_MARKER) -> bool:
    """True when a panic or Oops happened before the start marker (or with no marker).

    Under multi-vCPU TCG this is usually the early text-patching artefact, so
    the caller may retry the boot (and should say that it did).
    """
    limit = marker_line(text, start_marker)
    return any(s.kind in FATAL_KINDS and (limit is None or s.line_no < limit)
               for s in find_splats(text))


# The kernel's own words when the guest runs out of memory: the OOM killer
# (a process killed, or none left to kill), an initramfs that did not fit.
_OOM_RE = re.compile(r'(?:^Out of memory(?::| and no killable processes)'
                     r'|^\S+ invoked oom-killer'
                     r'|^Initramfs unpacking failed'
                     r'|System is deadlocked on memory)')


def out_of_memory(text: str) -> Optional[str]:
    """The line in which the guest's kernel says it ran out of memory (the
    first "Out of memory" line, else the first other sign), timestamps
    stripped; None when it never says so."""
    found = []
    for raw in text.splitlines():
        msg = _message(raw)[1].strip()
        if _OOM_RE.search(msg):
            if msg.startswith('Out of memory'):
                return msg
            found.append(msg)
    return found[0] if found else None

