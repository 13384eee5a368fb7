"""probe/'s C files use each other one way: each file uses only symbols
that files before it in probe.LAYERS define (ktap.c < mapping.c < table.c <
gupnm_probe.c), read with nm from objects built as probe/Makefile builds
them (cc -c -O2 -Wall -Wextra). Every .c of probe/ is in that order, and
probe/Makefile and the runner's build (probe.SOURCES) list the same files."""

import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gupnm import probe  # noqa: E402

PROBE = probe.SOURCE.parent
CFLAGS = ["-O2", "-Wall", "-Wextra"]       # probe/Makefile's
HAVE_TOOLS = bool(shutil.which("gcc") and shutil.which("nm"))


def compile_objects(sources: list[Path], outdir: Path) -> dict[str, Path]:
    """File name -> object of each of @sources, built with cc -c."""
    objs = {}
    for src in sources:
        objs[src.name] = outdir / (src.stem + ".o")
        subprocess.run(["gcc", *CFLAGS, "-c", "-o", objs[src.name], src],
                       check=True, capture_output=True, text=True)
    return objs


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """The global symbols @obj defines, and those it uses undefined (nm -P -g)."""
    out = subprocess.run(["nm", "-P", "-g", obj], check=True,
                         capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        name, kind = line.split()[:2]
        (undefined if kind in ("U", "w", "v") else defined).add(name)
    return defined, undefined


def back_uses(order: list[str], objs: dict[str, Path]) -> list[str]:
    """Each use of a symbol by a file of @order that a file not before it
    defines: "table.c uses msg, defined in gupnm_probe.c (not below it)"."""
    syms = {name: symbols(objs[name]) for name in order}
    where = {s: name for name in order for s in syms[name][0]}
    out = []
    for i, name in enumerate(order):
        for s in sorted(syms[name][1]):
            owner = where.get(s)
            if owner is not None and order.index(owner) >= i:
                out.append(f"{name} uses {s}, defined in {owner} (not below it)")
    return out


@unittest.skipUnless(HAVE_TOOLS, "gcc or nm not installed")
class ProbeLayers(unittest.TestCase):

    def test_each_file_uses_only_files_below_it(self):
        order = list(probe.LAYERS)
        with tempfile.TemporaryDirectory() as tmp:
            objs = compile_objects([PROBE / n for n in order], Path(tmp))
            self.assertEqual(back_uses(order, objs), [],
                             f"probe/ uses its files one way, in {order}: "
                             "move what a lower file needs down, or reorder")

    def test_the_check_sees_a_back_call(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            (d / "low.c").write_text("int high(void);\nint low(void) { return high(); }\n")
            (d / "high.c").write_text("int low(void);\nint high(void) { return 1; }\n"
                                      "int top(void) { return low(); }\n")
            objs = compile_objects([d / "low.c", d / "high.c"], d)
            self.assertEqual(back_uses(["low.c", "high.c"], objs),
                             ["low.c uses high, defined in high.c (not below it)"])
            self.assertEqual(back_uses(["high.c", "low.c"], objs),
                             ["high.c uses low, defined in low.c (not below it)"])


class ProbeSourceLists(unittest.TestCase):

    def test_every_probe_source_is_in_the_order(self):
        self.assertEqual(sorted(p.name for p in PROBE.glob("*.c")),
                         sorted(probe.LAYERS),
                         "a .c file of probe/ missing from probe.LAYERS (or gone)")

    def test_the_makefile_builds_the_order(self):
        m = re.search(r"^SRCS\s*=\s*(.*)$", (PROBE / "Makefile").read_text(), re.M)
        self.assertIsNotNone(m, "probe/Makefile has no SRCS line")
        self.assertEqual(m.group(1).split(), list(probe.LAYERS))

    def test_the_runner_builds_every_file(self):
        self.assertEqual([p.name for p in probe.SOURCES if p.suffix == ".c"],
                         list(probe.LAYERS))
        self.assertEqual(probe.SOURCE.name, probe.LAYERS[-1])


if __name__ == "__main__":
    unittest.main()
