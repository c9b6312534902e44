"""What every part of the library acts with: one runtime, its project and its Memory
Engine caller. The parts (``gr.user``, ``gr.graph.edge``, ``gr.memory``, ...) hold this,
not the :class:`~graphrecall.library.client.GraphRecall` that made them, so no part
imports the client back. With ``graph.py``, ``graph_search.py`` and ``zep.py``, the only
library modules that import services."""

from __future__ import annotations

from typing import Any

from graphrecall.domain.models import Project
from graphrecall.runtime import Runtime
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.accounts.spaces import Caller
from graphrecall.services.container import Services
from graphrecall.services.graph import stats

DEFAULT_PROJECT = projects.DEFAULT_PROJECT


class Session:
    """``space``: the Memory Engine space slug for ``gr.memory`` (None: the project's
    first space, made on first use)."""

    def __init__(self, runtime: Runtime, project: str, space: str | None) -> None:
        self.runtime = runtime
        self.project: Project = projects.get_or_create_project(runtime.store, project)
        self._space = space
        self._caller: Caller | None = None

    @property
    def ctx(self) -> Services:
        return self.runtime.context

    def reload_project(self) -> None:
        """Read the project again after a change to it (its time zone)."""
        found = self.runtime.store.get(Project, self.project.uuid)
        if found is not None:
            self.project = found

    def stats(self, graph_uuid: str | None) -> dict[str, Any]:
        return stats.stats(self.ctx, self.project, graph_uuid)

    def caller(self) -> Caller:
        """Who ``gr.memory`` acts as: this process, in its space."""
        if self._caller is None:
            store = self.runtime.store
            slug = self._space
            if slug is None:
                owned = spaces.project_spaces(store, self.project)
                slug = owned[0].slug if owned else None
            if slug is None:
                slug = spaces.create_space(store, self.project, "default").slug
            self._caller = spaces.local_caller(store, slug)
        return self._caller


class Part:
    """A group of methods (``gr.user``, ``gr.graph.edge``, ...) of one session."""

    def __init__(self, session: Session) -> None:
        self._s = session

    @property
    def _ctx(self) -> Services:
        return self._s.ctx

    @property
    def _project(self) -> Project:
        return self._s.project
