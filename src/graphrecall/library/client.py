"""``GraphRecall``: graphrecall in process, with no server.

    from graphrecall import GraphRecall

    with GraphRecall("memory.db") as gr:
        user = gr.user.create(user_id="ada")
        thread = gr.thread.create(user_uuid=user.uuid)
        added = gr.thread.add_messages(thread.uuid, messages=[{"role": "user", "content": "Hi"}])
        gr.wait(added)
        for edge in gr.graph.search_edges(user.graph_uuid, query="greeting"):
            print(edge.fact)

The method names, arguments and result fields are those of ``zep_cloud.Zep`` (4.x) for
everything graphrecall implements; Memory Engine operations are under ``gr.memory``.
The ingestion worker runs in background threads of this process; ``wait`` blocks until
a task is done. Built from the same composition root as ``graphrecall serve``, so the
default database and every ``GRAPHRECALL_*`` setting apply here too.
"""

from __future__ import annotations

import os
import time
from types import TracebackType
from typing import Any

from graphrecall import runtime
from graphrecall.api.zep_v4 import wire
from graphrecall.config import Settings, load_settings
from graphrecall.domain.models import Project
from graphrecall.library.graph import GraphClient
from graphrecall.library.memory import MemoryClient
from graphrecall.library.zep import (
    ContextClient,
    ProjectClient,
    TaskClient,
    ThreadClient,
    UserClient,
)
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.graph import stats

DONE = ("succeeded", "partial", "failed")


class GraphRecall:
    """The graphrecall API of one database, in this process.

    ``db``: a SQLite file path or a ``postgresql://`` URL (default: as ``graphrecall
    serve``, ``$GRAPHRECALL_DB`` or the user data folder). ``project``: the project
    (tenant) to act in. ``space``: the Memory Engine space slug for ``gr.memory``
    (default ``$GRAPHRECALL_SPACE``, else the project's first space, made on first use).
    ``worker=False`` leaves ingestion to a ``graphrecall serve`` or ``graphrecall worker``
    on the same database.
    """

    def __init__(
        self,
        db: str | os.PathLike[str] | None = None,
        *,
        project: str = projects.DEFAULT_PROJECT,
        space: str | None = None,
        worker: bool = True,
        settings: Settings | None = None,
    ) -> None:
        if settings is None:
            settings = load_settings(**({"db": os.fspath(db)} if db is not None else {}))
        elif db is not None:
            settings = settings.model_copy(update={"db": os.fspath(db)})
        self._runtime = runtime.build(settings)
        try:
            self._project = projects.get_or_create_project(self._runtime.store, project)
        except BaseException:
            self._runtime.close()
            raise
        self._space = space or settings.space
        self._memory_caller: Caller | None = None
        self.user = UserClient(self)
        self.thread = ThreadClient(self)
        self.graph = GraphClient(self)
        self.task = TaskClient(self)
        self.project = ProjectClient(self)
        self.context = ContextClient(self)
        self.memory = MemoryClient(self)
        if worker:
            self._runtime.start_worker()

    # -- plumbing the parts use --------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self._runtime.settings

    @property
    def _context(self) -> Services:
        return self._runtime.context

    def _reload_project(self) -> None:
        found = self._runtime.store.get(Project, self._project.uuid)
        if found is not None:
            self._project = found

    def _caller(self) -> Caller:
        """Who ``gr.memory`` acts as: this process, in its space."""
        if self._memory_caller is None:
            store = self._runtime.store
            slug = self._space
            if slug is None:
                owned = spaces.project_spaces(store, self._project)
                slug = owned[0].slug if owned else None
            if slug is None:
                slug = spaces.create_space(store, self._project, "default").slug
            self._memory_caller = spaces.local_caller(store, slug)
        return self._memory_caller

    # -- tasks ---------------------------------------------------------------------------------

    def wait(self, task: Any, *, timeout: float = 120.0, poll: float = 0.05) -> wire.TaskWire:
        """Block until ``task`` is done and return it: a task uuid, a task, or a result
        that carries one (``add_messages``, ``episode.add``, a delete, ...). Raises
        ``TimeoutError`` after ``timeout`` seconds."""
        uuid = _task_uuid(task)
        deadline = time.monotonic() + timeout
        while True:
            found = self.task.get(uuid)
            if found.status in DONE:
                return found
            if time.monotonic() >= deadline:
                raise TimeoutError(f"task {uuid} still {found.status} after {timeout:g} s")
            time.sleep(poll)

    def stats(self, graph_uuid: str | None = None) -> dict[str, Any]:
        """Record counts, ingestion tasks and index state: of one graph (a graph or user
        uuid), or of every graph of the project."""
        return stats.stats(self._context, self._project, graph_uuid)

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the worker (a task in progress finishes) and close the database."""
        self._runtime.close()

    def __enter__(self) -> GraphRecall:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _task_uuid(task: Any) -> str:
    if isinstance(task, str):
        return task
    inner = getattr(task, "task", None)
    if inner is not None:
        task = inner
    uuid = getattr(task, "uuid", None)
    if isinstance(uuid, str):
        return uuid
    raise TypeError(f"not a task, a task uuid or a result with a task: {task!r}")
