"""Zep Cloud v2 / Community Edition 2.x wire models (sessions, memory, search), and the
reshaping of v4 records into them.

Field names follow the published clients' models (``zep_cloud/types`` of zep-cloud
1.0.9, ``zep_python/types`` of zep-python 2.0.2, which agree): a session is a v4 thread
named by its ``session_id`` (the v4 ``thread_id``); a message's ``role`` is the
speaker's label and ``role_type`` the role enum (v4: ``name`` and ``role``); a fact is a
v4 edge with a ``rating`` (its relevance to what it was found for)."""

from __future__ import annotations

from typing import Any

from graphrecall.api.zep_v3.wire import Wire
from graphrecall.domain import models as m
from graphrecall.wire.zep_v4 import wire as v4


class SessionV2(Wire):
    uuid: str
    session_id: str | None = None
    user_id: str | None = None
    metadata: dict[str, Any] | None = None
    project_uuid: str
    created_at: str
    updated_at: str


class SessionListV2(Wire):
    sessions: list[SessionV2]
    total_count: int
    response_count: int


class MessageV2(Wire):
    uuid: str
    role: str | None = None
    role_type: str | None = None
    content: str
    metadata: dict[str, Any] | None = None
    created_at: str
    updated_at: str


class MessageListV2(Wire):
    messages: list[MessageV2]
    row_count: int
    total_count: int


class FactV2(Wire):
    uuid: str
    fact: str
    rating: float | None = None
    created_at: str


class FactResponseV2(Wire):
    fact: FactV2


class FactsV2(Wire):
    facts: list[FactV2]


class SummaryV2(Wire):
    uuid: str
    content: str
    created_at: str


class SummaryListV2(Wire):
    summaries: list[SummaryV2]
    row_count: int
    total_count: int


class MemoryV2(Wire):
    messages: list[MessageV2]
    facts: list[str]
    relevant_facts: list[FactV2]
    summary: SummaryV2 | None = None
    context: str | None = None  # zep-cloud 2.x


class AddMemoryV2(Wire):
    """zep-cloud 1.x and CE read ``{message}``; zep-cloud 2.x reads ``{context}``."""

    message: str
    context: str | None = None


class MemorySearchResultV2(Wire):
    """One item of ``memory.search`` (a bare array): a message or a summary."""

    message: MessageV2 | None = None
    summary: SummaryV2 | None = None
    fact: FactV2 | None = None
    metadata: dict[str, Any] | None = None
    score: float | None = None


class SessionSearchResultV2(Wire):
    message: MessageV2 | None = None
    fact: FactV2 | None = None
    summary: SummaryV2 | None = None
    session_id: str | None = None
    score: float | None = None


class SessionSearchV2(Wire):
    results: list[SessionSearchResultV2]


# -- conversions ----------------------------------------------------------------------


def session(t: m.Thread, user_id: str | None) -> SessionV2:
    return SessionV2(
        uuid=t.uuid,
        session_id=t.thread_id,
        user_id=user_id,
        project_uuid=t.project_uuid,
        created_at=t.created_at,
        updated_at=t.updated_at,
    )


def message(e: m.Episode) -> MessageV2:
    w = v4.message(e)
    # v2's created_at is the message's own time (v4: reference_time), as in v3.
    stamp = w.reference_time or w.created_at
    return MessageV2(
        uuid=w.uuid,
        role=w.name,
        role_type=w.role or "norole",
        content=w.content,
        metadata=w.metadata,
        created_at=stamp,
        updated_at=stamp,
    )


def fact(w: v4.EdgeWire, rating: float | None = None) -> FactV2:
    return FactV2(uuid=w.uuid, fact=w.fact, rating=rating, created_at=w.created_at)


def summary(s: m.ThreadSummary) -> SummaryV2:
    return SummaryV2(uuid=s.uuid, content=s.summary, created_at=s.created_at)
