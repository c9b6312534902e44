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
from graphrecall.domain.predicates import Column
from graphrecall.graph_model.indexed_text import said, vector_text
from graphrecall.ml.embedder import Embedder, EmbedderUnavailable
from graphrecall.store.base import Store

log = logging.getLogger(__name__)


def text_of(record: Record) -> str:
    """The text of a record (nodes: name + summary; edges: the fact): what its vector
    stands for, except an episode's, which adds context (``indexed_text.vector_text``)."""
    if isinstance(record, Episode):
        return said(record)
    if isinstance(record, Memory):
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


def previous_messages(store: Store, episodes: Sequence[Episode]) -> dict[str, Episode]:
    """The message before each thread message in its thread (by ``created_at``, which is
    strictly increasing), for those that have one. One indexed lookup per message."""
    out: dict[str, Episode] = {}
    for e in episodes:
        if e.thread_uuid is None:
            continue
        found = store.find(
            Episode,
            {"graph_uuid": e.graph_uuid, "thread_uuid": e.thread_uuid},
            where=Column("created_at", "lt", e.created_at),
            order_by="created_at",
            descending=True,
            limit=1,
        )
        if found:
            out[e.uuid] = found[0]
    return out


def episode_vector_texts(store: Store, episodes: Sequence[Episode]) -> dict[str, str]:
    """Each episode's uuid -> the contextual text its vector is computed from."""
    previous = previous_messages(store, episodes)
    return {e.uuid: vector_text(e, previous.get(e.uuid)) for e in episodes}


def texts_to_embed(store: Store, records: Sequence[Record]) -> list[str]:
    """The texts ``records`` (all of one kind) are embedded from."""
    episodes = [r for r in records if isinstance(r, Episode)]
    if len(episodes) != len(records):
        return [text_of(r) for r in records]
    texts = episode_vector_texts(store, episodes)
    return [texts[e.uuid] for e in episodes]


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
        vectors = embedder.embed(texts_to_embed(store, records))
    except EmbedderUnavailable as exc:
        log.warning("embedder unavailable, continuing lexical-only: %s", exc)
        return False
    kind = type(records[0])
    owner = str(getattr(records[0], owner_field))
    store.set_embeddings(kind, owner, [(r.uuid, vectors[i]) for i, r in enumerate(records)])
    return True
