"""Where both change logs stand (``lexical_changes`` for the term-index copies,
``vector_changes`` for the vector copies): each one's newest entry and pruned floor, in
one round trip, read once per read point (``store/read_point.py``) and on every call
outside one."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from graphrecall.store import read_point
from graphrecall.store.postgres.connection import Database

Position = tuple[int, int]  # (newest entry, pruned floor)

SQL = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM lexical_changes) AS lexical_last,"
    " (SELECT coalesce(max(seq), 0) FROM lexical_log_floor) AS lexical_floor,"
    " (SELECT coalesce(max(seq), 0) FROM vector_changes) AS vector_last,"
    " (SELECT coalesce(max(seq), 0) FROM vector_log_floor) AS vector_floor"
)


@dataclass(frozen=True)
class Positions:
    lexical: Position
    vectors: Position


def read(db: Database) -> Positions:
    found = db.query(SQL)[0]
    return Positions(
        lexical=(int(found["lexical_last"]), int(found["lexical_floor"])),
        vectors=(int(found["vector_last"]), int(found["vector_floor"])),
    )


def current(db: Database) -> Positions:
    """Both logs' positions as of this read point (now, outside one)."""
    return read_point.memo(("postgres log positions", id(db)), partial(read, db))
