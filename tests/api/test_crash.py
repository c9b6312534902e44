"""kill -9 of ``graphrecall serve`` in the middle of ingestion: after a restart nothing
acknowledged is lost, nothing is duplicated, and every task finishes."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from zep_cloud import AddMessage

from tests import pg_server
from tests.conftest import Server, wait_for_task

# Slow: server processes killed with SIGKILL and restarted (the crash is the point).
pytestmark = pytest.mark.slow

MAX_MESSAGES = 40
SENTENCES = [
    "Alice moved to Lisbon in March and works at Acme as an engineer.",
    "Bob met Alice at the Lisbon office; he leads the data team at Acme.",
    "Carol visited Porto last week and plans to join Acme in June.",
]


@pytest.fixture(params=["sqlite", "postgresql"])
def crash_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The database both servers open: a file, or a schema of its own on the throw-away
    PostgreSQL server (``tests/pg_server.py``) that outlives the killed process."""
    if request.param == "postgresql":
        return pg_server.with_schema(pg_server.server_url(), f"crash{uuid.uuid4().hex}")
    return tmp_path / "crash.db"


def test_kill_9_during_ingestion_loses_and_duplicates_nothing(
    make_server: Callable[..., Server], crash_db: Path | str
) -> None:
    db = crash_db
    first = make_server(db)
    zep = first.client()
    user = zep.user.create(user_id="crash-user", first_name="Alice")
    thread = zep.thread.create(user_uuid=user.uuid_)
    acknowledged: list[tuple[str, str]] = []  # (content, task uuid) the server accepted
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set() and i < MAX_MESSAGES:
            content = f"[{i}] {SENTENCES[i % len(SENTENCES)]}"
            try:
                added = zep.thread.add_messages(
                    thread.uuid_, messages=[AddMessage(role="user", name="Alice", content=content)]
                )
            except Exception:  # the server was killed under this request
                return
            acknowledged.append((content, added.task.uuid_))
            i += 1

    thread_writer = threading.Thread(target=writer)
    thread_writer.start()
    # Kill once the worker is busy: some tasks done, others still queued or running.
    deadline, mid_ingestion = time.monotonic() + 120, False
    while time.monotonic() < deadline and not mid_ingestion:
        if len(acknowledged) >= 8:
            sample = [t for _, t in acknowledged[:3] + acknowledged[-3:]]
            statuses = {zep.task.get(t).status for t in sample}
            mid_ingestion = "succeeded" in statuses and bool(statuses - {"succeeded"})
        time.sleep(0.05)
    assert mid_ingestion, "the worker never had done and pending tasks at once"
    assert first.process is not None
    first.process.kill()  # SIGKILL: no shutdown code runs
    first.process.wait(10)
    first.process = None
    stop.set()
    thread_writer.join(30)
    assert len(acknowledged) >= 8

    second = make_server(db)
    zep = second.client()
    for _, task in acknowledged:
        assert wait_for_task(zep, task, timeout=180) == "succeeded"
    contents = [m.content for m in zep.thread.list_messages(thread.uuid_)]
    counts = Counter(contents)
    assert all(n == 1 for n in counts.values()), [c for c, n in counts.items() if n > 1]
    assert {c for c, _ in acknowledged} <= set(counts)  # nothing acknowledged is lost
    # Any message the server got but could not acknowledge before dying is whole, once.
    assert set(counts) - {c for c, _ in acknowledged} <= {
        f"[{len(acknowledged)}] " + s for s in SENTENCES
    }
    episodes = list(zep.graph.episode.list(user.graph_uuid))
    assert len(episodes) == len(contents)
    assert len({e.uuid_ for e in episodes}) == len(episodes)
    assert all(e.processed for e in episodes)
    # Every fact ingested once: processing an episode twice would restate facts with a
    # second copy of the same episode among their sources.
    for edge in zep.graph.edge.list(user.graph_uuid):
        sources = edge.episode_uuids or []
        assert len(sources) == len(set(sources)), edge
    health = httpx.get(f"http://127.0.0.1:{second.port}/healthz", timeout=10)
    assert health.status_code == 200
