"""Writes while a benchmark searches (``--write-rate``): a live agent keeps adding to the
graph it searches, and every write makes the searched indexes' in-memory copies stale.

A :class:`Writer` thread adds, ``rate`` times a second, one fact and one thread message
to the searched graph in one transaction, from its own store on the same database file
(as the ingestion worker of another process would). Each is a copy, under a new uuid, of
a fact or message drawn from the graph, so the index's vocabulary stays as it was; the
messages go to one thread of their own, so each also re-indexes the one before it (its
reply column). The facts have no embedding: the vector leg does not see them.
"""

from __future__ import annotations

import random
import threading
import time
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode
from graphrecall.graph_model import graph_writes
from graphrecall.store import Store, open_store

TEMPLATES = 2_000  # facts and messages drawn from the graph to copy


class Writer:
    def __init__(self, db: Path | str, graph_uuid: str, rate: float, seed: int) -> None:
        self.db = db
        self.graph_uuid = graph_uuid
        self.rate = rate
        self.seed = seed
        self.writes = 0
        self.seconds = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: Store | None = None
        self._error: BaseException | None = None

    def __enter__(self) -> Writer:
        if self.rate > 0:
            self._store = open_store(self.db)
            self._thread = threading.Thread(target=self._run, name="bench-writer", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._store is not None:
            self._store.close()
        if self._error is not None and kind is None:
            raise RuntimeError("the benchmark's writer failed") from self._error

    def summary(self) -> dict[str, Any] | None:
        if self.rate <= 0:
            return None
        return {
            "rate_per_s": self.rate,
            "transactions": self.writes,
            "facts": self.writes,
            "messages": self.writes,
            "seconds": round(self.seconds, 1),
            "achieved_per_s": round(self.writes / self.seconds, 2) if self.seconds else 0.0,
        }

    def _run(self) -> None:
        assert self._store is not None
        store = self._store
        try:
            facts, said = self._templates(store)
            rng = random.Random(self.seed)
            thread = new_id()
            started = time.monotonic()
            due = started
            while not self._stop.is_set():
                due += 1.0 / self.rate
                self._stop.wait(max(0.0, due - time.monotonic()))
                if self._stop.is_set():
                    break
                stamp = clock.now_dt() + timedelta(microseconds=self.writes)
                edge = rng.choice(facts).model_copy(
                    update={"uuid": new_id(), "created_at": clock.to_iso(stamp)}
                )
                message = rng.choice(said).model_copy(
                    update={
                        "uuid": new_id(),
                        "thread_uuid": thread,
                        "reference_time": clock.to_iso(stamp),
                        "created_at": clock.to_iso(stamp),
                    }
                )
                with store.transaction():
                    graph_writes.insert_edges(store, [edge])
                    graph_writes.insert_episodes(store, [message])
                self.writes += 1
                self.seconds = time.monotonic() - started
        except BaseException as exc:  # reported when the writer stops
            self._error = exc

    def _templates(self, store: Store) -> tuple[list[Edge], list[Episode]]:
        scope = {"graph_uuid": self.graph_uuid}
        facts = store.find(Edge, scope, limit=TEMPLATES)
        said = [e for e in store.find(Episode, scope, limit=TEMPLATES) if e.thread_uuid]
        if not facts or not said:
            raise RuntimeError("the graph has no facts or messages to copy")
        return facts, said
