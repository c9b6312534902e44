"""Domain records -> the Memory Engine wire shapes (camelCase, display paths)."""

from __future__ import annotations

from typing import Any

from graphrecall.domain.models import Memory, MemoryEvent
from graphrecall.domain.tree_paths import to_display


def timestamp(stored: str | None) -> str | None:
    """Stored microsecond UTC -> millisecond precision, as JavaScript's toISOString."""
    return None if stored is None else stored[:23] + "Z"


def temporal(record: Memory | MemoryEvent) -> dict[str, Any] | None:
    if record.temporal_start is None:
        return None
    return {"start": timestamp(record.temporal_start), "end": timestamp(record.temporal_end)}


def memory(m: Memory, home: str, has_embedding: bool) -> dict[str, Any]:
    return {
        "id": m.uuid,
        "content": m.content,
        "meta": m.meta,
        "tree": to_display(m.tree, home),
        "name": m.name,
        "temporal": temporal(m),
        "version": m.version,
        "versionHash": m.version_hash,
        "hasEmbedding": has_embedding,
        "createdAt": timestamp(m.created_at),
        "createdBy": None,  # as upstream's space model: no per-memory creator
        "updatedAt": timestamp(m.updated_at),
    }


def event(e: MemoryEvent, home: str) -> dict[str, Any]:
    return {
        "eventId": e.uuid,
        "at": timestamp(e.at),
        "operation": e.operation,
        "operationId": e.operation_id,
        "cause": e.cause,
        "actor": e.actor,
        "memoryId": e.memory_uuid,
        "tree": to_display(e.tree, home),
        "name": e.name,
        "meta": e.meta,
        "temporal": temporal(e),
        "content": e.content,
        "version": e.version,
        "versionHash": e.version_hash,
    }
