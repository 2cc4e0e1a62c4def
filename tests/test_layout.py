"""The package's shape: folders are layers, imports point down, no import circles.

Oracle: the source text itself — every ``import`` statement of every module of
``src/anholo`` (also those inside functions, so that no lazy import can hide a
circle) is read with :mod:`ast`; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "anholo"

# Layers, bottom to top.  A module may import only from its own layer or below.
# ``parsing`` (the safe expression parser, which imports nothing of anholo but the errors and its
# limits), ``limits`` and ``files`` (atomic output files) sit at the bottom, beside ``errors``: every
# layer that accepts strings reads them with the parser, and no layer imports upwards to reach it.
LAYERS = [
    ("errors", "parsing", "limits", "files"),
    ("algebra",),
    ("geometry",),
    ("constraints",),
    ("dynamics",),
    ("analysis",),
    ("numerics",),
    ("io", "plotting"),
    ("examples",),
    ("system",),
    ("cli", "__init__", "__main__"),
]

MAX_LINES = 1000


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts)


def _modules() -> dict:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set) -> set:
    """anholo modules imported by ``name`` (anywhere in the file), as module names relative to anholo."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    package = name.split(".")[:-1] if not is_package else name.split(".")[:-1]
    if is_package:
        package = name.split(".")[:-1]  # "geometry.__init__" -> ["geometry"]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "anholo":
                target = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                cand = ".".join(target + [alias.name])
                if cand in known or cand + ".__init__" in known:
                    out.add(cand if cand in known else cand + ".__init__")
                else:
                    mod = ".".join(target)
                    out.add(mod if mod in known else (mod + ".__init__" if mod else "__init__"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "anholo":
                    mod = ".".join(parts[1:])
                    out.add(mod if mod in known else (mod + ".__init__" if mod else "__init__"))
    out.discard(name)
    return out


def _graph() -> dict:
    mods = _modules()
    known = set(mods)
    return {name: _imports(name, path, known) for name, path in mods.items()}


def _layer(module: str) -> int:
    best = None
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    assert best is not None, f"module {module} belongs to no layer: add it to LAYERS"
    return best[0]


def test_every_module_belongs_to_a_layer():
    for name in _modules():
        _layer(name)


def test_imports_point_down():
    wrong = []
    for name, targets in _graph().items():
        for t in targets:
            if t.endswith("__init__") and t.split(".")[0] == name.split(".")[0]:
                continue  # a package's own __init__ (re-exports of its layer)
            if _layer(t) > _layer(name):
                wrong.append(f"{name} -> {t}")
    assert not wrong, "imports pointing up a layer:\n" + "\n".join(sorted(wrong))


def test_no_import_circles():
    graph = _graph()
    # a package __init__ re-exports its modules; an edge module -> own package __init__ is
    # an import of a sibling through the package and does not count as a circle through __init__
    def edges(n):
        return {t for t in graph[n] if not (t.endswith("__init__") and n.startswith(t[: -len("__init__")]))}

    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges(v):
            if w not in graph:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    assert not cycles, f"import circles: {cycles}"


@pytest.mark.parametrize("name", sorted(_modules()))
def test_modules_stay_small(name):
    lines = len(_modules()[name].read_text().splitlines())
    assert lines < MAX_LINES, f"{name} has {lines} lines; split it by concept (limit {MAX_LINES})"
