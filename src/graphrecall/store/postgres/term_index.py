"""In-memory copies of the text tables' postings on PostgreSQL (``store/lexical/postings.py``,
the same :class:`TermIndex` SQLite keeps), read from the rows' stored term counts and kept
current from a change log.

A copy is read from each row's ``lex_seq`` (its number in the copy, the insertion order
the common-terms fill ranks by), ``lex_len``, owner, uuid and ``lex_tf`` (its per-column
term counts: the exact tokens the statistics triggers count), so it ranks exactly as the
SQL path (``text_search.py``) does. Every row written or dropped is logged in
``lexical_changes`` by triggers, in the writing transaction, numbered in commit order
(``migrations.py``, migration 9). Each search asks for the log's newest number (one
indexed ``max``): while it is the copy's, the copy is current, whichever process wrote;
otherwise the search reads the rows logged since into a delta when they are few
(:data:`INLINE_MAX`), else a background thread does while SQL answers. A copy whose delta
outgrows :data:`DELTA_MIN_ROWS` / :data:`DELTA_SHARE`, or that falls behind the log's
pruned floor or :data:`LOG_SCAN_MAX` entries, is read again whole in the background, at
most once per :data:`REBUILD_GAP_FACTOR` times its last build took.

Catch-ups need no snapshot of their own: a row re-read later than its log entry is read
as it stands, and the entries after it re-read it again, which changes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from json import loads
from typing import Any

import numpy as np

from graphrecall.store.lexical.copies import TermIndexCopies
from graphrecall.store.lexical.copies import start as _start
from graphrecall.store.lexical.postings import TermIndex, counted_segment
from graphrecall.store.postgres import positions
from graphrecall.store.postgres import term_index_image as image
from graphrecall.store.postgres.connection import Database

log = logging.getLogger(__name__)

# Tables with at most this many rows are read whole by the search that first needs them
# (a few milliseconds); bigger ones in the background while SQL answers.
INLINE_BUILD_ROWS = 1_000
# A search catches the copy up itself when at most this many of its table's rows were
# logged since (one query for them all); more, and a background thread does.
INLINE_MAX = 200
# A copy more than this many log entries (of any table) behind is read again whole; the
# log keeps at least this many (``prune_log``).
LOG_SCAN_MAX = 50_000
# A rebuild starts no sooner than this many times the last build took after it ended.
REBUILD_GAP_FACTOR = 4.0
REBUILD_MIN_GAP_S = 2.0

Row = tuple[int, float, object, str, dict[str, list[int]]]


def _rows(
    db: Database, table: str, owner_field: str, where: str, params: Sequence[Any]
) -> list[Row]:
    """The rows of ``table`` that ``where`` picks, in ``lex_seq`` order. ``lex_tf`` is
    read as text and parsed here: psycopg's jsonb loading took 9 s for the 7,303 episodes
    of the 10k benchmark graph (391k postings), text and ``json.loads`` 1 s."""
    return [
        (int(r["lex_seq"]), float(r["lex_len"]), r["owner"], str(r["uuid"]), loads(r["tf"]))
        for r in db.query(
            f"SELECT lex_seq, lex_len, {owner_field} AS owner, uuid, lex_tf::text AS tf"
            f" FROM {table}{where} ORDER BY lex_seq",
            params,
        )
    ]


def build(db: Database, table: str, owner_field: str, weights: Sequence[float]) -> TermIndex:
    """Read ``table``'s rows into a :class:`TermIndex`, as of the log entry read first."""
    seq, _ = positions.read(db).lexical
    codes: dict[str, int] = {}
    rows = _rows(db, table, owner_field, "", [])
    return TermIndex.read(table, b"", seq, counted_segment(rows, weights, codes), codes)


class TooFarBehind(Exception):
    """More of a copy's rows changed than its caller would read (``catch_up``'s ``most``)."""


def catch_up(
    db: Database,
    index: TermIndex,
    owner_field: str,
    weights: Sequence[float],
    last: int,
    most: int | None = None,
) -> TermIndex:
    """``index`` brought up to log entry ``last``. Raises TooFarBehind when more than
    ``most`` (unless None) of its rows changed, having read at most one more."""
    table = index.table
    # One statement: the rows logged since (at most ``most`` + 1 of them) and each one's
    # current state (none: deleted).
    cap = "" if most is None else f" LIMIT {int(most) + 1}"
    found = db.query(
        f"SELECT c.row, t.lex_seq, t.lex_len, t.{owner_field} AS owner, t.uuid,"
        " t.lex_tf::text AS tf FROM (SELECT DISTINCT row FROM lexical_changes"
        f" WHERE seq > %s AND seq <= %s AND tbl = %s ORDER BY row{cap}) c"
        f" LEFT JOIN {table} t ON t.lex_seq = c.row ORDER BY c.row",
        [index.seq, last, table],
    )
    if most is not None and len(found) > most:
        raise TooFarBehind(table)
    changed = [int(r["row"]) for r in found]
    rows: list[Row] = [
        (int(r["lex_seq"]), float(r["lex_len"]), r["owner"], str(r["uuid"]), loads(r["tf"]))
        for r in found
        if r["lex_seq"] is not None
    ]
    codes = dict(index.owner_codes)
    fresh = counted_segment(rows, weights, codes)
    return index.changed(b"", last, np.asarray(changed, dtype=np.int64), fresh, codes)


