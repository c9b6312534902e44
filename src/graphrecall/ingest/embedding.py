"""What text each record kind is embedded from, and embedding a batch of records."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphrecall.domain.models import (
    Edge,
    Episode,
    Memory,
    Node,
    Observation,
    Record,
    ThreadSummary,
)
from graphrecall.ml.embedder import Embedder, EmbedderUnavailable
from graphrecall.store.base import Store

log = logging.getLogger(__name__)


def text_of(record: Record) -> str:
    """The text a record's vector stands for (nodes: name + summary; edges: the fact)."""
    if isinstance(record, Episode) and record.role_name:
        return f"{record.role_name}: {record.content}"  # the speaker is part of the message
    if isinstance(record, Episode | Memory):
        return record.content
    if isinstance(record, Node):
        # Name plus the start of the summary: long inputs cost the transformer quadratically
        # and the name carries most of what a node search matches.
        return f"{record.name}: {record.summary[:160]}" if record.summary else record.name
    if isinstance(record, Edge):
        return record.fact
    if isinstance(record, Observation):
        return f"{record.name}: {record.summary}"
    if isinstance(record, ThreadSummary):
        return record.summary[:600]
    raise TypeError(f"{type(record).__name__} is not embedded")


def embed_records(
    store: Store,
    embedder: Embedder | None,
    records: Sequence[Record],
    *,
    owner_field: str = "graph_uuid",
) -> bool:
    """Embed and store vectors for ``records`` (all of one kind and one owner: the graph,
    or the ``owner_field`` of kinds owned by something else) in one batch.

    Returns False when no embedder is available: the records stay searchable lexically.
    """
    if not records:
        return True
    if embedder is None:
        return False
    try:
        vectors = embedder.embed([text_of(r) for r in records])
    except EmbedderUnavailable as exc:
        log.warning("embedder unavailable, continuing lexical-only: %s", exc)
        return False
    kind = type(records[0])
    owner = str(getattr(records[0], owner_field))
    store.set_embeddings(kind, owner, [(r.uuid, vectors[i]) for i, r in enumerate(records)])
    return True
