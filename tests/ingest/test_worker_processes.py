"""Worker processes sharing one database: ``graphrecall serve --no-worker`` takes the
messages (through the real SDK) and two ``graphrecall worker`` processes do the ingestion,
with the offline extractor and the real embedder, as the product runs."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import httpx
from zep_cloud import AddMessage

from tests.conftest import API_KEY, Server, _free_port

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


def start_worker(db: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "graphrecall", "worker", "--db", str(db)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
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


def open_counts(db: Path) -> Counter[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return Counter(dict(conn.execute("SELECT status, count(*) FROM tasks GROUP BY status")))


def test_two_worker_processes_share_one_database_without_loss_or_repeats(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shared.db"
    env = {
        **os.environ,
        "GRAPHRECALL_LOG_LEVEL": "debug",  # each worker logs the task uuids it claims
        "GRAPHRECALL_WORKER_THREADS": "1",  # one thread each: the two processes race
    }
    api = Server(
        db, _free_port(), API_KEY, {"GRAPHRECALL_LOG_LEVEL": "warning"}, None, ("--no-worker",)
    )
    api.start()
    workers = []
    try:
        health = httpx.get(f"http://127.0.0.1:{api.port}/healthz", timeout=5).json()
        assert health["worker"].startswith("off")
        workers = [start_worker(db, env) for _ in range(2)]
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
            counts = open_counts(db)
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
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        episodes = conn.execute("SELECT count(*), sum(processed) FROM episodes").fetchone()
        # The messages' tasks and the users' own (a user's graph is set up by a task).
        every = {row[0] for row in conn.execute("SELECT uuid FROM tasks")}
    assert set(tasks) <= every
    counts = open_counts(db)
    assert counts == Counter({"succeeded": len(every)}), counts
    assert episodes == (USERS * MESSAGES_PER_USER, USERS * MESSAGES_PER_USER)
    claimed = [
        Counter(
            u for line in re.findall(r" claimed ([0-9a-f -]+)$", err, re.M) for u in line.split()
        )
        for _, err in outputs
    ]
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


def test_a_killed_workers_tasks_are_taken_over_when_its_lease_expires(tmp_path: Path) -> None:
    """A worker killed mid-run (no chance to clean up) leaves its tasks ``processing``; a
    worker started later leaves them alone while the lease runs, then takes them over.
    Every message ends processed once, every task succeeded."""
    from graphrecall import runtime
    from graphrecall.config import Settings
    from graphrecall.domain.inputs import MessageCreate, MessagesAdd, UserCreate
    from graphrecall.services import projects, threads, users

    db = tmp_path / "crash.db"
    lease = 4.0
    env = {
        **os.environ,
        "GRAPHRECALL_LOG_LEVEL": "debug",
        "GRAPHRECALL_WORKER_THREADS": "1",
        "GRAPHRECALL_TASK_LEASE_SECONDS": str(lease),
    }
    count = 60
    with runtime.build(Settings(db=str(db), embedder="none", extractor="none")) as rt:
        project = projects.get_or_create_project(rt.store)
        user = users.create_user(rt.context, project, UserCreate(user_id="crash", first_name="Ada"))
        thread = threads.create_thread(rt.context, project, user.uuid)
        for n in range(count):
            body = MessagesAdd(messages=[MessageCreate(role="user", content=message(0, n))])
            threads.add_messages(rt.context, project, thread.uuid, body)
    first = start_worker(db, env)
    try:
        wait_ready(first)
        deadline = time.monotonic() + 120
        while open_counts(db)["processing"] < 2 and time.monotonic() < deadline:  # a run
            time.sleep(0.01)
        first.kill()  # SIGKILL: its leases are neither released nor renewed
        first.wait(10)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            held = dict(
                conn.execute("SELECT uuid, lease_expires FROM tasks WHERE status = 'processing'")
            )
        assert held
        second = start_worker(db, env)
        killed_at = time.monotonic()
        wait_ready(second)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            counts = open_counts(db)
            if counts["pending"] == counts["processing"] == 0:
                break
            time.sleep(0.2)
        finished = time.monotonic() - killed_at
    finally:
        for proc in (first, second):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        _, second_err = second.communicate(timeout=60)
        first.communicate(timeout=10)
    every = count + 1  # the user's own task too
    assert open_counts(db) == Counter({"succeeded": every})
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT count(*), sum(processed) FROM episodes").fetchone() == (
            count,
            count,
        )
    # The second worker took over the killed one's tasks, and only once their lease expired.
    claims = {
        uuid: datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()
        for stamp, uuids in re.findall(r"^(\S+ \S+) DEBUG \S+ claimed (.+)$", second_err, re.M)
        for uuid in uuids.split()
    }
    assert set(held) <= set(claims)
    assert all(claims[uuid] >= expires - 0.05 for uuid, expires in held.items())
    print(f"\n{len(held)} task(s) taken over; all {every} done {finished:.1f} s after the kill")
