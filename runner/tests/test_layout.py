"""The shape of runner/gupnm, read with ast and docs/architecture.md.

- no import cycle (a -> b -> a, directly or through others, at module level
  or inside a function), and no import against the layers (LAYERS);
- guest/ takes from prepare/ the Payload alone (GUEST_TAKES): what a boot
  needs is decided and built in prepare/, never from guest/;
- the packages and their modules are those of the Layout table of
  docs/architecture.md, and runner/tests mirrors the packages;
- no function grows past MAX_LINES lines: the ones longer today are listed
  in LONG_FUNCTIONS, a list that may only shrink.
"""
from __future__ import annotations

import ast
import re
import unittest
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / 'gupnm'
ARCHITECTURE = TESTS.parents[1] / 'docs' / 'architecture.md'

# Who may import whom: a module imports only from its own layer or lower
# ones (host.py is shared by all; the front door's modules sit above what
# they drive; make check's modules drive everything).
LAYERS = [
    ['gupnm', 'gupnm.host', 'gupnm.phases', 'gupnm.testargs'],
    ['gupnm.prepare'],
    ['gupnm.parse'],
    ['gupnm.report'],
    ['gupnm.guest'],
    ['gupnm.ci'],
    ['gupnm.cli', 'gupnm.hostmode', 'gupnm.probe', 'gupnm.survey'],
    ['gupnm.check'],
]

MAX_LINES = 60

# What guest/ may import from prepare/: module -> names. One prepare step
# (prepare/plan.py) hands guest/ one value; guest/ calls nothing there.
GUEST_TAKES = {'gupnm.prepare.payload': {'Payload'}}


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted name -> file of every module of the package under @root
    (a package's __init__.py under the package's own name)."""
    out = {}
    for path in sorted(root.rglob('*.py')):
        parts = list(path.relative_to(root.parent).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts.pop()
        out['.'.join(parts)] = path
    return out


def _base(name: str, path: Path, level: int) -> str:
    """The package a relative import of @level dots starts from."""
    parts = name.split('.')
    if path.name != '__init__.py':
        parts.pop()
    return '.'.join(parts[:len(parts) - (level - 1)])


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of @known that module @name (file @path) imports, anywhere."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                pkg = _base(name, path, node.level)
                base = f'{pkg}.{base}' if base else pkg
            subs = [f'{base}.{a.name}' for a in node.names]
            # `from pkg import mod` imports mod; pkg's __init__ only when a
            # name is not a module of it
            targets = subs if all(t in known for t in subs) else [base] + subs
        else:
            continue
        out |= {t for t in targets if t in known and t != name}
    return out


def unresolved(name: str | None, path: Path, known: set[str]) -> list[str]:
    """Imports of the package in @path (module @name; None for a file outside
    the package) that name no module of @known: `from pkg.x import y` needs
    module pkg.x, `from pkg import y` module pkg.y (the packages' __init__
    files define nothing to import); mock.patch('gupnm.pkg.x.y') module pkg.x."""
    packages = {m for m, f in modules().items() if f.name == '__init__.py'}
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            wanted = [a.name for a in node.names if a.name.split('.')[0] == 'gupnm']
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                if name is None:
                    continue
                pkg = _base(name, path, node.level)
                base = f'{pkg}.{base}' if base else pkg
            elif base.split('.')[0] != 'gupnm':
                continue
            wanted = [f'{base}.{a.name}' for a in node.names] if base in packages else [base]
        elif (isinstance(node, ast.Call) and getattr(node.func, 'attr', None) == 'patch'
              and node.args and isinstance(node.args[0], ast.Constant)
              and str(node.args[0].value).startswith('gupnm.')):
            # mock.patch('gupnm.pkg.module.name'): the module part must exist
            parts = node.args[0].value.split('.')
            n = 2
            while '.'.join(parts[:n]) in packages and n < len(parts):
                n += 1
            wanted = ['.'.join(parts[:n])]
        else:
            continue
        out += [f'{path}:{node.lineno}: {m}' for m in wanted if m not in known]
    return out


def guest_takes(root: Path = PACKAGE) -> list[str]:
    """Imports of prepare/ in the modules of guest/ under @root beyond
    GUEST_TAKES, each as 'file:line: module.name'."""
    mods = modules(root)
    out = []
    for name, path in sorted(mods.items()):
        if not (name == 'gupnm.guest' or name.startswith('gupnm.guest.')):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                taken = [(a.name, '') for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ''
                if node.level:
                    pkg = _base(name, path, node.level)
                    base = f'{pkg}.{base}' if base else pkg
                taken = [(base, a.name) for a in node.names]
            else:
                continue
            for module, what in taken:
                if not (module == 'gupnm.prepare' or module.startswith('gupnm.prepare.')):
                    continue
                if what not in GUEST_TAKES.get(module, set()):
                    out.append((str(path.relative_to(root.parent)), node.lineno,
                                f'{module}{"." + what if what else ""}'))
    return [f'{f}:{line}: {m}' for f, line, m in sorted(out)]


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    mods = modules(root)
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return cycles


def layer_of(name: str) -> int:
    """The index in LAYERS of the longest entry @name is or lies under."""
    best, found = -1, None
    for i, layer in enumerate(LAYERS):
        for entry in layer:
            if (name == entry or name.startswith(entry + '.')) and len(entry) > best:
                best, found = len(entry), i
    if found is None:
        raise LookupError(f'{name} is in no layer: add it to LAYERS in {__file__}')
    return found


def documented_layout(path: Path = ARCHITECTURE) -> dict[str, set[str]]:
    """Package -> module names, from the Layout table of @path."""
    text = path.read_text()
    section = text.split('\n## Layout\n', 1)[1].split('\n## ', 1)[0]
    out = {}
    for line in section.splitlines():
        m = re.match(r'\|\s*`(gupnm/[\w/]*)`\s*\|[^|]*\|(.*)\|\s*$', line)
        if m:
            pkg = m.group(1).rstrip('/').replace('/', '.')
            out[pkg] = set(re.findall(r'`(\w+)\.py`', m.group(2)))
    return out


def actual_layout(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Package -> module names (without __init__), from the files."""
    out = {}
    for init in sorted(root.rglob('__init__.py')):
        pkg = '.'.join(init.parent.relative_to(root.parent).parts)
        out[pkg] = {p.stem for p in init.parent.glob('*.py') if p.name != '__init__.py'}
    return out


