"""Statements that test patterns row by row (``gr_regexp``, ``gr_jsonpath``) run in a few
worker processes, off the server's interpreter lock.

SQLite calls those functions once a row, in Python, holding the lock: one search of 2,000
texts of 2,000 characters holds it for ~30-80 ms, row by row, and every other request of
the process (any project's) waits for it each time it wants the lock back (bench
isolation, docs/security.md). Here such a statement (outside a transaction, which must
see its own writes) is sent to a worker process that opens the same file read-only (WAL:
it reads the committed data, as the pooled readers do), runs the same SQL with the same
functions and sends the rows back: the answers are those of the server's own connections,
by construction, and the server's thread waits on a pipe without the lock.

- **Few, lower priority**: at most ``WORKERS`` processes, started on first use or by
  ``serve`` at start (fresh interpreters, not forks: the server has threads and open
  connections), each at ``NICE`` so that on a busy machine the server's own requests
  come first.
- **Budget**: a statement that finds no free worker within ``BUDGET_S``, or is not
  answered within ``BUDGET_S``, is a :class:`BudgetExceeded` (400); a worker that ran
  past it is killed, and the next statement starts a fresh one.
- **Crash**: a worker that dies mid-statement is replaced, and the statement runs in the
  server's process instead (:meth:`PatternWorkers.run` answers None): a correct answer,
  never a 5xx, for a failure that is the server's, not the caller's.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

from graphrecall.domain.safe_regex import BudgetExceeded

log = logging.getLogger(__name__)

# The SQL functions whose statements go to a worker (store/sqlite/predicates.py).
MARKERS = ("gr_regexp(", "gr_jsonpath(")
WORKERS = 2
BUDGET_S = 10.0
NICE = 10
# How long a worker may take to start (its imports, on a busy machine).
START_S = 60.0
# Connections a worker keeps open, one per database file.
OPEN_FILES = 8


def wants_worker(sql: str) -> bool:
    """Whether ``sql`` tests a pattern row by row."""
    return any(marker in sql for marker in MARKERS)


class Row(tuple[Any, ...]):
    """A worker's row: by position and by column name, as ``sqlite3.Row``."""

    _names: dict[str, int]

    def __new__(cls, values: Sequence[Any], names: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


class _Worker:
    """One worker: ``python -m`` this module, a socket to it. Not multiprocessing's
    spawn, which re-runs the parent's main script (a library user's unguarded one)."""

    def __init__(self, nice: int) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        # The worker imports the same graphrecall as this process, however it was found.
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parents[3]), *filter(None, [env.get("PYTHONPATH")])]
        )
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno()), str(nice)],
                pass_fds=(theirs.fileno(),),
                # Nothing of a worker's reaches the parent's stdout (an MCP stdio server's
                # protocol channel).
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
            )
        finally:
            theirs.close()
        self.pipe = Connection(ours.detach())
        # Its imports are not the first statement's budget: wait until it is ready.
        try:
            ready = self.pipe.poll(START_S) and self.pipe.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            raise OSError("a pattern worker did not start")

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(5)
        self.pipe.close()


