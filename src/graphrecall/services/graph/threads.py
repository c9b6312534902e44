"""Threads: a user's conversations. Each message is stored as an episode of the user's
graph (``source="message"``), so messages and episodes are the same rows."""

from __future__ import annotations

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.inputs import MessagesAdd, MessageUpdate
from graphrecall.domain.models import Episode, Page, PageRequest, Project, Task, Thread
from graphrecall.graph_model import graph_writes
from graphrecall.services import erasure, tasks
from graphrecall.services.container import Services
from graphrecall.services.graph import episodes, users


def create_thread(
    ctx: Services, project: Project, user_uuid: str, thread_id: str | None = None
) -> Thread:
    """A thread of the user's; its ``thread_id`` is the caller's (Zep v3 addresses threads
    by it) or, when not given, its uuid."""
    user = users.get_user(ctx, project, user_uuid)
    stamp = clock.now()
    uuid = new_id()
    thread = Thread(
        uuid=uuid,
        project_uuid=project.uuid,
        graph_uuid=user.graph_uuid,
        user_uuid=user.uuid,
        thread_id=thread_id or uuid,
        created_at=stamp,
        updated_at=stamp,
    )
    with ctx.store.transaction():
        if thread_id and ctx.store.find(
            Thread, {"project_uuid": project.uuid, "thread_id": thread_id}, limit=1
        ):
            raise BadRequest(f"thread_id {thread_id!r} is already taken", param="thread_id")
        ctx.store.insert([thread])
    return thread


def get_thread(ctx: Services, project: Project, thread_uuid: str) -> Thread:
    thread_uuid = check_uuid(thread_uuid, param="thread_uuid")
    thread = ctx.store.get(Thread, thread_uuid, {"project_uuid": project.uuid})
    if thread is None:
        raise NotFound("thread", thread_uuid, param="thread_uuid")
    return thread


def list_threads(
    ctx: Services, project: Project, page: PageRequest, user_uuid: str | None = None
) -> Page[Thread]:
    scope = {"project_uuid": project.uuid}
    if user_uuid:
        scope["user_uuid"] = users.get_user(ctx, project, user_uuid).uuid
    return ctx.store.list_page(Thread, scope, page)


def lookup_thread(ctx: Services, project: Project, thread_id: str | None) -> Thread:
    if thread_id:
        found = ctx.store.find(
            Thread, {"project_uuid": project.uuid, "thread_id": thread_id}, limit=1
        )
        if found:
            return found[0]
    raise NotFound("thread", thread_id or "", param="thread_id")


def delete_thread(ctx: Services, project: Project, thread_uuid: str) -> Task:
    """Delete the thread; its messages stay in the user's graph as episodes (as in Zep,
    the knowledge learned from a conversation outlives the conversation)."""
    thread = get_thread(ctx, project, thread_uuid)
    with ctx.store.transaction():
        ctx.store.delete(Thread, {"uuid": thread.uuid, "project_uuid": project.uuid})
        erasure.mark(ctx, (Thread,))
    return erasure.completed(
        ctx, project.uuid, thread.graph_uuid, "thread.delete", "thread", thread.uuid
    )


def add_messages(
    ctx: Services, project: Project, thread_uuid: str, body: MessagesAdd
) -> tuple[list[Episode], Task]:
    # ``return_context`` is answered by the caller once the messages are stored
    # (services.get_context.assembly.thread_context), so the block reflects them.
    thread = get_thread(ctx, project, thread_uuid)
    ignored = set(body.ignore_roles or ())
    rows: list[Episode] = []
    for i, message in enumerate(body.messages):
        stamp = clock.now()
        reference = clock.normalize(message.reference_time, param=f"messages[{i}].reference_time")
        rows.append(
            Episode(
                uuid=new_id(),
                graph_uuid=thread.graph_uuid,
                content=message.content,
                source="message",
                role=message.role,
                role_name=message.name,
                metadata=message.metadata,
                reference_time=reference or stamp,
                created_at=stamp,
                thread_uuid=thread.uuid,
            )
        )
    payload = {
        "episodes": [r.uuid for r in rows],
        "skip_extraction": [r.uuid for r in rows if r.role in ignored],
        "strict_ontology": bool(body.strict_ontology),
    }
    with ctx.store.transaction():
        rows = graph_writes.insert_episodes(ctx.store, rows)
        ctx.store.update(thread.model_copy(update={"updated_at": clock.now()}))
        task = tasks.enqueue(ctx, project.uuid, thread.graph_uuid, "thread.add_messages", payload)
    ctx.wake_worker()
    return rows, task


def list_messages(
    ctx: Services, project: Project, thread_uuid: str, page: PageRequest
) -> Page[Episode]:
    thread = get_thread(ctx, project, thread_uuid)
    return ctx.store.list_page(
        Episode, {"graph_uuid": thread.graph_uuid, "thread_uuid": thread.uuid}, page
    )


def get_message(ctx: Services, project: Project, thread_uuid: str, message_uuid: str) -> Episode:
    thread = get_thread(ctx, project, thread_uuid)
    message_uuid = check_uuid(message_uuid, param="message_uuid")
    message = ctx.store.get(Episode, message_uuid, {"thread_uuid": thread.uuid})
    if message is None:
        raise NotFound("message", message_uuid, param="message_uuid")
    return message


def update_message(
    ctx: Services, project: Project, thread_uuid: str, message_uuid: str, body: MessageUpdate
) -> Episode:
    message = get_message(ctx, project, thread_uuid, message_uuid)
    updated = message.model_copy(
        update={
            "metadata": episodes.merge_metadata(message.metadata, body.metadata, param="metadata")
        }
    )
    ctx.store.update(updated)
    return updated
