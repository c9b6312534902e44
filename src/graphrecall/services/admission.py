"""Admission of expensive reads: at most K of one project's searches, ``memory.search``
calls and context assemblies run at once (``GRAPHRECALL_PROJECT_CONCURRENCY``).

The per-request caps (domain/limits.py) bound what one call costs, not how many a tenant
sends at once. Requests share one pool of worker threads, one interpreter and a few
cores, so four clients of one tenant sending the heaviest search the caps allow held
another tenant's p50 at 3.6-3.8x its idle value (``graphrecall bench stall``,
docs/benchmarks.md). With this gate a project's extra calls wait for one of its own
slots (up to WAIT_S, at most WAITING_PER_SLOT per slot queued), then are refused with
429 and ``Retry-After`` (``RATE_LIMITED`` on the Memory Engine face); another project's
call never waits on it. The default, 2, lets one tenant keep two cores busy (SQLite,
numpy and the embedder release the interpreter lock); 1 isolates tenants more on a
2-core machine (docs/benchmarks.md, "Heavy requests", for what could be measured).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from graphrecall.domain.errors import TooManyRequests
from graphrecall.domain.models import Project
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.project_gate import ProjectGate

DEFAULT_RUNNING = 2
WAITING_PER_SLOT = 4
WAIT_S = 10.0

P = ParamSpec("P")
R = TypeVar("R")
Owner = TypeVar("Owner", Project, Caller)


def gate(running: int = DEFAULT_RUNNING) -> ProjectGate | None:
    """The admission gate for ``running`` calls a project (None: 0, no limit)."""
    if running <= 0:
        return None

    def refuse(param: str | None) -> TooManyRequests:
        return TooManyRequests(
            f"this project already has {running} search(es) running and"
            f" {running * WAITING_PER_SLOT} waiting; retry after a moment",
            param=param,
        )

    return ProjectGate(running, running * WAITING_PER_SLOT, WAIT_S, refuse)


def admitted(
    fn: Callable[Concatenate[Services, Owner, P], R],
) -> Callable[Concatenate[Services, Owner, P], R]:
    """Run ``fn(ctx, project_or_caller, ...)`` in one of the project's admission slots."""

    @functools.wraps(fn)
    def inside(ctx: Services, owner: Owner, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if ctx.admission is None:
            return fn(ctx, owner, *args, **kwargs)
        project = owner.uuid if isinstance(owner, Project) else owner.project.uuid
        with ctx.admission.slot(project):
            return fn(ctx, owner, *args, **kwargs)

    return inside
