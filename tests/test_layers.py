"""The shape of the package, checked so it stays true: no import circle, no import from
a layer above (or from a sibling room of the same layer), retrieval/ free of ingest/, no
module over 500 lines, no folder over 24 modules (docs/architecture.md, "Layers").

The import graph is read from the source with ``ast``: every import counts, also one
under ``TYPE_CHECKING`` or inside a function, since each is a dependency a reader (and a
refactoring) has to follow. Known exceptions are listed by name; the lists only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "graphrecall"

# Each top-level room's layer: a module imports only from lower layers or its own room.
# Rooms on one layer (ingest, retrieval) do not import each other.
LAYERS = {
    "domain": 0,
    "config": 0,
    "ml": 1,
    "store": 2,
    "graph_model": 3,
    "ingest": 4,
    "retrieval": 4,
    "services": 5,
    "runtime": 6,
    "wire": 6,  # what both faces answer with (no web framework)
    "api": 7,
    "library": 7,  # beside api/, never importing it
    "cli": 9,
    "__main__": 10,
    "": 10,  # graphrecall/__init__.py: the public surface
}
# (importer, imported) pairs allowed against the layers, for now.
LAYER_EXCEPTIONS = {
    # The LLM prompt lists the single-valued relations from their one table.
    ("graphrecall.ml.llm", "graphrecall.ingest.single_valued"),
}
# Import circles allowed for now, each as its sorted modules.
CYCLE_EXCEPTIONS: set[tuple[str, ...]] = set()
MAX_LINES = 500
# Modules over MAX_LINES, for now; migration histories are data, not logic.
LONG_MODULES = {
    "graphrecall.ingest.single_valued",
    "graphrecall.ml.offline_rules",
    "graphrecall.store.lexical.postings",
    "graphrecall.store.postgres.migrations",
    "graphrecall.store.sqlite.migrations.history",
}
MAX_FOLDER_MODULES = 24


def _name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imported(module: str, path: Path) -> Iterator[str]:
    """The modules of ours ``module`` imports (``from a import b``: ``a.b`` when that is a
    module, else ``a``)."""
    known = modules()
    here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*here[: len(here) - node.level + 1], *filter(None, [base])])
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        yield from (n for n in names if n in known and n != module)


@cache
def graph() -> dict[str, frozenset[str]]:
    return {m: frozenset(_imported(m, p)) for m, p in modules().items()}


def cycles() -> set[tuple[str, ...]]:
    """The import graph's strongly connected components of more than one module."""
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[tuple[str, ...]] = set()

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(tuple(sorted(component)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_import_graph_is_read() -> None:
    # The checks below mean something only if the graph has the edges we know of.
    edges = graph()
    assert "graphrecall.graph_model.graph_writes" in edges["graphrecall.ingest.apply"]
    assert "graphrecall.services.tasks" in edges["graphrecall.services.graph.users"]
    assert "graphrecall.store.sqlite.pragmas" in edges["graphrecall.store.sqlite.pattern_workers"]
    assert set(LAYERS) >= {_room(m) for m in modules()}


def test_no_import_circle() -> None:
    assert cycles() <= CYCLE_EXCEPTIONS, sorted(cycles() - CYCLE_EXCEPTIONS)
    # A circle that is gone leaves the list.
    assert cycles() >= CYCLE_EXCEPTIONS, sorted(CYCLE_EXCEPTIONS - cycles())


def test_no_import_from_a_layer_above_or_a_sibling_room() -> None:
    wrong = {
        (m, d)
        for m, deps in graph().items()
        for d in deps
        # The root package is imported for its ``__version__`` (its own import of the
        # library is lazy, for ``graphrecall.GraphRecall``).
        if _room(m) != _room(d) and d != "graphrecall" and LAYERS[_room(d)] >= LAYERS[_room(m)]
    }
    assert wrong <= LAYER_EXCEPTIONS, sorted(wrong - LAYER_EXCEPTIONS)
    assert wrong >= LAYER_EXCEPTIONS, sorted(LAYER_EXCEPTIONS - wrong)


def test_retrieval_imports_nothing_from_ingest() -> None:
    # Search reads the graph write model (graph_model/), never the background pipeline.
    wrong = {
        (m, d)
        for m, deps in graph().items()
        if _room(m) == "retrieval"
        for d in deps
        if _room(d) == "ingest"
    }
    assert not wrong, sorted(wrong)


def test_no_module_over_500_lines() -> None:
    long = {m for m, p in modules().items() if len(p.read_text().splitlines()) > MAX_LINES}
    assert long <= LONG_MODULES, sorted(long - LONG_MODULES)
    assert long >= LONG_MODULES, f"now short, take off LONG_MODULES: {sorted(LONG_MODULES - long)}"


def test_no_folder_over_24_modules() -> None:
    folders: dict[Path, int] = {}
    for path in modules().values():
        folders[path.parent] = folders.get(path.parent, 0) + 1
    crowded = {str(f.relative_to(SRC)): n for f, n in folders.items() if n > MAX_FOLDER_MODULES}
    assert not crowded, crowded
