"""Parse the TAP 13 / KTAP output of the gup_null_mapping kselftest.

The input is usually a whole serial-console log: kernel messages carrying
printk timestamps (``[    1.234567] ...``) are interleaved with the test's own
output, and the test's lines may themselves carry a timestamp (when logged via
/dev/kmsg) or a fixed prefix.  The parser therefore

* strips a leading console timestamp from every line,
* starts at the first ``TAP version N`` / ``KTAP version N`` line (or at the
  top when there is none) and takes whatever precedes ``TAP version`` on that
  line as a prefix that every later TAP line must carry,
* ignores lines it does not recognise (kernel messages, init chatter) and
  indented lines (nested subtests, which this selftest does not emit).

On top of plain TAP it understands the selftest's own diagnostics: verdict
lines (``# verdict driver read: 0/512 pages via GUP-fast (expected 512, 1 try)``;
the row of gup_test's own driver-style pages is "driver", "shadow" in logs
of the test before v4, read as "driver": DRIVER_ROW_NAMES),
the benchmark (``# bench: ...`` lines stating its parameters, the header,
rows, ``# bench ratio``) and kselftest's ``# Totals:`` line. A benchmark row
is ``bench THREADS BACKING MIN MEDIAN P90 MAX CV% [noisy]`` in ns/page
(older tests print ``bench THREADS BACKING MIN MEDIAN MAX``: no p90, cv).

Structural problems never raise: they are collected in ``TapResult.errors``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

STATUSES = ('pass', 'fail', 'skip', 'xfail', 'timeout', 'error')
FAILED_STATUSES = ('fail', 'timeout', 'error')

# printk time stamp, optionally after a syslog level ("<4>") and followed by a
# PRINTK_CALLER field ("[    T1]").
_TIMESTAMP_RE = re.compile(
    r'^(?:<\d+>)?\[\s*(?P<ts>\d+\.\d+)\](?:\[\s*[A-Z]\d+\])? ?')
_VERSION_RE = re.compile(r'^(?P<prefix>.*?)K?TAP version (?P<version>\d+)\s*$')
_PLAN_RE = re.compile(r'^1\.\.(?P<count>\d+)\s*(?:#\s*(?P<comment>.*))?$')
_RESULT_RE = re.compile(r'^(?P<ok>ok|not ok) (?P<number>\d+)(?:\s+|$)(?P<rest>.*)$')
_BAIL_RE = re.compile(r'^Bail out!\s*(?P<reason>.*)$')
_DIRECTIVE_RE = re.compile(
    r'^(?P<directive>SKIP|TODO|XFAIL|XPASS|TIMEOUT|ERROR)\b[:\s]*(?P<reason>.*)$',
    re.IGNORECASE)

_NUM = r'[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?'
_VERDICT_RE = re.compile(
    r'^verdict (?P<backing>\S+) (?P<access>read|write|longterm_write|pin_write): (?P<fast>\d+)/(?P<total>\d+)'
    r' pages via GUP-fast \(expected (?P<expected>\d+)'
    r'(?:, (?P<tries>\d+) tr(?:y|ies))?\)$')
_BENCH_ROW_RE = re.compile(
    rf'^bench\s+(?P<threads>\d+)\s+(?P<backing>[A-Za-z][\w-]*)\s+'
    rf'(?P<min>{_NUM})\s+(?P<median>{_NUM})\s+'
    rf'(?:(?P<p90>{_NUM})\s+(?P<max>{_NUM})\s+(?P<cv>{_NUM})%(?:\s+(?P<noisy>noisy))?'
    rf'|(?P<max_only>{_NUM}))$')
_BENCH_TITLE_RE = re.compile(r'^bench:\s*(?P<title>.*)$')
# What the "bench:" lines say of the benchmark's parameters, each found
# wherever it is said (tests before the pages/call knob print fewer).
_BENCH_PARAM_RES = (
    ('flags', re.compile(r'pin_user_pages_fast\((?P<v>[A-Z_|]+)\)'), str),
    ('pages', re.compile(r'\b(?P<v>\d+) pages/thread\b'), int),
    ('pages_per_call', re.compile(r'\b(?P<v>\d+) pages/call\b'), int),
    ('reps', re.compile(r'\b(?P<v>\d+) reps x \d+ iters\b'), int),
    ('iters', re.compile(r'\b\d+ reps x (?P<v>\d+) iters\b'), int),
    ('warmup', re.compile(r'\b(?P<v>\d+) warm-up pass'), int),
    ('cpus', re.compile(r'\b(?P<v>\d+) usable CPUs?, thread t pinned\b'), int),
    ('noisy_cv', re.compile(rf'noisy above (?P<v>{_NUM})%'), float),
)
BENCH_PARAMS = ('flags', 'longterm', 'pages', 'pages_per_call', 'reps', 'iters',
                'warmup', 'pinned', 'cpus', 'noisy_cv')
_BENCH_RATIO_RE = re.compile(
    rf'^bench ratio threads=(?P<threads>\d+) (?P<num>[\w-]+)/(?P<den>[\w-]+)=(?P<value>{_NUM})$')
# The benchmark refused a cell's ratio: its control was not order-0.
_BENCH_CONTROL_RE = re.compile(r'^bench control threads=(?P<threads>\d+): (?P<why>.*)$')
_TOTALS_RE = re.compile(r'^Totals:\s*(?P<fields>(?:\w+:\d+\s*)+)$')

# The row of gup_test's own pages (vm_insert_page(), NULL ->mapping): the
# regression's row. "driver" since the series' v4; logs of older tests call
# it "shadow". Verdicts are keyed by the new name whichever the log says;
# result names stay as the log has them (canonical_case() maps them).
DRIVER = 'driver'
DRIVER_ROW_NAMES = (DRIVER, 'shadow')
_ACCESS = r'(longterm_write|read|write)(?![A-Za-z])'
_OLD_DRIVER_CASE = re.compile(rf'(^|_)verdict_shadow_(?={_ACCESS})')
_DRIVER_CASE = re.compile(rf'(?:^|_)verdict_{DRIVER}_{_ACCESS}')


def row_name(backing: str) -> str:
    """The row's name today: "shadow" (the test before v4) is "driver"."""
    return DRIVER if backing in DRIVER_ROW_NAMES else backing


