"""Common-term matching (store/lexical/plan.py; FTS5 expressions: store/sqlite/fts5.py):
the same scores as the plain OR query, fewer rows scored; a fill from the common terms
ranks only their newest rows."""

from __future__ import annotations

import pytest

from graphrecall.domain.models import Edge
from graphrecall.domain.predicates import Column
from graphrecall.store import Store
from graphrecall.store.lexical import plan as fulltext
from graphrecall.store.sqlite import fts5
from graphrecall.store.sqlite import text_search as sqlite_store
from tests.store.sqlite.facts import insert_facts

GRAPH = "g-fulltext"


def facts(store: Store, texts: list[str], graph: str = GRAPH) -> None:
    insert_facts(store, texts, graph)


def search(store: Store, terms: list[str], limit: int, *, plain: bool) -> list[tuple[str, float]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fulltext, "COMMON_MIN_ROWS", 10**9 if plain else 10)
        return store.text_search(Edge, {"graph_uuid": GRAPH}, terms, limit=limit)


def corpus(store: Store, jordan_only: int) -> None:
    facts(
        store,
        [f"jordan visited place{i}" for i in range(jordan_only)]
        + [f"jordan plays tennis weekly {i}" for i in range(3)]
        + ["tennis court booked", "tennis racket strings"]
        + [f"filler text number{i}" for i in range(95 - jordan_only)],
    )


def test_plan_splits_only_much_more_frequent_terms() -> None:
    counts = {"jordan": 55_000, "ellis": 55_000, "work": 8_500, "lisbon": 4_400}
    plan = fulltext.match_plan(["jordan", "ellis", "work"], 72_000, counts.__getitem__)
    assert fts5.first(plan) == [
        '("work") AND ("jordan" OR "ellis")',
        '("work") NOT ("jordan" OR "ellis")',
    ]
    assert fts5.fill(plan) is None  # jordan and ellis are in over half the rows: IDF ~0
    # Frequent but comparable terms, or a small table: the plain OR query.
    comparable = fulltext.match_plan(["work", "lisbon"], 72_000, counts.__getitem__)
    assert fts5.first(comparable) == ['"work" OR "lisbon"']
    assert fts5.fill(fulltext.match_plan(["jordan", "lisbon"], 900, counts.__getitem__)) is None
    plan = fulltext.match_plan(["lisbon", "work"], 100_000, {"lisbon": 10, "work": 9_000}.get)
    assert fts5.fill(plan) == '("work") NOT ("lisbon")'


def test_enough_rare_matches_rank_exactly_like_the_plain_query(store: Store) -> None:
    corpus(store, jordan_only=40)
    split = search(store, ["jordan", "tennis"], 3, plain=False)
    plain = search(store, ["jordan", "tennis"], 3, plain=True)
    assert [u for u, _ in split] == [u for u, _ in plain]
    assert [s for _, s in split] == pytest.approx([s for _, s in plain])
    # Every row returned has its full score, common term included.
    everything = dict(search(store, ["jordan", "tennis"], 100, plain=True))
    assert all(everything[u] == pytest.approx(s) for u, s in split)


def test_too_few_rare_matches_are_filled_from_the_common_term(store: Store) -> None:
    corpus(store, jordan_only=40)
    split = search(store, ["jordan", "tennis"], 20, plain=False)
    plain = search(store, ["jordan", "tennis"], 20, plain=True)
    assert len(split) == 20
    assert [u for u, _ in split] == [u for u, _ in plain]
    assert [s for _, s in split] == pytest.approx([s for _, s in plain])


def test_rows_with_only_near_universal_terms_are_not_ranked(store: Store) -> None:
    corpus(store, jordan_only=60)  # jordan in 63 of 100 rows: FTS5 floors its IDF
    split = search(store, ["jordan", "tennis"], 20, plain=False)
    plain = search(store, ["jordan", "tennis"], 20, plain=True)
    assert len(plain) == 20
    assert len(split) == 5  # the rows that mention tennis
    assert [u for u, _ in split] == [u for u, _ in plain[:5]]


