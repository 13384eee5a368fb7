#!/usr/bin/env python3
"""Check JUnit XML against the schema Jenkins' junit plugin reads.

The schema is runner/tests/data/junit/jenkins-junit.xsd (origin and license
in the README.md beside it); the check is lxml's XMLSchema (Debian package
python3-lxml). The unit tests run it on reports from real runs, make
check's contract rows on every junit.xml their real runs write.

python3-lxml is installed for Debian's own interpreter, /usr/bin/python3.
When the Python running this cannot import lxml (a pyenv or venv python),
errors() runs this file under /usr/bin/python3 instead, which can.

    errors(xml) -> list of what is wrong; [] when the document is valid.

Command line: runner/gupnm/report/junit_xsd.py FILE... ('-': standard input)
prints each file's errors; exit 0 all valid, 1 some invalid, 2 the check
could not run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

XSD = Path(__file__).resolve().parents[2] / 'tests' / 'data' / 'junit' / 'jenkins-junit.xsd'
SYSTEM_PYTHON = '/usr/bin/python3'
INSTALL = 'apt-get install python3-lxml (Debian), for /usr/bin/python3'


class CannotCheck(RuntimeError):
    """Neither this interpreter nor Debian's can validate (no lxml)."""


def _lxml_errors(data: bytes) -> list[str]:
    from lxml import etree
    schema = etree.XMLSchema(etree.parse(str(XSD)))
    try:
        doc = etree.fromstring(data)
    except etree.XMLSyntaxError as err:
        return [f'not well-formed XML: {err}']
    if schema.validate(doc):
        return []
    return [f'line {e.line}: {e.message}' for e in schema.error_log]


def _have_lxml() -> bool:
    try:
        import lxml.etree  # noqa: F401
    except ImportError:
        return False
    return True


def errors(xml: bytes | str) -> list[str]:
    data = xml.encode('utf-8') if isinstance(xml, str) else xml
    if _have_lxml():
        return _lxml_errors(data)
    if not os.access(SYSTEM_PYTHON, os.X_OK) or \
            os.path.realpath(sys.executable) == os.path.realpath(SYSTEM_PYTHON):
        raise CannotCheck(f'{sys.executable} cannot import lxml and there is no other '
                          f'python to ask; {INSTALL}')
    proc = subprocess.run([SYSTEM_PYTHON, '-I', str(Path(__file__).resolve()), '-'],
                          input=data, capture_output=True, timeout=120)
    out = proc.stdout.decode(errors='replace').splitlines()
    if proc.returncode == 0:
        return []
    if proc.returncode == 1:
        return [line.split(': ', 1)[1] if line.startswith('-: ') else line for line in out]
    raise CannotCheck(f'{SYSTEM_PYTHON} could not check the document '
                      f'(exit {proc.returncode}): '
                      f'{proc.stderr.decode(errors="replace").strip()}; {INSTALL}')


def main(argv: list[str]) -> int:
    if not argv:
        print('usage: runner/gupnm/report/junit_xsd.py FILE... (- for standard input)',
              file=sys.stderr)
        return 2
    bad = False
    for name in argv:
        try:
            data = sys.stdin.buffer.read() if name == '-' else Path(name).read_bytes()
            errs = errors(data)
        except OSError as err:
            print(f'{name}: cannot read: {err.strerror}', file=sys.stderr)
            return 2
        except CannotCheck as err:
            print(f'{name}: {err}', file=sys.stderr)
            return 2
        for e in errs:
            print(f'{name}: {e}')
        if not errs and name != '-':
            print(f'{name}: valid ({XSD.name})')
        bad |= bool(errs)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
