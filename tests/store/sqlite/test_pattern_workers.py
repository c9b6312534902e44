"""Statements that test patterns row by row run in worker processes
(store/sqlite/pattern_workers.py): the same answers as in the server's process, a
transaction's reads stay in-process, a worker past its budget is a 400 naming the field,
and a dead worker costs a correct answer run in-process, never a 5xx."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Memory
from graphrecall.domain.safe_regex import BudgetExceeded
from graphrecall.retrieval.memory_filters import grep_filter, meta_predicate_filter
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.container import Services
from graphrecall.services.memory_engine import search as memory_search
from graphrecall.services.memory_engine.search import MemoryQuery
from graphrecall.store import open_store
from graphrecall.store.base import Store
from graphrecall.store.sqlite import pattern_workers
from graphrecall.store.sqlite.pattern_workers import PatternWorkers

SPACE = "space-1"
# A statement whose pattern work takes seconds: two million rows through gr_regexp.
# Far past any budget on any machine (2M rows finished inside 0.3 s on a quiet one); the
# budget kills the worker, so its length costs nothing.
SLOW = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000)"
    " SELECT count(*) FROM c WHERE gr_regexp('b', 0, 'abc')"
)


def _memory(content: str, meta: dict[str, object], space: str = SPACE) -> Memory:
    return Memory(
        uuid=new_id(),
        space_uuid=space,
        content=content,
        meta=meta,
        tree="notes",
        version_hash="h",
        created_at=clock.now(),
    )


@pytest.fixture()
def workers() -> Iterator[PatternWorkers]:
    saved = pattern_workers.WORKERS_OF_PROCESS
    pattern_workers.WORKERS_OF_PROCESS = PatternWorkers(1, budget_s=30.0)
    yield pattern_workers.WORKERS_OF_PROCESS
    pattern_workers.WORKERS_OF_PROCESS.close()
    pattern_workers.WORKERS_OF_PROCESS = saved


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "db.sqlite")
    texts = ["a" * 300 + "!" if i % 3 else f"note {i} about tea" for i in range(60)]
    rows = [_memory(text, {"n": i}) for i, text in enumerate(texts)]
    rows.append(_memory("Über tea", {"s": "ünïcode", "n": -1}))
    s.insert(rows)
    yield s
    s.close()


QUERIES = [
    grep_filter("tea$"),
    grep_filter("(a|aa)+!"),
    grep_filter("^über"),
    meta_predicate_filter("$.n > 40"),
    meta_predicate_filter('$.s like_regex "^ü"'),
    p.all_of([grep_filter("tea"), meta_predicate_filter("$.n < 30")]),
]


def _answers(store: Store, where: p.Predicate | None) -> tuple[list[str], list[str], int]:
    scope = {"space_uuid": SPACE}
    page = store.find(Memory, scope, where=where, limit=7, descending=True)
    every = store.find(Memory, scope, where=where)
    return [m.uuid for m in page], [m.uuid for m in every], store.count(Memory, scope, where)


def test_workers_answer_as_the_server_process_does(store: Store, workers: PatternWorkers) -> None:
    in_worker = [_answers(store, where) for where in QUERIES]
    assert workers._idle, "the statements ran in a worker"
    pattern_workers.WORKERS_OF_PROCESS = PatternWorkers(0)
    try:
        in_process = [_answers(store, where) for where in QUERIES]
    finally:
        pattern_workers.WORKERS_OF_PROCESS = workers
    assert in_worker == in_process
    assert [len(every) for _, every, _ in in_worker] == [21, 40, 1, 19, 1, 11]
    assert all(count == len(every) for _, every, count in in_worker)


def test_a_transaction_reads_its_own_writes_in_process(
    store: Store, workers: PatternWorkers
) -> None:
    with store.transaction():
        store.insert([_memory("fresh tea", {"n": 100})])
        assert store.count(Memory, {"space_uuid": SPACE}, grep_filter("^fresh")) == 1
    assert not workers._idle, "no worker was needed inside the transaction"
    assert store.count(Memory, {"space_uuid": SPACE}, grep_filter("^fresh")) == 1


def test_a_statement_past_its_budget_is_refused_and_its_worker_replaced(
    store: Store, tmp_path: Path
) -> None:
    slow = PatternWorkers(1, budget_s=0.3)
    try:
        slow.start()
        (worker,) = slow._idle
        with pytest.raises(BudgetExceeded) as refused:
            slow.run(tmp_path / "db.sqlite", SLOW, [])
        assert refused.value.status == 400 and refused.value.code == "regex_budget"
        assert worker.process.poll() is not None, "the busy worker was killed"
        assert not slow._idle
        # The next statement gets a fresh worker and its answer.
        rows = slow.run(tmp_path / "db.sqlite", "SELECT gr_regexp('b', 0, 'abc') AS hit", [])
        assert rows is not None and rows[0]["hit"] == 1 and rows[0][0] == 1
    finally:
        slow.close()


def _dead_idle_worker(workers: PatternWorkers, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kill the idle worker behind the pool's back: it finds out when it sends."""
    worker = workers._take()
    worker.process.kill()
    worker.process.wait(5)
    workers._idle.append(worker)
    monkeypatch.setattr(type(worker), "alive", lambda self: True)


