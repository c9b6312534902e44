"""/threads: create, read, list, delete, messages, and the thread's episodes."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Query

from graphrecall.api.zep_v4 import wire
from graphrecall.api.zep_v4.bodies import LookupBody, ThreadCreateBody
from graphrecall.api.zep_v4.common import (
    Context,
    CtxDep,
    Project,
    ProjectDep,
    make_router,
    paging,
    wire_page,
)
from graphrecall.domain.inputs import MessagesAdd, MessageUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services import graphs, threads
from graphrecall.services.context_assembly import thread_context
from graphrecall.services.episode_errors import processing_errors

router = make_router("threads")
_paging = paging(("created_at", "updated_at", "uuid"))
# Messages read in conversation order unless asked otherwise.
_message_paging = paging(("created_at",), default_order_by="created_at", default_order="asc")
_episode_paging = paging(("created_at",), default_order_by="created_at", default_order="asc")


@router.post("/threads", response_model=wire.ThreadWire)
def create_thread(
    body: ThreadCreateBody, ctx: Context = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.thread(threads.create_thread(ctx, project, body.user_uuid))


@router.get("/threads", response_model=wire.PageWire[wire.ThreadWire])
def list_threads(
    user_uuid: str | None = Query(None),
    page: PageRequest = Depends(_paging),
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = threads.list_threads(ctx, project, page, user_uuid)
    return wire_page(result, [wire.thread(t) for t in result.items])


@router.post("/threads/lookup", response_model=wire.ThreadWire)
def lookup_thread(body: LookupBody, ctx: Context = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.thread(threads.lookup_thread(ctx, project, body.thread_id))


@router.get("/threads/{thread_uuid}", response_model=wire.ThreadWire)
def get_thread(thread_uuid: str, ctx: Context = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.thread(threads.get_thread(ctx, project, thread_uuid))


@router.delete("/threads/{thread_uuid}", response_model=wire.AsyncResult)
def delete_thread(thread_uuid: str, ctx: Context = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.AsyncResult(task=wire.task(threads.delete_thread(ctx, project, thread_uuid)))


@router.post("/threads/{thread_uuid}/messages", response_model=wire.AddMessagesResult)
def add_messages(
    thread_uuid: str, body: MessagesAdd, ctx: Context = CtxDep, project: Project = ProjectDep
) -> Any:
    added, task = threads.add_messages(ctx, project, thread_uuid, body)
    context = thread_context(ctx, project, thread_uuid).text if body.return_context else None
    return wire.AddMessagesResult(
        messages=[wire.message(m) for m in added], task=wire.task(task), context=context
    )


@router.get("/threads/{thread_uuid}/messages", response_model=wire.PageWire[wire.MessageWire])
def list_messages(
    thread_uuid: str,
    page: PageRequest = Depends(_message_paging),
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = threads.list_messages(ctx, project, thread_uuid, page)
    errors = processing_errors(ctx, project.uuid, result.items)
    return wire_page(result, [wire.message(m, errors.get(m.uuid)) for m in result.items])


@router.get("/threads/{thread_uuid}/messages/{message_uuid}", response_model=wire.MessageWire)
def get_message(
    thread_uuid: str, message_uuid: str, ctx: Context = CtxDep, project: Project = ProjectDep
) -> Any:
    found = threads.get_message(ctx, project, thread_uuid, message_uuid)
    return wire.message(found, processing_errors(ctx, project.uuid, [found]).get(found.uuid))


@router.patch("/threads/{thread_uuid}/messages/{message_uuid}", response_model=wire.MessageWire)
def update_message(
    thread_uuid: str,
    message_uuid: str,
    body: MessageUpdate,
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return wire.message(threads.update_message(ctx, project, thread_uuid, message_uuid, body))


@router.get("/threads/{thread_uuid}/episodes", response_model=wire.PageWire[wire.EpisodeWire])
def list_thread_episodes(
    thread_uuid: str,
    page: PageRequest = Depends(_episode_paging),
    ctx: Context = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    thread = threads.get_thread(ctx, project, thread_uuid)
    graph = graphs.resolve(ctx, project, thread.graph_uuid)
    result = threads.list_messages(ctx, project, thread.uuid, page)
    errors = processing_errors(ctx, project.uuid, result.items)
    return wire_page(
        result, [wire.episode(e, graph, error=errors.get(e.uuid)) for e in result.items]
    )