class TermIndexes(TermIndexCopies):
    """The current :class:`TermIndex` of each searched text table, caught up with the log
    by the searches that find it stale, or rebuilt in the background."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db
        self._busy: set[str] = set()  # tables being built or caught up apart

    def current(self, table: str, owner_field: str, weights: Sequence[float]) -> TermIndex | None:
        """The copy of ``table`` as of the log's newest entry (caught up here when a few
        rows changed), else None: SQL answers while it is read or caught up apart."""
        if self.db.in_transaction():
            return None  # the transaction's own writes are in no copy
        last, floor = positions.current(self.db).lexical
        index = self._current.get(table)
        if index is not None and index.seq >= last:  # read at or after the read point
            return index
        if index is None or index.seq < floor or last - index.seq > LOG_SCAN_MAX:
            return self._read(table, owner_field, weights, small=index is None)
        with self._lock:
            if table in self._busy or self._closed:
                return None
            self._busy.add(table)
        apart = False
        fresh = None
        try:
            fresh = catch_up(self.db, index, owner_field, weights, last, INLINE_MAX)
        except TooFarBehind:
            name = f"term-index-catch-up-{table}"
            _start(name, self._catch_up_apart, index, owner_field, weights)
            apart = True
        except Exception:  # a cache: the search goes on with SQL
            log.exception("term index of %s not caught up", table)
        finally:
            if not apart:
                with self._lock:
                    self._busy.discard(table)
        return self._adopt(index, fresh, owner_field, weights)

    def _read(
        self, table: str, owner_field: str, weights: Sequence[float], *, small: bool
    ) -> TermIndex | None:
        """Read ``table`` whole: here when it is small and has no copy, else apart."""
        if small:
            found = self.db.query("SELECT rows FROM lexical_totals WHERE tbl = %s", [table])
            if not found or int(found[0]["rows"]) <= INLINE_BUILD_ROWS:
                index = build(self.db, table, owner_field, weights)
                with self._lock:
                    if not self._closed and table not in self._current:
                        self._current[table] = index
                return index
        self.refresh(table, owner_field, weights)
        return None

    def _catch_up_apart(self, index: TermIndex, owner_field: str, weights: Sequence[float]) -> None:
        fresh = None
        try:
            last = positions.read(self.db).lexical[0]
            fresh = catch_up(self.db, index, owner_field, weights, last)
        except Exception:
            log.exception("term index of %s not caught up", index.table)
        finally:
            with self._lock:
                self._busy.discard(index.table)
        self._adopt(index, fresh, owner_field, weights)

    def refresh(self, table: str, owner_field: str, weights: Sequence[float]) -> None:
        """Start reading ``table`` whole in the background, unless it is being read or
        caught up, or the last build ended too recently."""
        with self._lock:
            if self._closed or table in self._busy:
                return
            if time.monotonic() < self._next_build.get(table, 0.0):
                return
            self._busy.add(table)
            if table not in self._current:
                self._loading_saved.add(table)
        _start(f"term-index-{table}", self._build, table, owner_field, tuple(weights))

    def _build(self, table: str, owner_field: str, weights: Sequence[float]) -> None:
        started = time.monotonic()
        index = None
        try:
            if table not in self._current:  # a first copy: the saved image, if usable
                try:
                    last, floor = positions.read(self.db).lexical
                    index = image.load(
                        self.db,
                        table,
                        owner_field,
                        weights,
                        last=last,
                        floor=floor,
                        reach=LOG_SCAN_MAX,
                    )
                finally:
                    with self._lock:
                        self._loading_saved.discard(table)
                        if index is not None and not self._closed:
                            self._current[table] = index
            if index is None:
                index = build(self.db, table, owner_field, weights)
                try:
                    image.save(self.db, index, owner_field, weights)
                except Exception:  # the copy stands; the next start reads it whole
                    log.exception("term index image of %s not saved", table)
        except Exception:  # a cache: searches go on with SQL
            log.exception("term index of %s not built", table)
        took = time.monotonic() - started
        with self._lock:
            gap = max(REBUILD_MIN_GAP_S, REBUILD_GAP_FACTOR * took)
            self._next_build[table] = time.monotonic() + gap
            if index is not None and not self._closed:
                self._current[table] = index
                log.info("term index of %s: %d rows in %.2f s", table, index.rows, took)
            self._busy.discard(table)

    def prune_log(self) -> bool:
        """Drop all but the newest LOG_SCAN_MAX entries of the change log once it holds
        twice as many, raising its floor (a copy read before it is read again whole);
        True when it did."""
        found = self.db.query("SELECT min(seq) AS first, max(seq) AS last FROM lexical_changes")
        first, last = found[0]["first"], found[0]["last"]
        if first is None or int(last) - int(first) < 2 * LOG_SCAN_MAX:
            return False
        floor = int(last) - LOG_SCAN_MAX
        with self.db.transaction():
            self.db.execute("DELETE FROM lexical_changes WHERE seq <= %s", [floor])
            self.db.execute("UPDATE lexical_log_floor SET seq = greatest(seq, %s)", [floor])
        return True

    def _apart(self) -> set[str]:
        return self._busy
