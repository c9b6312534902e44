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
from zep_cloud.core.api_error import ApiError

from graphrecall.store.postgres.connection import split_schema
from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port

# Slow: worker and server processes racing, killed and stopped.
pytestmark = pytest.mark.slow


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
    from graphrecall.services.accounts import projects
    from graphrecall.services.graph import threads, users

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
    # Only the killed run's tasks are claimed again. (Its own "claimed" line may not be in
    # its log: the kill comes as soon as the claim commits, before the line is written.)
    assert {u for u, n in both.items() if n > 1} <= set(held)
    print(f"\n{len(held)} task(s) taken over; all {every} done {finished:.1f} s after the kill")


def _first_hit(search: Any, token: str, timeout: float) -> float:
    """Seconds until ``search()`` returns an item whose text holds ``token``."""
    started = time.monotonic()
    while True:
        if any(token in (item.content or "") for item in search().items or []):
            return time.monotonic() - started
        assert time.monotonic() - started < timeout, f"{token} not found in {timeout} s"
        time.sleep(0.02)


def _processes(shared: Shared, tmp_path: Path) -> tuple[list[Server], list[Path], dict[str, str]]:
    env = {
        **os.environ,
        "GRAPHRECALL_LOG_LEVEL": "debug",  # each worker logs the task uuids it claims
        "GRAPHRECALL_WORKER_THREADS": "1",
        "GRAPHRECALL_TASK_LEASE_SECONDS": "3",
    }
    apis = [
        Server(shared.location, _free_port(), API_KEY, {}, None, ("--no-worker",)) for _ in range(2)
    ]
    return apis, [tmp_path / f"worker-{i}.log" for i in range(2)], env


def test_two_api_processes_and_two_workers_pass_the_held_out_scenario(
    shared: Shared, tmp_path: Path
) -> None:
    clock = time.monotonic()
    """Two ``serve --no-worker`` API processes (A, B) and two ``worker`` processes on one
    database, through the real zep-cloud SDK: a worker killed with SIGKILL mid-ingest
    loses no task and repeats none; a message written through A is found by a search
    through B within 1 s of its ingestion; a cursor A issued pages on B; a key revoked
    by another process is refused by B within 1 s (its in-memory key cache)."""
    per_user = 30
    apis, logs, env = _processes(shared, tmp_path)
    workers: list[subprocess.Popen[str]] = []
    try:
        for api in apis:  # one after the other: on two busy cores, together can take 60 s
            api.start()
        a, b = (api.client() for api in apis)
        tasks, threads, graphs, people = [], [], [], []
        for u in range(2):  # queued through A before the workers start: a backlog
            user = a.user.create(user_id=f"held-{u}", first_name=NAMES[u])
            thread = a.thread.create(user_uuid=user.uuid_)
            threads.append(thread.uuid_)
            people.append(user.uuid_)
            graphs.append(str(user.graph_uuid))
            for n in range(per_user):
                added = a.thread.add_messages(
                    thread.uuid_,
                    messages=[AddMessage(role="user", name=NAMES[u], content=message(u, n))],
                )
                tasks.append(added.task.uuid_)
        workers = [start_worker(shared.location, env, log) for log in logs]
        for proc in workers:
            wait_ready(proc)
        phases = {"started and enqueued": time.monotonic() - clock}

        # kill -9 the first worker while it holds a run.
        victim = workers[0]
        holding = (
            "SELECT uuid FROM tasks WHERE status = 'processing'"
            f" AND lease_owner LIKE '%:{victim.pid}:%'"
        )
        deadline = time.monotonic() + 120
        while not shared.rows(holding):
            assert time.monotonic() < deadline, "the first worker claimed nothing"
            time.sleep(0.01)
        victim.kill()
        victim.wait(10)
        held = {row[0] for row in shared.rows(holding)}
        assert held, "the worker finished its run before the kill: nothing was tested"
        shared.wait_all_done(300, workers[1:])
        phases["ingested"] = time.monotonic() - clock

        # Ingested through the workers, written through A: found through B within 1 s.
        b.graph.search_episodes(graphs[0], query="coffee")  # B's first search loads its copies
        waits = []
        for i in range(3):
            token = f"Zorblax{i}"
            added = a.thread.add_messages(
                threads[0],
                messages=[AddMessage(role="user", content=f"My neighbour {token} plays oboe.")],
            )
            while a.task.get(added.task.uuid_).status != "succeeded":
                time.sleep(0.02)
            waits.append(
                _first_hit(lambda t=token: b.graph.search_episodes(graphs[0], query=t), token, 1.0)
            )

        # A cursor issued by A pages on B (and B's on A), as one ranked list.
        ranked = [e.uuid_ for e in a.graph.search_episodes(graphs[1], query="coffee").items or []]
        assert len(ranked) >= 6
        first = a.graph.search_episodes(graphs[1], query="coffee", page_size=3)
        cursor = first.response.next_cursor
        assert cursor
        second = b.graph.search_episodes(graphs[1], query="coffee", page_size=3, cursor=cursor)
        assert [e.uuid_ for e in second.items or []] == ranked[3:6]
        assert second.response.next_cursor
        third = a.graph.search_episodes(
            graphs[1], query="coffee", page_size=3, cursor=second.response.next_cursor
        )
        assert [e.uuid_ for e in third.items or []] == ranked[6:9]

        # B remembers a key that authenticated; revoked by another process, it is
        # refused within 1 s.
        cli = [sys.executable, "-m", "graphrecall", "--db", shared.location, "keys"]
        made = subprocess.run([*cli, "create"], capture_output=True, text=True, env=env)
        assert made.returncode == 0, made.stderr
        key = made.stdout.strip().splitlines()[-1]
        visitor = apis[1].client(key)
        assert visitor.user.get(people[0]).user_id == "held-0"
        revoked = subprocess.run([*cli, "revoke", key[:8]], capture_output=True, env=env)
        assert revoked.returncode == 0
        started = time.monotonic()
        while True:
            try:
                visitor.user.get(people[0])
            except ApiError as exc:
                assert exc.status_code == 401
                break
            time.sleep(0.02)
        refused_after = time.monotonic() - started
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)
        for api in apis:
            api.stop()
    assert refused_after < 1.0 + 0.3  # the cache's 1 s, and a request on a busy machine

    every = {row[0] for row in shared.rows("SELECT uuid FROM tasks")}
    assert set(tasks) <= every
    assert shared.task_counts() == Counter({"succeeded": len(every)})
    assert shared.episodes() == (2 * per_user + 3, 2 * per_user + 3)
    claimed = [claims(log.read_text()) for log in logs]
    assert all(n == 1 for c in claimed for n in c.values()), "a worker claimed a task twice"
    # Only the killed run is claimed again, by the survivor. (The killed worker's own
    # "claimed" line may not be in its log: the kill comes as soon as the claim commits,
    # before the line is written.)
    assert held <= set(claimed[1])
    assert set(claimed[0]) & set(claimed[1]) <= held
    assert set(claimed[0]) | set(claimed[1]) == every  # none lost
    print(
        f"\n{len(every)} tasks, {len(held)} taken over after the kill; found through B"
        f" {', '.join(f'{w * 1000:.0f}' for w in waits)} ms after ingestion through A;"
        f" a revoked key refused by B after {refused_after * 1000:.0f} ms;"
        f" {', '.join(f'{k} at {v:.1f} s' for k, v in phases.items())}"
    )
