"""A saved term-index image (store/lexical/image.py): read back, it ranks as the copy it
was saved from; saved only from a copy read whole; refused under other settings."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from graphrecall.store.lexical import image
from graphrecall.store.lexical.postings import TermIndex, counted_segment


def _copy() -> TermIndex:
    codes: dict[str, int] = {}
    rows = [
        (1, 3.0, "g1", "u1", {"alpha": [2, 0], "beta": [0, 1]}),
        (4, 2.0, "g2", "u4", {"beta": [1, 1]}),
        (9, 4.0, "g1", "u9", {"gamma": [1, 0], "alpha": [0, 3]}),
    ]
    return TermIndex.read("edges", b"", 7, counted_segment(rows, [1.0, 0.5], codes), codes)


def test_an_image_read_back_ranks_as_its_copy() -> None:
    copy = _copy()
    part = image.whole(copy)
    assert part is not None
    out = io.BytesIO()
    image.write_arrays(out, part)
    meta = json.loads(json.dumps(image.describe(copy, part, "graph_uuid", [1.0, 0.5])))
    assert image.fits(meta, "graph_uuid", [1.0, 0.5])
    assert not image.fits(meta, "graph_uuid", [1.0, 1.0])
    assert not image.fits(meta, "space_uuid", [1.0, 0.5])
    assert not image.fits({**meta, "version": image.VERSION + 1}, "graph_uuid", [1.0, 0.5])
    read, codes = image.read(meta, io.BytesIO(out.getvalue()))
    again = TermIndex.read("edges", b"", 7, read, codes)
    for name in image.ARRAYS:
        np.testing.assert_array_equal(getattr(read, name), getattr(part, name))
    for owner in (None, "g1", "g2"):
        terms = ["alpha", "beta"]
        assert again.best(terms, terms, owner, 5) == copy.best(terms, terms, owner, 5)
    assert copy.best(["alpha"], ["alpha"], None, 5)


def test_a_damaged_image_raises_a_readable_error() -> None:
    copy = _copy()
    part = image.whole(copy)
    assert part is not None
    meta = image.describe(copy, part, "graph_uuid", [1.0, 0.5])
    with pytest.raises((ValueError, OSError)):
        image.read(meta, io.BytesIO(b"not an npz"))
