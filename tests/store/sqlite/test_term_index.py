"""The in-memory term index (store/sqlite/term_index.py): the same rows, in the same
order, with the very scores FTS5's ``bm25()`` gives; never used once FTS5 has changed."""

from __future__ import annotations

import random
import sqlite3
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode
from graphrecall.graph_model.graph_writes import delete_episodes
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.worker import Worker
from graphrecall.store import Store
from graphrecall.store.lexical import plan as fulltext
from graphrecall.store.lexical.postings import TermIndex
from graphrecall.store.sqlite import fts5, term_index
from graphrecall.store.sqlite.migrations import (
    CHANGE_LOG,
    FTS_TOKENIZE,
    TEXT_TABLES,
    ensure_change_log,
    migrate,
)
from tests.store.sqlite.facts import insert_facts, messages

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
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    indexed = store.text_search(kind, {"graph_uuid": GRAPH}, terms, limit=limit, **kw)  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as mp:
        # No copy, not even a small table's (which serves once it exists): FTS5 alone.
        mp.setattr(store._sqlite_text, "_term_index", lambda *a, **k: None)  # type: ignore[attr-defined]
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
    monkeypatch.setattr("graphrecall.store.sqlite.text_search.TERM_INDEX_CHECK_MAX", 1)
    indexed, plain = both(store, Edge, ["tennis", "cat", "lisbon"], 10, where=where)
    assert indexed == plain and indexed


@pytest.mark.usefixtures("small_tables")
def test_rows_tied_at_the_cut_are_taken_by_uuid_as_fts5_takes_them(store: Store) -> None:
    """With no filter but the graph the copy names the rows itself (no SQL): of 200 rows
    with the very same score it returns FTS5's 10, the smallest uuids, and none of
    another graph's. The uuids are out of rowid order, so that rowid order would not do."""
    shuffled = [new_id() for _ in range(205)]
    random.Random(5).shuffle(shuffled)
    mine = insert_facts(
        store, ["tennis court"] * 200 + ["tennis court in lisbon"] * 5, GRAPH, shuffled
    )
    edges(store, ["tennis court"] * 50, graph=OTHER)
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    indexed, plain = both(store, Edge, ["tennis", "court"], 10)
    assert indexed == plain
    assert len({score for _, score in indexed}) == 1
    assert [u for u, _ in indexed] == sorted(mine[:200])[:10]


