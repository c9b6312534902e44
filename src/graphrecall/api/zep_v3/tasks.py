"""v3 ``/tasks/{task_id}`` and ``/projects/info``: v4's task and project under v3's
field names."""

from __future__ import annotations

from typing import Any

from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v3.payloads import ProjectUpdateV3
from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.services import tasks
from graphrecall.services.accounts import projects
from graphrecall.wire.zep_v4 import wire as v4

router = make_router("zep v3: tasks")


@router.get("/tasks/{task_id}", response_model=v3wire.TaskV3)
def get_task(task_id: str, ctx: Services = CtxDep, project: Project = ProjectDep) -> Any:
    return v3wire.task(v4.task(tasks.get_task(ctx, project.uuid, task_id, param="task_id")))


def _project(p: Project) -> v3wire.ProjectV3:
    return v3wire.ProjectV3(
        project=v3wire.ProjectInfoV3(
            uuid=p.uuid,
            name=p.name,
            default_time_zone=p.default_time_zone,
            created_at=p.created_at,
        )
    )


@router.get("/projects/info", response_model=v3wire.ProjectV3)
def get_project(project: Project = ProjectDep) -> Any:
    return _project(project)


@router.patch("/projects/info", response_model=v3wire.ProjectV3)
def update_project(
    body: ProjectUpdateV3, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    if "default_time_zone" not in body.model_fields_set:
        return _project(project)
    updated = projects.update_project(ctx.store, project, body.default_time_zone)
    ctx.recent_keys.clear()  # the keys' remembered project is the old one
    return _project(updated)