def canonical_case(name: str) -> str:
    """A result name with today's row name: verdict_shadow_read (a log of
    the test before v4) is verdict_driver_read; anything else unchanged.
    Also inside a flattened name (selftests_mm_gup_null_mapping_verdict_...)."""
    return _OLD_DRIVER_CASE.sub(rf'\1verdict_{DRIVER}_', name or '')


TEST = 'gup_null_mapping'
_FLAT_CASE = re.compile(rf'(?:^|_){TEST}(?:_(?P<case>.+))?$')


def case_id(name: str) -> str:
    """A result's name on every path (run, parse, kselftest, lava): the
    test's own name for it, with today's row name. A flattened name (how
    run_kselftest.sh's nesting, LAVA and LKFT record it:
    mm_ksft_gup_test_sh_gup_null_mapping_verdict_shadow_read) loses its
    parents' part (verdict_driver_read); the test's own line
    (mm_ksft_gup_test_sh_gup_null_mapping, its exit status) is
    gup_null_mapping; any other name is canonical_case()'s."""
    m = _FLAT_CASE.search(name or '')
    if m is None:
        return canonical_case(name)
    return canonical_case(m.group('case')) if m.group('case') else TEST


def unnest(text: str, test: str = TEST) -> str:
    """The test's own TAP out of a runner's nesting: run_vmtests.sh's
    (``# running ./gup_null_mapping``, one ``# `` level) or run_kselftest.sh's
    around it (``# # running ...``, two levels), that many levels removed,
    up to the runner's ``[PASS]``/``[FAIL]``/``[SKIP]`` line; '' when the
    test never ran."""
    out, prefix, skip = [], None, 0
    for line in text.splitlines():
        m = re.match(rf"^((?:# )+)running \S*{re.escape(test)}\b", line)
        if m:
            # The title's underline follows; with busybox tr it is not
            # made of dashes ("# -unnin--./-u-_null_m---in-"), so skip it
            # by position.
            prefix, skip = m.group(1), 1
            continue
        if skip:
            skip -= 1
            continue
        if prefix is None:
            continue
        if re.match(rf"^{re.escape(prefix)}\[(PASS|FAIL|SKIP)\]$", line):
            prefix = None
        elif line.startswith(prefix):
            out.append(line[len(prefix):])
        elif line == prefix.rstrip():
            out.append("")
        else:
            out.append(line)
    return "\n".join(out) + "\n" if out else ""