def long_functions(root: Path = PACKAGE, limit: int = MAX_LINES) -> dict[str, int]:
    """'gupnm/path.py:qualname' -> lines, for every function over @limit lines."""
    out = {}
    for path in sorted(root.rglob('*.py')):
        where = path.relative_to(root.parent).as_posix()

        def walk(node, prefix):
            for n in ast.iter_child_nodes(node):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = n.end_lineno - n.lineno + 1
                    if lines > limit:
                        out[f'{where}:{prefix}{n.name}'] = lines
                    walk(n, f'{prefix}{n.name}.')
                elif isinstance(n, ast.ClassDef):
                    walk(n, f'{prefix}{n.name}.')
        walk(ast.parse(path.read_text(), str(path)), '')
    return out


class ImportCycleTest(unittest.TestCase):
    def test_no_import_cycles(self):
        cycles = find_cycles(graph())
        self.assertEqual(cycles, [], 'import cycles in runner/gupnm (each line one group '
                         'of modules that import each other; move what they share into '
                         'a module of its own): ' + '; '.join(' <-> '.join(c) for c in cycles))

    def test_every_import_names_a_module(self):
        mods = modules()
        known = set(mods)
        bad = [u for n, path in mods.items() for u in unresolved(n, path, known)]
        for path in sorted(TESTS.rglob('*.py')) + [TESTS.parent / 'gupnm-run',
                                                   TESTS.parent / 'gupnm-check']:
            bad += unresolved(None, path, known)
        self.assertEqual(bad, [], 'imports of modules runner/gupnm does not have (moved? '
                         'see the Layout table of docs/architecture.md)')

    def test_the_scan_sees_imports(self):
        g = graph()
        self.assertIn('gupnm.host', g['gupnm.cli'])
        self.assertGreater(sum(len(v) for v in g.values()), len(g))

    def test_find_cycles(self):
        self.assertEqual(find_cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}),
                         [['a', 'b', 'c']])
        self.assertEqual(find_cycles({'a': {'b'}, 'b': set()}), [])


