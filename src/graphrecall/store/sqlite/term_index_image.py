"""A table's term-index copy kept on disk beside the database, so a restarted server has
it in a fraction of a second instead of reading the whole FTS5 index again (53 s for
222k rows on a loaded 2-core machine, docs/benchmarks.md "Cold queries"), during which
every search of the table ran on FTS5.

The file is only a starting point: it records the FTS5 structure record and change-log
entry it was read at, and the copy loaded from it is caught up from the change log like
any stale copy (``term_index.catch_up``), or read again when the log no longer reaches
back to it. Two checks keep a file from being applied to another database (one restored
from a backup, a copy under the same name): the change-log entry it was read at must
still name the same row, and the table's highest row then must still have the same
uuid; otherwise the file is ignored and the copy is read from FTS5.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrecall.store.lexical import image
from graphrecall.store.lexical.postings import TermIndex
from graphrecall.store.sqlite.migrations import CHANGE_LOG

log = logging.getLogger(__name__)


def folder(db_path: Path) -> Path | None:
    """Where a database's copies are kept; None for a database without a file."""
    name = str(db_path)
    if not name or name == ":memory:" or name.startswith("file:"):
        return None
    return Path(f"{name}-termindex")


def remove(db_path: Path, table: str) -> bool:
    """Delete ``table``'s saved copy (its terms are the text of rows since deleted);
    True when there was one. The next whole read saves it again."""
    where = folder(db_path)
    if where is None:
        return False
    found = False
    for suffix in (".json", ".npz", ".json.tmp", ".npz.tmp"):
        try:
            (where / f"{table}{suffix}").unlink()
            found = True
        except FileNotFoundError:
            pass
    return found


def _log_entry(conn: sqlite3.Connection, seq: int) -> list[Any] | None:
    """The change-log entry ``seq`` as [table, row] (entries are only ever added after
    it, or pruned: never changed)."""
    entry = conn.execute(f"SELECT tbl, row FROM {CHANGE_LOG} WHERE seq = ?", [seq]).fetchone()
    return None if entry is None else [str(entry[0]), int(entry[1])]


def save(
    db_path: Path,
    conn: sqlite3.Connection,
    index: TermIndex,
    owner_field: str,
    weights: Sequence[float],
) -> None:
    """Write ``index`` (a copy just read whole: one segment) for the next start."""
    where = folder(db_path)
    part = image.whole(index)
    if where is None or part is None:
        return
    where.mkdir(exist_ok=True)
    stem = where / index.table
    meta = {
        **image.describe(index, part, owner_field, weights),
        "table": index.table,
        "cookie": index.cookie.hex(),
        "seq": index.seq,
        "marks": _marks_at_build(conn, index),
    }
    arrays = f"{stem}.npz.tmp"
    with open(arrays, "wb") as out:
        image.write_arrays(out, part)
    Path(f"{stem}.json.tmp").write_text(json.dumps(meta))
    # The arrays first, then the description that names them: a crash between the two
    # leaves an old description whose marks fail, or none.
    os.replace(arrays, f"{stem}.npz")
    os.replace(f"{stem}.json.tmp", f"{stem}.json")


def _marks_at_build(conn: sqlite3.Connection, index: TermIndex) -> dict[str, Any]:
    part = image.whole(index)
    assert part is not None
    top = [int(part.rowids[-1]), part.uuids[-1].decode()] if part.size else None
    return {"log_entry": _log_entry(conn, index.seq), "top_row": top}


def load(
    db_path: Path,
    conn: sqlite3.Connection,
    table: str,
    owner_field: str,
    weights: Sequence[float],
) -> TermIndex | None:
    """The copy saved for ``table``, if there is one for this database and these
    settings (possibly stale: the caller catches it up); None otherwise."""
    where = folder(db_path)
    if where is None:
        return None
    stem = where / table
    try:
        meta = json.loads(Path(f"{stem}.json").read_text())
        if not image.fits(meta, owner_field, weights):
            return None
        marks = meta["marks"]
        if marks["log_entry"] != _log_entry(conn, int(meta["seq"])):
            return None
        top = marks["top_row"]
        if top is not None:
            row = conn.execute(f"SELECT uuid FROM {table} WHERE rowid = ?", [top[0]]).fetchone()
            if row is None or str(row[0]) != top[1]:
                return None
        part, codes = image.read(meta, f"{stem}.npz")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return TermIndex.read(table, bytes.fromhex(meta["cookie"]), int(meta["seq"]), part, codes)
