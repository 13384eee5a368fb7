"""Build, write, load and compare the per-run JSON summary (schema 1).

A summary is a plain dict, JSON-serialisable, written with sorted keys and an
indent of 2 through a temporary file renamed into place, so a reader never
sees half a file.  Keys:

  schema            1
  kernel            {release, source}        source: how the kernel was obtained
  vm                {accel, vcpus, memory_mb, cmdline}
  exit_status       the test's exit status as reported by the guest, or None
  verdict           tap.summarize() line
  outcome           'pass' | 'fail' | 'skip' | 'error' (TAP, splats and exit status)
  bug_present       True/False from the shadow verdict, None without one
  expected, as_expected   the caller's expectation ({bug_present, outcome}) and
                    whether it was met (None when nothing checkable was given)
  counts            {pass, fail, skip, xfail, timeout, error, total}
  skip_reason       reason of a whole-test skip, or None
  cases             [{number, name, status, reason}]
  verdicts          [{backing, access, fast, total, expected}]
  bench_title       title of the benchmark table, or None
  bench             [{threads, backing, min, median, max}]   ns/page
  bench_speedup     [{threads, shadow_median, anon_median, speedup}]
                    speedup = shadow median / anon median
  splats            [{kind, line, excerpt}]
  tap_errors        structural problems found by the TAP parser
  durations         {step: seconds}
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any, Iterable, Mapping, Optional

from . import stats
from .tap import TapResult, bug_present, counts, failed_results, summarize

SCHEMA = 1
ACCELS = ('kvm', 'tcg')
OUTCOMES = ('pass', 'fail', 'skip', 'error')
KSFT_SKIP = 4


class SummaryError(ValueError):
    """A summary file is missing, is not JSON, or is not a schema-1 summary."""


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f'{name} must be a positive integer, got {value!r}')
    return value


def bench_speedups(bench: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per thread count: shadow median / anon median (None when either is missing)."""
    medians: dict[int, dict[str, float]] = {}
    for row in bench:
        medians.setdefault(row['threads'], {}).setdefault(row['backing'], row['median'])
    out = []
    for threads in sorted(medians):
        shadow, anon = medians[threads].get('shadow'), medians[threads].get('anon')
        value = None
        if shadow is not None and anon:
            value = round(stats.ratio(shadow, anon), 3)
        out.append({'threads': threads, 'shadow_median': shadow, 'anon_median': anon,
                    'speedup': value})
    return out


def _outcome(tap: TapResult, splat_list: list, exit_status: Optional[int]) -> str:
    if splat_list or failed_results(tap) or bug_present(tap):
        return 'fail'
    if tap.skipped:
        return 'skip' if exit_status in (None, 0, KSFT_SKIP) else 'error'
    if tap.errors or not tap.results:
        return 'error'
    if exit_status not in (None, 0):
        return 'error'
    return 'pass'


def _as_expected(expected: Optional[Mapping[str, Any]], got: Mapping[str, Any]) -> Optional[bool]:
    if not expected:
        return None
    keys = [k for k in ('bug_present', 'outcome') if k in expected]
    if not keys:
        return None
    return all(expected[k] == got[k] for k in keys)


