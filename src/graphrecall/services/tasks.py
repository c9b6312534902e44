"""Asynchronous work is tracked by tasks, as in Zep: create, poll, list."""

from __future__ import annotations

from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.errors import NotFound
from graphrecall.domain.ids import check_uuid, new_id
from graphrecall.domain.models import Page, PageRequest, Task
from graphrecall.services.container import Services
from graphrecall.store.base import Store


def enqueue(
    ctx: Services, project_uuid: str, graph_uuid: str | None, type_: str, payload: dict[str, Any]
) -> Task:
    """Persist a pending task (inside the caller's transaction, if any)."""
    stamp = clock.now()
    task = Task(
        uuid=new_id(),
        project_uuid=project_uuid,
        graph_uuid=graph_uuid,
        type=type_,
        status="pending",
        stage="queued",
        payload=payload,
        created_at=stamp,
        updated_at=stamp,
    )
    ctx.store.insert([task])
    return task


def completed(
    ctx: Services,
    project_uuid: str,
    graph_uuid: str | None,
    type_: str,
    result: dict[str, Any] | None = None,
) -> Task:
    """A task for work that was done synchronously (deletes): already succeeded."""
    stamp = clock.now()
    task = Task(
        uuid=new_id(),
        project_uuid=project_uuid,
        graph_uuid=graph_uuid,
        type=type_,
        status="succeeded",
        stage="done",
        result=result,
        created_at=stamp,
        started_at=stamp,
        updated_at=stamp,
        completed_at=stamp,
    )
    ctx.store.insert([task])
    return task


def get_task(ctx: Services, project_uuid: str, task_uuid: str, *, param: str = "task_uuid") -> Task:
    """``param``: the name the caller's API gives the id (Zep v3: ``task_id``)."""
    task_uuid = check_uuid(task_uuid, param=param)
    task = ctx.store.get(Task, task_uuid, {"project_uuid": project_uuid})
    if task is None:
        raise NotFound("task", task_uuid, param=param)
    return task


def list_tasks(
    ctx: Services,
    project_uuid: str,
    page: PageRequest,
    *,
    status: str | None = None,
    type_: str | None = None,
) -> Page[Task]:
    scope: dict[str, Any] = {"project_uuid": project_uuid}
    if status:
        scope["status"] = status
    if type_:
        scope["type"] = type_
    return ctx.store.list_page(Task, scope, page)


def retry_failed(store: Store, task_uuid: str | None = None) -> list[Task]:
    """Put failed tasks (one, or all) back in the queue; their unprocessed episodes are
    processed again, already-processed ones are skipped."""
    scope: dict[str, Any] = {"status": "failed"}
    if task_uuid:
        scope["uuid"] = check_uuid(task_uuid, param="task_uuid")
    retried = []
    with store.transaction():
        for task in store.find(Task, scope):
            updated = task.model_copy(
                update={
                    "status": "pending",
                    "stage": "queued",
                    "error": None,
                    "completed_at": None,
                    "updated_at": clock.now(),
                }
            )
            store.update(updated)
            retried.append(updated)
    return retried