def is_driver_case(name: str, accesses: tuple[str, ...] = ('read', 'write',
                                                           'longterm_write')) -> bool:
    """True for verdict_driver_<access> (verdict_shadow_<access> before v4)
    with @access one of @accesses, also at the end of a flattened name."""
    m = _DRIVER_CASE.search(canonical_case(name))
    return m is not None and m.group(1) in accesses


@dataclass
class Result:
    """One ``ok``/``not ok`` line.

    ``diagnostics`` holds the text of the ``#`` lines (without the leading
    ``# ``) seen since the previous result; ``directive`` is the raw directive
    word (``SKIP``, ``XFAIL``...) or None.
    """
    number: int
    name: str
    status: str
    directive_reason: Optional[str] = None
    diagnostics: list[str] = field(default_factory=list)
    directive: Optional[str] = None
    line_no: int = 0


@dataclass(frozen=True)
class Verdict:
    """``# verdict <backing> <access>: <fast>/<total> pages via GUP-fast (expected N, T tries)``.

    backing: the row, by today's name (row_name(): a log's "shadow" is
    "driver"). access: read, write and longterm_write (FOLL_PIN,
    FOLL_PIN|FOLL_WRITE and FOLL_PIN|FOLL_LONGTERM|FOLL_WRITE; FOLL_GET for
    read and write in logs of v3 tests where gup_test could not ask about
    pins); pin_write in logs of the test before issue 28 (a pin of clean
    driver pages, told by the dirty bit).
    """
    backing: str
    access: str
    fast: int
    total: int
    expected: int
    tries: Optional[int] = None   # asks until the answer was final; None: not said


@dataclass(frozen=True)
class BenchRow:
    """``# bench <threads> <backing> <min> <median> <p90> <max> <cv>% [noisy]``
    in ns/page; cv is stddev/mean in %. p90, cv and noisy are None for the
    older ``<min> <median> <max>`` rows."""
    threads: int
    backing: str
    min: float
    median: float
    max: float
    p90: Optional[float] = None
    cv: Optional[float] = None
    noisy: Optional[bool] = None


@dataclass
class TapResult:
    """Everything parse_tap() found; see the module docstring."""
    version: Optional[int] = None
    plan: Optional[int] = None
    skip_reason: Optional[str] = None
    results: list[Result] = field(default_factory=list)
    verdicts: dict[tuple[str, str], Verdict] = field(default_factory=dict)
    bench: list[BenchRow] = field(default_factory=list)
    bench_title: Optional[str] = None
    bench_params: dict[str, Any] = field(default_factory=dict)
    bench_ratios: dict[tuple[int, str, str], float] = field(default_factory=dict)
    bench_refused: dict[int, str] = field(default_factory=dict)
    totals: Optional[dict[str, int]] = None
    bail_out: Optional[str] = None
    trailing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> bool:
        """True for a whole-test skip (``1..0 # SKIP reason``)."""
        return self.plan == 0 and self.skip_reason is not None


def split_timestamp(line: str) -> tuple[Optional[float], str]:
    """Split a console line into (printk seconds or None, rest of the line)."""
    line = line.rstrip('\r\n')
    m = _TIMESTAMP_RE.match(line)
    if not m:
        return None, line
    return float(m.group('ts')), line[m.end():]


