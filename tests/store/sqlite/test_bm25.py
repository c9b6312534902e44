"""A lexical leg's rows scored with a scope's own BM25 constants (store/sqlite/bm25.py):
the statistics read in SQL and those of the in-memory copy give FTS5's own scores at its
constants, agree with each other and with the formula at others, and re-scoring keeps
the rows standard BM25 found."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np
import pytest

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Record
from graphrecall.domain.scopes import STANDARD_BM25, Bm25
from graphrecall.store import Store
from graphrecall.store.lexical import bm25
from graphrecall.store.lexical import postings as term_index
from graphrecall.store.sqlite import fts5 as fts5_format
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite import term_index as term_copies
from tests.store.sqlite.facts import insert_facts, messages

GRAPH = "g-bm25"
WORDS = ["jordan", "tennis", "court", "racket", "lisbon", "moving", "moves", "trip", "piano"]
LOW = Bm25(k1=0.5, b=0.3)


def sentence(rng: random.Random, most: int = 9) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, most)))


def statistics(
    store: Store, kind: type[Record], terms: Sequence[str], constants: Bm25
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Every matching row's score by uuid: FTS5's ``bm25()`` (standard text search on
    FTS5 alone), the statistics read in SQL, and the in-memory copy's, with
    ``constants``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(term_copies, "MIN_ROWS", 10**12)
        mp.setattr(store._term_indexes, "has", lambda table: False)  # type: ignore[attr-defined]
        fts5 = dict(store.text_search(kind, {"graph_uuid": GRAPH}, terms, limit=10_000))
    table = rowmap.table(kind)  # type: ignore[attr-defined]
    rows = store.db.read(f"SELECT uuid, rowid FROM {table}")  # type: ignore[attr-defined]
    rowid = {str(u): int(r) for u, r in rows}
    uuid = {r: u for u, r in rowid.items()}
    rowids = np.array(sorted(rowid[u] for u in fts5), dtype=np.int64)
    phrases = [t for term in terms for t in store._text._tokenizer.tokens(term)]  # type: ignore[attr-defined]
    weights = store._text._column_weights(table)  # type: ignore[attr-defined]
    hits = [store._text._term_rows(table, term) for term in terms]  # type: ignore[attr-defined]
    stats = fts5_format.statistics(
        store.db.read,  # type: ignore[attr-defined]
        store._text._tokenizer,  # type: ignore[attr-defined]
        table,
        weights,
        phrases,
        hits,
        rowids,
    )
    in_sql = {} if stats is None else bm25.scores(stats, constants)
    store._text._term_index(kind, any_size=True)  # type: ignore[attr-defined]  # starts the read
    assert store._term_indexes.wait(30)  # type: ignore[attr-defined]
    copy = store._text._term_index(kind, any_size=True)  # type: ignore[attr-defined]
    assert copy is not None
    copied = copy.scores(phrases, rowids, constants)
    return (
        fts5,
        {uuid[r]: s for r, s in in_sql.items()},
        {uuid[r]: s for r, s in copied.items()},
    )


@pytest.mark.parametrize("kind", [Edge, Episode])
def test_both_sources_give_fts5s_own_scores_at_its_constants(
    store: Store, kind: type[Record]
) -> None:
    """Facts (one column) and messages (five, weighted), some rows with a column of 128
    tokens or more (a length two varint bytes long), a term named twice (two stems
    alike, as FTS5 counts them: twice)."""
    rng = random.Random(5)
    texts = [sentence(rng) for _ in range(150)] + [sentence(rng, 400) for _ in range(10)]
    if kind is Edge:
        insert_facts(store, texts, GRAPH)
    else:
        messages(store, texts, new_id(), GRAPH)
    queries = (["tennis"], ["jordan", "piano"], ["moving", "trip", "lisbon", "racket"])
    for terms in (*queries, ["moving", "moves", "cat"]):
        fts5, in_sql, copy = statistics(store, kind, terms, STANDARD_BM25)
        assert fts5 and set(in_sql) == set(copy) == set(fts5)
        for uuid, score in fts5.items():
            assert in_sql[uuid] == pytest.approx(score, rel=1e-12)
            assert copy[uuid] == pytest.approx(score, rel=1e-12)


def test_other_constants_follow_the_formula_from_both_sources(store: Store) -> None:
    texts = ["tennis tennis tennis tennis court", "tennis court", "piano lesson"]
    texts += ["lisbon trip", "moving to lisbon", "a cat", "a dog", "racket"]
    uuids = insert_facts(store, texts, GRAPH)
    _, in_sql, copy = statistics(store, Edge, ["tennis", "court"], LOW)
    rows, lengths = len(texts), [len(t.split()) for t in texts]
    average = sum(lengths) / rows
    idf = math.log((rows - 2 + 0.5) / (2 + 0.5))  # both terms are in two rows

    def part(freq: int, length: int) -> float:
        norm = LOW.k1 * ((1 - LOW.b) + LOW.b * length / average)
        return idf * freq * (LOW.k1 + 1) / (freq + norm)

    expected = {
        uuids[0]: part(4, lengths[0]) + part(1, lengths[0]),
        uuids[1]: part(1, lengths[1]) + part(1, lengths[1]),
    }
    assert in_sql == pytest.approx(expected, rel=1e-12)
    assert copy == pytest.approx(expected, rel=1e-12)


def test_rescoring_keeps_the_rows_and_orders_them_by_the_new_scores(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row that repeats a query word outranks one that holds it and a commoner query
    word once at FTS5's k1 1.2 and b 0.75, and ranks below it at k1 0.5 and b 0.3 (more
    repeats count for less sooner): 30 rows, "jordan" in 2, "piano" in 9."""
    repeats, both_words = insert_facts(store, ["jordan jordan jordan", "jordan piano"], GRAPH)
    insert_facts(store, ["piano lesson"] * 8, GRAPH)
    first, second = ("court", "racket", "lisbon", "moving", "trip"), ("cat", "dog", "sun", "sea")
    insert_facts(store, [f"{a} {b}" for a in first for b in second], GRAPH)
    scope = {"graph_uuid": GRAPH}
    standard = store.text_search(Edge, scope, ["jordan", "piano"])
    low = store.text_search(Edge, scope, ["jordan", "piano"], bm25=LOW)
    assert {u for u, _ in low} == {u for u, _ in standard}
    assert low == sorted(low, key=lambda row: (-row[1], row[0]))
    rank = {u: i for i, (u, _) in enumerate(standard)}
    low_rank = {u: i for i, (u, _) in enumerate(low)}
    assert rank[repeats] < rank[both_words]
    assert low_rank[both_words] < low_rank[repeats]
    _, in_sql, _ = statistics(store, Edge, ["jordan", "piano"], LOW)
    assert dict(low) == pytest.approx({u: in_sql[u] for u, _ in low}, rel=1e-12)
    # Without a copy (before it is read, or inside a transaction) the SQL statistics
    # answer, with the same scores.
    monkeypatch.setattr(store._text, "_term_index", lambda kind, any_size=False: None)
    assert store.text_search(Edge, scope, ["jordan", "piano"], bm25=LOW) == low


