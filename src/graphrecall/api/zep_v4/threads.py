"""/threads: create, read, list, delete, messages, and the thread's episodes."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Query

from graphrecall.api.zep_v4.common import (
    CtxDep,
    Project,
    ProjectDep,
    Services,
    make_router,
    paging,
    wire_page,
)
from graphrecall.domain.inputs import MessagesAdd, MessageUpdate
from graphrecall.domain.models import PageRequest
from graphrecall.services.episode_errors import processing_errors
from graphrecall.services.graph import threads
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.bodies import LookupBody, ThreadCreateBody

router = make_router("threads")
_paging = paging(pages.THREADS)
_message_paging = paging(pages.MESSAGES)
_episode_paging = paging(pages.THREAD_EPISODES)


@router.post("/threads", response_model=wire.ThreadWire)
def create_thread(
    body: ThreadCreateBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.thread(threads.create_thread(ctx, project, body.user_uuid))


@router.get("/threads", response_model=wire.PageWire[wire.ThreadWire])
def list_threads(
    user_uuid: str | None = Query(None),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = threads.list_threads(ctx, project, page, user_uuid)
    return wire_page(result, [wire.thread(t) for t in result.items])


@router.post("/threads/lookup", response_model=wire.ThreadWire)
def lookup_thread(body: LookupBody, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.thread(threads.lookup_thread(ctx, project, body.thread_id))


@router.get("/threads/{thread_uuid}", response_model=wire.ThreadWire)
def get_thread(thread_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.thread(threads.get_thread(ctx, project, thread_uuid))


@router.delete("/threads/{thread_uuid}", response_model=wire.AsyncResult)
def delete_thread(thread_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.AsyncResult(task=wire.task(threads.delete_thread(ctx, project, thread_uuid)))


@router.post("/threads/{thread_uuid}/messages", response_model=wire.AddMessagesResult)
def add_messages(
    thread_uuid: str, body: MessagesAdd, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return answers.add_messages(ctx, project, thread_uuid, body)


@router.get("/threads/{thread_uuid}/messages", response_model=wire.PageWire[wire.MessageWire])
def list_messages(
    thread_uuid: str,
    page: PageRequest = Depends(_message_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = threads.list_messages(ctx, project, thread_uuid, page)
    errors = processing_errors(ctx, project.uuid, result.items)
    return wire_page(result, [wire.message(m, errors.get(m.uuid)) for m in result.items])


@router.get("/threads/{thread_uuid}/messages/{message_uuid}", response_model=wire.MessageWire)
def get_message(
    thread_uuid: str, message_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    found = threads.get_message(ctx, project, thread_uuid, message_uuid)
    return wire.message(found, processing_errors(ctx, project.uuid, [found]).get(found.uuid))


@router.patch("/threads/{thread_uuid}/messages/{message_uuid}", response_model=wire.MessageWire)
def update_message(
    thread_uuid: str,
    message_uuid: str,
    body: MessageUpdate,
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return wire.message(threads.update_message(ctx, project, thread_uuid, message_uuid, body))


@router.get("/threads/{thread_uuid}/episodes", response_model=wire.PageWire[wire.EpisodeWire])
def list_thread_episodes(
    thread_uuid: str,
    page: PageRequest = Depends(_episode_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    return wire_page(*answers.thread_episodes(ctx, project, thread_uuid, page))