def is_tap_line(text: str) -> bool:
    """True when ``text`` (timestamp already stripped) looks like TAP output."""
    return bool(_VERSION_RE.match(text) and text.lstrip().startswith(('TAP', 'KTAP'))
                or _PLAN_RE.match(text) or _RESULT_RE.match(text)
                or _BAIL_RE.match(text) or text == '#' or text.startswith('# '))


def _status(ok: bool, directive: Optional[str]) -> str:
    d = directive.upper() if directive else None
    if d == 'SKIP':
        return 'skip'
    if d == 'XFAIL' or (d == 'TODO' and not ok):
        return 'xfail'
    if d == 'XPASS':
        return 'fail'
    if d == 'TIMEOUT':
        return 'timeout'
    if d == 'ERROR':
        return 'error'
    return 'pass' if ok else 'fail'


def _parse_result(m: re.Match, line_no: int, diagnostics: list[str]) -> Result:
    rest = m.group('rest')
    hash_at = re.search(r'(?:^|\s)#', rest)
    name, comment = rest, None
    if hash_at:
        name = rest[:hash_at.start()]
        comment = rest[hash_at.end():].strip()
    name = re.sub(r'^-\s+', '', name.strip())
    directive, reason = None, comment or None
    if comment:
        dm = _DIRECTIVE_RE.match(comment)
        if dm:
            directive = dm.group('directive').upper()
            reason = dm.group('reason').strip() or None
    ok = m.group('ok') == 'ok'
    return Result(number=int(m.group('number')), name=name, status=_status(ok, directive),
                  directive_reason=reason, diagnostics=diagnostics, directive=directive,
                  line_no=line_no)


def _handle_diagnostic(tap: TapResult, text: str) -> None:
    m = _VERDICT_RE.match(text)
    if m:
        v = Verdict(row_name(m.group('backing')), m.group('access'), int(m.group('fast')),
                    int(m.group('total')), int(m.group('expected')),
                    int(m.group('tries')) if m.group('tries') else None)
        key = (v.backing, v.access)
        if key in tap.verdicts:
            tap.errors.append(f'duplicate verdict for {v.backing} {v.access}')
        tap.verdicts[key] = v
        return
    m = _BENCH_ROW_RE.match(text)
    if m:
        new = m.group('p90') is not None
        tap.bench.append(BenchRow(
            int(m.group('threads')), m.group('backing'), float(m.group('min')),
            float(m.group('median')), float(m.group('max') if new else m.group('max_only')),
            float(m.group('p90')) if new else None, float(m.group('cv')) if new else None,
            bool(m.group('noisy')) if new else None))
        return
    m = _BENCH_TITLE_RE.match(text)
    if m:
        _bench_line(tap, m.group('title').strip())
        return
    m = _BENCH_RATIO_RE.match(text)
    if m:
        key = (int(m.group('threads')), m.group('num'), m.group('den'))
        tap.bench_ratios[key] = float(m.group('value'))
        return
    m = _BENCH_CONTROL_RE.match(text)
    if m:
        tap.bench_refused[int(m.group('threads'))] = m.group('why')
        return
    m = _TOTALS_RE.match(text)
    if m:
        tap.totals = {k: int(v) for k, v in re.findall(r'(\w+):(\d+)', m.group('fields'))}


def _bench_line(tap: TapResult, text: str) -> None:
    """A ``bench: ...`` line: its parameters, and the title (the line naming
    the pin call; before any, the last ``bench:`` line, as older runners did)."""
    params = tap.bench_params
    for key, regex, kind in _BENCH_PARAM_RES:
        m = regex.search(text)
        if m:
            params[key] = kind(m.group('v'))
    if 'flags' in params:
        params['longterm'] = 'FOLL_LONGTERM' in params['flags'].split('|')
    if 'cpus' in params:
        params['pinned'] = True
    if text.startswith('pin_user_pages_fast(') or not (
            tap.bench_title or '').startswith('pin_user_pages_fast('):
        tap.bench_title = text


def bench_params(tap: TapResult) -> Optional[dict[str, Any]]:
    """The benchmark's parameters as stated by the test, every key of
    BENCH_PARAMS present (None: not stated); None without any."""
    if not tap.bench_params:
        return None
    return {k: tap.bench_params.get(k) for k in BENCH_PARAMS}


