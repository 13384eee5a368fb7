"""Figures a selftests/mm program prints: parse, summarise, compare, report, plot.

For ``gupnm-run compare --command CMD --repeat N``: the program runs N times
(boots) on each of two kernels; each run's output goes through parse(), the
runs of one kernel through summarise(), the two summaries through compare(),
and the rows to format_table() and plot(). Pure Python (stdlib); the plot
uses gnuplot when it is installed.

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
gup_fast_bench (bench/gup_fast_bench.c run_bench), and gup_null_mapping
(tools/testing/selftests/mm/gup_null_mapping.c run_bench, before series v2)
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

Statistics (summarise): per figure name, ``values`` pools every value of
every run (each repeat counts); mean, stddev (sample, n-1; 0 for n=1), min,
max and n are over those. ``run_means`` keeps one mean per run that printed
the figure, so the spread between boots stays visible.

Significance (compare): Welch's two-sided t-test, p < 0.05 (ALPHA). The
samples are the per-run means when both kernels have at least two runs of
the figure (the boot is the unit of repetition: repeats inside one boot
share its state, and under TCG boots differ more than repeats do), else the
pooled values (``basis`` says which). With fewer than two samples on a side
there is no noise estimate and ``significant`` is None. When both sides have
zero variance, any difference is significant. ``better_on`` names the
better kernel only when the difference is significant.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..parse import tap
from . import stats as _stats

ALPHA = 0.05
LOWER, HIGHER = 'lower', 'higher'

_NUM = r'(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?'
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


class PlotError(RuntimeError):
    """gnuplot ran and failed (a bug in the script made here)."""


@dataclass(frozen=True)
class Figure:
    """One printed measurement."""
    name: str
    value: float
    unit: str
    better: str            # LOWER or HIGHER


@dataclass(frozen=True)
class Stats:
    """All values of one figure on one kernel (module docstring)."""
    name: str
    unit: str
    better: str
    n: int
    mean: float
    stddev: float
    min: float
    max: float
    values: tuple[float, ...]
    run_means: tuple[float, ...]


# ---------------------------------------------------------------- parsing

def _clean_lines(text: str) -> Iterable[tuple[bool, str]]:
    """(had a printk time stamp, the line without it and without '#' prefixes)."""
    for raw in text.splitlines():
        stamp, line = tap.split_timestamp(raw)
        yield stamp is not None, _HASH_RE.sub('', line).strip()


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
    # The benchmark left the selftest for bench/gup_fast_bench.c, same lines.
    'gup_fast_bench': _parse_gup_null_mapping,
}


def parse(program: str, text: str) -> list[Figure]:
    """Every figure ``program`` printed in ``text``, in order ([] if none)."""
    return PARSERS.get(os.path.basename(program), _parse_generic)(text)


# ------------------------------------------------------------- statistics

def _sd(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    m = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (len(values) - 1))


def summarise(runs: list[list[Figure]]) -> dict[str, Stats]:
    """Per figure name (in order of first appearance): Stats over all runs.

    ValueError when one name comes with two units or directions (the
    figures of two different programs mixed up).
    """
    values: dict[str, list[float]] = {}
    run_means: dict[str, list[float]] = {}
    kind: dict[str, tuple[str, str]] = {}
    for run in runs:
        this_run: dict[str, list[float]] = {}
        for f in run:
            if kind.setdefault(f.name, (f.unit, f.better)) != (f.unit, f.better):
                raise ValueError(f'figure {f.name!r}: unit/better {f.unit}/{f.better} '
                                 f'differs from {kind[f.name][0]}/{kind[f.name][1]}')
            this_run.setdefault(f.name, []).append(f.value)
        for name, vals in this_run.items():
            values.setdefault(name, []).extend(vals)
            run_means.setdefault(name, []).append(_stats.mean(vals))
    out = {}
    for name, vals in values.items():
        unit, better = kind[name]
        out[name] = Stats(name, unit, better, len(vals), _stats.mean(vals), _sd(vals),
                          min(vals), max(vals), tuple(vals), tuple(run_means[name]))
    return out


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                    -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return _betai(df / 2.0, 0.5, df / (df + t * t))


def welch(a: Sequence[float], b: Sequence[float]) -> Optional[tuple[float, float, float]]:
    """(t, df, two-sided p) of Welch's test of mean(b) - mean(a); None if a side has < 2."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return None
    ma, mb = math.fsum(a) / na, math.fsum(b) / nb
    qa, qb = _sd(a) ** 2 / na, _sd(b) ** 2 / nb
    se2 = qa + qb
    if se2 == 0:
        return (0.0, na + nb - 2.0, 1.0) if ma == mb else \
            (math.copysign(math.inf, mb - ma), na + nb - 2.0, 0.0)
    t = (mb - ma) / math.sqrt(se2)
    df = se2 ** 2 / (qa ** 2 / (na - 1) + qb ** 2 / (nb - 1))
    return t, df, t_two_sided_p(t, df)


