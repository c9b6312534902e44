"""Records for the context-service tests, written straight to memory or a store."""

from __future__ import annotations

from graphrecall.domain.models import Edge

STAMP = "2026-01-01T00:00:00.000000Z"


def edge(fact: str, *, uuid: str | None = None, graph: str = "g", **dates: str) -> Edge:
    """A fact between nodes "a" and "b" (uuid ``e-<fact>`` unless given)."""
    return Edge(
        uuid=uuid or f"e-{fact}",
        graph_uuid=graph,
        name="RELATES_TO",
        fact=fact,
        source_node_uuid="a",
        target_node_uuid="b",
        created_at=STAMP,
        updated_at=STAMP,
        **dates,
    )
