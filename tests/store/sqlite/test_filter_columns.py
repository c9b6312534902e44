"""The in-memory filter columns (store/sqlite/filter_columns.py): a filter allows exactly
the rows SQL's three-valued logic allows; filters they do not cover go to SQL; a copy
follows committed writes, never rolled-back ones, and is read again after a delete; and
a filtered search through them gives SQL's page (text) or the exact page (vectors)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge
from graphrecall.store import Store, open_store, vector_index
from graphrecall.store.lexical import plan as fulltext
from graphrecall.store.lexical import postings as term_index
from graphrecall.store.sqlite import column_copies, filter_columns, maintenance
from graphrecall.store.sqlite import term_index as term_copies
from graphrecall.store.sqlite.filter_columns import Columns
from graphrecall.store.sqlite.filtering import FilterCopies

GRAPH = "g-columns"
NAMES = ["LIKES", "WORKS_AT", "LIVES_IN", "FRIEND_OF"]
START = clock.now_dt() - timedelta(days=100)
# "jordan" is in about 40 % of the facts: a common term, but one worth a fill.
WORDS = ["jordan", "tennis", "court", "lisbon", "piano", "cat", "dog", "trip"]


def stamp(day: int) -> str:
    return clock.to_iso(START + timedelta(days=day, minutes=day))


def maybe(rng: random.Random, day: int) -> str | None:
    return None if rng.random() < 0.4 else stamp(day)


def make_edges(rng: random.Random, count: int, graph: str = GRAPH) -> list[Edge]:
    ends = [new_id() for _ in range(5)]
    return [
        Edge(
            uuid=new_id(),
            graph_uuid=graph,
            name=rng.choice(NAMES),
            fact=" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))),
            source_node_uuid=rng.choice(ends),
            target_node_uuid=rng.choice(ends),
            created_at=stamp(rng.randint(0, 99)),
            updated_at=stamp(0),
            valid_at=maybe(rng, rng.randint(0, 99)),
            invalid_at=maybe(rng, rng.randint(0, 99)),
            expired_at=maybe(rng, rng.randint(0, 99)),
        )
        for _ in range(count)
    ]


def read_copy(store: Store, graph: str = GRAPH) -> Columns:
    rows = store.db.read(  # type: ignore[attr-defined]
        f"{filter_columns.select('edges')} WHERE graph_uuid = ?", [graph]
    )
    return filter_columns.read("edges", "graph_uuid", graph, rows)


def allowed_uuids(copy: Columns, where: p.Predicate | None, **scope: Any) -> set[str] | None:
    mask = copy.allowed({"graph_uuid": GRAPH, **scope}, where)
    return None if mask is None else {copy.uuids[i] for i in np.flatnonzero(mask)}


def sql_uuids(store: Store, where: p.Predicate | None, **scope: Any) -> set[str]:
    return {e.uuid for e in store.find(Edge, {"graph_uuid": GRAPH, **scope}, where=where)}


def leaf(rng: random.Random, uuids: list[str]) -> p.Predicate:
    field = rng.choice(["name", "source_node_uuid", "created_at", "valid_at", "expired_at"])
    op = rng.choice(["eq", "ne", "gt", "lt", "gte", "lte", "in", "is_null", "is_not_null"])
    if field == "name":
        value: Any = rng.choice([*NAMES, "MISSING", "M"])
    elif field == "source_node_uuid":
        value = rng.choice(uuids)
    else:
        value = stamp(rng.randint(0, 99))
    if op in ("is_null", "is_not_null"):
        return p.Column(field, op)  # type: ignore[arg-type]
    if op == "in":
        others = NAMES if field == "name" else uuids if field == "source_node_uuid" else [stamp(5)]
        return p.Column(field, "in", (value, rng.choice(others)))
    return p.Column(field, op, value)  # type: ignore[arg-type]


def tree(rng: random.Random, uuids: list[str], depth: int) -> p.Predicate:
    if depth == 0 or rng.random() < 0.3:
        return leaf(rng, uuids)
    kind = rng.choice(["and", "or", "not"])
    if kind == "not":
        return p.Not(tree(rng, uuids, depth - 1))
    items = tuple(tree(rng, uuids, depth - 1) for _ in range(rng.randint(1, 3)))
    return p.And(items) if kind == "and" else p.Or(items)


def test_filters_allow_exactly_the_rows_sql_allows(store: Store) -> None:
    rng = random.Random(5)
    edges = make_edges(rng, 120)
    store.insert([*edges, *make_edges(rng, 20, graph="g-other")])
    copy = read_copy(store)
    assert len(copy) == 120
    ends = [e.source_node_uuid for e in edges]
    named: list[p.Predicate] = [
        p.Column("valid_at", "lt", stamp(50)),
        p.Not(p.Column("valid_at", "lt", stamp(50))),  # NULL stays out, negated or not
        p.Column("expired_at", "ne", stamp(10)),  # IS NOT: NULL passes
        p.Column("name", "in", ()),
        p.Not(p.Column("name", "in", ())),  # SQL's 0: its negation is true even for NULL
        p.Nothing(),
        p.Not(p.Nothing()),
        p.Column("uuid", "in", (edges[3].uuid, edges[7].uuid, "not-there")),
        p.Or((p.Column("name", "gt", "LIKES"), p.Column("invalid_at", "is_null"))),
        p.Not(p.And((p.Column("valid_at", "gte", stamp(20)), p.Column("name", "eq", "LIKES")))),
    ]
    random_trees = [tree(rng, ends, 3) for _ in range(300)]
    for where in [*named, *random_trees]:
        assert allowed_uuids(copy, where) == sql_uuids(store, where), where
    # The scope's own fields count too.
    assert allowed_uuids(copy, None, expired_at=None) == sql_uuids(store, None, expired_at=None)
    assert allowed_uuids(copy, None, name=["LIKES"]) == sql_uuids(store, None, name=["LIKES"])


def test_filters_the_columns_do_not_cover_go_to_sql(store: Store) -> None:
    store.insert(make_edges(random.Random(6), 10))
    copy = read_copy(store)
    uncovered: list[p.Predicate] = [
        p.JsonPath("attributes", "x", "eq", 1),
        p.EndpointLabels(("Person",), True),
        p.Column("fact", "eq", "x"),  # not a kept column
        p.Column("name", "eq", 5),  # a number against text: SQL's affinity rules
        p.Column("created_at", "gte", "2024-01-01"),  # not the stored timestamp form
        p.And((p.Column("name", "eq", "LIKES"), p.LinkedToEpisodes(("e",)))),
    ]
    for where in uncovered:
        assert copy.allowed({"graph_uuid": GRAPH}, where) is None, where
    assert copy.allowed({"graph_uuid": "another-graph"}, None) is None
    assert copy.allowed({"graph_uuid": GRAPH, "fact": "x"}, None) is None
    # Known before any copy exists: such a search does not start one.
    scope = {"graph_uuid": GRAPH}
    for where in uncovered:
        assert not filter_columns.covers("edges", "graph_uuid", GRAPH, scope, where), where
    likes = p.Column("name", "eq", "LIKES")
    assert filter_columns.covers("edges", "graph_uuid", GRAPH, scope, likes)
    assert not filter_columns.covers("links", "graph_uuid", GRAPH, scope, None)


def test_a_search_the_copies_cannot_filter_starts_none(store: Store, reads: list[str]) -> None:
    store.insert(make_edges(random.Random(6), 10))
    labels = p.EndpointLabels(("Person",), True)
    assert store._filters.copy(Edge, {"graph_uuid": GRAPH}, labels) is None  # type: ignore[attr-defined]
    assert store.maintenance.filter_column_status() == {"ready": 0, "building": 0}
    assert current_copy(store, p.Column("name", "eq", "LIKES")) is not None
    assert reads == [GRAPH]


def current_copy(store: Store, where: p.Predicate | None = None) -> set[str]:
    """The rows the store's current copy allows, waiting while it is read."""
    deadline = time.monotonic() + 30
    while True:
        found = store._filters.copy(Edge, {"graph_uuid": GRAPH}, where)  # type: ignore[attr-defined]
        if found is not None:
            copy, mask = found
            return {copy.uuids[i] for i in np.flatnonzero(mask)}
        assert time.monotonic() < deadline, "the filter columns were never read"
        time.sleep(0.01)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The owners whose copy was read whole, once per reading."""
    done: list[str] = []
    real = filter_columns.read

    def counted(table: str, owner_field: str, owner: str, rows: Any) -> Columns:
        done.append(owner)
        return real(table, owner_field, owner, rows)

    monkeypatch.setattr(column_copies, "read", counted)  # where FilterColumns reads a copy
    return done


def test_a_copy_catches_up_with_commits_deletes_and_other_connections_never_rollbacks(
    tmp_path: Path, reads: list[str]
) -> None:
    path = tmp_path / "shared.db"
    store, other = open_store(path), open_store(path)
    try:
        rng = random.Random(7)
        first = make_edges(rng, 30)
        store.insert(first)
        likes = p.Column("name", "eq", "LIKES")
        assert current_copy(store, likes) == sql_uuids(store, likes)
        # A new row and a changed row are caught up with, without reading the copy again.
        added = make_edges(rng, 1)[0].model_copy(update={"name": "LIKES"})
        store.insert([added])
        renamed = "LIKES" if first[0].name != "LIKES" else "X"
        store.update(first[0].model_copy(update={"name": renamed}))
        assert current_copy(store, likes) == sql_uuids(store, likes)
        assert added.uuid in current_copy(store, likes)
        # A write rolled back is never seen.
        ghost = make_edges(rng, 1)[0]
        with pytest.raises(RuntimeError), store.transaction():
            store.insert([ghost])
            raise RuntimeError("undo")
        assert ghost.uuid not in current_copy(store)
        # A deleted row is dropped; another connection's (process's) writes are seen.
        store.delete(Edge, {"uuid": added.uuid})
        assert added.uuid not in current_copy(store)
        late = make_edges(rng, 2)
        other.insert(late)
        other.update(first[1].model_copy(update={"expired_at": stamp(3)}))
        expired = p.Column("expired_at", "is_not_null")
        assert current_copy(store, expired) == sql_uuids(store, expired)
        assert {e.uuid for e in late} <= current_copy(store)
        assert len(current_copy(store)) == 32
        assert reads == [GRAPH]  # all of it by catching up: the copy was read once
    finally:
        other.close()
        store.close()


def _row(rowid: int, uuid: str, name: str) -> tuple[Any, ...]:
    """A row as filter_columns.select('edges') reads it."""
    return (rowid, uuid, name, "s", "t", stamp(1), None, None, None)


def test_catching_up_appends_to_what_copies_share_and_old_copies_keep_their_moment() -> None:
    def rows(copy: Columns, where: p.Predicate | None) -> set[str]:
        mask = copy.allowed({"graph_uuid": GRAPH}, where)
        assert mask is not None
        return {copy.uuids[i] for i in np.flatnonzero(mask)}

    likes, new = p.Column("name", "eq", "LIKES"), p.Column("name", "eq", "NEW_TYPE")
    base = filter_columns.read(
        "edges", "graph_uuid", GRAPH, [_row(1, "a", "LIKES"), _row(2, "b", "KNOWS")]
    )
    grown = base.with_rows(np.array([2, 3]), [_row(2, "b", "LIKES"), _row(3, "c", "NEW_TYPE")])
    assert grown is not None
    # Append-only: the successor extends the uuid list, the positions and the words.
    assert grown.uuids is base.uuids and grown.position is base.position
    assert grown.text["name"] is not None and base.text["name"] is not None
    assert grown.text["name"].words is base.text["name"].words
    assert rows(grown, likes) == {"a", "b"} and rows(grown, new) == {"c"}
    # The old copy still answers as of its moment, new rows and words unseen.
    assert len(base) == 2 and rows(base, likes) == {"a"} and rows(base, new) == set()
    assert rows(base, p.Column("uuid", "in", ("c", "a"))) == {"a"}
    # A uuid inserted again under a new rowid: the successor gets lists of its own.
    again = grown.with_rows(np.array([1, 4]), [_row(4, "a", "KNOWS")])
    assert again is not None and again.uuids is not grown.uuids
    assert rows(again, p.Column("uuid", "eq", "a")) == {"a"} and again.position["a"] == 3
    assert rows(grown, p.Column("uuid", "eq", "a")) == {"a"} and grown.position["a"] == 0
    # A copy another has grown from already: its next successor copies too.
    fork = base.with_rows(np.array([5]), [_row(5, "d", "LIKES")])
    assert fork is not None and fork.uuids is not base.uuids
    assert rows(fork, None) == {"a", "b", "d"} and rows(fork, new) == set()
    assert rows(grown, None) == {"a", "b", "c"} and rows(grown, new) == {"c"}


def test_a_copy_too_far_behind_or_past_the_pruned_log_is_read_again(
    store: Store, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    rng = random.Random(8)
    store.insert(make_edges(rng, 10))
    current_copy(store)
    monkeypatch.setattr(column_copies, "CATCH_UP_MAX", 3)
    store.insert(make_edges(rng, 4))  # four rows behind: read again
    assert store._filters.copy(Edge, {"graph_uuid": GRAPH}, None) is None  # type: ignore[attr-defined]
    assert len(current_copy(store)) == 14
    monkeypatch.setattr(maintenance, "CHANGE_LOG_KEEP", 1)
    store.insert(make_edges(rng, 1))
    store.insert(make_edges(rng, 1))
    store.maintenance._prune_change_log()  # type: ignore[attr-defined]
    assert store._filters.copy(Edge, {"graph_uuid": GRAPH}, None) is None  # type: ignore[attr-defined]
    assert len(current_copy(store)) == 16
    assert len(reads) == 3


def test_the_row_log_triggers_cover_every_kept_column(store: Store) -> None:
    """A column added to filter_columns.COLUMNS needs its update trigger widened (by a
    migration), or updates of it would never reach the copies."""
    for table, (text, times) in filter_columns.COLUMNS.items():
        (sql,) = store.db.read(  # type: ignore[attr-defined]
            "SELECT sql FROM sqlite_master WHERE name = ?", [f"{table}_rows_update"]
        )[0]
        watched = sql.split(" OF ", 1)[1].split(" ON ", 1)[0]
        columns = {c.strip() for c in watched.split(",")}
        assert {"uuid", "graph_uuid", *text, *times} <= columns, table


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """A store whose 400-fact graph counts as big: HNSW, the term index and the filter
    columns all serve it; terms count as common early."""
    monkeypatch.setattr(vector_index, "ANN_MIN_ROWS", 100)
    monkeypatch.setattr(term_copies, "MIN_ROWS", 0)
    monkeypatch.setattr(fulltext, "COMMON_MIN_ROWS", 10)
    store = open_store(tmp_path / "big.db")
    yield store
    store.close()


@pytest.fixture
def copies_used(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each filtered leg got the rows from the filter columns (True) or SQL."""
    used: list[bool] = []
    real = FilterCopies.copy

    def spy(self: FilterCopies, *args: Any) -> Any:
        found = real(self, *args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(FilterCopies, "copy", spy)
    return used


def filtered_searches(
    store: Store, where: p.Predicate, vector: np.ndarray[Any, Any]
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    scope = {"graph_uuid": GRAPH}
    text = store.text_search(Edge, scope, ["jordan", "tennis", "piano"], where=where, limit=20)
    vec = store.vector_search(Edge, GRAPH, vector, scope=scope, where=where, limit=20)
    return text, vec


def test_filtered_searches_through_the_copy_give_sqls_and_the_exact_pages(
    big: Store, copies_used: list[bool]
) -> None:
    rng = random.Random(9)
    edges = make_edges(rng, 400)
    big.insert(edges)
    matrix = np.random.default_rng(9).normal(size=(400, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    big.set_embeddings(Edge, GRAPH, [(e.uuid, matrix[i]) for i, e in enumerate(edges)])
    assert big.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    wheres = [
        p.And((p.Column("name", "in", ("LIKES", "LIVES_IN")), p.Column("expired_at", "is_null"))),
        p.Column("created_at", "gte", stamp(90)),
        p.Not(p.Column("name", "eq", "LIKES")),
    ]
    current_copy(big)
    for where in wheres:
        q = matrix[rng.randrange(400)]
        copies_used.clear()
        text, vec = filtered_searches(big, where, q)
        assert copies_used == [True, True]  # both legs
        with pytest.MonkeyPatch.context() as mp:  # the same searches, filtered in SQL
            mp.setattr(FilterCopies, "copy", lambda *_: None)
            sql_text, _ = filtered_searches(big, where, q)
        assert text == sql_text and text  # same rows, order and scores
        allowed = sorted(sql_uuids(big, where))
        position = {e.uuid: i for i, e in enumerate(edges)}
        scores = {u: float(matrix[position[u]] @ q) for u in allowed}
        best = sorted(allowed, key=lambda u: -scores[u])[:20]
        assert [u for u, _ in vec] == best
        assert [s for _, s in vec] == pytest.approx([scores[u] for u in best], abs=1e-6)


def test_the_fill_of_a_common_term_is_ranked_from_the_copy_as_fts5_ranks_it(
    big: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows that hold only the common term ("jordan") are ranked when the rarer terms
    match too few allowed rows: the newest FILL_ROWS of them."""
    rng = random.Random(10)
    big.insert(make_edges(rng, 400))
    assert big.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    current_copy(big)
    where = p.Column("name", "eq", "WORKS_AT")
    scope = {"graph_uuid": GRAPH}
    fills: list[int] = []
    newest = term_index.TermIndex.newest

    def counted(self: term_index.TermIndex, *args: Any) -> Any:
        found = newest(self, *args)
        fills.append(len(found))
        return found

    monkeypatch.setattr(term_index.TermIndex, "newest", counted)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fulltext, "FILL_ROWS", 15)
        found = big.text_search(Edge, scope, ["jordan", "zebra"], where=where, limit=40)
        assert fills == [15]  # the fill came from the copy
        mp.setattr(FilterCopies, "copy", lambda *_: None)
        plain = big.text_search(Edge, scope, ["jordan", "zebra"], where=where, limit=40)
    assert found == plain and len(found) == 15


def test_a_copy_that_disagrees_with_sql_is_not_trusted(
    big: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(11)
    edges = make_edges(rng, 300)
    big.insert(edges)
    vectors = np.random.default_rng(11).normal(size=(300, 16)).astype(np.float32)
    big.set_embeddings(Edge, GRAPH, [(e.uuid, vectors[i]) for i, e in enumerate(edges)])
    assert big.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
    current_copy(big)
    # A broken copy that allows every row.
    monkeypatch.setattr(Columns, "allowed", lambda self, *_: self.alive.copy())
    where = p.Column("name", "eq", "LIKES")
    text, vec = filtered_searches(big, where, vectors[0])
    likes = sql_uuids(big, where)
    assert text and vec
    assert {u for u, _ in text} <= likes and {u for u, _ in vec} <= likes
    assert caplog.text.count("disagree with SQL") == 2  # each leg fell back to SQL
