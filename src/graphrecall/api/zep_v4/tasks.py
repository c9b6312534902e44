"""/tasks and /project."""

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
from graphrecall.domain.models import PageRequest, TaskStatus
from graphrecall.services import tasks
from graphrecall.wire.zep_v4 import answers, wire
from graphrecall.wire.zep_v4 import paging as pages
from graphrecall.wire.zep_v4.bodies import ProjectUpdateBody

router = make_router("tasks")
_paging = paging(pages.TASKS)


@router.get("/tasks", response_model=wire.PageWire[wire.TaskWire])
def list_tasks(
    status: TaskStatus | None = Query(None),
    type: str | None = Query(None, max_length=100),
    page: PageRequest = Depends(_paging),
    ctx: Services = CtxDep,
    project: Project = ProjectDep,
) -> Any:
    result = tasks.list_tasks(ctx, project.uuid, page, status=status, type_=type)
    return wire_page(result, [wire.task(t) for t in result.items])


@router.get("/tasks/{task_uuid}", response_model=wire.TaskWire)
def get_task(task_uuid: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return wire.task(tasks.get_task(ctx, project.uuid, task_uuid))


@router.get("/project", response_model=wire.ProjectWire, tags=["project"])
def get_project(project: Project = ProjectDep) -> Any:
    return wire.project(project)


@router.patch("/project", response_model=wire.ProjectWire, tags=["project"])
def update_project(
    body: ProjectUpdateBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    return wire.project(answers.update_project(ctx, project, body))