class LayersTest(unittest.TestCase):
    def test_no_import_against_the_layers(self):
        wrong = [f'{a} -> {b}' for a, deps in sorted(graph().items()) for b in sorted(deps)
                 if layer_of(b) > layer_of(a)]
        self.assertEqual(wrong, [], 'imports against LAYERS (a lower layer importing a '
                         'higher one; move the shared piece down): ' + ', '.join(wrong))

    def test_layer_of(self):
        self.assertEqual(layer_of('gupnm.host'), 0)
        self.assertEqual(layer_of('gupnm.check.tally'), len(LAYERS) - 1)
        self.assertLess(layer_of('gupnm.parse.tap'), layer_of('gupnm.guest.vmrun'))


class GuestTakesThePayloadTest(unittest.TestCase):
    """guest/ imports nothing from prepare/ but the Payload's type."""

    def test_guest_takes_the_payload_alone(self):
        self.assertEqual(guest_takes(), [], 'guest/ imports from prepare/ beyond '
                         f'{GUEST_TAKES}: decide and build what the boot needs in '
                         'prepare/plan.py and hand it over in the Payload')

    def test_the_check_sees_an_import_added_back(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            guest = Path(tmp) / 'gupnm' / 'guest'
            guest.mkdir(parents=True)
            for pkg in (guest.parent, guest):
                (pkg / '__init__.py').write_text('')
            (guest / 'vmrun.py').write_text(
                'from ..prepare.payload import Payload\n'
                'from ..prepare import kernels\n'
                'from ..prepare.payload import CrossCheck\n'
                'def f():\n    from ..prepare import arm64\n'
                'import gupnm.prepare.cache\n')
            self.assertEqual(guest_takes(Path(tmp) / 'gupnm'), [
                'gupnm/guest/vmrun.py:2: gupnm.prepare.kernels',
                'gupnm/guest/vmrun.py:3: gupnm.prepare.payload.CrossCheck',
                'gupnm/guest/vmrun.py:5: gupnm.prepare.arm64',
                'gupnm/guest/vmrun.py:6: gupnm.prepare.cache'])


class LayoutTest(unittest.TestCase):
    def test_packages_match_the_architecture_page(self):
        doc, files = documented_layout(), actual_layout()
        self.assertEqual(sorted(doc), sorted(files),
                         f'packages of runner/gupnm vs the Layout table of {ARCHITECTURE}')
        for pkg in files:
            missing, extra = files[pkg] - doc[pkg], doc[pkg] - files[pkg]
            self.assertFalse(missing or extra,
                             f'{pkg}: modules not in the Layout table of {ARCHITECTURE}: '
                             f'{sorted(missing)}; listed there but not on disk: '
                             f'{sorted(extra)}; the page says where a module belongs, '
                             'so update one or the other')

    def test_tests_mirror_the_packages(self):
        packages = {p.split('.', 1)[1] for p in actual_layout() if '.' in p}
        where = {m: pkg for pkg, mods in actual_layout().items() for m in mods}
        for d in sorted(TESTS.iterdir()):
            if not d.is_dir() or d.name in ('data', '__pycache__'):
                continue
            self.assertIn(d.name, packages, f'{d}: runner/tests/ holds one folder per '
                          'package of runner/gupnm (and data/)')
            self.assertTrue((d / '__init__.py').exists(), f'{d} has no __init__.py')
        for test in sorted(TESTS.rglob('test_*.py')):
            module = test.stem[len('test_'):]
            if module in where:
                pkg = where[module].partition('.')[2]
                self.assertEqual(test.parent, TESTS / pkg if pkg else TESTS,
                                 f'{test} tests gupnm.{where[module]}.{module}: it '
                                 f'belongs in runner/tests/{pkg}')


class FunctionLengthTest(unittest.TestCase):
    def test_no_long_function(self):
        self.assertEqual(long_functions(), {}, f'functions over {MAX_LINES} lines: '
                         'split each into named steps')


if __name__ == '__main__':
    unittest.main()
