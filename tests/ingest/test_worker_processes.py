"""Worker processes sharing one database: ``graphrecall serve --no-worker`` takes the
messages (through the real SDK) and ``graphrecall worker`` processes do the ingestion,
with the offline extractor and the real embedder, as the product runs. The crash and the
held-out scenario run on SQLite and on a real PostgreSQL server (``tests/pg_server.py``)."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from zep_cloud import AddMessage

from graphrecall.store.postgres.connection import split_schema
from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port


@dataclass(frozen=True)
class Shared:
    """The database the processes share, and plain SQL on it for the test to look with
    (neither through graphrecall nor through the processes under test)."""

    location: str

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.location.startswith("postgresql://"):
            conninfo, schema = split_schema(self.location)
            with psycopg.connect(conninfo, autocommit=True) as conn:
                conn.execute(f"SET search_path TO {schema}, public")
                return [tuple(row) for row in conn.execute(sql).fetchall()]
        with sqlite3.connect(f"file:{self.location}?mode=ro", uri=True, timeout=30) as conn:
            return [tuple(row) for row in conn.execute(sql).fetchall()]

    def task_counts(self) -> Counter[str]:
        return Counter(dict(self.rows("SELECT status, count(*) FROM tasks GROUP BY status")))

    def episodes(self) -> tuple[int, int]:
        """(episodes, processed episodes)."""
        row = self.rows("SELECT count(*), count(*) FILTER (WHERE processed) FROM episodes")[0]
        return int(row[0]), int(row[1])

    def wait_all_done(self, timeout: float, workers: list[subprocess.Popen[str]]) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            counts = self.task_counts()
            if counts["pending"] == counts["processing"] == 0:
                return
            assert any(proc.poll() is None for proc in workers), "every worker died"
            time.sleep(0.2)
        raise AssertionError(f"tasks left after {timeout} s: {self.task_counts()}")


@pytest.fixture(params=["sqlite", "postgres"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Shared]:
    if request.param == "sqlite":
        yield Shared(str(tmp_path / "shared.db"))
    else:
        yield Shared(pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}"))


USERS = 10
MESSAGES_PER_USER = 100
NAMES = ("Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Harper", "Jordan", "Kai", "Logan")
CITIES = ("Lisbon", "Berlin", "Osaka", "Denver", "Nairobi", "Lima", "Oslo", "Hanoi", "Quebec")
THINGS = ("the violin", "rock climbing", "sourdough", "chess", "kayaking", "pottery", "jazz")


def message(user: int, n: int) -> str:
    name, city = NAMES[user], CITIES[(user + n) % len(CITIES)]
    thing, year = THINGS[(user * 7 + n) % len(THINGS)], 2000 + (n * 3 + user) % 24
    return [
        f"I moved to {city} in {year} and I still love it there.",
        f"My sister {name} took up {thing} last spring.",
        f"Yesterday I met my friend {NAMES[(user + n) % len(NAMES)]} for coffee in {city}.",
        f"I have been practising {thing} every Tuesday since {year}.",
    ][n % 4] + f" (note {n})"


def start_worker(
    db: Path | str, env: dict[str, str], log: Path | None = None
) -> subprocess.Popen[str]:
    """A worker process; its log goes to ``log`` when given (a file never fills up and
    blocks the worker, as an unread pipe would), else to a pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", "graphrecall", "worker", "--db", str(db)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if log is None else log.open("w"),
        text=True,
    )


def claims(log: str) -> Counter[str]:
    """Each task uuid a worker's debug log says it claimed, with how often."""
    return Counter(
        u for line in re.findall(r" claimed ([0-9a-f -]+)$", log, re.M) for u in line.split()
    )


def wait_ready(proc: subprocess.Popen[str], timeout: float = 120) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "graphrecall worker processing tasks" in line:
            return
        if not line and proc.poll() is not None:
            raise AssertionError(f"worker exited: {proc.stderr.read() if proc.stderr else ''}")
    raise AssertionError("worker did not start")


