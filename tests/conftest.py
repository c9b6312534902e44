"""Fixtures: graphrecall's app driven by the real zep-cloud SDK, in this process
(``tests/inprocess.py``: ``server``, ``zep``, ``make_app``) or as a real server process on
loopback (``Server``, ``make_server``: where a process is the point); an empty store on
disk."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from zep_cloud import Zep

from graphrecall.store import Store, open_store
from tests.inprocess import InProcess, cli

API_KEY = "gr_test_key_for_the_suite"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    db: Path | str  # a SQLite file, or a postgresql:// URL
    port: int
    api_key: str
    env: dict[str, str] | None = None
    process: subprocess.Popen[bytes] | None = None
    args: tuple[str, ...] = ()  # more `serve` options (e.g. --no-worker)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v4"

    def start(self) -> Server:
        env = {
            **os.environ,
            "GRAPHRECALL_API_KEY": self.api_key,
            "GRAPHRECALL_LOG_LEVEL": "warning",
            **(self.env or {}),
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphrecall",
                "serve",
                "--db",
                str(self.db),
                "--port",
                str(self.port),
                *self.args,
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        # 60 s was passed at load 20 on this 2-core machine (imports and models, starved).
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"server exited early: {err}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("server did not come up in 180 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
            self.process = None

    def client(self, api_key: str | None = None, max_retries: int | None = 0) -> Zep:
        """The SDK on this server (``max_retries=None``: the SDK's default retries)."""
        return Zep(api_key=api_key or self.api_key, base_url=self.base_url, max_retries=max_retries)

    def http(self, path: str = "", **options: Any) -> httpx.Client:
        """A raw HTTP client at ``path`` under the server's root (as ``InProcess.http``)."""
        return httpx.Client(base_url=f"http://127.0.0.1:{self.port}{path}", **options)

    def cli(self, *args: str) -> str:
        """``graphrecall --db DB ARGS`` on this server's database, run in the test's
        process as ``InProcess.cli`` is (a command beside the server, as an operator's
        would be); its output, stripped."""
        return cli("--db", str(self.db), *args)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    """The app on a SQLite database, in this process, shared by the session's tests
    (each makes users, graphs and threads of its own)."""
    app = InProcess(tmp_path_factory.mktemp("db") / "graphrecall.db", API_KEY)
    yield app
    app.stop()


@pytest.fixture(scope="session")
def zep(server: InProcess) -> Zep:
    return server.client()


@pytest.fixture()
def make_app(tmp_path: Path) -> Iterator[Callable[..., InProcess]]:
    """Apps in this process of the test's own: a database (by default a fresh SQLite
    file) or settings (``env``: ``GRAPHRECALL_*`` values) no other test shares."""
    started: list[InProcess] = []

    def make(
        db: Path | str | None = None, api_key: str = API_KEY, env: dict[str, str] | None = None
    ) -> InProcess:
        app = InProcess(db or tmp_path / f"app{len(started)}.db", api_key, env)
        started.append(app)
        return app

    yield make
    for app in started:
        app.stop()


@pytest.fixture()
def make_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Server processes of the test's own, where a process is the point (a restart on
    the same database, kill -9, SIGTERM, two processes racing)."""
    started: list[Server] = []

    def make(
        db: Path | str | None = None, api_key: str = API_KEY, env: dict[str, str] | None = None
    ) -> Server:
        srv = Server(db or tmp_path / "own.db", _free_port(), api_key, env).start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


def wait_for_task(zep: Zep, task_uuid: str, timeout: float = 60) -> str:
    """Poll a task until it ends; returns its final status."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = zep.task.get(task_uuid).status
        if status in ("succeeded", "failed", "partial"):
            return str(status)
        time.sleep(0.05)
    raise AssertionError(f"task {task_uuid} did not finish in {timeout} s")


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty SQLite store in the test's own directory (modules may define their own)."""
    s = open_store(tmp_path / "db.sqlite")
    yield s
    s.close()
