"""A ``graphrecall serve`` subprocess on loopback, for measuring through the real SDK."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from graphrecall.store.base import Store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """``with ServerProcess(db, key) as server:`` starts the server, waits until it answers
    ``/healthz`` and stops it on exit (also when the benchmark fails)."""

    def __init__(
        self,
        db: Path | str,
        api_key: str,
        log_path: Path,
        *,
        startup_timeout: float = 120,
        worker: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.db = db
        self.worker = worker  # False: ``serve --no-worker`` (workers run as processes)
        self.extra_env = dict(extra_env or {})
        self.log_path = log_path
        self.api_key = api_key
        self.port = free_port()
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v4"

    def __enter__(self) -> ServerProcess:
        env = {
            **os.environ,
            "GRAPHRECALL_API_KEY": self.api_key,
            "GRAPHRECALL_LOG_LEVEL": "warning",
            **self.extra_env,
        }
        cmd = [sys.executable, "-m", "graphrecall", "serve", "--db", str(self.db)]
        if not self.worker:
            cmd.append("--no-worker")
        # The server's output goes to a file: a pipe nobody reads could fill and stall it.
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [*cmd, "--host", "127.0.0.1", "--port", str(self.port)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                err = self.log_path.read_text(errors="replace").strip()[-2000:]
                raise RuntimeError(f"the server exited early: {err}")
            try:
                health = httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1)
                if health.status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server did not come up in {self.startup_timeout:.0f} s")

    def index_status(self) -> dict[str, int]:
        """The server's HNSW indexes, in-memory term indexes and filter columns: how many
        are ``ready`` and how many ``building``, from ``/healthz``."""
        health = httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=10).json()
        return added(
            health.get("vector_indexes", {}),
            health.get("text_indexes", {}),
            health.get("filter_columns", {}),
        )

    def wait_for_copies(
        self, trigger: Callable[[], object] | None = None, timeout_s: float = 900
    ) -> float:
        """Seconds until ``/healthz`` reports no index copy building twice in a row. After
        a bulk write the first searches find the server's term-index copies stale and
        build or catch them up in the background, SQL answering meanwhile (several times
        slower): a latency measured then is the build's, not search's. ``trigger`` (a
        search) is called before each look, to start what a search would start."""
        started = time.perf_counter()
        quiet = 0
        while quiet < 2:
            if trigger is not None:
                trigger()
            if self.index_status().get("building", 0):
                quiet = 0
                if time.perf_counter() - started > timeout_s:
                    raise RuntimeError(f"index copies still building after {timeout_s} s")
                time.sleep(0.5)
            else:
                quiet += 1
        return round(time.perf_counter() - started, 1)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is None:
            return
        stop_processes([self.process], grace_s=15)
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None


class WorkerProcesses:
    """``with WorkerProcesses(db, n, log_dir):`` runs ``n`` ``graphrecall worker``
    processes on ``db`` (each with ``threads`` worker threads) and stops them on exit."""

    def __init__(self, db: Path | str, count: int, log_dir: Path, *, threads: int = 1) -> None:
        self.db = db
        self.count = count
        self.threads = threads
        self.log_dir = log_dir
        self.processes: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []

    def __enter__(self) -> WorkerProcesses:
        env = {
            **os.environ,
            "GRAPHRECALL_LOG_LEVEL": "warning",
            "GRAPHRECALL_WORKER_THREADS": str(self.threads),
        }
        try:
            for i in range(self.count):
                log = (self.log_dir / f"worker-{i}.log").open("wb")
                self._logs.append(log)
                cmd = [sys.executable, "-m", "graphrecall", "worker", "--db", str(self.db)]
                self.processes.append(
                    subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
                )
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout_s: float = 300) -> None:
        """Until every worker has loaded its models and started (its first log line), so
        a timed run does not count their start-up."""
        deadline = time.monotonic() + timeout_s
        for i, process in enumerate(self.processes):
            log = self.log_dir / f"worker-{i}.log"
            while "processing tasks" not in log.read_text(errors="replace"):
                if process.poll() is not None:
                    raise RuntimeError(f"worker {i} exited early: {log.read_text()[-2000:]}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"worker {i} did not start in {timeout_s:.0f} s")
                time.sleep(0.2)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        stop_processes(self.processes, grace_s=30)
        self.processes = []
        for log in self._logs:
            log.close()
        self._logs = []


def stop_processes(processes: Sequence[subprocess.Popen[bytes]], *, grace_s: float) -> None:
    """SIGTERM to all, then each gets ``grace_s`` to exit before it is killed."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def added(*statuses: dict[str, int]) -> dict[str, int]:
    """Index statuses (``ready``, ``building``, ``caught_up``) summed."""
    keys = ("ready", "building", "caught_up")
    return {key: sum(s.get(key, 0) for s in statuses) for key in keys}


def store_index_status(store: Store) -> dict[str, int]:
    """An in-process store's HNSW indexes, in-memory term indexes and filter columns,
    summed."""
    return added(
        store.maintenance.vector_index_status(),
        store.maintenance.text_index_status(),
        store.maintenance.filter_column_status(),
    )


def wait_for_builds(
    searches: Sequence[Callable[[], object]],
    status: Callable[[], dict[str, int]],
    timeout_s: float = 3600.0,
) -> float:
    """Run each search once (that starts the background builds of the HNSW and term
    indexes of a big graph or space) and wait until no build is running, so the timed
    calls measure the indexes, not search beside a build. Returns the seconds waited."""
    started = time.perf_counter()
    for search in searches:
        search()
    while status().get("building", 0):
        if time.perf_counter() - started > timeout_s:
            raise RuntimeError(f"indexes still building after {timeout_s:.0f} s")
        time.sleep(0.5)
    return round(time.perf_counter() - started, 1)