def test_two_worker_processes_share_one_database_without_loss_or_repeats(
    tmp_path: Path,
) -> None:
    db = Shared(str(tmp_path / "shared.db"))  # SQLite; the scenario below runs on both
    env = {
        **os.environ,
        "GRAPHRECALL_LOG_LEVEL": "debug",  # each worker logs the task uuids it claims
        "GRAPHRECALL_WORKER_THREADS": "1",  # one thread each: the two processes race
    }
    api = Server(
        Path(db.location),
        _free_port(),
        API_KEY,
        {"GRAPHRECALL_LOG_LEVEL": "warning"},
        None,
        ("--no-worker",),
    )
    api.start()
    workers = []
    try:
        health = httpx.get(f"http://127.0.0.1:{api.port}/healthz", timeout=5).json()
        assert health["worker"].startswith("off")
        workers = [start_worker(db.location, env) for _ in range(2)]
        for proc in workers:
            wait_ready(proc)
        started = time.monotonic()
        zep = api.client()
        tasks = []
        for u in range(USERS):
            user = zep.user.create(user_id=f"user-{u}", first_name=NAMES[u])
            thread = zep.thread.create(user_uuid=user.uuid_)
            for n in range(MESSAGES_PER_USER):
                added = zep.thread.add_messages(
                    thread.uuid_,
                    messages=[AddMessage(role="user", name=NAMES[u], content=message(u, n))],
                )
                tasks.append(added.task.uuid_)
        enqueued = time.monotonic() - started
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            counts = db.task_counts()
            if counts["pending"] == counts["processing"] == 0:
                break
            assert all(proc.poll() is None for proc in workers), "a worker died"
            time.sleep(0.5)
        elapsed = time.monotonic() - started
    finally:
        for proc in workers:
            proc.send_signal(signal.SIGTERM)
        outputs = [proc.communicate(timeout=60) for proc in workers]
        api.stop()
    # The messages' tasks and the users' own (a user's graph is set up by a task).
    every = {row[0] for row in db.rows("SELECT uuid FROM tasks")}
    assert set(tasks) <= every
    counts = db.task_counts()
    assert counts == Counter({"succeeded": len(every)}), counts
    assert db.episodes() == (USERS * MESSAGES_PER_USER, USERS * MESSAGES_PER_USER)
    claimed = [claims(err) for _, err in outputs]
    both = claimed[0] + claimed[1]
    repeats = [u for u, n in both.items() if n > 1]
    assert not repeats, f"{len(repeats)} task(s) claimed twice"
    assert set(both) == every, "a task was lost (or done without a claim)"
    assert all(claimed), "one worker did nothing: the test proved no sharing"
    done = [int(re.findall(r"stopping after (\d+) task", out)[0]) for out, _ in outputs]
    assert sum(done) == len(every)
    print(
        f"\n{USERS * MESSAGES_PER_USER} messages, {len(every)} tasks, per worker {done},"
        f" duplicates {len(repeats)}, lost {len(every - set(both))},"
        f" enqueued in {enqueued:.1f} s, all done in {elapsed:.1f} s"
    )


def test_a_killed_workers_tasks_are_taken_over_when_its_lease_expires(
    shared: Shared, tmp_path: Path
) -> None:
    """A worker killed mid-run (no chance to clean up) leaves its tasks ``processing``; a
    worker started later leaves them alone while the lease runs, then takes them over.
    Every message ends processed once, every task succeeded."""
    from graphrecall import runtime
    from graphrecall.config import Settings
    from graphrecall.domain.inputs import MessageCreate, MessagesAdd, UserCreate
    from graphrecall.services import projects, threads, users

    lease = 4.0
    env = {
        **os.environ,
        "GRAPHRECALL_LOG_LEVEL": "debug",
        "GRAPHRECALL_WORKER_THREADS": "1",
        "GRAPHRECALL_TASK_LEASE_SECONDS": str(lease),
    }
    count = 60
    settings = Settings(db=shared.location, embedder="none", extractor="none")
    with runtime.build(settings) as rt:
        project = projects.get_or_create_project(rt.store)
        user = users.create_user(rt.context, project, UserCreate(user_id="crash", first_name="Ada"))
        thread = threads.create_thread(rt.context, project, user.uuid)
        for n in range(count):
            body = MessagesAdd(messages=[MessageCreate(role="user", content=message(0, n))])
            threads.add_messages(rt.context, project, thread.uuid, body)
    first = start_worker(shared.location, env, tmp_path / "first.log")
    second: subprocess.Popen[str] | None = None
    try:
        wait_ready(first)
        deadline = time.monotonic() + 120
        while shared.task_counts()["processing"] < 2 and time.monotonic() < deadline:  # a run
            time.sleep(0.01)
        first.kill()  # SIGKILL: its leases are neither released nor renewed
        first.wait(10)
        held = dict(
            shared.rows("SELECT uuid, lease_expires FROM tasks WHERE status = 'processing'")
        )
        assert held
        second = start_worker(shared.location, env, tmp_path / "second.log")
        killed_at = time.monotonic()
        wait_ready(second)
        shared.wait_all_done(300, [second])
        finished = time.monotonic() - killed_at
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            if proc is not None:
                proc.communicate(timeout=60)
    second_err = (tmp_path / "second.log").read_text()
    every = count + 1  # the user's own task too
    assert shared.task_counts() == Counter({"succeeded": every})
    assert shared.episodes() == (count, count)
    # The second worker took over the killed one's tasks, and only once their lease expired.
    taken = {
        task: datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
        for stamp, uuids in re.findall(r"^(\S+ \S+) DEBUG \S+ claimed (.+)$", second_err, re.M)
        for task in uuids.split()
    }
    assert set(held) <= set(taken)
    assert all(taken[task] >= expires - 0.05 for task, expires in held.items())
    both = claims((tmp_path / "first.log").read_text()) + claims(second_err)
    assert {u for u, n in both.items() if n > 1} == set(held)  # only the killed run, again
    print(f"\n{len(held)} task(s) taken over; all {every} done {finished:.1f} s after the kill")
