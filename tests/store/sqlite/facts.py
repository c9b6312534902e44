"""Facts written straight to a store, for the full-text index tests."""

from __future__ import annotations

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge
from graphrecall.store import Store


def insert_facts(
    store: Store, texts: list[str], graph: str, uuids: list[str] | None = None
) -> list[str]:
    """One edge per text, in one transaction (with ``uuids``, else new ones); their uuids
    in order."""
    stamp = clock.now()
    records = [
        Edge(
            uuid=uuids[i] if uuids else new_id(),
            graph_uuid=graph,
            name="REL",
            fact=text,
            source_node_uuid=new_id(),
            target_node_uuid=new_id(),
            created_at=stamp,
            updated_at=stamp,
        )
        for i, text in enumerate(texts)
    ]
    store.insert(records)
    return [r.uuid for r in records]
