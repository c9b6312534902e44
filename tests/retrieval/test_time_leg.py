"""The time leg: when the query names a period, the candidates of the other legs whose
time lies in it (widened by ``TIME_LEG_SLACK``) form one more RRF list. It reorders and
never drops; episodes are timed by ``reference_time``, facts by ``valid_at`` (else
``created_at``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graphrecall.domain import predicates as p
from graphrecall.domain import scopes
from graphrecall.domain.models import Edge, Episode, Node
from graphrecall.retrieval import engine
from graphrecall.retrieval.engine import SearchOptions
from graphrecall.store import Store

GRAPH = "g-time"
DAY = datetime(2023, 8, 19, tzinfo=UTC)
WINDOW = (DAY, DAY + timedelta(days=1))


def _episode(n: int, text: str, when: datetime) -> Episode:
    return Episode(
        uuid=f"ep-{n}",
        graph_uuid=GRAPH,
        content=text,
        source="text",
        reference_time=when.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
        created_at=f"2026-01-01T00:00:{n:02d}.000000Z",
    )


def _node(uuid: str, name: str, summary: str = "") -> Node:
    stamp = "2023-01-01T00:00:00.000000Z"
    return Node(
        uuid=uuid, graph_uuid=GRAPH, name=name, summary=summary, created_at=stamp, updated_at=stamp
    )


# The best lexical match is the oldest; the one of the named day matches less well.
EPISODES = [
    _episode(
        1, "Evan baked bread, then more bread: bread every weekend.", DAY - timedelta(days=60)
    ),
    _episode(2, "Evan baked banana bread for the neighbours.", DAY - timedelta(days=30)),
    _episode(3, "Evan baked a little bread today.", DAY + timedelta(hours=15)),
    _episode(4, "Evan went hiking in the hills.", DAY + timedelta(hours=16)),
]


def _ranked(
    store: Store, scope: str, window: tuple[datetime | None, datetime | None] | None
) -> list[str]:
    opts = SearchOptions(query="What bread was baked?", legs=("bm25",), time_window=window)
    run = engine.search(store, None, None, scopes.SCOPES[scope], GRAPH, opts)
    return [h.uuid for h in run.hits]


def test_episodes_of_the_named_day_rank_first_and_nothing_is_dropped(store: Store) -> None:
    store.insert(EPISODES)
    plain = _ranked(store, "episodes", None)
    assert plain[0] == "ep-1"  # BM25 alone: the most "bread"
    dated = _ranked(store, "episodes", WINDOW)
    assert dated[0] == "ep-3"
    # The time leg only reorders the other legs' candidates: a message of that day that
    # does not match the query is not added, and none of the others is dropped.
    assert sorted(dated) == sorted(plain)
    assert "ep-4" not in dated


def test_the_period_is_widened_by_the_slack_on_each_side(store: Store) -> None:
    slack = engine.TIME_LEG_SLACK
    near = _episode(5, "Evan baked a loaf of bread.", DAY - slack + timedelta(hours=1))
    far = _episode(6, "Evan baked a loaf of bread.", DAY + timedelta(days=1) + slack)
    store.insert([*EPISODES, near, far])
    inside = store.matching(
        Episode,
        {"graph_uuid": GRAPH},
        ["ep-5", "ep-6"],
        p.Column("reference_time", "gte", near.reference_time),
    )
    assert inside == {"ep-5", "ep-6"}
    dated = _ranked(store, "episodes", WINDOW)
    # ep-5 lies within the slack, ep-6 exactly at its end (half-open): only ep-5 gains.
    assert dated.index("ep-5") < dated.index("ep-6")
    assert dated.index("ep-5") < dated.index("ep-1")


def test_an_open_period_bounds_one_side_only(store: Store) -> None:
    store.insert(EPISODES)
    since = _ranked(store, "episodes", (DAY, None))
    assert since[0] == "ep-3"
    before = _ranked(store, "episodes", (None, DAY - timedelta(days=45)))
    assert before[0] == "ep-1"


def test_facts_are_timed_by_valid_at_else_created_at(store: Store) -> None:
    store.insert(
        [
            _node("n-evan", "Evan"),
            _node("n-bread", "bread"),
        ]
    )

    def fact(n: int, text: str, valid_at: str | None, created_at: str) -> Edge:
        return Edge(
            uuid=f"f-{n}",
            graph_uuid=GRAPH,
            source_node_uuid="n-evan",
            target_node_uuid="n-bread",
            name="BAKES",
            fact=text,
            valid_at=valid_at,
            created_at=created_at,
            updated_at=created_at,
        )

    store.insert(
        [
            fact(
                1,
                "Evan baked bread, bread and more bread",
                "2023-06-01T00:00:00.000000Z",
                "2023-08-19T09:00:00.000000Z",
            ),
            fact(
                2,
                "Evan baked sourdough bread with a neighbour in the old town",
                "2023-08-19T12:00:00.000000Z",
                "2023-09-01T00:00:00.000000Z",
            ),
            fact(
                3,
                "Evan baked rye bread with a neighbour in the old town",
                None,
                "2023-08-20T08:00:00.000000Z",
            ),
        ]
    )
    assert _ranked(store, "edges", None)[0] == "f-1"
    dated = _ranked(store, "edges", WINDOW)
    # f-1 was created that day but held from June: its valid_at is what counts.
    assert set(dated[:2]) == {"f-2", "f-3"}
    assert dated[2] == "f-1"


def test_scopes_without_a_time_field_ignore_the_period(store: Store) -> None:
    store.insert([_node("n-1", "Evan", "Evan bakes bread.")])
    assert scopes.SCOPES["nodes"].time_fields == ()
    assert _ranked(store, "nodes", WINDOW) == _ranked(store, "nodes", None) == ["n-1"]


def test_the_cross_encoder_reranker_ignores_the_period(store: Store) -> None:
    store.insert(EPISODES)

    def ranked(window: tuple[datetime | None, datetime | None] | None) -> list[str]:
        opts = SearchOptions(
            query="What bread was baked?",
            legs=("bm25",),
            reranker="cross_encoder",
            time_window=window,
        )
        run = engine.search(store, None, None, scopes.SCOPES["episodes"], GRAPH, opts)
        assert "time" not in run.legs_used
        return [h.uuid for h in run.hits]

    assert ranked(WINDOW) == ranked(None)
    assert ranked(WINDOW)[0] == "ep-1"  # relevance alone: the most "bread"