def test_a_phrase_term_keeps_the_standard_scores(store: Store) -> None:
    insert_facts(store, ["rock'n'roll forever", "rock music", "roll the dice"], GRAPH)
    scope = {"graph_uuid": GRAPH}
    standard = store.text_search(Edge, scope, ["rock'n'roll", "dice"])
    assert standard
    assert store.text_search(Edge, scope, ["rock'n'roll", "dice"], bm25=LOW) == standard


def test_a_small_tables_copy_kept_for_rescoring_follows_writes(store: Store) -> None:
    """The messages table keeps a copy at any size once a search re-scored from it; the
    worker's refresh after a burst of writes (more than a search catches up with
    inline) brings it up to date, as it does a big table's."""
    rng = random.Random(3)
    thread = new_id()
    messages(store, [sentence(rng) for _ in range(50)], thread, GRAPH)
    store.text_search(Episode, {"graph_uuid": GRAPH}, ["tennis"], bm25=LOW)  # starts the copy
    assert store._term_indexes.wait(30)  # type: ignore[attr-defined]
    assert store._term_indexes._current["episodes"].rows == 50  # type: ignore[attr-defined]
    burst = term_copies.INLINE_MAX + 50
    messages(store, [sentence(rng) for _ in range(burst)], thread, GRAPH, start_minute=60)
    store.maintenance.refresh_text_indexes()
    assert store._term_indexes.wait(30)  # type: ignore[attr-defined]
    assert store._term_indexes._current["episodes"].rows == 50 + burst  # type: ignore[attr-defined]


def test_a_small_tables_copy_ranks_exactly_as_fts5_does(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the messages table keeps a copy for re-scoring, the lexical leg itself runs on
    it too (a third of FTS5's time on LoCoMo), with FTS5's rows, order and scores."""
    rng = random.Random(17)
    messages(store, [sentence(rng) for _ in range(200)], new_id(), GRAPH)
    scope = {"graph_uuid": GRAPH}
    store.text_search(Episode, scope, ["tennis"], bm25=LOW)  # the copy is read for this
    assert store._term_indexes.wait(30)  # type: ignore[attr-defined]
    served: list[int] = []
    planned = term_index.TermIndex.planned  # what the lexical leg asks a copy
    monkeypatch.setattr(
        term_index.TermIndex, "planned", lambda self, *a: served.append(1) or planned(self, *a)
    )
    queries = (["tennis"], ["jordan", "piano"], ["moving", "trip", "lisbon", "racket"])
    from_copy = [store.text_search(Episode, scope, terms, limit=20) for terms in queries]
    assert len(served) == len(queries)
    monkeypatch.setattr(store._term_indexes, "has", lambda table: False)  # type: ignore[attr-defined]
    assert [store.text_search(Episode, scope, terms, limit=20) for terms in queries] == from_copy
    assert len(served) == len(queries)  # FTS5 answered the second time
