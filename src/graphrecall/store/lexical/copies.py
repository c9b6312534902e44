"""What the two backends' managers of term-index copies share: the copies by table, the
caught-up copy taking a stale one's place, the counts for /healthz, and waiting. Each
backend (``sqlite/term_index.py``, ``postgres/term_index.py``) adds how it learns a copy is
stale and reads its change log, and what it saves for the next process."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graphrecall.store.lexical.postings import TermIndex
from graphrecall.store.waiting import wait_until

# A copy whose delta (rows changed since it was read whole) outgrows this many rows and
# this share of its base is read whole again in the background: searching a big delta
# costs more than the read.
DELTA_MIN_ROWS = 2_000
DELTA_SHARE = 0.02


def start(name: str, work: Callable[..., None], *args: Any) -> None:
    """Run ``work(*args)`` on a daemon thread of its own."""
    threading.Thread(target=work, args=args, name=name, daemon=True).start()


class TermIndexCopies(ABC):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: dict[str, TermIndex] = {}
        self._loading_saved: set[str] = set()  # tables whose saved copy is being read
        self._next_build: dict[str, float] = {}  # monotonic time a rebuild may start
        self._closed = False
        self.caught_up = 0  # catch-ups done (for /healthz, tests and benchmarks)

    @abstractmethod
    def refresh(self, table: str, owner_field: str, weights: Sequence[float]) -> None:
        """Start reading ``table`` whole in the background (unless one is under way, or the
        last one ended too recently)."""

    @abstractmethod
    def _apart(self) -> set[str]:
        """The tables being read whole or caught up apart (call under ``_lock``)."""

    def _adopt(
        self, index: TermIndex, fresh: TermIndex | None, owner_field: str, weights: Sequence[float]
    ) -> TermIndex | None:
        """Make ``fresh`` (caught up from ``index``) the table's copy, unless a rebuild
        replaced ``index`` meanwhile; rebuild when it is None or its delta grew too big."""
        table = index.table
        if fresh is None:
            self.refresh(table, owner_field, weights)
            return None
        with self._lock:
            if self._current.get(table) is index and not self._closed:
                self._current[table] = fresh
            self.caught_up += 1
        if fresh.delta_rows > max(DELTA_MIN_ROWS, DELTA_SHARE * fresh.segments[0].size):
            self.refresh(table, owner_field, weights)
        return fresh

    def has(self, table: str) -> bool:
        """Whether ``table`` has a copy, current or not."""
        return table in self._current

    def status(self) -> dict[str, int]:
        with self._lock:
            return {
                "ready": len(self._current),
                # Tables read whole or caught up apart (the database answers meanwhile).
                "building": len(self._apart()),
                "caught_up": self.caught_up,
            }

    def memory_bytes(self) -> int:
        """The bytes the current copies' arrays hold (for /healthz and bench cold)."""
        with self._lock:
            copies = list(self._current.values())
        return sum(
            int(value.nbytes)
            for copy in copies
            for part in copy.segments
            for value in vars(part).values()
            if isinstance(value, np.ndarray)
        )

    def wait_for_saved(self, timeout: float) -> bool:
        """Wait until no saved copy is being read (a server, before it listens): False
        when one still is after ``timeout`` seconds. Reading a table whole is not waited
        for."""
        return wait_until(lambda: not self._loading_saved, self._lock, timeout)

    def wait(self, timeout: float) -> bool:
        """Wait until no copy is being built or caught up (for benchmarks and tests)."""
        return wait_until(lambda: not self._apart(), self._lock, timeout)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._current.clear()
