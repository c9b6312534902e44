"""The SQLite task queue's own parts (store/sqlite/queue.py): the lease columns' migration,
and claims from several connections at once."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Task
from graphrecall.ingest.worker import EPISODE_TASKS
from graphrecall.store import open_store
from graphrecall.store.sqlite.migrations import migrate


def test_a_task_left_processing_before_leases_existed_is_taken_again(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    before = 16  # migration 17 added the leases
    assert migrate(conn, before) == before
    stamp = clock.now()
    conn.execute(
        "INSERT INTO tasks (uuid, project_uuid, graph_uuid, type, status, payload, created_at,"
        " started_at, updated_at) VALUES ('t1', 'p', 'g', 'graph.add', 'processing', '{}',"
        " ?, ?, ?)",
        [stamp, stamp, stamp],
    )
    conn.close()
    store = open_store(path)
    try:
        # No lease recorded: its worker (an older graphrecall) cannot be renewing it.
        assert store.requeue_expired() == 1
        run = store.claim_run(
            "new", lease_seconds=60, batchable=EPISODE_TASKS, max_tasks=16, max_episodes=256
        )
        assert [t.uuid for t in run] == ["t1"]
    finally:
        store.close()


def test_claims_from_many_connections_never_overlap(tmp_path: Path) -> None:
    """Eight stores (eight connections, as eight processes have) claim 200 tasks of 40
    graphs at once: each task is claimed once, and a graph is never in two runs at once."""
    path = tmp_path / "race.sqlite"
    seed = open_store(path)
    stamp = clock.now()
    graphs = [new_id() for _ in range(40)]
    tasks = [
        Task(
            uuid=new_id(),
            project_uuid="p",
            graph_uuid=graphs[i % len(graphs)],
            type="graph.add",
            payload={"episodes": [new_id()]},
            created_at=clock.now(),
            updated_at=stamp,
        )
        for i in range(200)
    ]
    seed.insert(tasks)
    seed.close()
    claimed: list[str] = []
    overlaps: list[str] = []
    running: set[str] = set()
    failures: list[str] = []
    lock = threading.Lock()

    deadline = time.monotonic() + 60

    def worker(n: int) -> None:
        store = open_store(path)
        try:
            while time.monotonic() < deadline:
                run = store.claim_run(
                    f"w{n}", lease_seconds=60, batchable=EPISODE_TASKS, max_tasks=3, max_episodes=9
                )
                if not run:
                    with lock:
                        if len(claimed) >= len(tasks):  # more: a task claimed twice
                            return
                    time.sleep(0.001)
                    continue
                graph = run[0].graph_uuid or ""
                with lock:
                    if graph in running:
                        overlaps.append(graph)
                    running.add(graph)
                    claimed.extend(t.uuid for t in run)
                for i, task in enumerate(run):
                    if i == len(run) - 1:  # still processing in the store until it is done
                        with lock:
                            running.discard(graph)
                    done = task.model_copy(update={"status": "succeeded"})
                    if not store.finish_task(done, f"w{n}"):
                        failures.append(task.uuid)
        finally:
            store.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert sorted(claimed) == sorted(t.uuid for t in tasks)  # each once, none lost
    assert not overlaps and not failures
