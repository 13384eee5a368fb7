"""Check --test-args on the host, by the rules the benchmark applies.

--test-args are the arguments of the benchmark, bench/gup_fast_bench.c (the
selftest gup_null_mapping takes none since series v2). A bad argument must
be refused before a VM boots (exit 2), not discovered inside the guest,
where the benchmark exits 1 -- a failed run.

The rules live in one table, RULES, keyed by option letter; the limits are
named by the C macros the benchmark uses and read from its source at check
time, so a changed limit needs no edit here. The option letters it accepts
are read from its getopt() string: a letter the source no longer accepts is
refused, and a new letter without a rule is passed through unchecked (and
reported by the unit tests, which compare the table with the source).

Parsing follows glibc getopt(): clustered flags (-Bp 8), attached values
(-p8), options after operands (permutation), and "--" ending the options.
"""
from __future__ import annotations

import getopt
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .host import REPO, UsageError

BENCH = REPO / "bench/gup_fast_bench.c"
# The benchmark defines its own limits; gup_test has none of its own (no
# max_pages parameter), so nothing else is read.
SELFTEST = BENCH          # the older name


@dataclass(frozen=True)
class Rule:
    kind: str                  # "int" (1..MAX), "ratio" (>0..MAX), "flag", "help"
    limit: str | None = None   # C macro naming the upper bound
    what: str = ""


# Keep in step with parse_args() in bench/gup_fast_bench.c.
RULES = {
    "p": Rule("int", "MAX_PAGES", "pages per buffer"),
    "r": Rule("int", "MAX_REPS", "benchmark repetitions"),
    "i": Rule("int", "MAX_ITERS", "timed passes (ioctls) per repetition"),
    "c": Rule("int", "MAX_PAGES_PER_CALL", "pages per pin call (capped at -p)"),
    "t": Rule("ratio", "MAX_RATIO", "largest shadow/anon ratio"),
    "V": Rule("int", "MAX_CV", "CV (%) above which a bench cell is noisy"),
    "L": Rule("flag", what="benchmark FOLL_LONGTERM|FOLL_WRITE pins"),
    "B": Rule("flag", what="skip the benchmark"),
    "h": Rule("help", what="print the benchmark's help"),
}
# Operands: benchmark thread counts, each 1..MAX_THREADS, at most
# MAX_THREAD_COUNTS of them; threads x reps x iters <= MAX_BENCH_SAMPLES.
THREADS_LIMIT, THREAD_COUNTS_LIMIT, SAMPLES_LIMIT = (
    "MAX_THREADS", "MAX_THREAD_COUNTS", "MAX_BENCH_SAMPLES")
DEFAULTS = {"p": "DEF_PAGES", "r": "DEF_REPS", "i": "DEF_ITERS"}


def _c_number(expr: str) -> float:
    """Value of a C constant: 512, 262144U, 1000000.0, (16UL * 1024 * 1024)."""
    expr = re.sub(r"(?<=\d)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)\b", "", expr)
    factors = expr.strip().strip("()").split("*")
    value = 1.0
    for f in factors:
        if not re.fullmatch(r"\s*\d+(?:\.\d*)?\s*", f):
            raise ValueError(expr)
        value *= float(f)
    return value


def constants(*sources: Path) -> dict[str, float]:
    """#define NAME <number expression> of @sources."""
    out: dict[str, float] = {}
    for src in sources:
        text = src.read_text(errors="replace")
        for name, expr in re.findall(r"^#define\s+(\w+)\s+([^\n/]+)", text, re.M):
            try:
                out[name] = _c_number(expr.strip())
            except (ValueError, SyntaxError):
                pass
    return out


def getopt_string(source: Path = BENCH) -> str:
    m = re.search(r'getopt\(\s*argc\s*,\s*argv\s*,\s*"([^"]*)"\s*\)',
                  source.read_text(errors="replace"))
    if not m:
        raise UsageError(f"cannot find the getopt() call in {source}: the benchmark's "
                         "arguments cannot be checked; update runner/gupnm/testargs.py")
    return m.group(1)


def usage() -> str:
    opts = " ".join(f"[-{k}]" if r.kind in ("flag", "help") else f"[-{k} N]"
                    for k, r in RULES.items())
    return f"gup_fast_bench {opts} [THREADS...]"


def _bad(msg: str) -> UsageError:
    return UsageError(f"bad --test-args: {msg}\n  the benchmark takes: {usage()}\n"
                      "  (pass arguments that start with '-' as --test-args='-B ...')")


