"""A segment read from stored per-row term counts (PostgreSQL's ``lex_tf``) holds the same
postings, and ranks the same, as one read from an index's postings (SQLite's FTS5)."""

from __future__ import annotations

import random

import numpy as np

from graphrecall.store.lexical.postings import TermIndex, counted_segment, segment

WORDS = ["alpha", "beta", "gamma", "delta", "zebra", "quokka"]


def test_counted_segment_equals_the_postings_segment() -> None:
    rng = random.Random(3)
    weights = [1.0, 0.5]
    rows = []
    postings = []
    for rowid in range(1, 200, 3):  # rowids with gaps, ascending
        tf: dict[str, list[int]] = {}
        for column in range(2):
            for word in rng.sample(WORDS, rng.randint(0, 4)):
                count = rng.randint(1, 3)
                tf.setdefault(word, [0, 0])[column] = count
                postings += [(word, rowid, f"c{column}")] * count
        length = float(sum(sum(c) for c in tf.values()))
        rows.append((rowid, length, f"owner{rowid % 3}", f"u{rowid:04d}", tf))
    postings.sort()
    counted_codes: dict[str, int] = {}
    read_codes: dict[str, int] = {}
    counted = counted_segment(rows, weights, counted_codes)
    read = segment(
        [(r[0], r[1]) for r in rows],
        [(r[0], r[2], r[3]) for r in rows],
        postings,
        {"c0": 1.0, "c1": 0.5},
        read_codes,
    )
    for word in WORDS:
        for got, want in zip(counted.postings(word), read.postings(word), strict=True):
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(counted.tokens, read.tokens)
    np.testing.assert_array_equal(counted.uuids, read.uuids)
    a = TermIndex.read("t", b"", 0, counted, counted_codes)
    b = TermIndex.read("t", b"", 0, read, read_codes)
    for owner in (None, "owner1"):
        assert a.best(["zebra", "alpha"], ["zebra", "alpha"], None, 10) == b.best(
            ["zebra", "alpha"], ["zebra", "alpha"], None, 10
        )
        found = a.best(["beta"], ["beta"], owner, 5)
        assert found and found == b.best(["beta"], ["beta"], owner, 5)


def test_an_empty_segment() -> None:
    empty = counted_segment([], [1.0], {})
    assert empty.size == 0 and empty.postings("alpha")[0].size == 0
