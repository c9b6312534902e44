"""Zep Cloud v2 / CE 2.x sessions under ``/api/v2``: ``/sessions``, ``/sessions-ordered``,
``/sessions/{session_id}``, a session's messages, and ``/users/{user_id}/sessions``.

A session is a v4 thread: its ``session_id`` is the thread's ``thread_id``, so a session
created here is the v3 thread of that id, and the other way round (the two generations
share users and threads, and never disagree about them)."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import Query

from graphrecall.api.zep_v2 import v2_wire as v2
from graphrecall.api.zep_v2.v2_payloads import (
    SESSION_UNKEPT,
    SESSION_WHY,
    SessionCreateV2,
    SessionUpdateV2,
    refuse_given,
)
from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3.common import PAGE_SIZE_MAX, numbered, numbered_page
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.inputs import MessageUpdate
from graphrecall.domain.models import PageRequest, Thread, User
from graphrecall.services.graph import threads

router = make_router("zep v2: sessions")
# v2's order_by names, and the v4 thread field each is.
ORDERS = {"created_at": "created_at", "updated_at": "updated_at", "session_id": "thread_id"}


def user_id_of(ctx: Services, project: Project, thread: Thread) -> str | None:
    user = ctx.store.get(User, thread.user_uuid, {"project_uuid": project.uuid})
    return user.user_id if user else None


def session(ctx: Services, project: Project, session_id: str) -> Thread:
    """The thread a v2 path names by ``session_id`` (a 404 naming ``session_id``)."""
    return ids.thread(ctx, project, session_id, param="session_id")


@router.post("/sessions", response_model=v2.SessionV2)
def add_session(
    body: SessionCreateV2, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    refuse_given(body, SESSION_UNKEPT, SESSION_WHY)
    if not body.user_id:
        # A v4 thread is always a user's: its messages go to the user's graph.
        raise BadRequest("user_id is required: every graphrecall session is a user's")
    user = ids.user(ctx, project, body.user_id)
    thread = threads.create_thread(ctx, project, user.uuid, body.session_id)
    return v2.session(thread, user.user_id)


@router.get("/sessions-ordered", response_model=v2.SessionListV2)
def list_sessions(
    page_number: str | None = Query(None),
    page_size: str | None = Query(None),
    order_by: str | None = Query(None),
    asc: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    wanted = numbered(page_number, page_size, order_by, asc, tuple(ORDERS))
    wanted = dataclasses.replace(wanted, order_by=ORDERS[wanted.order_by])
    found, total = numbered_page(lambda page: threads.list_threads(ctx, project, page), wanted)
    return v2.SessionListV2(
        sessions=[v2.session(t, user_id_of(ctx, project, t)) for t in found],
        total_count=total,
        response_count=len(found),
    )


@router.get("/sessions/{session_id}", response_model=v2.SessionV2)
def get_session(session_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    thread = session(ctx, project, session_id)
    return v2.session(thread, user_id_of(ctx, project, thread))


@router.patch("/sessions/{session_id}", response_model=v2.SessionV2)
def update_session(
    session_id: str, body: SessionUpdateV2, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    """Nothing of a session can change here (its fields are the thread's); an update
    that gives nothing answers the session, one that gives metadata is a 400."""
    refuse_given(body, SESSION_UNKEPT, SESSION_WHY)
    return get_session(session_id, ctx, project)


@router.get("/users/{user_id}/sessions", response_model=list[v2.SessionV2])
def get_user_sessions(user_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    """A bare array of the user's sessions (its v3 threads), newest first."""
    user = ids.user(ctx, project, user_id)
    page = threads.list_threads(
        ctx, project, PageRequest(page_size=PAGE_SIZE_MAX, order_by="created_at"), user.uuid
    )
    return [v2.session(t, user.user_id) for t in page.items]


@router.get("/sessions/{session_id}/messages", response_model=v2.MessageListV2)
def get_session_messages(
    session_id: str,
    limit: str | None = Query(None),
    cursor: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """Messages in conversation order: page ``cursor`` (1-based) of ``limit``."""
    thread = session(ctx, project, session_id)
    wanted = numbered(
        cursor, limit, "created_at", "true", ("created_at",), names=("cursor", "limit")
    )
    found, total = numbered_page(
        lambda page: threads.list_messages(ctx, project, thread.uuid, page), wanted
    )
    return v2.MessageListV2(
        messages=[v2.message(e) for e in found], row_count=len(found), total_count=total
    )


@router.get("/sessions/{session_id}/messages/{message_uuid}", response_model=v2.MessageV2)
def get_session_message(
    session_id: str, message_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    thread = session(ctx, project, session_id)
    return v2.message(threads.get_message(ctx, project, thread.uuid, message_uuid))


@router.patch("/sessions/{session_id}/messages/{message_uuid}", response_model=v2.MessageV2)
def update_message_metadata(
    session_id: str,
    message_uuid: str,
    body: MessageUpdate,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    thread = session(ctx, project, session_id)
    return v2.message(threads.update_message(ctx, project, thread.uuid, message_uuid, body))