def _int(letter: str, value: str, limit: float) -> int:
    # parse_ulong(): a decimal integer in 1..limit, nothing else.
    if not re.fullmatch(r"\d+", value) or not 1 <= int(value) <= limit:
        raise _bad(f"-{letter} '{value}': expected an integer in 1..{int(limit)}")
    return int(value)


def _ratio(value: str, limit: float) -> float:
    # strtod() must take all of it; then 0 < v <= MAX_RATIO.
    try:
        v = float.fromhex(value) if "0x" in value.lower() else \
            float(value) if "_" not in value else math.nan
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and 0 < v <= limit):
        raise _bad(f"-t '{value}': expected a number above 0, up to {limit:.0f}")
    return v


def check(text: str, *, vcpus: int, source: Path = BENCH) -> list[str]:
    """The argument list of @text, or UsageError saying what is wrong."""
    args = text.split()
    accepted = getopt_string(source)
    c = constants(source)

    def limit(name: str) -> float:
        if name not in c:
            raise UsageError(f"{name} is not defined in {source.name}: "
                             "update runner/gupnm/testargs.py")
        return c[name]

    values, operands = _getopt(args, accepted, limit)
    _check_threads(operands, values, vcpus, c, limit)
    return args


def _getopt(args: list[str], accepted: str,
            limit: Callable[[str], float]) -> tuple[dict[str, float], list[str]]:
    """@args read as the benchmark's getopt(@accepted) reads them: the
    checked values of the options RULES knows, and the operands."""
    values: dict[str, float] = {}
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands += args[i:]
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        j = 1
        while j < len(arg):
            letter = arg[j]
            j += 1
            pos = accepted.find(letter)
            if letter == ":" or pos < 0:
                raise _bad(f"unknown option -{letter}")
            rule = RULES.get(letter)
            if pos + 1 < len(accepted) and accepted[pos + 1] == ":":
                if j < len(arg):
                    value, j = arg[j:], len(arg)
                elif i < len(args):
                    value, i = args[i], i + 1
                else:
                    raise _bad(f"-{letter} needs a value")
                if rule and rule.kind == "int":
                    values[letter] = _int(letter, value, limit(rule.limit))
                elif rule and rule.kind == "ratio":
                    values[letter] = _ratio(value, limit(rule.limit))
            elif rule and rule.kind == "help":
                raise _bad(f"-{letter} only prints the benchmark's help: nothing would run")
    return values, operands


def _check_threads(operands: list[str], values: dict[str, float], vcpus: int,
                   c: dict[str, float], limit: Callable[[str], float]) -> None:
    """The thread counts (default 1 2 4 ... vcpus) within the benchmark's
    limits, and repetitions x iterations within its samples per thread."""
    most = int(limit(THREAD_COUNTS_LIMIT))
    if len(operands) > most:
        raise _bad(f"too many thread counts ({len(operands)}): at most {most}")
    threads = [_int_operand(t, limit(THREADS_LIMIT)) for t in operands]
    if not threads:                   # the default: 1 2 4 ... ncpus
        n = min(vcpus, int(limit(THREADS_LIMIT)))
        threads = [1 << k for k in range(max(n - 1, 0).bit_length())] + [n]
    reps = values.get("r", c.get(DEFAULTS["r"], 1))
    iters = values.get("i", c.get(DEFAULTS["i"], 1))
    samples = limit(SAMPLES_LIMIT)
    for t in threads:
        if reps * iters > samples // t:
            raise _bad(f"{t} threads x {int(reps)} reps x {int(iters)} iters "
                       f"exceeds {int(samples)} samples")


def _int_operand(value: str, limit: float) -> int:
    if not re.fullmatch(r"\d+", value) or not 1 <= int(value) <= limit:
        raise _bad(f"thread count '{value}': expected an integer in 1..{int(limit)}")
    return int(value)


def bench_params(text: str, *, source: Path = BENCH) -> dict:
    """Pages per buffer, pages per call, repetitions, iterations,
    FOLL_LONGTERM (-L) and no bench (-B) of arguments check() accepted,
    with the benchmark's own defaults."""
    found, _ = getopt.getopt(text.split(), getopt_string(source))
    opts = dict(found)
    c = constants(source)
    pages = int(opts.get("-p", c["DEF_PAGES"]))
    per_call = min(pages, int(c["MAX_PAGES_PER_CALL"]))
    return {"pages": pages, "pages_per_call": min(int(opts.get("-c", per_call)), pages),
            "reps": int(opts.get("-r", c["DEF_REPS"])),
            "iters": int(opts.get("-i", c["DEF_ITERS"])),
            "longterm": "-L" in opts, "no_bench": "-B" in opts}
