"""A per-project gate: at most ``running`` of a project's calls inside at once, a bounded
queue of ``waiting`` ones behind them, and other projects never held up.

Requests are served by a shared pool of worker threads over one interpreter and a few
cores, so a tenant with many expensive calls in flight takes that capacity from every
other tenant (docs/security.md, "No tenant slows another"). A gate keeps the count of
each project's calls inside: a call over the limit waits for a turn (holding its worker
thread, so both the queue and the wait are bounded), and beyond the queue, or past the
wait, it is refused with the error ``refuse`` makes. Two gates use it: the regex gate
(services/regex_gate.py, a 400 naming the field) and the admission of expensive reads
(services/admission.py, a 429 with ``Retry-After``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from graphrecall.domain.errors import GraphRecallError

# Makes the refusal of a call that found the queue full or waited too long; it is given
# the ``param`` the caller named (or None).
Refusal = Callable[[str | None], GraphRecallError]


class ProjectGate:
    def __init__(self, running: int, waiting: int, wait_s: float, refuse: Refusal) -> None:
        if running < 1 or waiting < 0 or wait_s < 0:
            raise ValueError("a gate needs running >= 1, waiting >= 0 and wait_s >= 0")
        self.running_max, self.waiting_max, self.wait_s = running, waiting, wait_s
        self._refuse = refuse
        self._cond = threading.Condition()
        self._running: dict[str, int] = {}
        self._waiting: dict[str, int] = {}

    @contextmanager
    def slot(self, project: str, param: str | None = None) -> Iterator[None]:
        """Hold one of ``project``'s slots for the body; refused (``refuse(param)``) when
        too many of its calls already wait or the turn does not come within the wait."""
        with self._cond:
            if self._running.get(project, 0) >= self.running_max:
                if self._waiting.get(project, 0) >= self.waiting_max:
                    raise self._refuse(param)
                self._waiting[project] = self._waiting.get(project, 0) + 1
                try:
                    turn = self._cond.wait_for(
                        lambda: self._running.get(project, 0) < self.running_max, self.wait_s
                    )
                finally:
                    self._waiting[project] -= 1
                    if not self._waiting[project]:
                        del self._waiting[project]
                if not turn:
                    raise self._refuse(param)
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
        """How many of ``project``'s calls wait for a slot now."""
        with self._cond:
            return self._waiting.get(project, 0)

    def running(self, project: str) -> int:
        """How many of ``project``'s calls hold a slot now."""
        with self._cond:
            return self._running.get(project, 0)