def _check_structure(tap: TapResult, saw_anything: bool) -> None:
    if not saw_anything:
        tap.errors.append('no TAP output found')
        return
    if tap.plan is None:
        tap.errors.append('missing plan')
    seen: dict[str, int] = {}
    expected_number = 1
    for r in tap.results:
        if r.number != expected_number:
            tap.errors.append(f'result {r.number} ({r.name}) out of order, expected {expected_number}')
        expected_number = r.number + 1
        if r.name:
            if r.name in seen:
                tap.errors.append(f'duplicate result name {r.name!r} (results {seen[r.name]} and {r.number})')
            else:
                seen[r.name] = r.number
    # A verdict_<backing>_<access> result must agree with its verdict line:
    # "ok" next to "0/512 (expected 512)" is a rewritten (forged) log.
    for r in tap.results:
        m = re.fullmatch(r'verdict_(\w+?)_(read|write)', r.name or '')
        v = tap.verdicts.get((row_name(m.group(1)), m.group(2))) if m else None
        if v is not None and r.status == 'pass' and v.fast != v.expected:
            tap.errors.append(f'result {r.number} ({r.name}) is ok but its verdict line says '
                              f'{v.fast}/{v.total} (expected {v.expected})')
    if tap.plan is not None and len(tap.results) != tap.plan:
        tap.errors.append(f'planned {tap.plan} results, got {len(tap.results)}')
    if tap.totals is not None:
        c = counts(tap)
        for key in ('pass', 'skip'):
            if key in tap.totals and tap.totals[key] != c[key]:
                tap.errors.append(f'Totals line says {key}:{tap.totals[key]}, results have {c[key]}')
        if sum(tap.totals.values()) != len(tap.results):
            tap.errors.append(f'Totals line sums to {sum(tap.totals.values())}, '
                              f'results have {len(tap.results)}')


def parse_tap(lines: Iterable[str]) -> TapResult:
    """Parse TAP/KTAP output (a console log, a list of lines or one string)."""
    if isinstance(lines, str):
        lines = lines.split('\n')
    stripped = [split_timestamp(line)[1] for line in lines]

    tap = TapResult()
    start, prefix = _tap_start(stripped)
    pending: list[str] = []
    saw_anything = False
    for line_no, text in enumerate(stripped[start:], start + 1):
        if prefix:
            if not text.startswith(prefix):
                continue
            text = text[len(prefix):]
        text = text.rstrip()
        if not text or text[0].isspace():
            continue
        kind = _take_line(tap, text, line_no, pending)
        if kind:
            saw_anything = True
            if kind == 'result':
                pending = []
            continue
        if text.startswith('#'):
            diag = text[1:]
            diag = diag[1:] if diag.startswith(' ') else diag
            pending.append(diag)
            _handle_diagnostic(tap, diag)
    tap.trailing = pending
    _check_structure(tap, saw_anything)
    return tap


def _tap_start(stripped: list[str]) -> tuple[int, str]:
    """Index of the first version line and what precedes TAP on it (a
    console's prefix), or (0, '') when there is none."""
    for i, text in enumerate(stripped):
        m = _VERSION_RE.match(text)
        if m:
            return i, m.group('prefix')
    return 0, ''


def _take_line(tap: TapResult, text: str, line_no: int, pending: list[str]) -> str | None:
    """A version, plan, result or bail-out line into @tap: which ('result'
    for a result, which takes the @pending diagnostics), None for any other."""
    m = _VERSION_RE.match(text)
    if m and not m.group('prefix'):
        if tap.version is None:
            tap.version = int(m.group('version'))
        else:
            tap.errors.append(f'unexpected second version line at line {line_no}')
        return 'version'
    m = _PLAN_RE.match(text)
    if m:
        if tap.plan is not None:
            tap.errors.append(f'duplicate plan at line {line_no}')
            return 'plan'
        tap.plan = int(m.group('count'))
        dm = _DIRECTIVE_RE.match(m.group('comment') or '')
        if dm and dm.group('directive').upper() == 'SKIP':
            tap.skip_reason = dm.group('reason').strip()
        return 'plan'
    m = _RESULT_RE.match(text)
    if m:
        tap.results.append(_parse_result(m, line_no, pending))
        return 'result'
    m = _BAIL_RE.match(text)
    if m:
        tap.bail_out = m.group('reason')
        tap.errors.append(f'Bail out! {m.group("reason")}'.rstrip())
        return 'bail'
    return None


