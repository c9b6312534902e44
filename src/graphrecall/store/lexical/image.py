"""A term-index copy as a saved image, for the next process to start from: its settings
and its segment's term spans as a JSON-able description, its arrays as one ``.npz``.
SQLite keeps images in files beside the database (``sqlite/term_index_image.py``),
PostgreSQL in a table (``postgres/term_index_image.py``); each adds its own checks that
an image belongs to the rows it is applied to, and catches the loaded copy up from its
change log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from graphrecall.store.lexical.postings import Segment, TermIndex

VERSION = 1
ARRAYS = ("rowids", "tokens", "owners", "uuids", "docs", "freqs")


def whole(index: TermIndex) -> Segment | None:
    """The copy's one segment when it was just read whole (nothing deleted or added
    since): the only kind of copy saved; None otherwise."""
    if len(index.segments) != 1 or index.alive is not None:
        return None
    part = index.segments[0]
    return part if isinstance(part, Segment) else None


def describe(
    index: TermIndex, part: Segment, owner_field: str, weights: Sequence[float]
) -> dict[str, Any]:
    return {
        "version": VERSION,
        "owner_field": owner_field,
        "weights": list(weights),
        "owner_codes": index.owner_codes,
        "spans": part.spans,
    }


def write_arrays(out: IO[bytes], part: Segment) -> None:
    np.savez(out, **{name: getattr(part, name) for name in ARRAYS})


def fits(meta: dict[str, Any], owner_field: str, weights: Sequence[float]) -> bool:
    """Whether an image was saved with the settings the copy is wanted with."""
    return (
        meta.get("version") == VERSION
        and meta["owner_field"] == owner_field
        and meta["weights"] == list(weights)
    )


def read(meta: dict[str, Any], arrays: str | IO[bytes]) -> tuple[Segment, dict[str, int]]:
    """The saved segment and owner codes (``TermIndex.read`` makes the copy of them);
    raises ValueError, KeyError, TypeError or OSError on a damaged image."""
    with np.load(arrays) as saved:
        found = {name: saved[name] for name in ARRAYS}
    spans = {str(t): (int(s), int(e)) for t, (s, e) in meta["spans"].items()}
    codes = {str(k): int(v) for k, v in meta["owner_codes"].items()}
    return Segment(spans=spans, **found), codes
