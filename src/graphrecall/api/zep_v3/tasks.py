"""v3 ``/tasks/{task_id}``: a v4 task under v3's field names."""

from __future__ import annotations

from typing import Any

from graphrecall.api.zep_v3 import wire as v3wire
from graphrecall.api.zep_v4 import wire as v4
from graphrecall.api.zep_v4.common import Context, CtxDep, Project, ProjectDep, make_router
from graphrecall.services import tasks

router = make_router("zep v3: tasks")


@router.get("/tasks/{task_id}", response_model=v3wire.TaskV3)
def get_task(task_id: str, ctx: Context = CtxDep, project: Project = ProjectDep) -> Any:
    return v3wire.task(v4.task(tasks.get_task(ctx, project.uuid, task_id, param="task_id")))
