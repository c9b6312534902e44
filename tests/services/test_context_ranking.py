"""get_context's shared scale: relevance times a prior per kind (summaries count less)."""

from __future__ import annotations

from pathlib import Path

from graphrecall.domain.models import Edge, Graph, Node
from graphrecall.retrieval.engine import Hit
from graphrecall.retrieval.filters import Filters
from graphrecall.services import context_assembly as ca
from graphrecall.services.context import Context
from graphrecall.store import open_store

STAMP = "2026-01-01T00:00:00.000000Z"


def test_an_entity_summary_ranks_below_an_equally_relevant_fact(tmp_path: Path) -> None:
    store = open_store(tmp_path / "db.sqlite")
    try:
        graph = Graph(
            uuid="g", project_uuid="p", type="standard", created_at=STAMP, updated_at=STAMP
        )
        plan = ca._Plan(Context(store, None), graph, "tea", Filters(), None, None)
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
        ranked = ca._rank(items, None)
        assert [i.kind for i in ranked] == ["edge", "node"]
        assert ranked[1].score == 0.6 * ca.KIND_PRIOR["node"]
        assert ranked[1].relevance == 0.6  # the reported relevance is the scorer's
    finally:
        store.close()
