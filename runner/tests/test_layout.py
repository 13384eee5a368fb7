"""The shape of runner/gupnm, read with ast: no module imports itself back.

An import cycle (a -> b -> a, directly or through others, at module level or
inside a function) is reported with the modules on it.
"""
from __future__ import annotations

import ast
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / 'gupnm'


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
            targets = [base] + [f'{base}.{a.name}' for a in node.names]
        else:
            continue
        out |= {t for t in targets if t in known and t != name}
    return out


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


class ImportCycleTest(unittest.TestCase):
    def test_no_import_cycles(self):
        cycles = find_cycles(graph())
        self.assertEqual(cycles, [], 'import cycles in runner/gupnm (each line one group '
                         'of modules that import each other; move what they share into '
                         'a module of its own): ' + '; '.join(' <-> '.join(c) for c in cycles))

    def test_the_scan_sees_imports(self):
        g = graph()
        self.assertIn('gupnm.host', g['gupnm.cli'])
        self.assertGreater(sum(len(v) for v in g.values()), len(g))

    def test_find_cycles(self):
        self.assertEqual(find_cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}),
                         [['a', 'b', 'c']])
        self.assertEqual(find_cycles({'a': {'b'}, 'b': set()}), [])


if __name__ == '__main__':
    unittest.main()