def compare(a: dict[str, Stats], b: dict[str, Stats]) -> list[dict]:
    """One row per figure present in both (in A's order); see the module docstring."""
    rows = []
    for name, sa in a.items():
        sb = b.get(name)
        if sb is None:
            continue
        if (sa.unit, sa.better) != (sb.unit, sb.better):
            raise ValueError(f'figure {name!r}: {sa.unit}/{sa.better} on A, '
                             f'{sb.unit}/{sb.better} on B')
        by_runs = len(sa.run_means) >= 2 and len(sb.run_means) >= 2
        xa, xb = (sa.run_means, sb.run_means) if by_runs else (sa.values, sb.values)
        test = welch(xa, xb)
        significant = None if test is None else test[2] < ALPHA
        better_on = None
        if significant and sa.mean != sb.mean:
            b_lower = sb.mean < sa.mean
            better_on = 'b' if b_lower == (sa.better == LOWER) else 'a'
        ratio = sb.mean / sa.mean if sa.mean else None
        rows.append({
            'name': name, 'unit': sa.unit, 'better': sa.better,
            'a_mean': sa.mean, 'a_sd': sa.stddev, 'a_n': sa.n, 'a_runs': len(sa.run_means),
            'b_mean': sb.mean, 'b_sd': sb.stddev, 'b_n': sb.n, 'b_runs': len(sb.run_means),
            'ratio': ratio,
            'change_pct': (ratio - 1.0) * 100.0 if ratio is not None else None,
            'basis': 'runs' if by_runs else 'values',
            't': None if test is None else test[0],
            'df': None if test is None else test[1],
            'p_value': None if test is None else test[2],
            'significant': significant,
            'better_on': better_on,
        })
    return rows


# ----------------------------------------------------------------- report

def _decimals(value: float) -> int:
    """Decimals that show about four significant digits (none for >= 1000)."""
    if value == 0 or not math.isfinite(value):
        return 1
    return max(0, min(6, 3 - math.floor(math.log10(abs(value)))))


def _mean_sd(mean: float, sd: float) -> str:
    d = _decimals(mean)
    return f'{mean:.{d}f} ± {sd:.{d}f}'


def _verdict(row: dict) -> str:
    if row['significant'] is None:
        return 'n/a (<2 samples)'
    if not row['significant']:
        return 'within noise'
    return f"{row['better_on'].upper()} better" if row['better_on'] else 'differs'


