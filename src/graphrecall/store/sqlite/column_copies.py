"""The in-memory filter columns of each owner searched with a filter, kept current.

:class:`FilterColumns` keeps the copies (``filter_columns.py: Columns``) current from
the row log (``migrations.ROW_LOG``, schema migration 15): triggers log the rowid of every
row inserted, deleted or updated in a kept column, whichever connection wrote it (another
process too), inside the writing transaction (so a rolled-back write is never logged). A
search re-reads the rows logged since its copy was read, up to :data:`CATCH_UP_MAX`,
before using it; more, or a log pruned past the copy, and the copy is read again whole
(~0.35-0.6 s at 100k facts) on a background thread, SQL filtering meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphrecall.store.sqlite.filter_columns import COLUMNS, Columns, read, select
from graphrecall.store.sqlite.migrations import ROW_LOG

log = logging.getLogger(__name__)

Read = Callable[[str, Sequence[Any]], list[Any]]
Key = tuple[str, str]  # (table, owner uuid)

# A search re-reads at most this many rows written since the copy was read; more, and
# the copy is read again whole in the background while SQL filters.
CATCH_UP_MAX = 2_000
# Copies kept (the owners searched with a filter most recently).
COPIES_MAX = 64


class FilterColumns:
    """The current :class:`Columns` of each (table, owner) searched with a filter, caught
    up from the row log (``migrations.ROW_LOG``) by the searches that use them."""

    def __init__(self, read_rows: Read) -> None:
        self._read = read_rows
        self._lock = threading.Lock()
        # The last log entry applied and the copy, least recently used first.
        self._copies: OrderedDict[Key, tuple[int, Columns]] = OrderedDict()
        self._building: set[Key] = set()
        self._catch_lock = threading.Lock()
        self._closed = False

    def status(self) -> dict[str, int]:
        with self._lock:
            return {"ready": len(self._copies), "building": len(self._building)}

    def close(self) -> None:
        self._closed = True

    def current(
        self, table: str, owner_field: str, owner: str, wanted: Callable[[], bool]
    ) -> Columns | None:
        """The copy of ``owner``'s rows of ``table`` with every committed write in, or None
        (then, if ``wanted()`` says a copy would serve, one is read in the background, and
        SQL filters meanwhile)."""
        if table not in COLUMNS:
            return None
        # One catch-up at a time: no search uses a copy another is still catching up.
        with self._catch_lock:
            return self._caught_up((table, owner), owner_field, wanted)

    def preload(self, table: str, owner_field: str, owner: str) -> int:
        """Read (or catch up) ``owner``'s copy of ``table`` now, not in the background
        (``graph.warm``); the rows the copy holds (0 also when ``table`` has none, or
        another thread is reading it)."""
        if table not in COLUMNS:
            return 0
        key = (table, owner)
        copy = self.current(table, owner_field, owner, lambda: False)
        if copy is None:
            with self._lock:
                if key in self._building or self._closed:
                    return 0
                self._building.add(key)
            self._build(key, owner_field)
            with self._lock:
                held = self._copies.get(key)
            copy = held[1] if held is not None else None
        return 0 if copy is None else len(copy)

    def _caught_up(self, key: Key, owner_field: str, wanted: Callable[[], bool]) -> Columns | None:
        table, owner = key
        with self._lock:
            held = self._copies.get(key)
            if held is not None:
                self._copies.move_to_end(key)
        if held is None:
            if wanted():
                self._schedule(key, owner_field)
            return None
        seq, copy = held
        first = self._read(f"SELECT min(seq) FROM {ROW_LOG}", [])[0][0]
        logged = self._read(
            f"SELECT seq, row FROM {ROW_LOG} WHERE seq > ? AND tbl = ? ORDER BY seq LIMIT ?",
            [seq, table, CATCH_UP_MAX + 1],
        )
        if (first is not None and first > seq + 1) or len(logged) > CATCH_UP_MAX:
            self._schedule(key, owner_field)  # pruned past the copy, or too far behind
            return None
        if not logged:
            return copy
        rowids = np.unique(np.asarray([r[1] for r in logged], dtype=np.int64))
        found: list[Any] = []
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500].tolist()
            marks = ",".join("?" * len(chunk))
            found += self._read(
                f"{select(table)} WHERE rowid IN ({marks}) AND {owner_field} = ? ORDER BY rowid",
                [*chunk, owner],
            )
        caught_up = copy.with_rows(rowids, found)
        if caught_up is None:
            self._schedule(key, owner_field)
            return None
        with self._lock:
            if self._copies.get(key) is held:
                self._copies[key] = (int(logged[-1][0]), caught_up)
        return caught_up

    def _schedule(self, key: Key, owner_field: str) -> None:
        """Read ``key``'s copy again in the background."""
        with self._lock:
            self._copies.pop(key, None)
            if key in self._building or self._closed:
                return
            self._building.add(key)
        threading.Thread(
            target=self._build,
            args=(key, owner_field),
            name="graphrecall-filter-columns",
            daemon=True,
        ).start()

    def _build(self, key: Key, owner_field: str) -> None:
        table, owner = key
        try:
            # The log position first: writes after it are caught up with later.
            seq = self._read(f"SELECT coalesce(max(seq), 0) FROM {ROW_LOG}", [])[0][0]
            rows = self._read(f"{select(table)} WHERE {owner_field} = ? ORDER BY rowid", [owner])
            copy = read(table, owner_field, owner, rows)
            with self._lock:
                self._copies[key] = (int(seq), copy)
                while len(self._copies) > COPIES_MAX:
                    self._copies.popitem(last=False)
        except Exception:  # SQL keeps filtering; say why the copy is missing
            log.exception("reading the filter columns of %s/%s failed", *key)
        finally:
            with self._lock:
                self._building.discard(key)
