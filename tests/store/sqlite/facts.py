"""Facts and messages written straight to a store, for the full-text index tests."""

from __future__ import annotations

from datetime import timedelta

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode
from graphrecall.graph_model.graph_writes import insert_episodes
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


def messages(
    store: Store, texts: list[str], thread: str, graph: str, start_minute: int = 0
) -> list[str]:
    """One message of ``thread`` in ``graph`` per text, a minute apart, speakers
    alternating; their uuids in order."""
    start = clock.now_dt().replace(microsecond=0) - timedelta(days=1)
    records = [
        Episode(
            uuid=new_id(),
            graph_uuid=graph,
            content=text,
            source="message",
            role="user",
            role_name="Jordan" if i % 2 else "Avery",
            thread_uuid=thread,
            reference_time=clock.to_iso(start + timedelta(minutes=start_minute + i)),
            created_at=clock.to_iso(start + timedelta(minutes=start_minute + i)),
        )
        for i, text in enumerate(texts)
    ]
    insert_episodes(store, records)  # with their neighbours' search texts
    return [r.uuid for r in records]
