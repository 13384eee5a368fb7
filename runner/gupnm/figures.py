"""Figures a selftests/mm program prints: parse them.

For ``gupnm-run compare --command CMD --repeat N``: the program runs N times
(boots) on each of two kernels; each run's output goes through parse().
Pure Python (stdlib).

parse(program, text) knows these programs (``program`` is the basename of
the command's first word); the formats are the printf()s of the sources:

gup_test (tools/testing/selftests/mm/gup_test.c)
    One line per repeat and thread of a *_BENCHMARK command:
    6.12/7.3 (line 66-71): ksft_print_msg("%s: Time: get:%lld put:%lld us",
    cmd_to_str(cmd), ...), then ksft_print_msg(", truncated (size: %lld)")
    when the kernel pinned less, then ksft_print_msg("\\n"): each call
    prints "# ", so the line reads ``# PIN_FAST_BENCHMARK: Time: get:12
    put:3 us# ``. Before the kselftest conversion (selftests/vm/gup_test.c
    of the 6.1 era, seen in torvalds/linux): the same text through
    printf(), no "# ". Before the 2020 rework that added cmd_to_str():
    printf("Time: get:%lld put:%lld us"), no benchmark name (no 6.1 or
    older tree is unpacked here). Figures ``<BENCH> get_us``
    and ``<BENCH> put_us`` (us, lower is better), where <BENCH> is the
    printed command name without ``_BENCHMARK`` (``PIN_LONGTERM get_us``);
    just ``get_us``/``put_us`` when no name is printed. The benchmark is in
    the name so that figures of different gup_test commands never pool.
    A truncated line's figures get `` (truncated)`` appended: they timed
    a smaller range and never pool with full ones.
ksm_tests (tools/testing/selftests/mm/ksm_tests.c)
    -P, -H and -D (6.12 lines 603-606, 643-646, 689-692; 7.3 575-578,
    615-618, 661-664) print "Total time:    %ld.%09ld s" and "Average
    speed:  %.3f MiB/s" (after "Total size:    %lu MiB", an input, not a
    figure): figures ``time`` (s, lower better) and ``speed`` (MiB/s,
    higher better). -C (6.12 730-762, 7.3 702-734) prints the two under
    "Not merged pages:" and "Merged pages:": ``not_merged time``,
    ``not_merged speed``, ``merged time``, ``merged speed``. -M, -U, -Z, -N
    print no figure (pass/fail only). 6.1 printed the same strings with
    printf() (no "# "; -D came with the v6.1 patch "selftests/vm: add test
    to measure MADV_UNMERGEABLE performance").
    "Number of huge pages" of -H is not a figure (no better direction).
gup_null_mapping (tools/testing/selftests/mm/gup_null_mapping.c run_bench)
    ``bench ratio threads=N shadow/anon=R``: figure ``shadow/anon@N``
    (ratio, lower better); the table rows ``bench N backing ...`` under the
    header ``bench threads backing min median max`` (columns found by the
    header's names, so added columns such as p90 or CV do no harm): figure
    ``<backing> median@N`` (ns/page, lower better); words after the last
    column (the " noisy" flag) are ignored. Rows seen before any header are
    used only in the original 3-column layout (min median max). Values
    printed as inf or nan (a zero median) are not figures. min, p90, max and
    cv describe the spread inside one run; they are not figures.
any other program
    Lines ``<name>: <number> <unit>`` whose unit is a time (ns, us, ms, s,
    sec, cycles: lower better) or a rate ("/s": higher better); anything
    else (counts, sizes, no unit) is not a figure. Lines carrying a printk
    time stamp are kernel messages and are ignored.

For every program a leading printk time stamp and any number of TAP "#"
prefixes (nested kselftest output) are removed first; kernel lines
interleaved with the program's never match the formats above. A line that
the serial console split in the middle is lost, not misread.

Repeated figures (gup_test -r 20, -j threads, several runs) keep their order.
An empty result means the program printed no figure: the caller must say so.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Iterable, Optional

LOWER, HIGHER = 'lower', 'higher'

_NUM = r'(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?'
_TIMESTAMP_RE = re.compile(r'^(?:<\d+>)?\[\s*\d+\.\d+\](?:\[\s*[A-Z]\d+\])?\s?')
_HASH_RE = re.compile(r'^(?:#\s*)+')

_GUP_RE = re.compile(
    r'^(?:(?P<bench>[A-Z][A-Z0-9_]*): )?Time: get:(?P<get>\d+) put:(?P<put>\d+) us(?P<rest>.*)$')
_KSM_SECTION_RE = re.compile(r'^(?P<section>Not merged|Merged) pages:\s*$')
_KSM_TIME_RE = re.compile(rf'^Total time:\s+(?P<value>{_NUM}) s\s*$')
_KSM_SPEED_RE = re.compile(rf'^Average speed:\s+(?P<value>{_NUM}) MiB/s\s*$')
_BENCH_HEADER_RE = re.compile(r'^bench\s+threads\s+backing((?:\s+[A-Za-z][\w%]*)+)\s*$')
_BENCH_ROW_RE = re.compile(
    r'^bench\s+(?P<threads>\d+)\s+(?P<backing>[A-Za-z][\w-]*)\s+(?P<cells>\S.*?)\s*$')
_BENCH_RATIO_RE = re.compile(
    r'^bench ratio threads=(?P<threads>\d+) (?P<num>[\w-]+)/(?P<den>[\w-]+)=(?P<value>\S+)\s*$')
_GENERIC_RE = re.compile(
    rf'^(?P<name>[A-Za-z][\w ()/.,-]{{0,60}}?):\s+(?P<value>[-+]?{_NUM})\s*(?P<unit>\S+)\s*$')
_TIME_UNITS = {'ns', 'us', 'µs', 'ms', 's', 'sec', 'secs', 'seconds', 'cycles'}
_LEGACY_BENCH_COLUMNS = ('min', 'median', 'max')


@dataclass(frozen=True)
class Figure:
    """One printed measurement."""
    name: str
    value: float
    unit: str
    better: str            # LOWER or HIGHER


# ---------------------------------------------------------------- parsing

def _clean_lines(text: str) -> Iterable[tuple[bool, str]]:
    """(had a printk time stamp, the line without it and without '#' prefixes)."""
    for raw in text.splitlines():
        line = raw.rstrip('\r\n')
        m = _TIMESTAMP_RE.match(line)
        if m:
            line = line[m.end():]
        yield bool(m), _HASH_RE.sub('', line).strip()


def _finite(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _parse_gup_test(text: str) -> list[Figure]:
    out = []
    for _, line in _clean_lines(text):
        m = _GUP_RE.match(line)
        if not m:
            continue
        bench = m.group('bench') or ''
        prefix = bench.removesuffix('_BENCHMARK') + ' ' if bench else ''
        suffix = ' (truncated)' if 'truncated' in m.group('rest') else ''
        for which in ('get', 'put'):
            out.append(Figure(f'{prefix}{which}_us{suffix}', float(m.group(which)), 'us', LOWER))
    return out


def _parse_ksm_tests(text: str) -> list[Figure]:
    out = []
    section = ''
    for _, line in _clean_lines(text):
        m = _KSM_SECTION_RE.match(line)
        if m:
            section = m.group('section').lower().replace(' ', '_') + ' '
            continue
        for regex, name, unit, better in ((_KSM_TIME_RE, 'time', 's', LOWER),
                                          (_KSM_SPEED_RE, 'speed', 'MiB/s', HIGHER)):
            m = regex.match(line)
            if m:
                out.append(Figure(section + name, float(m.group('value')), unit, better))
    return out


def _parse_gup_null_mapping(text: str) -> list[Figure]:
    out = []
    columns: Optional[list[str]] = None
    for _, line in _clean_lines(text):
        m = _BENCH_HEADER_RE.match(line)
        if m:
            columns = m.group(1).split()
            continue
        m = _BENCH_RATIO_RE.match(line)
        if m:
            value = _finite(m.group('value'))
            if value is not None:
                name = f"{m.group('num')}/{m.group('den')}@{m.group('threads')}"
                out.append(Figure(name, value, 'ratio', LOWER))
            continue
        m = _BENCH_ROW_RE.match(line)
        if not m:
            continue
        cells = m.group('cells').split()
        names = columns if columns is not None else list(_LEGACY_BENCH_COLUMNS)
        # Words after the columns are flags (" noisy"), never numbers.
        if (len(cells) < len(names) or 'median' not in names
                or any(_finite(c.rstrip('%')) is not None for c in cells[len(names):])):
            continue
        value = _finite(cells[names.index('median')])
        if value is not None:
            out.append(Figure(f"{m.group('backing')} median@{m.group('threads')}",
                              value, 'ns/page', LOWER))
    return out


def _generic_better(unit: str) -> Optional[str]:
    if unit in _TIME_UNITS:
        return LOWER
    if unit.endswith('/s') and len(unit) > 2:
        return HIGHER
    return None


def _parse_generic(text: str) -> list[Figure]:
    out = []
    for stamped, line in _clean_lines(text):
        if stamped:
            continue
        m = _GENERIC_RE.match(line)
        if not m:
            continue
        better = _generic_better(m.group('unit'))
        value = _finite(m.group('value'))
        if better and value is not None:
            out.append(Figure(m.group('name').strip(), value, m.group('unit'), better))
    return out


PARSERS = {
    'gup_test': _parse_gup_test,
    'ksm_tests': _parse_ksm_tests,
    'gup_null_mapping': _parse_gup_null_mapping,
}


def parse(program: str, text: str) -> list[Figure]:
    """Every figure ``program`` printed in ``text``, in order ([] if none)."""
    return PARSERS.get(os.path.basename(program), _parse_generic)(text)