@pytest.mark.usefixtures("small_tables")
def test_the_fill_is_ranked_from_the_copy_as_fts5_ranks_it(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Too few rows hold the rare term: the newest FILL_ROWS rows of the graph holding
    only the common one fill the page, found and ranked in memory (no FTS5 query), the
    same rows and scores FTS5's fill gives; another graph's newer rows do not count."""
    edges(store, [f"jordan visited place{i}" for i in range(120)])
    edges(store, ["jordan tennis court", "lisbon tennis", "the tennis racket"])
    edges(store, [f"filler text number{i}" for i in range(200)])
    edges(store, [f"jordan elsewhere {i}" for i in range(20)], graph=OTHER)
    monkeypatch.setattr(fulltext, "FILL_ROWS", 7)
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    db = store._sqlite_text.db  # type: ignore[attr-defined]
    statements: list[str] = []
    real_read = db.read

    def read(sql: str, params: object = ()) -> object:
        statements.append(sql)
        return real_read(sql, params)

    monkeypatch.setattr(db, "read", read)
    indexed = store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis", "jordan"], limit=20)
    assert not [s for s in statements if "MATCH" in s]  # the copy answered alone
    monkeypatch.setattr(store._sqlite_text, "_term_index", lambda *a, **k: None)  # type: ignore[attr-defined]
    plain = store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis", "jordan"], limit=20)
    assert [s for s in statements if "OFFSET" in s]  # FTS5 ranked a fill
    assert indexed == plain
    texts = {e.uuid: e.fact for e in store.find(Edge, {"graph_uuid": GRAPH})}
    assert sorted(texts[u] for u, _ in indexed if "tennis" not in texts[u]) == sorted(
        f"jordan visited place{i}" for i in range(113, 120)
    )


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables whose copy was read whole, once per reading."""
    done: list[str] = []
    real = term_index.build

    def counted(path: Any, table: str, *args: Any) -> TermIndex:
        done.append(table)
        return real(path, table, *args)

    monkeypatch.setattr(term_index, "build", counted)
    return done


@pytest.mark.usefixtures("small_tables")
def test_writes_are_caught_up_with_not_read_again(store: Store, builds: list[str]) -> None:
    """Inserts, rewrites and deletes after the copy was read: each search that finds it
    stale reads only the rows changed, and ranks exactly as FTS5 does."""
    rng = random.Random(5)
    ids = edges(store, [sentence(rng) for _ in range(150)])
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    assert builds.count("edges") == 1
    indexes = store._term_indexes  # type: ignore[attr-defined]
    (new,) = edges(store, ["zanzibar tennis tennis"])
    indexed, plain = both(store, Edge, ["zanzibar", "tennis"], 5)
    assert indexed == plain and indexed[0][0] == new
    for step in range(12):
        if step % 3 == 0:
            ids += edges(store, [sentence(rng) for _ in range(rng.randint(1, 20))])
        elif step % 3 == 1:
            gone = rng.sample(ids, 8)
            store.delete(Edge, {"graph_uuid": GRAPH, "uuid": gone})
            ids = [u for u in ids if u not in gone]
        else:
            for uuid in rng.sample(ids, 5):  # a rewritten fact: its old words are dropped
                edge = store.get(Edge, uuid)
                assert edge is not None
                store.update(edge.model_copy(update={"fact": sentence(rng)}))
        terms = rng.sample(WORDS, rng.randint(1, 4))
        indexed, plain = both(store, Edge, terms, rng.choice([3, 10, 500]))
        assert indexed == plain
    copy = indexes._current["edges"]
    # the rows read whole, and one delta of those caught up with
    assert builds.count("edges") == 1 and len(copy.segments) == 2 and copy.alive is not None
    assert copy.rows == len(ids) + 1 and indexes.caught_up >= 13


@pytest.mark.usefixtures("small_tables")
def test_a_messages_neighbours_reindexed_by_its_triggers_are_caught_up_with(
    store: Store, builds: list[str]
) -> None:
    """A message's context and reply columns hold its neighbours' words: a message put
    between two others, or deleted, re-indexes them, and the copy follows."""
    rng = random.Random(13)
    thread = new_id()
    ids = messages(store, [sentence(rng) for _ in range(60)], thread, GRAPH, start_minute=0)
    store.text_search(Episode, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    (between,) = messages(store, ["zanzibar ferry"], thread, GRAPH, start_minute=10)
    # the message is the reply of the one before it and the context of the two after it
    indexed, plain = both(store, Episode, ["zanzibar"], 10)
    assert indexed == plain and len(indexed) >= 2 and between in {u for u, _ in indexed}
    delete_episodes(store, GRAPH, [between, ids[30]])
    indexed, plain = both(store, Episode, ["zanzibar", "tennis", "avery"], 100)
    assert indexed == plain and not {between, ids[30]} & {u for u, _ in indexed}
    assert not both(store, Episode, ["zanzibar"], 10)[0]
    assert builds.count("episodes") == 1


@pytest.mark.usefixtures("small_tables")
def test_compaction_changes_no_posting_and_is_caught_up_with_at_once(
    store: Store, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(17)
    for _ in range(20):  # one FTS5 segment per transaction
        edges(store, [sentence(rng) for _ in range(10)])
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    copy = store._term_indexes._current["edges"]  # type: ignore[attr-defined]
    monkeypatch.setattr("graphrecall.store.sqlite.maintenance.COMPACT_MIN_ROWS", 1)
    while store.maintenance.compact_text_indexes():
        pass
    indexed, plain = both(store, Edge, ["tennis", "cat"], 50)
    assert indexed == plain
    now = store._term_indexes._current["edges"]  # type: ignore[attr-defined]
    assert now.cookie != copy.cookie and now.segments == copy.segments
    assert builds.count("edges") == 1


@pytest.mark.usefixtures("small_tables")
def test_many_changes_are_caught_up_with_in_the_background(
    store: Store, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """More changed rows than a search reads itself: a background thread reads them
    while FTS5 answers, and the copy is caught up, not read again whole."""
    rng = random.Random(31)
    edges(store, [sentence(rng) for _ in range(80)])
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    indexes = store._term_indexes  # type: ignore[attr-defined]
    monkeypatch.setattr(term_index, "INLINE_MAX", 3)
    (new, *_) = edges(store, ["zanzibar", *(sentence(rng) for _ in range(9))])
    # This search is FTS5's (the copy is stale), and starts the catch-up.
    assert [u for u, _ in store.text_search(Edge, {"graph_uuid": GRAPH}, ["zanzibar"])] == [new]
    assert indexes.wait(30)
    copy = indexes._current["edges"]
    assert copy.matches("zanzibar") == 1 and copy.delta_rows == 10
    indexed, plain = both(store, Edge, ["zanzibar", "tennis"], 20)
    assert indexed == plain and indexed[0][0] == new and builds.count("edges") == 1


@pytest.mark.usefixtures("small_tables")
def test_a_copy_too_far_behind_or_past_the_pruned_log_is_read_again(
    store: Store, builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(19)
    edges(store, [sentence(rng) for _ in range(50)])
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    monkeypatch.setattr(term_index, "LOG_SCAN_MAX", 10)
    edges(store, [sentence(rng) for _ in range(11)])  # 11 changes pending
    indexed, plain = both(store, Edge, ["tennis", "cat"], 100)
    assert indexed == plain and builds.count("edges") == 2
    # Pruning leaves the newest entries: a copy behind them cannot catch up.
    edges(store, [sentence(rng) for _ in range(5)])
    monkeypatch.setattr("graphrecall.store.sqlite.maintenance.CHANGE_LOG_KEEP", 2)
    store.maintenance._prune_change_log()  # type: ignore[attr-defined]
    indexed, plain = both(store, Edge, ["tennis", "cat"], 100)
    assert indexed == plain and builds.count("edges") == 3


@pytest.mark.usefixtures("small_tables")
def test_without_a_change_log_a_stale_copy_is_read_again(store: Store, builds: list[str]) -> None:
    """Where the log's triggers could not be made (SQLite's defensive mode), a copy is
    never caught up: it is read again whole after writes."""
    rng = random.Random(23)
    edges(store, [sentence(rng) for _ in range(50)])
    store._term_indexes.logged = frozenset()  # type: ignore[attr-defined]
    store.text_search(Edge, {"graph_uuid": GRAPH}, ["tennis"])
    assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    (new,) = edges(store, ["zanzibar tennis"])
    # FTS5 has changed: the old copy is not used, the new row is found at once.
    assert [u for u, _ in store.text_search(Edge, {"graph_uuid": GRAPH}, ["zanzibar"])] == [new]
    indexed, plain = both(store, Edge, ["zanzibar", "tennis"], 5)
    assert indexed == plain and indexed[0][0] == new and builds.count("edges") == 2


def test_the_change_log_triggers_are_remade_when_an_index_is_recreated(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "x.db"), isolation_level=None)
    migrate(conn)
    assert ensure_change_log(conn) == frozenset(TEXT_TABLES)
    conn.execute("DROP TABLE memories_fts")  # as a migration recreating it would
    conn.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5(content, content='memories',"
        " content_rowid='rowid')"
    )
    assert ensure_change_log(conn) == frozenset(TEXT_TABLES)
    conn.execute("INSERT INTO memories_fts(rowid, content) VALUES (7, 'hello')")
    assert conn.execute(f"SELECT tbl, row FROM {CHANGE_LOG}").fetchall() == [("memories", 7)]
    conn.close()


def test_query_terms_are_stemmed_as_the_index_stems_them() -> None:
    tokenizer = fts5.Tokenizer(FTS_TOKENIZE)
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
    assert store.maintenance.wait_until_warm(5)  # type: ignore[attr-defined]
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


def test_varints_are_read_big_end_first() -> None:
    """FTS5 writes a row's per-column lengths as SQLite varints (high bits first): a
    column of 137 tokens is 0x81 0x09, which read low bits first had counted as 1,161."""
    assert fts5.varints(bytes([0x00, 0x7F])) == [0, 127]
    assert fts5.varints(bytes([0x81, 0x00])) == [128]
    assert fts5.varints(bytes([0x81, 0x09, 0x1B])) == [137, 27]
    assert fts5.varints(bytes([0x81, 0x80, 0x00])) == [16384]
    assert fts5.varints(bytes([0xFF] * 8 + [0x01])) == [(2**56 - 1) << 8 | 1]


@pytest.mark.usefixtures("small_tables")
def test_long_rows_rank_exactly_as_fts5_does(store: Store) -> None:
    """Rows with a column of 128 tokens or more (a length two varint bytes long)."""
    rng = random.Random(13)
    texts = [sentence(rng) for _ in range(100)]
    texts += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(128, 400))) for _ in range(8)]
    edges(store, texts)
    for terms in (["tennis"], ["jordan", "piano"], ["moving", "trip", "lisbon"]):
        indexed, plain = both(store, Edge, terms, 50)
        assert indexed == plain
