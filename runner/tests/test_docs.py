"""Unit tests for the documentation: README.md and docs/*.md say what is.

- every relative link resolves: the file exists and, where a #anchor is
  used, the target page has that heading (GitHub's anchor rules);
- every page of docs/ is linked from README.md, which has at most 250 lines;
- every `make X` in code names a target of the repository's Makefile;
- every `gupnm-run SUB --flag` in code names a subcommand and a flag that
  the real `runner/gupnm-run SUB --help` prints (the CLI is run, not
  copied here);
- every field of docs/runner.md's summary.json table is in
  runner/summary.schema.json, "always there" exactly when it is required.

Text inside HTML comments is not checked. A section whose body carries a
`<!-- placeholder: ... -->` comment is left out of the make and CLI
checks until it is filled (its links are still checked).
"""

import json
import re
import subprocess
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / 'README.md'
DOCS = REPO / 'docs'
CLI = REPO / 'runner' / 'gupnm-run'
MAX_README_LINES = 250

COMMENT = re.compile(r'<!--.*?-->', re.S)
PLACEHOLDER = '<!-- placeholder:'
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
FENCE = re.compile(r'^\s*(```|~~~)')
LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
SPAN = re.compile(r'(`+)(.+?)\1', re.S)
# Where one shell command ends inside a line of code.
COMMAND_END = re.compile(r'\s(?:#|&&|\|\||;|\|)\s|\s#$|[;)]')
# Program output quoted in the text ("make run: runner/gupnm-run exited 1",
# "gupnm: error: ..."), not a command.
OUTPUT = re.compile(r'^\S+(?:\s+\S+)?:\s')


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob('*.md'))]


def split_code(text: str) -> tuple[str, list[str]]:
    """(prose with code removed, pieces of code: block lines and spans)."""
    prose, code = [], []
    fenced = False
    prev_blank = True
    for line in text.split('\n'):
        if FENCE.match(line):
            fenced = not fenced
            prev_blank = False
            continue
        if fenced or (line.startswith('    ') and prev_blank and line.strip()):
            code.append(line.strip())
            # an indented block goes on while lines stay indented or blank
            prev_blank = True
            continue
        prev_blank = not line.strip()
        prose.append(line)
    body = '\n'.join(prose)
    code += [m.group(2).strip() for m in SPAN.finditer(body)]
    return SPAN.sub(' ', body), code