class PatternWorkers:
    """The worker processes of one server process; thread-safe."""

    def __init__(
        self, workers: int = WORKERS, budget_s: float = BUDGET_S, nice: int = NICE
    ) -> None:
        self.workers, self.budget_s, self.nice = workers, budget_s, nice
        self._slots = threading.BoundedSemaphore(max(workers, 1))
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.workers > 0

    def run(self, path: Path, sql: str, params: Sequence[Any]) -> list[Row] | None:
        """The rows of ``sql`` on the database at ``path``, from a worker; None when the
        worker died (the caller then runs the statement itself)."""
        if not self._slots.acquire(timeout=self.budget_s):
            raise self._over()
        try:
            try:
                worker = self._take()
            except OSError as exc:
                log.warning("%s (%s); the statement runs in-process", exc, sys.executable)
                return None
            try:
                worker.pipe.send((str(path), sql, list(params)))
                if not worker.pipe.poll(self.budget_s):
                    worker.kill()
                    raise self._over()
                status, payload = worker.pipe.recv()
            except (EOFError, OSError) as exc:
                worker.kill()
                log.warning("pattern worker died (%s); the statement runs in-process", exc)
                return None
            except BaseException:  # its answer would be the next statement's: no reuse
                worker.kill()
                raise
            with self._lock:
                self._idle.append(worker)
        finally:
            self._slots.release()
        if status == "error":
            raise cast(BaseException, payload)
        description, rows = cast(tuple[Any, list[tuple[Any, ...]]], payload)
        index = {d[0]: i for i, d in enumerate(description or ())}
        return [Row(values, index) for values in rows]

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    return worker
                worker.kill()
        return _Worker(self.nice)

    def start(self) -> None:
        """Start every worker now, so that no search waits for one to start."""
        started = []
        try:
            for _ in range(self.workers):
                if not self._slots.acquire(blocking=False):
                    break
                try:
                    started.append(self._take())
                except OSError as exc:  # the first statement tries again
                    self._slots.release()
                    log.warning("%s", exc)
                    break
        finally:
            with self._lock:
                self._idle.extend(started)
            for _ in started:
                self._slots.release()

    def _over(self) -> BudgetExceeded:
        return BudgetExceeded(
            f"filter: the regular-expression work of this search ran past its"
            f" {self.budget_s:g} s budget; narrow it with other filters",
            param="filter",
        )


# The server process's workers: configured once by the composition root.
WORKERS_OF_PROCESS = PatternWorkers()


def configure(workers: int, budget_s: float = BUDGET_S, *, start: bool = False) -> None:
    """Use ``workers`` processes (0: test patterns in the server's own process); with
    ``start``, start them now in the background."""
    global WORKERS_OF_PROCESS
    WORKERS_OF_PROCESS.close()
    WORKERS_OF_PROCESS = PatternWorkers(workers, budget_s)
    if start:
        threading.Thread(target=WORKERS_OF_PROCESS.start, daemon=True).start()


@atexit.register
def _stop() -> None:
    WORKERS_OF_PROCESS.close()


# -- the worker process ----------------------------------------------------------------


def serve(pipe: Connection) -> None:
    """A worker's loop: (path, sql, params) in, ("ok", (description, rows)) or
    ("error", exception) out, until the socket closes."""
    from graphrecall.store.sqlite.pragmas import tune
    from graphrecall.store.sqlite.predicates import register_functions

    open_files: dict[str, tuple[tuple[int, int], sqlite3.Connection]] = {}
    try:
        pipe.send("ready")
        while True:
            path, sql, params = pipe.recv()
            try:
                conn = _connection(open_files, path, tune, register_functions)
                cursor = conn.execute(sql, params)
                answer: tuple[str, Any] = ("ok", (cursor.description, cursor.fetchall()))
            except Exception as exc:  # every error goes back to the caller
                answer = ("error", exc)
            try:
                pipe.send(answer)
            except OSError:
                raise
            except Exception:  # an exception that does not pickle
                pipe.send(("error", sqlite3.OperationalError(str(answer[1]))))
    except (EOFError, OSError):  # the server closed the socket or is gone: done, quietly
        return


def _connection(
    open_files: dict[str, tuple[tuple[int, int], sqlite3.Connection]],
    path: str,
    tune: Any,
    register: Any,
) -> sqlite3.Connection:
    """A read-only connection to ``path``, reopened when the file there was replaced."""
    stat = os.stat(path)
    identity = (stat.st_dev, stat.st_ino)
    held = open_files.get(path)
    if held is not None and held[0] == identity:
        return held[1]
    if held is not None:
        held[1].close()
    elif len(open_files) >= OPEN_FILES:
        oldest = next(iter(open_files))
        open_files.pop(oldest)[1].close()
    conn = sqlite3.connect(path, isolation_level=None)
    tune(conn, read_only=True)
    register(conn)
    open_files[path] = (identity, conn)
    return conn


if __name__ == "__main__":
    # The server's Ctrl-C reaches its workers too: they end when its socket closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(int(sys.argv[2]))
    serve(Connection(int(sys.argv[1])))
