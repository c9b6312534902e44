"""The in-memory term index (store/sqlite/term_index.py): the same rows, in the same
order, with the very scores FTS5's ``bm25()`` gives; never used once FTS5 has changed."""

from __future__ import annotations

import random
import time
from datetime import timedelta

import pytest

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.worker import Worker
from graphrecall.store import Store
from graphrecall.store.sqlite import fulltext, term_index
from graphrecall.store.sqlite.migrations import FTS_TOKENIZE
from tests.store.sqlite.facts import insert_facts

GRAPH, OTHER = "g-terms", "g-other"
WORDS = ["jordan", "tennis", "court", "racket", "lisbon", "moving", "moves", "trip"]
WORDS += ["piano", "lesson", "cat", "dog"]


def edges(store: Store, texts: list[str], graph: str = GRAPH) -> list[str]:
    return insert_facts(store, texts, graph)


def sentence(rng: random.Random) -> str:
    # Repeated words give frequencies above 1; lengths vary the BM25 length part.
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))


@pytest.fixture
def small_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table gets an in-memory index, and terms count as common early."""
    monkeypatch.setattr(term_index, "MIN_ROWS", 0)
    monkeypatch.setattr(term_index, "REBUILD_MIN_GAP_S", 0.0)
    monkeypatch.setattr(term_index, "REBUILD_GAP_FACTOR", 0.0)
    monkeypatch.setattr(fulltext, "COMMON_MIN_ROWS", 10)


def both(
    store: Store, kind: type[Edge] | type[Episode], terms: list[str], limit: int, **kw: object
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """(from the in-memory index, from FTS5 alone) for one query."""
    assert store.wait_for_term_indexes(30)  # type: ignore[attr-defined]
    indexed = store.text_search(kind, {"graph_uuid": GRAPH}, terms, limit=limit, **kw)  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(term_index, "MIN_ROWS", 10**12)
        plain = store.text_search(kind, {"graph_uuid": GRAPH}, terms, limit=limit, **kw)  # type: ignore[arg-type]
    return indexed, plain


@pytest.mark.usefixtures("small_tables")
def test_facts_rank_exactly_as_fts5_does(store: Store) -> None:
    rng = random.Random(7)
    edges(store, [sentence(rng) for _ in range(300)])
    edges(store, [sentence(rng) for _ in range(100)], graph=OTHER)
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])  # starts the build
    for _ in range(40):
        terms = rng.sample(WORDS, rng.randint(1, 4))
        limit = rng.choice([3, 10, 50, 500])
        indexed, plain = both(store, Edge, terms, limit)
        assert indexed == plain  # same rows, order and (exactly) the same scores
    assert store._term_indexes._current["edges"].rows == 400  # type: ignore[attr-defined]


@pytest.mark.usefixtures("small_tables")
def test_weighted_message_columns_rank_exactly_as_fts5_does(store: Store) -> None:
    """Messages are indexed over five columns, one weighing half (the previous
    messages of the thread): the weighted frequencies add up as in bm25()."""
    rng = random.Random(11)
    thread, start = new_id(), clock.now_dt()
    store.insert(
        [
            Episode(
                uuid=new_id(),
                graph_uuid=GRAPH,
                content=sentence(rng),
                source="message",
                role="user",
                role_name=rng.choice(["Jordan", "Avery"]),
                thread_uuid=thread,
                reference_time=clock.to_iso(start + timedelta(minutes=i)),
                created_at=clock.to_iso(start + timedelta(minutes=i)),
            )
            for i in range(200)
        ]
    )
    store.text_search(Episode, {"graph_uuid": GRAPH}, ["tennis"])
    for _ in range(30):
        terms = rng.sample([*WORDS, "avery"], rng.randint(1, 4))
        indexed, plain = both(store, Episode, terms, rng.choice([5, 25, 100]))
        assert indexed == plain


@pytest.mark.usefixtures("small_tables")
def test_filters_and_selective_filters_give_fts5s_rows(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(3)
    ids = edges(store, [sentence(rng) for _ in range(300)])
    wanted = tuple(ids[::37])
    where = p.Column("uuid", "in", wanted)
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    indexed, plain = both(store, Edge, ["tennis", "cat", "lisbon"], 10, where=where)
    assert indexed == plain and {u for u, _ in indexed} <= set(wanted)
    # A filter so selective that the index would check too many rows: FTS5 answers.
    monkeypatch.setattr("graphrecall.store.sqlite.store.TERM_INDEX_CHECK_MAX", 1)
    indexed, plain = both(store, Edge, ["tennis", "cat", "lisbon"], 10, where=where)
    assert indexed == plain and indexed


@pytest.mark.usefixtures("small_tables")
def test_a_write_makes_the_index_stale_until_it_is_rebuilt(store: Store) -> None:
    rng = random.Random(5)
    old = edges(store, [sentence(rng) for _ in range(100)])
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.wait_for_term_indexes(30)  # type: ignore[attr-defined]
    built = store._term_indexes._current["edges"]  # type: ignore[attr-defined]
    (new,) = edges(store, ["zanzibar tennis tennis"])
    # FTS5 has changed: the old copy is not used, the new row is found at once.
    assert [u for u, _ in store.text_search(Edge, {"graph_uuid": GRAPH}, ["zanzibar"])] == [new]
    assert store.wait_for_term_indexes(30)  # type: ignore[attr-defined]
    rebuilt = store._term_indexes._current["edges"]  # type: ignore[attr-defined]
    assert rebuilt is not built and rebuilt.matches("zanzibar") == 1
    indexed, plain = both(store, Edge, ["zanzibar", "tennis"], 5)
    assert indexed == plain and indexed[0][0] == new
    store.delete(Edge, {"graph_uuid": GRAPH, "uuid": old[:50]})
    indexed, plain = both(store, Edge, ["tennis", "cat"], 500)
    assert indexed == plain and not set(old[:50]) & {u for u, _ in indexed}


def test_query_terms_are_stemmed_as_the_index_stems_them() -> None:
    tokenizer = term_index.Tokenizer(FTS_TOKENIZE)
    try:
        assert tokenizer.tokens("moving") == tokenizer.tokens("moves") == ("move",)
        assert tokenizer.tokens("Café") == ("cafe",)
        assert tokenizer.tokens("rock'n'roll") == ("rock", "n", "roll")  # a phrase
    finally:
        tokenizer.close()


@pytest.mark.usefixtures("small_tables")
def test_a_term_fts5_reads_as_a_phrase_is_left_to_fts5(store: Store) -> None:
    edges(store, ["rock n roll tonight", "rock and roll", "n rock roll"])
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["rock"])
    indexed, plain = both(store, Edge, ["rock'n'roll", "tonight"], 10)
    assert indexed == plain and indexed


def test_small_tables_are_searched_on_fts5_alone(store: Store) -> None:
    edges(store, ["tennis court", "tennis racket"])
    assert len(store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])) == 2
    assert store.wait_for_term_indexes(5)  # type: ignore[attr-defined]
    assert not store._term_indexes._current  # type: ignore[attr-defined]


@pytest.mark.usefixtures("small_tables")
def test_an_idle_worker_brings_a_searched_tables_copy_up_to_date(store: Store) -> None:
    rng = random.Random(9)
    edges(store, [sentence(rng) for _ in range(100)])
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    indexes = store._term_indexes  # type: ignore[attr-defined]
    assert indexes.wait(30)
    assert set(indexes._current) == {"edges"}  # only the table searched has a copy
    (new,) = edges(store, ["zanzibar"])
    stale = indexes._current["edges"]
    worker = Worker(
        IngestContext(store=store, embedder=None, extractor=None), poll_seconds=0.05, threads=1
    )
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while indexes._current["edges"] is stale:  # no search asked for it
            assert time.monotonic() < deadline, "the idle worker did not rebuild the copy"
            time.sleep(0.05)
    finally:
        worker.stop()
    assert indexes._current["edges"].matches("zanzibar") == 1
    assert set(indexes._current) == {"edges"}
    indexed, plain = both(store, Edge, ["zanzibar"], 5)
    assert indexed == plain == [(new, indexed[0][1])]