def build_summary(*, kernel_release: str, kernel_source: Mapping[str, Any], accel: str,
                  vcpus: int, memory_mb: int, cmdline: str, tap: TapResult,
                  splats: Iterable[Any], exit_status: Optional[int],
                  expected: Optional[Mapping[str, Any]] = None,
                  durations: Optional[Mapping[str, float]] = None) -> dict[str, Any]:
    """Assemble the summary dict; ``splats`` are console.Splat objects."""
    if accel not in ACCELS:
        raise ValueError(f'accel must be one of {ACCELS}, got {accel!r}')
    _positive_int('vcpus', vcpus)
    _positive_int('memory_mb', memory_mb)
    if exit_status is not None and (isinstance(exit_status, bool) or not isinstance(exit_status, int)):
        raise ValueError(f'exit_status must be an int or None, got {exit_status!r}')
    clean_durations: dict[str, float] = {}
    for step, seconds in (durations or {}).items():
        if (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                or not math.isfinite(seconds) or seconds < 0):
            raise ValueError(f'duration of {step!r} must be a non-negative number, got {seconds!r}')
        clean_durations[str(step)] = round(float(seconds), 3)

    splat_list = list(splats)
    bench = [{'threads': b.threads, 'backing': b.backing, 'min': b.min,
              'median': b.median, 'max': b.max} for b in tap.bench]
    count = counts(tap)
    count['total'] = len(tap.results)
    summary: dict[str, Any] = {
        'schema': SCHEMA,
        'kernel': {'release': kernel_release, 'source': dict(kernel_source)},
        'vm': {'accel': accel, 'vcpus': vcpus, 'memory_mb': memory_mb, 'cmdline': cmdline},
        'exit_status': exit_status,
        'verdict': summarize(tap),
        'outcome': _outcome(tap, splat_list, exit_status),
        'bug_present': bug_present(tap),
        'counts': count,
        'skip_reason': tap.skip_reason,
        'cases': [{'number': r.number, 'name': r.name, 'status': r.status,
                   'reason': r.directive_reason} for r in tap.results],
        'verdicts': [{'backing': v.backing, 'access': v.access, 'fast': v.fast,
                      'total': v.total, 'expected': v.expected} for v in tap.verdicts.values()],
        'bench_title': tap.bench_title,
        'bench': bench,
        'bench_speedup': bench_speedups(bench),
        'splats': [{'kind': s.kind, 'line': s.line_no, 'excerpt': s.excerpt} for s in splat_list],
        'tap_errors': list(tap.errors),
        'durations': clean_durations,
        'expected': dict(expected) if expected is not None else None,
    }
    summary['as_expected'] = _as_expected(expected, summary)
    return summary


def write_summary(path: str | os.PathLike, summary: Mapping[str, Any]) -> None:
    """Write ``summary`` as JSON atomically (temp file in the same directory + rename)."""
    text = json.dumps(summary, sort_keys=True, indent=2, allow_nan=False) + '\n'
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix='.summary-', suffix='.tmp', dir=directory)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load_summary(path: str | os.PathLike) -> dict[str, Any]:
    """Read a summary written by write_summary(); SummaryError on any problem."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except FileNotFoundError:
        raise SummaryError(f'{path}: summary file not found') from None
    except OSError as e:
        raise SummaryError(f'{path}: cannot read summary: {e.strerror}') from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SummaryError(f'{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}') from None
    if not isinstance(data, dict):
        raise SummaryError(f'{path}: not a summary (top level is {type(data).__name__}, not an object)')
    if data.get('schema') != SCHEMA:
        raise SummaryError(f'{path}: unsupported summary schema {data.get("schema")!r} (expected {SCHEMA})')
    return data


def _medians(summary: Mapping[str, Any]) -> dict[tuple[int, str], float]:
    out: dict[tuple[int, str], float] = {}
    for row in summary.get('bench') or []:
        out.setdefault((row['threads'], row['backing']), row['median'])
    return out


def compare(summary_a: Mapping[str, Any], summary_b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows per thread count: a/b shadow and anon medians, speedup = a_shadow / b_shadow."""
    a, b = _medians(summary_a), _medians(summary_b)
    rows = []
    for threads in sorted({t for t, _ in a} | {t for t, _ in b}):
        row = {'threads': threads,
               'a_shadow': a.get((threads, 'shadow')), 'a_anon': a.get((threads, 'anon')),
               'b_shadow': b.get((threads, 'shadow')), 'b_anon': b.get((threads, 'anon'))}
        row['speedup'] = (round(stats.ratio(row['a_shadow'], row['b_shadow']), 3)
                          if row['a_shadow'] is not None and row['b_shadow'] else None)
        rows.append(row)
    return rows


def format_compare(rows: Iterable[Mapping[str, Any]], label_a: str, label_b: str) -> str:
    """Aligned table of compare() rows; speedup shown as e.g. ``3.54x``."""
    headers = ['threads', f'{label_a} shadow', f'{label_a} anon',
               f'{label_b} shadow', f'{label_b} anon', 'speedup']
    table = [[r['threads'], r['a_shadow'], r['a_anon'], r['b_shadow'], r['b_anon'],
              None if r['speedup'] is None else f'{r["speedup"]:.2f}x'] for r in rows]
    return stats.format_table(table, headers)
