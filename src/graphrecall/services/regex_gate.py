"""How much of the server one tenant's regular-expression work may take at once.

A caller's patterns (``grep``, JSONPath ``like_regex``) run on RE2, in linear time, but a
search of 2,000 long texts is still ~50-100 ms of work, row by row (on SQLite in worker
processes, store/sqlite/pattern_workers.py, of which there are few). Without a bound, a
tenant with eight such searches in flight took most of that capacity (and, before the
workers, of the interpreter lock: p50 +414 ms, max +1.25 s for every other tenant;
docs/security.md). The gate lets one search with a pattern per project run at a time;
a few more wait for their turn (holding a worker thread, so the wait is bounded), and
beyond that, or past the wait, the caller gets a 400 naming the field. Other tenants'
requests never wait on the gate: its slots are per project.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from graphrecall.domain.errors import BadRequest

RUNNING_PER_PROJECT = 1
WAITING_PER_PROJECT = 4
WAIT_S = 10.0


class RegexBusy(BadRequest):
    code = "regex_busy"


class RegexGate:
    def __init__(
        self,
        running: int = RUNNING_PER_PROJECT,
        waiting: int = WAITING_PER_PROJECT,
        wait_s: float = WAIT_S,
    ) -> None:
        self._running_max, self._waiting_max, self._wait_s = running, waiting, wait_s
        self._cond = threading.Condition()
        self._running: dict[str, int] = {}
        self._waiting: dict[str, int] = {}

    @contextmanager
    def slot(self, project: str, param: str) -> Iterator[None]:
        """Hold one of ``project``'s slots for the body; :class:`RegexBusy` (400, naming
        ``param``) when too many of its searches with a pattern are already queued or the
        turn does not come within the wait."""
        with self._cond:
            if self._running.get(project, 0) >= self._running_max:
                if self._waiting.get(project, 0) >= self._waiting_max:
                    raise self._busy(param)
                self._waiting[project] = self._waiting.get(project, 0) + 1
                try:
                    turn = self._cond.wait_for(
                        lambda: self._running.get(project, 0) < self._running_max, self._wait_s
                    )
                finally:
                    self._waiting[project] -= 1
                    if not self._waiting[project]:
                        del self._waiting[project]
                if not turn:
                    raise self._busy(param)
            self._running[project] = self._running.get(project, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                self._running[project] -= 1
                if not self._running[project]:
                    del self._running[project]
                self._cond.notify_all()

    def waiting(self, project: str) -> int:
        """How many of ``project``'s searches wait for a slot now."""
        with self._cond:
            return self._waiting.get(project, 0)

    def _busy(self, param: str) -> RegexBusy:
        return RegexBusy(
            f"{param}: this project already has {self._running_max} search(es) with a"
            f" regular expression running and {self._waiting_max} waiting; retry when"
            " they finish",
            param=param,
        )
