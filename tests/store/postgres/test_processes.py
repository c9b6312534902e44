"""Several processes on one PostgreSQL database: they migrate a fresh schema at once
(the advisory lock applies each migration once), and claim from one task queue without
taking any task twice or leaving one behind (``FOR UPDATE SKIP LOCKED``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Task
from graphrecall.store import Store
from graphrecall.store.postgres.migrations import MIGRATIONS
from tests.store.conformance.records import at

ROOT = Path(__file__).resolve().parents[3]
CLAIMER = """
import json, pathlib, sys, time
from graphrecall.store import open_store
store = open_store(sys.argv[1])
gate = pathlib.Path(sys.argv[2])
(gate.parent / f"ready-{id(store)}-{time.monotonic_ns()}").touch()
while not gate.exists():  # start together
    time.sleep(0.01)
claimed = []
while run := store.claim_run(
    "p", lease_seconds=60, batchable=frozenset(), max_tasks=1, max_episodes=1
):
    claimed.extend(task.uuid for task in run)
store.close()
print(json.dumps(claimed))
"""


def run_all(code: str, url: str, processes: int, gate: Path | None = None) -> list[str]:
    """Run ``code`` in ``processes`` processes; with a ``gate``, open it once all are
    ready (each touches a ``ready-*`` file beside it)."""
    env = {"PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PATH": "/usr/bin:/bin"}
    args = [url] if gate is None else [url, str(gate)]
    started = [
        subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(processes)
    ]
    if gate is not None:
        deadline = time.monotonic() + 120
        while len(list(gate.parent.glob("ready-*"))) < processes:
            assert time.monotonic() < deadline, "the processes did not get ready"
            assert all(p.poll() is None for p in started), "a process ended early"
            time.sleep(0.05)
        gate.touch()
    outputs = []
    for process in started:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        outputs.append(out.decode())
    return outputs


def test_processes_migrate_a_fresh_schema_at_once(
    pg_url: str, open_pg: Callable[[str], Store]
) -> None:
    run_all(
        "import sys\nfrom graphrecall.store import open_store\nopen_store(sys.argv[1]).close()",
        pg_url,
        4,
    )
    store = open_pg(pg_url)
    versions = store.db.query("SELECT version FROM schema_version ORDER BY version")  # type: ignore[attr-defined]
    assert [r["version"] for r in versions] == list(range(1, len(MIGRATIONS) + 1))


def test_processes_claim_every_task_exactly_once(
    pg_url: str, open_pg: Callable[[str], Store], tmp_path: Path
) -> None:
    store = open_pg(pg_url)
    project = new_id()
    tasks = [
        Task(
            uuid=new_id(),
            project_uuid=project,
            graph_uuid=new_id(),  # a graph's tasks are claimed one run at a time
            type="ingest",
            payload={"i": i},
            created_at=at(i),
            updated_at=at(i),
        )
        for i in range(300)
    ]
    store.insert(tasks)
    outputs = [json.loads(out) for out in run_all(CLAIMER, pg_url, 4, tmp_path / "go")]
    assert sum(1 for out in outputs if out) >= 2  # they claimed side by side
    claimed = [uuid for out in outputs for uuid in out]
    assert sorted(claimed) == sorted(t.uuid for t in tasks)  # none twice, none left
    assert store.count(Task, {"project_uuid": project, "status": "processing"}) == 300
    assert (
        store.claim_run("q", lease_seconds=60, batchable=frozenset(), max_tasks=1, max_episodes=1)
        == []
    )