def test_a_dead_worker_costs_an_answer_in_process(
    store: Store, workers: PatternWorkers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _answers(store, grep_filter("tea$"))
    _dead_idle_worker(workers, monkeypatch)
    statement = "SELECT 1 WHERE gr_regexp('a', 0, 'a')"
    assert workers.run(tmp_path / "db.sqlite", statement, []) is None
    assert not workers._idle, "the dead worker was dropped"
    monkeypatch.undo()
    workers.run(tmp_path / "db.sqlite", statement, [])
    # Through the store: the statement that met the dead worker runs in-process.
    _dead_idle_worker(workers, monkeypatch)
    assert _answers(store, grep_filter("tea$")) == expected
    monkeypatch.undo()
    # A fresh worker takes the next statements.
    assert _answers(store, grep_filter("tea$")) == expected
    assert workers._idle and workers._idle[0].alive()


def test_a_search_past_the_budget_is_a_400_naming_the_field(tmp_path: Path) -> None:
    store = open_store(tmp_path / "db.sqlite")
    saved = pattern_workers.WORKERS_OF_PROCESS
    pattern_workers.WORKERS_OF_PROCESS = PatternWorkers(1, budget_s=0.0)
    try:
        project = projects.get_or_create_project(store)
        space = spaces.create_space(store, project, "s", "budgetspace1")
        store.insert([_memory("a" * 2000 + "!", {"s": "a" * 2000}, space.uuid) for _ in range(500)])
        caller = spaces.Caller(project, space, "key-1", "test")
        ctx = Services(store, None)
        for query, param in (
            (MemoryQuery(tree="/notes", grep="(a|aa)+$"), "grep"),
            (MemoryQuery(tree="/notes", meta_predicate='$.s like_regex "a+$"'), "metaPredicate"),
        ):
            with pytest.raises(BudgetExceeded) as refused:
                memory_search.search(ctx, caller, query)
            assert refused.value.param == param and refused.value.status == 400
            assert refused.value.message.startswith(f"{param}: ")
        # Nothing waits on the gate afterwards: the slot was given back.
        assert ctx.regex_gate.waiting(project.uuid) == 0
    finally:
        pattern_workers.WORKERS_OF_PROCESS.close()
        pattern_workers.WORKERS_OF_PROCESS = saved
        store.close()


def test_a_failing_statement_raises_as_in_process_and_keeps_its_worker(
    store: Store, workers: PatternWorkers, tmp_path: Path
) -> None:
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        workers.run(
            tmp_path / "db.sqlite", "SELECT nope FROM memories WHERE gr_regexp('a', 0, 'a')", []
        )
    (worker,) = workers._idle
    rows = workers.run(tmp_path / "db.sqlite", "SELECT gr_regexp('a', 0, 'a') AS hit", [])
    assert rows == [(1,)] and workers._idle == [worker]


def test_a_worker_ends_quietly_when_its_server_goes(workers: PatternWorkers) -> None:
    workers.start()
    (worker,) = workers._idle
    workers._idle.clear()
    worker.pipe.close()  # as when the server's process ends
    assert worker.process.wait(30) == 0
