"""Small statistics and text-table helpers for benchmark numbers (ns/page).

Every function rejects empty input and non-finite values with ValueError
rather than returning NaN, so a broken measurement never turns into a
plausible-looking number in a summary.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

_NUMERIC_TEXT_RE = re.compile(r'^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[x%]?$')


def _values(values: Iterable[float], what: str = 'values') -> list[float]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f'{what}: not a number: {v!r}')
        if not math.isfinite(v):
            raise ValueError(f'{what}: not finite: {v!r}')
        out.append(float(v))
    if not out:
        raise ValueError(f'{what}: empty input')
    return out


def minimum(values: Iterable[float]) -> float:
    """Smallest value."""
    return min(_values(values, 'minimum'))


def maximum(values: Iterable[float]) -> float:
    """Largest value."""
    return max(_values(values, 'maximum'))


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean."""
    vals = _values(values, 'mean')
    return math.fsum(vals) / len(vals)


def median(values: Iterable[float]) -> float:
    """Middle value; for an even count, the mean of the two middle values."""
    vals = sorted(_values(values, 'median'))
    mid = len(vals) // 2
    if len(vals) % 2:
        return vals[mid]
    return (vals[mid - 1] + vals[mid]) / 2


@dataclass(frozen=True)
class Summary:
    """min/median/max/mean of a sample of n values."""
    n: int
    min: float
    median: float
    max: float
    mean: float


def describe(values: Iterable[float]) -> Summary:
    """Summary of ``values`` (ValueError when empty or non-finite)."""
    vals = _values(values, 'describe')
    return Summary(len(vals), min(vals), median(vals), max(vals), mean(vals))


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, with ValueError for a zero or non-finite operand."""
    num, den = _values([numerator, denominator], 'ratio')
    if den == 0:
        raise ValueError('ratio: zero denominator')
    return num / den


def speedup(before: float, after: float) -> float:
    """How many times faster ``after`` is than ``before`` (both times, > 0)."""
    b, a = _values([before, after], 'speedup')
    if b <= 0 or a <= 0:
        raise ValueError(f'speedup: times must be positive, got {before!r} and {after!r}')
    return b / a


def _cell(value: object, float_format: str, missing: str) -> str:
    if value is None:
        return missing
    if isinstance(value, float) and not isinstance(value, bool):
        return format(value, float_format)
    return str(value)


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, str) and bool(_NUMERIC_TEXT_RE.match(value))


def format_table(rows: Sequence[Sequence[object]], headers: Sequence[str], *,
                 float_format: str = '.1f', missing: str = '-',
                 right_align: Optional[Sequence[bool]] = None) -> str:
    """Render an aligned text table (no trailing newline).

    A column is right-aligned, header included, when each of its non-missing
    cells is a number (int, float, or text such as ``3.65x``); other columns
    are left-aligned.  ``right_align`` overrides the choice per column.
    Floats use ``float_format``; None cells show ``missing``.
    """
    width = len(headers)
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f'format_table: row {i} has {len(row)} cells, expected {width}')
    if right_align is None:
        right_align = [all(_is_number(row[c]) for row in rows if row[c] is not None)
                       and any(row[c] is not None for row in rows) for c in range(width)]
    elif len(right_align) != width:
        raise ValueError('format_table: right_align length differs from headers')
    text = [[str(h) for h in headers]]
    text += [[_cell(v, float_format, missing) for v in row] for row in rows]
    widths = [max(len(r[c]) for r in text) for c in range(width)]
    text.insert(1, ['-' * w for w in widths])
    out = []
    for r in text:
        cells = [r[c].rjust(widths[c]) if right_align[c] else r[c].ljust(widths[c])
                 for c in range(width)]
        out.append('  '.join(cells).rstrip())
    return '\n'.join(out)
