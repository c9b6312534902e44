"""Document summaries: what the episodes of one document (``Episode.document_id``) of a
graph said, kept up to date as its chunks are ingested (the way a thread's summary is,
ingest/derive.py).

Offline there is no model to write prose, so a summary is extractive: the facts the
document's chunks stated, oldest first, within a budget; a document none of whose
chunks gave a fact is summarised by the opening of its first chunk, so it is never an
empty line.
"""

from __future__ import annotations

import re

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import DocumentSummary, Edge, Episode
from graphrecall.ingest.derive import fit, save_rolling
from graphrecall.store.base import Store

POINTS = 20  # facts kept (the newest)
CHARS = 2000
OPENING_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def render(document_id: str, points: list[str]) -> str:
    return f"Document {document_id}." + "".join(f"\n- {p}." for p in points)


def points_of(summary: str) -> list[str]:
    return [line[2:].rstrip(".") for line in summary.splitlines() if line.startswith("- ")]


def opening(content: str) -> str:
    """The first sentence of a chunk (at most ``OPENING_CHARS``), without its stop."""
    text = " ".join(content.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return first[:OPENING_CHARS].rstrip(" .")


def summarise(store: Store, episode: Episode, new_facts: list[Edge]) -> DocumentSummary | None:
    """Fold the facts an episode of a document added into the document's summary (made
    on its first episode); None for an episode of no document. In the caller's
    transaction."""
    if episode.document_id is None:
        return None
    scope = {"graph_uuid": episode.graph_uuid, "document_id": episode.document_id}
    found = store.find(DocumentSummary, scope, limit=1)
    existing = found[0] if found else None
    points = points_of(existing.summary) if existing else []
    for edge in new_facts:
        point = edge.fact.rstrip(".")
        if point not in points:
            points.append(point)
    if not points and episode.content.strip():
        points = [opening(episode.content)]
    document_id = episode.document_id
    text = fit(points[-POINTS:], lambda kept: render(document_id, kept), CHARS)
    now = clock.now()
    return save_rolling(
        store,
        existing,
        text,
        episode.reference_time,
        now,
        lambda stamps: DocumentSummary(
            uuid=new_id(),
            graph_uuid=episode.graph_uuid,
            document_id=document_id,
            created_at=now,
            **stamps,
        ),
    )
