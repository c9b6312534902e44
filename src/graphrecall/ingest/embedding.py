"""What text each record kind is embedded from, and embedding a batch of records."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphrecall.domain.models import Edge, Episode, Node, Observation, Record, ThreadSummary
from graphrecall.ml.embedder import Embedder, EmbedderUnavailable
from graphrecall.store.base import Store

log = logging.getLogger(__name__)


def text_of(record: Record) -> str:
    """The text a record's vector stands for (nodes: name + summary; edges: the fact)."""
    if isinstance(record, Episode):
        return record.content
    if isinstance(record, Node):
        return f"{record.name}: {record.summary}" if record.summary else record.name
    if isinstance(record, Edge):
        return record.fact
    if isinstance(record, Observation):
        return f"{record.name}: {record.summary}"
    if isinstance(record, ThreadSummary):
        return record.summary
    raise TypeError(f"{type(record).__name__} is not embedded")


def embed_records(store: Store, embedder: Embedder | None, records: Sequence[Record]) -> bool:
    """Embed and store vectors for ``records`` (all of one kind and graph) in one batch.

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
    owner = records[0].graph_uuid  # type: ignore[attr-defined]
    store.set_embeddings(kind, owner, [(r.uuid, vectors[i]) for i, r in enumerate(records)])
    return True
