"""/lookup: developer-assigned ids of graphs, threads and users resolved to uuids at once."""

from __future__ import annotations

from typing import Any, Literal

from graphrecall.api.zep_v4.common import CtxDep, Project, ProjectDep, Services, make_router
from graphrecall.services.graph import lookup
from graphrecall.wire.zep_v4 import wire
from graphrecall.wire.zep_v4.bodies import LookupBatchBody

router = make_router("lookup")


class LookupItemWire(wire.Wire):
    resource_type: Literal["graph", "thread", "user"]
    legacy_id: str
    found: bool
    uuid: str | None = None  # only when found


class LookupBatchResponse(wire.Wire):
    items: list[LookupItemWire]


@router.post("/lookup", response_model=LookupBatchResponse)
def lookup_batch(
    body: LookupBatchBody, ctx: Services = CtxDep, project: Project = ProjectDep
) -> Any:
    found = lookup.lookup_batch(
        ctx, project, {"graphs": body.graphs, "threads": body.threads, "users": body.users}
    )
    return LookupBatchResponse(
        items=[
            LookupItemWire(
                resource_type=f.resource_type,  # type: ignore[arg-type]
                legacy_id=f.legacy_id,
                found=f.uuid is not None,
                uuid=f.uuid,
            )
            for f in found
        ]
    )
