"""Every file and symbol the docs name exists: a doc that says where a behaviour lives
must stay true when code moves (datasette's test_docs idea).

Checked: backquoted paths ending in ``.py`` (relative to the repository, ``src/``,
``src/graphrecall/`` or ``tests/``; a bare file name anywhere under ``src/`` or ``tests/``),
``path.py: Name`` (a name defined in that file), and ``module.Name`` where ``module`` is a
module of ours and ``Name`` a capitalised name (a constant or a class). The journal of
measurements (benchmarks-history.md) names what the code held then: only its file paths
are checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
BASES = (ROOT, ROOT / "src", ROOT / "src" / "graphrecall", ROOT / "tests")
_CODE = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"^([\w./-]+\.py)(?::\s*`?([A-Za-z_][\w.]*)`?)?")
_DEFINES = r"^\s*(?:async\s+def|def|class)\s+{0}\b|^\s*{0}\s*(?::[^=\n]*)?="
_DOTTED = re.compile(r"((?:[a-z_]+\.)+)([A-Z]\w*)")
JOURNAL = "benchmarks-history.md"


def _find(path: str) -> Path | None:
    for base in BASES:
        if (base / path).is_file():
            return base / path
    if "/" not in path:
        found = sorted([*(ROOT / "src").rglob(path), *(ROOT / "tests").rglob(path)])
        return found[0] if found else None
    # A path written from inside the package ("sqlite/connection.py" for store/sqlite/...).
    found = sorted(p for p in (ROOT / "src").rglob(Path(path).name) if p.as_posix().endswith(path))
    return found[0] if found else None


def _module(dotted: str) -> Path | None:
    """``scopes`` or ``store.lexical.plan`` as one of our modules' files (None: not ours,
    e.g. ``zep_cloud.Zep``)."""
    parts = dotted.split(".")
    found = [
        p
        for p in (ROOT / "src").rglob(parts[-1] + ".py")
        if p.with_suffix("").as_posix().endswith("/".join(parts))
    ]
    return found[0] if found else None


def _names(doc: Path) -> list[tuple[str, str | None]]:
    named = []
    for span in _CODE.findall(doc.read_text()):
        for part in re.split(r",\s*|\s+and\s+", span):
            match = _PATH.match(part.strip())
            if match:
                named.append((match.group(1), match.group(2) if doc.name != JOURNAL else None))
            dotted = _DOTTED.fullmatch(part.strip())
            if dotted and doc.name != JOURNAL:
                module = _module(dotted.group(1).rstrip("."))
                if module is not None:
                    named.append((module.relative_to(ROOT).as_posix(), dotted.group(2)))
    return named


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_named_files_and_symbols_exist(doc: Path) -> None:
    problems = []
    for path, symbol in _names(doc):
        found = _find(path)
        if found is None:
            problems.append(f"{path}: no such file")
            continue
        if symbol:
            first = symbol.split(".")[0]
            if not re.search(_DEFINES.format(re.escape(first)), found.read_text(), re.M):
                problems.append(f"{path}: {symbol}: not defined there")
    assert not problems, "\n".join(sorted(set(problems)))
