"""get_context's shared scale: relevance times a prior per kind (summaries count less), and
facts of messages the block already cites placed lower."""

from __future__ import annotations

from pathlib import Path

from graphrecall.domain.models import Edge, Graph, Node
from graphrecall.retrieval.engine import Hit
from graphrecall.retrieval.filters import Filters
from graphrecall.services.container import Services
from graphrecall.services.get_context import plan as context_plan
from graphrecall.services.get_context import ranking as context_ranking
from graphrecall.services.get_context.block import Item
from graphrecall.store import open_store
from tests.services.records import STAMP, edge


def test_an_entity_summary_ranks_below_an_equally_relevant_fact(tmp_path: Path) -> None:
    store = open_store(tmp_path / "db.sqlite")
    try:
        graph = Graph(
            uuid="g", project_uuid="p", type="standard", created_at=STAMP, updated_at=STAMP
        )
        plan = context_plan.Plan(Services(store, None), graph, "tea", Filters(), None, None)
        fact = Edge(
            uuid="e",
            graph_uuid="g",
            name="LIKES",
            fact="Alice likes tea",
            source_node_uuid="a",
            target_node_uuid="t",
            created_at=STAMP,
            updated_at=STAMP,
        )
        entity = Node(
            uuid="a",
            graph_uuid="g",
            name="Alice",
            summary="Alice likes tea. Alice drinks tea daily.",
            created_at=STAMP,
            updated_at=STAMP,
        )
        items = plan._items("edge", [(fact, Hit("e", 0.6, relevance=0.6))]) + plan._items(
            "node", [(entity, Hit("a", 0.6, relevance=0.6))]
        )
        ranked = context_ranking.rank(items, None)
        assert [i.kind for i in ranked] == ["edge", "node"]
        assert ranked[1].score == 0.6 * context_plan.KIND_PRIOR["node"]
        assert ranked[1].relevance == 0.6  # the reported relevance is the scorer's
    finally:
        store.close()


def _fact(uuid: str, score: float) -> Item:
    return Item("edge", edge(f"fact {uuid}", uuid=uuid), score, score, line=f"- fact {uuid}")


def test_a_fact_of_an_already_cited_message_makes_room_for_new_evidence() -> None:
    # m1 yielded three facts that rank together at its relevance; m2's one fact ranks
    # just below them and comes second once m1 is cited.
    items = [_fact("a", 0.9), _fact("b", 0.9), _fact("c", 0.9), _fact("d", 0.8)]
    sources = {"a": ["m1"], "b": ["m1"], "c": ["m1"], "d": ["m2"]}
    ranked = context_ranking.diversify(items, sources)
    assert [i.uuid for i in ranked] == ["a", "d", "b", "c"]
    scaled = 0.9 * context_ranking.REPEATED_SOURCES
    assert [i.score for i in ranked] == [0.9, 0.8, scaled, scaled]


def test_a_fact_is_scaled_once_and_only_when_all_its_messages_are_cited() -> None:
    items = [_fact("a", 0.9), _fact("b", 0.85), _fact("c", 0.84), _fact("d", 0.1)]
    # b also comes from m3, not yet cited: it keeps its score; c is scaled once (to 0.42),
    # stays above d, and is not scaled again though m1 is still cited when it is placed.
    sources = {"a": ["m1"], "b": ["m1", "m3"], "c": ["m1"]}
    ranked = context_ranking.diversify(items, sources)
    assert [(i.uuid, i.score) for i in ranked] == [
        ("a", 0.9),
        ("b", 0.85),
        ("c", 0.84 * context_ranking.REPEATED_SOURCES),
        ("d", 0.1),
    ]


def test_facts_tied_at_their_messages_relevance_go_by_their_own() -> None:
    own_weak, own_strong, unscored = _fact("a", 0.7), _fact("b", 0.7), _fact("c", 0.7)
    own_weak.relevance, own_strong.relevance, unscored.relevance = 0.2, 0.5, None
    ranked = context_ranking.rank([own_weak, unscored, own_strong], None)
    assert [i.uuid for i in ranked] == ["b", "a", "c"]
