"""Records for the conformance tests, with every timestamp chosen by the test."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    Edge,
    Episode,
    Memory,
    Node,
    Observation,
    PageRequest,
    Record,
    Task,
)
from graphrecall.store import Store

R = TypeVar("R", bound=Record)


def at(second: int, micro: int = 0) -> str:
    """A stored-form timestamp ``second`` seconds into 2026-01-01."""
    minute, sec = divmod(second, 60)
    hour, minute = divmod(minute, 60)
    return f"2026-01-01T{hour:02d}:{minute:02d}:{sec:02d}.{micro:06d}Z"


def node(graph: str, name: str, *, t: int = 0, **fields: Any) -> Node:
    return Node(
        uuid=fields.pop("uuid", new_id()),
        graph_uuid=graph,
        name=name,
        labels=fields.pop("labels", ["Entity"]),
        created_at=at(t),
        updated_at=at(t),
        **fields,
    )


def edge(
    graph: str, a: Node, b: Node, fact: str = "", *, t: int = 0, expired: bool = False, **f: Any
) -> Edge:
    return Edge(
        uuid=f.pop("uuid", new_id()),
        graph_uuid=graph,
        name=f.pop("name", "REL"),
        fact=fact or f"{a.name} relates to {b.name}",
        source_node_uuid=a.uuid,
        target_node_uuid=b.uuid,
        created_at=at(t),
        updated_at=at(t),
        expired_at=at(t + 1) if expired else None,
        **f,
    )


def episode(graph: str, content: str, *, t: int = 0, **fields: Any) -> Episode:
    return Episode(
        uuid=fields.pop("uuid", new_id()),
        graph_uuid=graph,
        content=content,
        reference_time=at(t),
        created_at=at(t),
        **fields,
    )


def observation(graph: str, name: str, summary: str, *, t: int = 0) -> Observation:
    return Observation(
        uuid=new_id(),
        graph_uuid=graph,
        name=name,
        summary=summary,
        created_at=at(t),
        updated_at=at(t),
    )


def memory(space: str, content: str, *, t: int = 0, **fields: Any) -> Memory:
    return Memory(
        uuid=fields.pop("uuid", new_id()),
        space_uuid=space,
        content=content,
        version_hash=fields.pop("version_hash", "h"),
        created_at=at(t),
        **fields,
    )


def task(project: str, *, t: int = 0, **fields: Any) -> Task:
    return Task(
        uuid=fields.pop("uuid", new_id()),
        project_uuid=project,
        type=fields.pop("type", "graph.add"),
        created_at=at(t),
        updated_at=at(t),
        **fields,
    )


def unit(values: list[float]) -> npt.NDArray[np.float32]:
    """``values`` as a normalised float32 vector (stores take normalised vectors)."""
    v = np.asarray(values, dtype=np.float32)
    out: npt.NDArray[np.float32] = (v / np.linalg.norm(v)).astype(np.float32)
    return out


def uuids(records: list[Any]) -> list[str]:
    return [r.uuid for r in records]


def walk(store: Store, kind: type[R], scope: dict[str, Any], page: PageRequest) -> list[R]:
    """Every record of ``list_page``, page after page from ``page``."""
    seen: list[R] = []
    while True:
        result = store.list_page(kind, scope, page)
        seen += result.items
        if result.next_cursor is None:
            return seen
        page = page.model_copy(update={"cursor": result.next_cursor})
