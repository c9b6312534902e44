"""v3 threads: ``/threads``, a thread's messages, context and episodes, by ``thread_id``."""

from __future__ import annotations

from typing import Any

from fastapi import Query

from graphrecall.api.zep_v3 import ids
from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.common import (
    PAGE_SIZE_MAX,
    int_param,
    numbered,
    numbered_page,
    v3_fields,
)
from graphrecall.api.zep_v3.payloads import MessagesAddV3, ThreadCreateV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.domain.errors import NotFound
from graphrecall.domain.inputs import MessageUpdate
from graphrecall.domain.models import (
    Episode,
    PageRequest,
    Thread,
    ThreadSummary,
    User,
)
from graphrecall.services.get_context.assembly import thread_context
from graphrecall.services.graph import graphs, threads
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v3: threads")
THREAD_ORDERS = ("created_at", "updated_at", "thread_id", "uuid")


def _user_ids(ctx: Services, project: Project, found: list[Thread]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for user_uuid in {t.user_uuid for t in found}:
        user = ctx.store.get(User, user_uuid, {"project_uuid": project.uuid})
        out[user_uuid] = user.user_id if user else None
    return out


@router.post("/threads", response_model=v3wire.ThreadV3)
def create_thread(
    body: ThreadCreateV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    user = ids.user(ctx, project, body.user_id)
    thread = threads.create_thread(ctx, project, user.uuid, body.thread_id)
    return v3wire.thread(thread, user.user_id)


@router.get("/threads", response_model=v3wire.ThreadListV3)
def list_threads(
    page_number: str | None = Query(None),
    page_size: str | None = Query(None),
    order_by: str | None = Query(None),
    asc: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    wanted = numbered(page_number, page_size, order_by, asc, THREAD_ORDERS)
    found, total = numbered_page(lambda page: threads.list_threads(ctx, project, page), wanted)
    user_ids = _user_ids(ctx, project, found)
    return v3wire.ThreadListV3(
        threads=[v3wire.thread(t, user_ids[t.user_uuid]) for t in found],
        total_count=total,
        response_count=len(found),
    )


@router.delete("/threads/{thread_id}", response_model=v3wire.SuccessV3)
def delete_thread(thread_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    threads.delete_thread(ctx, project, ids.thread(ctx, project, thread_id).uuid)
    return v3wire.SuccessV3(message="deleted")


def _add(thread_id: str, body: MessagesAddV3, ctx: Services, project: Project) -> Any:
    thread = ids.thread(ctx, project, thread_id)
    with v3_fields({r"\.reference_time$": ".created_at"}):
        added, task = threads.add_messages(ctx, project, thread.uuid, body)
    context = thread_context(ctx, project, thread.uuid).text if body.return_context else None
    return v3wire.AddMessagesV3(
        message_uuids=[m.uuid for m in added], task_id=task.uuid, context=context
    )


@router.post("/threads/{thread_id}/messages", response_model=v3wire.AddMessagesV3)
def add_messages(
    thread_id: str, body: MessagesAddV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return _add(thread_id, body, ctx, project)


@router.post("/threads/{thread_id}/messages-batch", response_model=v3wire.AddMessagesV3)
def add_messages_batch(
    thread_id: str, body: MessagesAddV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    """v3's bulk import route; here the same call as ``add_messages``."""
    return _add(thread_id, body, ctx, project)


@router.get("/threads/{thread_id}/messages", response_model=v3wire.MessageListV3)
def get_messages(
    thread_id: str,
    limit: str | None = Query(None),
    cursor: str | None = Query(None),
    lastn: str | None = Query(None),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """Messages in conversation order: ``lastn`` the newest n (overriding the rest),
    else page ``cursor`` (1-based) of ``limit`` messages."""
    thread = ids.thread(ctx, project, thread_id)
    newest = int_param(lastn, "lastn", ge=1, le=PAGE_SIZE_MAX)
    if newest is not None:
        page = threads.list_messages(
            ctx, project, thread.uuid, PageRequest(page_size=newest, order_by="created_at")
        )
        found, total = list(reversed(page.items)), page.total_size or 0
    else:
        wanted = numbered(
            cursor, limit, "created_at", "true", ("created_at",), names=("cursor", "limit")
        )
        found, total = numbered_page(
            lambda p: threads.list_messages(ctx, project, thread.uuid, p), wanted
        )
    user = ctx.store.get(User, thread.user_uuid, {"project_uuid": project.uuid})
    return v3wire.MessageListV3(
        messages=[v3wire.message(v4.message(e)) for e in found],
        row_count=len(found),
        total_count=total,
        thread_created_at=thread.created_at,
        user_id=user.user_id if user else None,
        user_uuid=thread.user_uuid,
    )


@router.get("/threads/{thread_id}/context", response_model=v3wire.ContextV3)
def get_user_context(
    thread_id: str,
    template_id: str | None = Query(None, max_length=500),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    """The user's context block for the thread; a v3 ``template_id`` names a v4 context
    template by its name (an unknown one is a 404 naming ``template_id``)."""
    thread = ids.thread(ctx, project, thread_id)
    template_uuid = ids.template(ctx, project, template_id).uuid if template_id else None
    return v3wire.ContextV3(context=thread_context(ctx, project, thread.uuid, template_uuid).text)


@router.get("/threads/{thread_id}/episodes", response_model=v3wire.EpisodesV3)
def get_thread_episodes(
    thread_id: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    thread = ids.thread(ctx, project, thread_id)
    graph = graphs.resolve(ctx, project, thread.graph_uuid)
    page = threads.list_messages(
        ctx, project, thread.uuid, PageRequest(page_size=PAGE_SIZE_MAX, order_by="created_at")
    )
    return v3wire.EpisodesV3(
        episodes=[
            v3wire.episode(v4.episode(e, graph), thread.thread_id) for e in reversed(page.items)
        ]
    )


@router.get("/threads/{thread_id}/summary", response_model=v3wire.ThreadSummaryV3)
def get_summary(thread_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    thread = ids.thread(ctx, project, thread_id)
    found = ctx.store.find(ThreadSummary, {"thread_uuid": thread.uuid}, limit=1)
    if not found:
        raise NotFound("thread summary", thread_id, param="thread_id")
    return v3wire.thread_summary(v4.thread_summary(found[0]), thread.thread_id)


@router.patch("/messages/{message_uuid}", response_model=v3wire.MessageV3)
def update_message(
    message_uuid: str, body: MessageUpdate, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    """A message named by uuid alone: its thread is found from it."""
    message, _ = ids.item_graph(ctx, project, Episode, message_uuid, param="message_uuid")
    assert isinstance(message, Episode)
    if message.thread_uuid is None:
        raise NotFound("message", message.uuid, param="message_uuid")
    updated = threads.update_message(ctx, project, message.thread_uuid, message.uuid, body)
    return v3wire.message(v4.message(updated))
