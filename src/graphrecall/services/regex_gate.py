"""How much of the server one tenant's regular-expression work may take at once.

A caller's patterns (``grep``, JSONPath ``like_regex``) run on RE2, in linear time, but a
search of 2,000 long texts is still ~50-100 ms of work, row by row (on SQLite in worker
processes, store/sqlite/pattern_workers.py, of which there are few). Without a bound, a
tenant with eight such searches in flight took most of that capacity (and, before the
workers, of the interpreter lock: p50 +414 ms, max +1.25 s for every other tenant;
docs/security.md). The gate lets one search with a pattern per project run at a time;
a few more wait for their turn (holding a worker thread, so the wait is bounded), and
beyond that, or past the wait, the caller gets a 400 naming the field. Other tenants'
requests never wait on the gate: its slots are per project (services/project_gate.py).
"""

from __future__ import annotations

from graphrecall.domain.errors import BadRequest
from graphrecall.services.project_gate import ProjectGate

RUNNING_PER_PROJECT = 1
WAITING_PER_PROJECT = 4
WAIT_S = 10.0


class RegexBusy(BadRequest):
    code = "regex_busy"


class RegexGate(ProjectGate):
    def __init__(
        self,
        running: int = RUNNING_PER_PROJECT,
        waiting: int = WAITING_PER_PROJECT,
        wait_s: float = WAIT_S,
    ) -> None:
        super().__init__(running, waiting, wait_s, self._busy)

    def _busy(self, param: str | None) -> RegexBusy:
        return RegexBusy(
            f"{param}: this project already has {self.running_max} search(es) with a"
            f" regular expression running and {self.waiting_max} waiting; retry when"
            " they finish",
            param=param,
        )