def without_placeholders(text: str) -> str:
    """@text less every section whose body holds a placeholder comment."""
    out, skip_level = [], None
    lines = text.split('\n')
    for i, line in enumerate(lines):
        m = HEADING.match(line)
        if m:
            level = len(m.group(1))
            if skip_level is not None and level <= skip_level:
                skip_level = None
            if skip_level is None:
                body = []
                for nxt in lines[i + 1:]:
                    n = HEADING.match(nxt)
                    if n and len(n.group(1)) <= level:
                        break
                    body.append(nxt)
                if any(PLACEHOLDER in b for b in body):
                    skip_level = level
        if skip_level is None:
            out.append(line)
    return '\n'.join(out)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped,
    spaces to dashes."""
    text = re.sub(r'`|\*\*|__', '', heading).strip().lower()
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = ''.join(c for c in text if c.isalnum() or c in ' -_')
    return text.replace(' ', '-')


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in COMMENT.sub('', path.read_text()).split('\n'):
        if FENCE.match(line):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f'{base}-{n}')
    return out


def links(path: Path) -> list[str]:
    prose, _ = split_code(COMMENT.sub('', path.read_text()))
    return [m.group(1) for m in LINK.finditer(prose)]


def broken_links(path: Path) -> list[str]:
    bad = []
    for target in links(path):
        if re.match(r'[a-z][a-z0-9+.-]*:', target):      # http:, mailto:, ...
            continue
        file, _, anchor = target.partition('#')
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f'{target}: no file {dest}')
        elif anchor and dest.suffix == '.md' and anchor not in anchors(dest):
            bad.append(f'{target}: {dest.name} has no heading with anchor #{anchor}')
    return bad


def commands(path: Path, word: str) -> list[list[str]]:
    """Each command in the code of @path that starts with @word (a path
    ending in it, e.g. runner/gupnm-run, counts), as its words."""
    _, code = split_code(without_placeholders(COMMENT.sub('', path.read_text())))
    found = []
    for piece in code:
        if OUTPUT.match(piece):
            continue                    # a quoted message: 'make run: ... exited 1'
        for m in re.finditer(rf'(?:^|(?<=[\s(=\'"/]))(?:\S*/)?{re.escape(word)}(?=\s|$)', piece):
            rest = piece[m.end():]
            end = COMMAND_END.search(rest)
            words = rest[:end.start()] if end else rest
            found.append(words.split())
    return found


def makefile_targets() -> set[str]:
    targets = set()
    for line in (REPO / 'Makefile').read_text().split('\n'):
        m = re.match(r'^([A-Za-z0-9_.-][A-Za-z0-9_. -]*?)\s*:(?![=:])', line)
        if m and not m.group(1).startswith('.'):
            targets.update(m.group(1).split())
    return targets


def make_problems(path: Path, targets: set[str]) -> list[str]:
    bad = []
    for words in commands(path, 'make'):
        if '-C' in words or any(w.startswith('-C') for w in words):
            continue                    # another Makefile (a kernel tree's)
        names = [w for w in words if not w.startswith('-') and '=' not in w
                 and re.fullmatch(r'[A-Za-z0-9_.-]+', w)]
        # the words after the options and variables; stop at the first that
        # is not a plain name (a path, '...')
        for w in names:
            if w not in targets:
                bad.append(f'make {" ".join(words)}: no target {w!r} in the Makefile')
    return bad


_help_cache: dict[str, str] = {}


def cli_help(*sub: str) -> str:
    key = ' '.join(sub)
    if key not in _help_cache:
        proc = subprocess.run([sys.executable, str(CLI), *sub, '--help'],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise AssertionError(f'gupnm-run {key} --help exited {proc.returncode}: '
                                 f'{proc.stderr.strip()}')
        _help_cache[key] = proc.stdout
    return _help_cache[key]


def subcommands() -> set[str]:
    m = re.search(r'\{([a-z0-9,-]+)\}', cli_help())
    if not m:
        raise AssertionError('gupnm-run --help lists no {subcommands}')
    return set(m.group(1).split(','))


def flags_of(sub: str) -> set[str]:
    return set(re.findall(r'(?<![\w-])(--[a-z0-9][a-z0-9-]*)', cli_help(sub)))


def cli_problems(path: Path, subs: set[str]) -> list[str]:
    bad = []
    for words in commands(path, 'gupnm-run'):
        words = [w.strip('[]') for w in words]
        if not words or not re.fullmatch(r'[a-z][a-z0-9-]*', words[0]):
            continue                    # the program named alone, or SUB as a word
        sub = words[0]
        if sub not in subs:
            bad.append(f'gupnm-run {" ".join(words)}: no subcommand {sub!r}')
            continue
        known = flags_of(sub)
        for w in words[1:]:
            flag = w.split('=', 1)[0]
            if re.fullmatch(r'--[a-z0-9][a-z0-9-]*', flag) and flag not in known:
                bad.append(f'gupnm-run {" ".join(words)}: {sub} has no flag {flag}')
    # make run RUN_ARGS="--flag ...": the flags are run's
    for words in commands(path, 'make'):
        if words[:1] == ['run']:
            joined = ' '.join(words)
            m = re.search(r'RUN_ARGS=(["\'])(.*?)\1', joined)
            for flag in re.findall(r'(--[a-z0-9][a-z0-9-]*)', m.group(2) if m else ''):
                if flag not in flags_of('run'):
                    bad.append(f'make {joined}: run has no flag {flag}')
    return bad


class Docs(unittest.TestCase):
    def test_readme_is_short(self):
        n = len(README.read_text().split('\n')) - 1
        self.assertLessEqual(n, MAX_README_LINES,
                             f'README.md has {n} lines: move detail into docs/')

    def test_links_resolve(self):
        for page in pages():
            with self.subTest(page=page.name):
                self.assertEqual(broken_links(page), [])

    def test_every_doc_reachable_from_readme(self):
        linked = {(README.parent / t.partition('#')[0]).resolve()
                  for t in links(README)}
        missing = [p.name for p in DOCS.glob('*.md') if p.resolve() not in linked]
        self.assertEqual(missing, [], 'docs/ pages the README does not link to')

    def test_make_targets_exist(self):
        targets = makefile_targets()
        self.assertIn('check', targets)          # the parser reads this Makefile
        for page in pages():
            with self.subTest(page=page.name):
                self.assertEqual(make_problems(page, targets), [])

    def test_cli_subcommands_and_flags_exist(self):
        subs = subcommands()
        self.assertIn('run', subs)
        for page in pages():
            with self.subTest(page=page.name):
                self.assertEqual(cli_problems(page, subs), [])

    def test_summary_fields_exist(self):
        """Every field docs/runner.md's summary.json table names is in the
        schema (the schema may have more: it is the authority)."""
        schema = json.loads((REPO / 'runner' / 'summary.schema.json').read_text())
        text = (DOCS / 'runner.md').read_text()
        table = re.search(r'\| field \| always there \| what \|\n\|[-|]+\|\n((?:\|.*\n)+)', text)
        self.assertIsNotNone(table, 'docs/runner.md has no summary.json field table')
        rows = [re.match(r'\| `([^`]+)` \| (yes)? *\|', r) for r in table.group(1).splitlines()]
        self.assertTrue(rows and all(rows), 'a row of the field table is not "| `name` | ... |"')
        required = set(schema.get('required', []))
        for m in rows:
            with self.subTest(field=m.group(1)):
                self.assertTrue(m.group(1) in schema['properties'],
                                f'{m.group(1)} is not a field of runner/summary.schema.json')
                self.assertEqual(bool(m.group(2)), m.group(1) in required,
                                 '"always there" is the schema\'s required')


class Helpers(unittest.TestCase):
    """The checks above can fail: each helper finds what is wrong."""

    def test_slug(self):
        self.assertEqual(slug('The published measurements, reproduced (`make repro-*`)'),
                         'the-published-measurements-reproduced-make-repro-')
        self.assertEqual(slug('Exit status in detail'), 'exit-status-in-detail')

    def test_code_and_placeholder(self):
        text = ('run `make nosuch` here, `make run: x exited 1`\n\n    make run KERNEL=x\n\n'
                '## Labs\n\n<!-- placeholder: later -->\n\n`make other`\n\n## Next\n\n`make b`\n')
        _, code = split_code(without_placeholders(text))
        self.assertEqual(code, ['make run KERNEL=x', 'make nosuch', 'make run: x exited 1',
                                'make b'])
        self.assertTrue(OUTPUT.match('make run: x exited 1'))
        self.assertFalse(OUTPUT.match('make run KERNEL=x'))


if __name__ == '__main__':
    unittest.main()