def counts(tap: TapResult) -> dict[str, int]:
    """Number of results per status, every status present (0 when absent)."""
    out = {s: 0 for s in STATUSES}
    for r in tap.results:
        out[r.status] += 1
    return out


def failed_results(tap: TapResult) -> list[Result]:
    """Results whose status is fail, timeout or error."""
    return [r for r in tap.results if r.status in FAILED_STATUSES]


def driver_verdict(tap: TapResult) -> Optional[Verdict]:
    """The driver row's read/write verdict to report: a failing one first,
    read before write."""
    found = [tap.verdicts[(DRIVER, a)] for a in ('read', 'write') if (DRIVER, a) in tap.verdicts]
    for v in found:
        if v.fast < v.total:
            return v
    return found[0] if found else None


def bug_present(tap: TapResult) -> Optional[bool]:
    """True if GUP-fast refused the driver's pages, False if it took all,
    None if unknown."""
    v = driver_verdict(tap)
    return None if v is None else v.fast < v.total


PRE_65 = ('before 6.5 a FOLL_LONGTERM|FOLL_WRITE pin of such folios goes '
          'through GUP-fast: the slow path for it came with 6.5')


# The rows whose long-term writable pins came off GUP-fast with 6.5
# (folio_fast_pin_allowed(), now gup_fast_folio_allowed()).
PRE_65_ROWS = (DRIVER, 'file')


def expect_pre65(tap: TapResult, release: Optional[str]) -> list[str]:
    """On a kernel before 6.5, a verdict_<row>_longterm_write failure (rows
    PRE_65_ROWS) whose verdict line says every page went through GUP-fast
    is that kernel's design, not a wrong fix (the selftest tracks its own
    tree and has no version branch): mark it XFAIL with the reason. The
    names of the results it marked."""
    m = re.match(r'(\d+)\.(\d+)', release or '')
    if not m or (int(m.group(1)), int(m.group(2))) >= (6, 5):
        return []
    marked = []
    for row in PRE_65_ROWS:
        lt = tap.verdicts.get((row, 'longterm_write'))
        if lt is None or lt.total == 0 or lt.fast != lt.total:
            continue
        for r in tap.results:
            if canonical_case(r.name) == f'verdict_{row}_longterm_write' and r.status == 'fail':
                r.status, r.directive, r.directive_reason = 'xfail', 'XFAIL', PRE_65
                marked.append(r.name)
                tap.verdicts[(row, 'longterm_write')] = Verdict(
                    lt.backing, lt.access, lt.fast, lt.total, lt.total, lt.tries)
    return marked


REGRESSION = 'GUP-fast rejects NULL-mapping order-0 folios'
WRONGFIX = 'FOLL_LONGTERM|FOLL_WRITE pin of NULL-mapping folios went through GUP-fast'
SECRETMEM = 'secretmem exposure'


def all_skipped(tap: TapResult) -> bool:
    """True when the test gave results and SKIPped every one (a test that
    ends with ksft_finished() exits 0 then): nothing was judged."""
    return bool(tap.results) and all(r.status == 'skip' for r in tap.results)


def diagnosis(tap: TapResult) -> Optional[str]:
    """What a run found: 'regression' (the driver's pages refused), 'wrongfix'
    (a long-term writable pin went through GUP-fast where it must not),
    'secretmem' (GUP-fast reached memfd_secret pages), 'other' (any other
    failure), 'pass', 'skip'; None when there is nothing to judge."""
    if tap.skipped:
        return 'skip'
    failed = {r.name for r in failed_results(tap)}
    if bug_present(tap):
        return 'regression'
    lt = tap.verdicts.get((DRIVER, 'longterm_write'))
    if lt is not None and lt.fast > lt.expected:
        return 'wrongfix'
    sm = [v for (b, _), v in tap.verdicts.items() if b == 'secretmem' and v.fast]
    if sm or any(n.startswith('verdict_secretmem') for n in failed):
        return 'secretmem'
    if failed or tap.errors:
        return 'other'
    if not tap.results:
        return None
    c = counts(tap)
    return 'skip' if c['pass'] == 0 and c['skip'] else 'pass'


