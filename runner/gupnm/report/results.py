"""Build, write, load and compare the per-run JSON summary (schema 2).

A summary is a plain dict, JSON-serialisable, written with sorted keys and an
indent of 2 through a temporary file renamed into place, so a reader never
sees half a file; it is readable by all (0644). Its keys are specified, and
checked by the unit tests, in runner/summary.schema.json (JSON Schema).

Exit codes of the runner (the README's table), decided here from a summary:
0 the test ran to its end and passed; 1 it failed or the kernel complained
(a splat); 2 bad input found on the host; 3 the guest died or timed out, or
the test did not run; 4 the whole test skipped; 130 interrupted (SIGINT;
143 for SIGTERM).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any, Iterable, Mapping, Optional

from ..parse.tap import STATUSES as _STATUSES
from ..parse.tap import PRE_65, expect_pre65
from ..parse.tap import (DRIVER, TapResult, all_skipped, bench_params, bug_present, counts,
                         diagnosis, failed_results, summarize)
from . import stats

SCHEMA = 2
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'summary.schema.json')     # runner/
ACCELS = ('kvm', 'tcg', None)   # None: no VM (--kernel host)
OUTCOMES = ('pass', 'fail', 'skip', 'error', 'interrupted')
KSFT_SKIP = 4

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INFRA, EXIT_SKIP = 0, 1, 2, 3, 4
EXIT_SIGINT, EXIT_SIGTERM = 130, 143


class SummaryError(ValueError):
    """A summary file is missing, is not JSON, or is not a schema-1 summary."""


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f'{name} must be a positive integer, got {value!r}')
    return value


def bench_ratios(bench: Iterable[Mapping[str, Any]],
                 refused: Mapping[int, str] | None = None) -> list[dict[str, Any]]:
    """Per thread count: shadow median / anon median (None when either is
    missing, or when the benchmark refused it: @refused, threads -> why,
    a control that was not order-0).

    The cost of the shadow (NULL-mapping) buffer relative to anonymous
    memory on one kernel: about 1 when GUP-fast takes both, above 1 with
    the bug. Not a speedup: that word is kept for compare(), A over B.
    ``noisy``: either cell was flagged noisy (only when the rows say).
    """
    cells: dict[int, dict[str, Mapping[str, Any]]] = {}
    for row in bench:
        cells.setdefault(row['threads'], {}).setdefault(row['backing'], row)
    out = []
    for threads in sorted(cells):
        shadow_row, anon_row = cells[threads].get('shadow'), cells[threads].get('anon')
        shadow = shadow_row['median'] if shadow_row else None
        anon = anon_row['median'] if anon_row else None
        value, why = None, (refused or {}).get(threads)
        if shadow is not None and anon and not why:
            value = round(stats.ratio(shadow, anon), 3)
        flags = [r.get('noisy') for r in (shadow_row, anon_row) if r]
        known = flags and None not in flags
        out.append({'threads': threads, 'shadow_median': shadow, 'anon_median': anon,
                    'shadow_anon_ratio': value, **({'noisy': any(flags)} if known else {}),
                    **({'refused': why} if why else {})})
    return out


def exit_code(outcome: str, *, problems: Iterable[str] = (), reached_test: bool = True,
              splat: bool = False, exit_status: Optional[int] = None,
              has_results: bool = False) -> int:
    """The runner's exit code (module docstring) for one run or parsed log.

    A problem (the guest died, timed out, the test did not run) makes it 3,
    unless the kernel complained (a splat) after the test started: a panic
    in the test is the kernel's answer, 1.
    """
    if outcome == 'interrupted':
        return EXIT_SIGINT
    if splat and reached_test:
        return EXIT_FAIL
    if list(problems):
        return EXIT_INFRA
    if outcome == 'fail':
        return EXIT_FAIL
    if outcome == 'skip':
        return EXIT_SKIP
    if outcome == 'pass':
        return EXIT_PASS
    # 'error': the test said it failed (Bail out!, exit 1) after starting:
    # a failure; no results at all: it did not run.
    return EXIT_FAIL if exit_status == 1 and has_results else EXIT_INFRA


def memory_problem(oom: Optional[str], outcome: str, exit_status: Optional[int],
                   memory_mb: Optional[int] = None) -> Optional[str]:
    """The problem of a run whose guest ran out of memory (@oom: the
    kernel's line, console.out_of_memory), unless the test ended
    (@exit_status known) and failed: it cannot be a pass or a skip (the
    memory, not the kernel, decided), nor a bare "the guest died". None for
    a finished failure (the test's verdict stands, a note says it) and when
    the guest never ran out."""
    if not oom or (outcome == 'fail' and exit_status is not None):
        return None
    size = f"{memory_mb} MiB" if memory_mb else "its memory"
    return (f"the guest ran out of memory ({size}, --memory): {oom}; the run "
            "cannot be judged, give the guest more (--memory 512 or more)")


def missing_for_pass(tap: TapResult, exit_status: Optional[int], *,
                     own_test: bool = True) -> list[str]:
    """What a log lacks to be called a pass (empty: nothing): the test's own
    driver-row verdict (@own_test: not for another program's output; a log
    of the test before v4 calls the row "shadow", read as "driver"), its plan
    complete, and the guest's exit marker. run and parse both ask this, so
    they agree on the same logs; anything missing makes the run 3."""
    missing = []
    if own_test and not any(b == DRIVER for b, _ in tap.verdicts):
        missing.append(f"the test's own {DRIVER} verdict (no '# verdict {DRIVER} ...' line)")
    if tap.plan is None:
        missing.append("a plan (no '1..N' line)")
    elif len(tap.results) < tap.plan:
        missing.append(f"a complete plan ({len(tap.results)} of {tap.plan} results)")
    if exit_status is None:
        missing.append("the guest's exit marker (GUPNM-EXIT / GUPNM-TEST-END)")
    return missing


def not_a_pass(missing: list[str]) -> str:
    """The problem line for missing_for_pass()'s answer."""
    return "not a pass, the log lacks " + "; ".join(missing)


def _outcome(tap: TapResult, splat_list: list, exit_status: Optional[int]) -> str:
    if splat_list or failed_results(tap) or bug_present(tap):
        return 'fail'
    if tap.skipped:
        return 'skip' if exit_status in (None, 0, KSFT_SKIP) else 'error'
    if tap.errors or not tap.results:
        return 'error'
    if all_skipped(tap):
        # Every cell SKIPped (the test's ksft_finished() exits 0 then): the
        # command could not ask (the runner's module without tracing:
        # EOPNOTSUPP). Nothing was judged, the driver row neither: the run
        # could not judge the kernel (3), never a skip (4) of a kernel that
        # may carry the bug.
        return 'error'
    if exit_status not in (None, 0):
        return 'error'
    return 'pass'


outcome = _outcome     # the TAP-level outcome of a parsed log (cli parse)


def build_summary(*, kernel_release: str, kernel_source: Mapping[str, Any], accel: str,
                  vcpus: int, memory_mb: int, cmdline: str, tap: TapResult,
                  splats: Iterable[Any], exit_status: Optional[int],
                  durations: Optional[Mapping[str, float]] = None) -> dict[str, Any]:
    """Assemble the summary dict; ``splats`` are console.Splat objects."""
    _check_run_facts(accel, vcpus, memory_mb, exit_status)
    clean_durations = _clean_durations(durations)

    splat_list = list(splats)
    # Before 6.5 the long-term writable pin goes through GUP-fast by design:
    # the test's one failure there is expected, and its exit 1 with it.
    pre65 = expect_pre65(tap, kernel_release)
    judged_status = 0 if pre65 and exit_status == 1 and not failed_results(tap) \
        else exit_status
    bench = _bench_rows(tap)
    count = counts(tap)
    count['total'] = len(tap.results)
    summary: dict[str, Any] = {
        'schema': SCHEMA,
        'kernel': {'release': kernel_release, 'source': dict(kernel_source)},
        'vm': {'accel': accel, 'vcpus': vcpus, 'memory_mb': memory_mb, 'cmdline': cmdline},
        'exit_status': exit_status,
        'verdict': summarize(tap),
        'outcome': _outcome(tap, splat_list, judged_status),
        'bug_present': bug_present(tap),
        # regression / wrongfix / secretmem / other / pass / skip (tap.diagnosis)
        'diagnosis': diagnosis(tap),
        'counts': count,
        'skip_reason': tap.skip_reason,
        'cases': [{'number': r.number, 'name': r.name, 'status': r.status,
                   'reason': r.directive_reason, 'diagnostics': list(r.diagnostics)}
                  for r in tap.results],
        'verdicts': [{'backing': v.backing, 'access': v.access, 'fast': v.fast,
                      'total': v.total, 'expected': v.expected,
                      **({'tries': v.tries} if v.tries else {})}
                     for v in tap.verdicts.values()],
        'bench_title': tap.bench_title,
        'bench_params': bench_params(tap),
        'bench': bench,
        'bench_ratio': bench_ratios(bench, tap.bench_refused),
        'splats': [{'kind': s.kind, 'line': s.line_no, 'excerpt': s.excerpt} for s in splat_list],
        'tap_errors': list(tap.errors),
        'durations': clean_durations,
        # Filled by report/expect.judge (--expect, or Debian's default).
        'expected': None, 'as_expected': None,
    }
    if pre65:
        summary['notes'] = [f'{name}: XFAIL: {PRE_65}' for name in pre65]
    return summary


def _check_run_facts(accel: str, vcpus: int, memory_mb: int,
                     exit_status: Optional[int]) -> None:
    """ValueError unless the VM's facts and the exit status are well formed."""
    if accel not in ACCELS:
        raise ValueError(f'accel must be one of {ACCELS}, got {accel!r}')
    _positive_int('vcpus', vcpus)
    _positive_int('memory_mb', memory_mb)
    if exit_status is not None and (isinstance(exit_status, bool) or not isinstance(exit_status, int)):
        raise ValueError(f'exit_status must be an int or None, got {exit_status!r}')


def _clean_durations(durations: Optional[Mapping[str, float]]) -> dict[str, float]:
    """Step -> seconds, rounded to ms; ValueError on a negative or non-finite one."""
    clean: dict[str, float] = {}
    for step, seconds in (durations or {}).items():
        if (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                or not math.isfinite(seconds) or seconds < 0):
            raise ValueError(f'duration of {step!r} must be a non-negative number, got {seconds!r}')
        clean[str(step)] = round(float(seconds), 3)
    return clean


def _bench_rows(tap: TapResult) -> list[dict[str, Any]]:
    """The benchmark's rows; p90, cv and noisy only from a test that printed
    them: a log of an older test gives the summary it gave then."""
    return [{'threads': b.threads, 'backing': b.backing, 'min': b.min,
             'median': b.median, 'max': b.max,
             **({'p90': b.p90, 'cv': b.cv, 'noisy': b.noisy} if b.cv is not None else {})}
            for b in tap.bench]


def stub_summary(*, spec: str, exit_code: int, outcome: str, problems: list[str],
                 vcpus: int, memory_mb: int, durations: Optional[Mapping[str, float]] = None,
                 release: Optional[str] = None) -> dict[str, Any]:
    """A summary for a run that ended before the guest ran the test (an error on
    the host, or an interruption): every key the schema requires, nothing made up."""
    if outcome not in OUTCOMES:
        raise ValueError(f'outcome must be one of {OUTCOMES}, got {outcome!r}')
    return {
        'schema': SCHEMA, 'spec': spec,
        'kernel': {'release': release, 'source': {}, 'booted_release': None},
        'vm': {'accel': None, 'vcpus': vcpus, 'memory_mb': memory_mb, 'cmdline': None},
        'exit_status': None, 'exit_code': exit_code, 'outcome': outcome,
        'verdict': 'not run',
        'bug_present': None, 'diagnosis': None,
        'counts': {s: 0 for s in (*_STATUSES, 'total')},
        'skip_reason': None, 'cases': [], 'verdicts': [], 'bench_title': None,
        'bench_params': None, 'bench': [], 'bench_ratio': [], 'splats': [], 'tap_errors': [],
        'durations': {k: round(float(v), 3) for k, v in (durations or {}).items()},
        'guest_uptime': {}, 'problems': list(problems), 'expected': None,
        'as_expected': None, 'command': None, 'boot_attempts': 0,
    }


def write_atomic(path: str | os.PathLike, text: str, prefix: str) -> None:
    """Write @text to @path atomically (a temporary file @prefix-named in the
    same directory, then a rename), 0644: every report of a run."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix='.tmp', dir=directory)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)        # mkstemp makes 0600: a pipeline reads it as another user
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_summary(path: str | os.PathLike, summary: Mapping[str, Any]) -> None:
    """Write ``summary`` as JSON atomically (write_atomic), 0644."""
    text = json.dumps(summary, sort_keys=True, indent=2, allow_nan=False) + '\n'
    write_atomic(path, text, '.summary-')


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


def _cells(summary: Mapping[str, Any]) -> dict[tuple[int, str], Mapping[str, Any]]:
    out: dict[tuple[int, str], Mapping[str, Any]] = {}
    for row in summary.get('bench') or []:
        out.setdefault((row['threads'], row['backing']), row)
    return out


def _ratio(num: Optional[float], den: Optional[float]) -> Optional[float]:
    return round(stats.ratio(num, den), 3) if num is not None and den else None


def bench_setup(summary: Mapping[str, Any]) -> Optional[str]:
    """The benchmark's conditions in a few words: pin flags, pages per call
    and thread, and "emulated (TCG)" when the numbers come from TCG."""
    p = summary.get('bench_params') or {}
    words = [f'pin_user_pages_fast({p["flags"]})' if p.get('flags') else None,
             f'{p["pages"]} pages/thread' if p.get('pages') else None,
             f'{p["pages_per_call"]} pages/call' if p.get('pages_per_call') else None,
             'emulated (TCG)' if emulated(summary) else None]
    return ', '.join(w for w in words if w) or None


def emulated(summary: Mapping[str, Any]) -> bool:
    """True when the guest ran under TCG: its ns/page are emulated."""
    return (summary.get('vm') or {}).get('accel') == 'tcg'


def compare(summary_a: Mapping[str, Any], summary_b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows per thread count: a/b shadow and anon medians, their coefficients
    of variation (cv, %) and noisy flags, the shadow/anon ratio on each
    kernel, speedup = a_shadow / b_shadow, anon_ratio = a_anon / b_anon (the
    control: about 1 when only the shadow path changed). Each row also says
    how each side ran (accel: TCG numbers are emulated) and with what
    benchmark (setup)."""
    a, b = _cells(summary_a), _cells(summary_b)
    rows = []
    for threads in sorted({t for t, _ in a} | {t for t, _ in b}):
        row: dict[str, Any] = {'threads': threads}
        for side, cells in (('a', a), ('b', b)):
            for backing in ('shadow', 'anon'):
                cell = cells.get((threads, backing)) or {}
                row[f'{side}_{backing}'] = cell.get('median')
                row[f'{side}_{backing}_cv'] = cell.get('cv')
                row[f'{side}_{backing}_noisy'] = cell.get('noisy')
            row[f'{side}_ratio'] = _ratio(row[f'{side}_shadow'], row[f'{side}_anon'])
        row['speedup'] = _ratio(row['a_shadow'], row['b_shadow'])
        row['anon_ratio'] = _ratio(row['a_anon'], row['b_anon'])
        for side, summary in (('a', summary_a), ('b', summary_b)):
            row[f'{side}_accel'] = (summary.get('vm') or {}).get('accel')
            row[f'{side}_setup'] = bench_setup(summary)
        rows.append(row)
    return rows


def _median_cell(row: Mapping[str, Any], key: str) -> Optional[str]:
    median = row.get(key)
    if median is None:
        return None
    cv = row.get(f'{key}_cv')
    if cv is None:
        return f'{median:.1f}'
    return f'{median:.1f} \u00b1{cv:.0f}%' + ('*' if row.get(f'{key}_noisy') else ' ')


def format_compare(rows: Iterable[Mapping[str, Any]], label_a: str, label_b: str) -> str:
    """Aligned table of compare() rows: per thread count the median ns/page
    of shadow and anon on each kernel (with the cell's CV as ``\u00b1N%``
    when the test gave one, ``*`` when noisy), shadow/anon on each (ratio),
    speedup (A shadow / B shadow, e.g. ``3.54x``) and the anon control A/B;
    then notes: what the columns and marks mean, how each side ran, and
    that TCG numbers are emulated."""
    rows = list(rows)
    headers = ['threads', f'{label_a} shadow', f'{label_a} anon', f'{label_a} ratio',
               f'{label_b} shadow', f'{label_b} anon', f'{label_b} ratio',
               'speedup', f'anon {label_a}/{label_b}']
    table = [[r['threads'], _median_cell(r, 'a_shadow'), _median_cell(r, 'a_anon'),
              r.get('a_ratio'), _median_cell(r, 'b_shadow'), _median_cell(r, 'b_anon'),
              r.get('b_ratio'),
              None if r['speedup'] is None else f'{r["speedup"]:.2f}x', r.get('anon_ratio')]
             for r in rows]
    text = stats.format_table(table, headers, float_format='.2f',
                              right_align=[True] * len(headers))
    notes = [f'ratio: shadow/anon on that kernel; speedup: {label_a} shadow / {label_b} '
             f'shadow; anon {label_a}/{label_b}: the control, about 1 when only the '
             'shadow path changed']
    if any(r.get(f'{k}_cv') is not None for r in rows
           for k in ('a_shadow', 'a_anon', 'b_shadow', 'b_anon')):
        notes.append('\u00b1: coefficient of variation (stddev/mean) of the cell\'s '
                     'samples; *: noisy (above the test\'s threshold)')
    setup = {k: next((r[f'{k}_setup'] for r in rows if r.get(f'{k}_setup')), None)
             for k in 'ab'}
    if setup['a'] and setup['a'] == setup['b']:
        notes.append(f'{label_a}, {label_b}: {setup["a"]}')
    else:
        notes += [f'{label}: {setup[k]}' for k, label in (('a', label_a), ('b', label_b))
                  if setup[k]]
    if any(r.get('a_accel') == 'tcg' or r.get('b_accel') == 'tcg' for r in rows):
        notes.append('emulated (TCG): absolute ns/page drift between runs; '
                     'compare the ratios inside each run')
    return text + ''.join('\n' + n for n in notes)