def format_table(rows: list[dict], label_a: str, label_b: str, emulated: bool) -> str:
    """Fixed-width table of compare() rows, with what A and B are and the rule used."""
    lines = []
    if emulated:
        lines.append('QEMU TCG: emulated CPU, not hardware; absolute figures are not '
                     'hardware timings, only the comparison between kernels means something.')
    lines += [f'A: {label_a}', f'B: {label_b}', '']
    if not rows:
        lines.append('(no figure printed on both kernels)')
        return '\n'.join(lines)
    headers = ['figure', 'unit', 'A mean ± sd', 'n', 'B mean ± sd', 'n', 'B/A', 'change',
               'p', 'verdict']
    table = []
    for r in rows:
        table.append([
            r['name'], r['unit'], _mean_sd(r['a_mean'], r['a_sd']),
            f"{r['a_n']}/{r['a_runs']}", _mean_sd(r['b_mean'], r['b_sd']),
            f"{r['b_n']}/{r['b_runs']}",
            None if r['ratio'] is None else f"{r['ratio']:.3f}",
            None if r['change_pct'] is None else f"{r['change_pct']:+.1f}%",
            None if r['p_value'] is None else f"{r['p_value']:.3g}",
            _verdict(r),
        ])
    lines.append(_stats.format_table(
        table, headers,
        right_align=[False, False, True, True, True, True, True, True, True, False]))
    lines += ['',
              'mean ± sd (sample) over every value of every run; n = values/runs. '
              'p: two-sided Welch t-test',
              f'on the per-run means (on all values when a kernel has one run), '
              f'significant when p < {ALPHA}.']
    return '\n'.join(lines)


def _gp_str(text: str) -> str:
    """A gnuplot single-quoted string (no escapes inside; '' is a quote)."""
    return "'" + text.replace('\n', ' ').replace("'", "''") + "'"


def plot(rows: list[dict], outdir: Path, label_a: str, label_b: str, title: str) -> Optional[Path]:
    """Bar chart A vs B per figure, error bars = sd, as outdir/figures.png.

    Figures in different units are each divided by A's mean (A = 1; the
    title and y label say so; figures with A's mean 0 are left out).
    None when gnuplot is missing or nothing can be drawn; PlotError when
    gnuplot fails.
    """
    if shutil.which('gnuplot') is None:
        return None
    normalised = len({r['unit'] for r in rows}) > 1
    data: list[str] = []
    top, longest = 0.0, 0
    for r in rows:
        scale = 1.0
        if normalised:
            if not r['a_mean']:
                continue
            scale = 1.0 / r['a_mean']
        name = r['name'].replace('\t', ' ').replace('"', "'")
        cells = [r['a_mean'] * scale, r['a_sd'] * scale, r['b_mean'] * scale, r['b_sd'] * scale]
        top = max(top, cells[0] + cells[1], cells[2] + cells[3])
        longest = max(longest, len(name))
        data.append(name + ''.join(f'\t{c!r}' for c in cells) + '\n')
    if not data:
        return None
    outdir.mkdir(parents=True, exist_ok=True)
    dat, script, png = outdir / 'figures.dat', outdir / 'figures.gp', outdir / 'figures.png'
    dat.write_text(''.join(data))
    if normalised:
        title += " (each figure / A's mean: units differ)"
        ylabel = "relative to A's mean (A = 1)"
    else:
        ylabel = rows[0]['unit']
    width = min(2000, max(640, 130 * len(data) + 240))
    # Groups sit at 0..n-1 of an x range -1..n; about 9 px a character:
    # turn the names when they would touch.
    turn = longest * 9 > (width - 160) / (len(data) + 1) - 10
    xtics = 'set xtics nomirror rotate by 30 right' if turn else 'set xtics nomirror'
    script.write_text(f"""set terminal pngcairo size {width},560 noenhanced
set output {_gp_str(str(png))}
set title {_gp_str(title)}
set datafile separator "\\t"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.7 border -1
set ylabel {_gp_str(ylabel)}
set yrange [0:{top * 1.15 if top > 0 else 1.0!r}]
set grid ytics
set key outside bottom center horizontal
{xtics}
plot {_gp_str(str(dat))} using 2:3:xtic(1) title {_gp_str('A: ' + label_a)}, \\
     '' using 4:5 title {_gp_str('B: ' + label_b)}
""")
    done = subprocess.run(['gnuplot', str(script)], capture_output=True, text=True)
    if done.returncode != 0 or not png.exists():
        raise PlotError(f'gnuplot {script} failed (exit {done.returncode}): '
                        f'{done.stderr.strip()}')
    return png