def _display(r: Result) -> str:
    return r.name or f'#{r.number}'


def not_judged(tap: TapResult) -> str:
    """The SKIPped results by reason, in the order the test gave them:
    ``verdict_thp_read, verdict_thp_write: no THP here; verdict_x: why``;
    '' when none skipped."""
    by_reason: dict[str, list[str]] = {}
    for r in tap.results:
        if r.status == 'skip':
            by_reason.setdefault(r.directive_reason or '(no reason given)', []).append(_display(r))
    return '; '.join(f'{", ".join(names)}: {why}' for why, names in by_reason.items())


def _pass_counts(tap: TapResult, also: str = '') -> str:
    """``N passed, K skipped (not judged: ...)`` (``, X xfail`` when any);
    @also, e.g. "no driver verdict", first in the parentheses."""
    c = counts(tap)
    words = [f'{c["pass"]} passed'] + ([f'{c["xfail"]} xfail'] if c['xfail'] else [])
    skipped = not_judged(tap)
    if skipped or also:
        words.append(f'{c["skip"]} skipped')
    notes = [n for n in (also, f'not judged: {skipped}' if skipped else '') if n]
    return ', '.join(words) + (f' ({"; ".join(notes)})' if notes else '')


def summarize(tap: TapResult) -> str:
    """One short verdict line for humans (see the tests for the exact forms):
    it names the regression, a wrong fix and a secretmem exposure, and says
    "other failure" for anything else; a pass or a skip names every result
    that was SKIPped, and why (not judged)."""
    if tap.skipped:
        return f'SKIP: {tap.skip_reason or "(no reason given)"}'
    v = driver_verdict(tap)
    failed = failed_results(tap)
    what = diagnosis(tap)
    if what == 'regression':
        line = (f'{v.backing} {v.fast}/{v.total} fast \u2192 FAIL: {REGRESSION} '
                f'(bug present)')
        others = [_display(r) for r in failed if not is_driver_case(r.name)]
        return line + (f'; also failed: {", ".join(others)}' if others else '')
    if what == 'wrongfix':
        lt = tap.verdicts[(DRIVER, 'longterm_write')]
        return (f'{DRIVER} longterm_write {lt.fast}/{lt.total} fast (expected {lt.expected}) '
                f'\u2192 FAIL: wrong fix: {WRONGFIX}')
    if what == 'secretmem':
        return 'FAIL: ' + SECRETMEM + ': ' + ', '.join(
            f'{b} {a} {x.fast}/{x.total} fast' for (b, a), x in tap.verdicts.items()
            if b == 'secretmem') + ''.join(
            f'; failed: {_display(r)}' for r in failed if r.name.startswith('verdict_secretmem'))
    if failed:
        # With verdicts to go by, say that this is not the regression.
        label = 'FAIL (other failure, not the regression): ' if tap.verdicts else 'FAIL: '
        return label + ', '.join(_display(r) for r in failed)
    if tap.errors:
        more = f' (+{len(tap.errors) - 1} more)' if len(tap.errors) > 1 else ''
        return f'ERROR: {tap.errors[0]}{more}'
    if what == 'skip':
        return f'NOT JUDGED: every cell skipped: {not_judged(tap)}'
    if v is not None:
        line = f'{v.backing} {v.fast}/{v.total} fast \u2192 PASS: GUP-fast takes NULL-mapping order-0 folios'
        return line + (f'; {_pass_counts(tap)}' if not_judged(tap) else '')
    return f'PASS: {_pass_counts(tap, f"no {DRIVER} verdict")}'