def test_the_fill_ranks_only_the_newest_common_term_rows(store: Store) -> None:
    corpus(store, jordan_only=40)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fulltext, "FILL_ROWS", 5)
        split = search(store, ["jordan", "tennis"], 20, plain=False)
    plain = dict(search(store, ["jordan", "tennis"], 100, plain=True))
    # Every row mentioning tennis (the rare term) is ranked, plus the 5 newest rows that
    # mention only jordan; each with its full score.
    texts = {e.uuid: e.fact for e in store.find(Edge, {"graph_uuid": GRAPH})}
    assert len(split) == 5 + 5
    assert sum("tennis" in texts[u] for u, _ in split) == 5
    assert sorted(texts[u] for u, _ in split if "tennis" not in texts[u]) == sorted(
        f"jordan visited place{i}" for i in range(35, 40)
    )
    assert all(plain[u] == pytest.approx(s) for u, s in split)


def test_the_fills_newest_rows_are_counted_in_the_searched_graph(store: Store) -> None:
    corpus(store, jordan_only=20)
    facts(store, [f"jordan elsewhere {i}" for i in range(20)], graph="g-other")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fulltext, "FILL_ROWS", 5)
        split = search(store, ["jordan", "tennis"], 20, plain=False)
    # Another graph's newer rows do not use up the bound.
    texts = {e.uuid: e.fact for e in store.find(Edge, {"graph_uuid": GRAPH})}
    assert sorted(texts[u] for u, _ in split if "tennis" not in texts[u]) == sorted(
        f"jordan visited place{i}" for i in range(15, 20)
    )


def test_a_terms_row_count_is_counted_once_per_ttl(store: Store) -> None:
    """Deciding which terms are common counts each term's rows; the counts are kept for
    ROW_COUNT_TTL_S, so repeated queries do not walk the same posting lists again."""
    corpus(store, jordan_only=40)
    counted: list[str] = []
    read = store.db.read  # type: ignore[attr-defined]

    def spy(sql: str, params: object = ()) -> object:
        if sql.startswith("SELECT count(*) FROM edges_fts"):
            counted.append(str(params))
        return read(sql, params)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store.db, "read", spy)  # type: ignore[attr-defined]
        first = search(store, ["jordan", "tennis"], 20, plain=False)
        assert len(counted) == 2  # one count per term
        again = search(store, ["tennis", "jordan", "court"], 20, plain=False)
        assert len(counted) == 3  # only the new term was counted
        assert [u for u, _ in first] == [
            u for u, _ in search(store, ["jordan", "tennis"], 20, plain=True)
        ]
        assert again
        mp.setattr(sqlite_store, "ROW_COUNT_TTL_S", -1.0)  # every count has expired
        search(store, ["jordan", "tennis"], 20, plain=False)
        assert len(counted) == 5


def test_a_filter_of_a_few_uuids_ranks_every_row_it_allows(store: Store) -> None:
    # jordan in 63 of 100 rows: an unfiltered search leaves the rows with only "jordan"
    # unranked; a filter that lists rows ranks all of them, over every term, as the plain
    # query scores them.
    corpus(store, jordan_only=60)
    plain = search(store, ["jordan", "tennis"], 100, plain=True)
    chosen = [u for u, _ in plain[::7]]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fulltext, "COMMON_MIN_ROWS", 10)
        got = store.text_search(
            Edge,
            {"graph_uuid": GRAPH},
            ["jordan", "tennis"],
            where=Column("uuid", "in", tuple(chosen)),
            limit=100,
        )
    assert [u for u, _ in got] == [u for u, _ in plain if u in set(chosen)]
    assert [s for _, s in got] == pytest.approx([s for u, s in plain if u in set(chosen)])
    assert any(
        u not in {x for x, _ in search(store, ["jordan", "tennis"], 100, plain=False)}
        for u, _ in got
    )
