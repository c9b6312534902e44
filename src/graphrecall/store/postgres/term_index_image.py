"""A table's term-index copy saved in the database (``term_index_images``, migration 15),
so a restarted server, or another process, has it after one read of a few dozen MB
instead of reading the table's rows whole (43 s for the 223k rows of 200 users on a
loaded 2-core machine, docs/benchmarks.md "Cold queries"), while SQL answers every
search of the table. PostgreSQL's counterpart of SQLite's ``sqlite/term_index_image.py``
(same name, same concern).

An image is only a starting point: it is stamped with the change-log entry its rows were
read after, and the copy loaded from it is caught up from the log like any stale copy
(``term_index.catch_up``: rows re-read after their entry are re-read again, which
changes nothing). An image the log no longer reaches back to (its entry under the pruned
floor, or more than ``LOG_SCAN_MAX`` entries behind) is not used: the table is read
whole, and the new copy saved over it. It lives in the same schema as the rows it was
read from, so a backup or restore carries both together.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Sequence

from graphrecall.store.lexical import image
from graphrecall.store.lexical.postings import TermIndex
from graphrecall.store.postgres.connection import Database

log = logging.getLogger(__name__)
# The settings row holding the change-log entry a table's last erasure was made at.
ERASED_SEQ = "erased_seq:"


def save(db: Database, index: TermIndex, owner_field: str, weights: Sequence[float]) -> None:
    """Store ``index`` (a copy just read whole: one segment) for the next start, unless
    an image read later is there already."""
    part = image.whole(index)
    if part is None:
        return
    arrays = io.BytesIO()
    image.write_arrays(arrays, part)
    meta = image.describe(index, part, owner_field, weights)
    # Not an image read before the table's last erasure (``ERASED_SEQ``, maintenance.py:
    # it may hold the deleted rows' terms), whichever process read it.
    db.execute(
        "INSERT INTO term_index_images (tbl, seq, meta, arrays)"
        " SELECT %s, %s, %s, %s WHERE NOT EXISTS (SELECT 1 FROM settings"
        " WHERE key = %s AND value::bigint > %s)"
        " ON CONFLICT (tbl) DO UPDATE SET seq = excluded.seq, meta = excluded.meta,"
        " arrays = excluded.arrays WHERE term_index_images.seq <= excluded.seq",
        [
            index.table,
            index.seq,
            json.dumps(meta),
            arrays.getvalue(),
            ERASED_SEQ + index.table,
            index.seq,
        ],
    )


def load(
    db: Database,
    table: str,
    owner_field: str,
    weights: Sequence[float],
    *,
    last: int,
    floor: int,
    reach: int,
) -> TermIndex | None:
    """The image saved for ``table`` as a copy (possibly stale: the caller catches it
    up), if one was saved with these settings and the log (newest entry ``last``, pruned
    up to ``floor``) still reaches back to it within ``reach`` entries; else None."""
    found = db.query("SELECT seq, meta, arrays FROM term_index_images WHERE tbl = %s", [table])
    if not found:
        return None
    seq = int(found[0]["seq"])
    if seq < floor or last - seq > reach:
        return None
    try:
        meta = json.loads(found[0]["meta"])
        if not image.fits(meta, owner_field, weights):
            return None
        part, codes = image.read(meta, io.BytesIO(found[0]["arrays"]))
    except (ValueError, KeyError, TypeError, OSError):
        log.exception("term index image of %s not read", table)
        return None
    return TermIndex.read(table, b"", seq, part, codes)
