#!/usr/bin/env python3
"""Run every runner/tests/test_*.py and runner/tests/*/test_*.py (one folder per
package of runner/gupnm) with unittest, from any working directory.

Prints one line per test (PASS/FAIL/ERROR/SKIP), the details of each failure,
and a plain last line ``N passed, N failed`` (``, N skipped`` when any).
Errors, unexpected successes and import failures count as failed.
Exits 1 when anything failed or when no test ran, 0 otherwise.
"""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
RUNNER_DIR = TESTS_DIR.parent


class _Result(unittest.TestResult):
    """Collects outcomes and prints one line per test as it finishes."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream
        self.passed = 0
        self.details: list[tuple[str, str, str]] = []

    def _line(self, word: str, test: unittest.TestCase, extra: str = '') -> None:
        self.stream.write(f'{word:5} {test.id()}{extra}\n')
        self.stream.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1
        self._line('PASS', test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line('FAIL', test)
        self.details.append(('FAIL', test.id(), self.failures[-1][1]))

    def addError(self, test, err):
        super().addError(test, err)
        self._line('ERROR', test)
        self.details.append(('ERROR', test.id(), self.errors[-1][1]))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = 'FAIL' if issubclass(err[0], test.failureException) else 'ERROR'
            self._line(kind, subtest)
            entries = self.failures if kind == 'FAIL' else self.errors
            self.details.append((kind, subtest.id(), entries[-1][1]))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line('SKIP', test, f' ({reason})')

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.passed += 1
        self._line('PASS', test, ' (expected failure)')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line('FAIL', test, ' (unexpected success)')
        self.details.append(('FAIL', test.id(), 'unexpected success\n'))


def main() -> int:
    for path in (str(RUNNER_DIR), str(TESTS_DIR)):
        if path not in sys.path:
            sys.path.insert(0, path)
    suite = unittest.TestLoader().discover(start_dir=str(TESTS_DIR), pattern='test_*.py',
                                           top_level_dir=str(TESTS_DIR))
    result = _Result(sys.stdout)
    suite.run(result)
    for kind, test_id, text in result.details:
        print(f'\n==== {kind}: {test_id}\n{text.rstrip()}')
    # unittest reports no success for a test whose subtests failed, so a test
    # is counted once: as failed when it or any of its subtests failed.
    failed = len({test_id.split(' ', 1)[0] for _, test_id, _ in result.details})
    passed = result.passed
    skipped = len(result.skipped)
    line = f'{passed} passed, {failed} failed'
    if skipped:
        line += f', {skipped} skipped'
    print(line)
    return 1 if failed or passed + failed == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
