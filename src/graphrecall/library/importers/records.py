"""What every importer reads into and reports: conversations for one user, and what a run
added. Below ``transfer`` and the importers, so neither has to import the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphrecall.wire.zep_v4 import wire


@dataclass
class Conversation:
    """Messages for one user, by thread (an external id or a position)."""

    user_id: str
    first_name: str | None = None
    threads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # True: the thread keys are thread_ids, found again on a re-run (which then adds
    # only the messages missing); False: every run makes new threads.
    thread_ids: bool = False
    dropped: int = 0  # source messages left out (system, tool, empty)

    @property
    def messages(self) -> int:
        return sum(len(m) for m in self.threads.values())


@dataclass
class Imported:
    """What an import added and the tasks that process it."""

    users: list[wire.UserWire] = field(default_factory=list)
    threads: int = 0
    messages: int = 0
    episodes: int = 0
    edges: int = 0
    nodes: int = 0
    graphs: int = 0  # standard graphs made
    present: int = 0  # messages and episodes already there (an earlier run's), skipped
    dropped: int = 0  # source messages left out (system, tool, empty)
    planned: int = 0  # conversations (or source users and graphs) this run goes through
    visited: int = 0  # of those, done
    tasks: dict[str, int] = field(default_factory=dict)  # task uuid -> items it carries
