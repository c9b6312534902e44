"""Embedding memories in the background (task type ``memory.embed``).

A memory's vector is written in the same transaction that reads its text, so a vector
always belongs to the text the memory has: an edit that lands later forgets the vector
and queues the memory again.
"""

from __future__ import annotations

from typing import Any

from graphrecall.domain.models import Memory, Task
from graphrecall.graph_model.embedding import embed_records
from graphrecall.ingest.context import IngestContext


def process_memories(ctx: IngestContext, task: Task) -> dict[str, Any]:
    space_uuid = task.payload["space_uuid"]
    uuids = list(task.payload.get("memories", []))
    with ctx.store.transaction():
        memories = ctx.store.find(Memory, {"space_uuid": space_uuid, "uuid": uuids})
        if not embed_records(ctx.store, ctx.embedder, memories, owner_field="space_uuid"):
            raise RuntimeError("no embedder is available; the memories stay unembedded")
    return {"embedded": len(memories)}
