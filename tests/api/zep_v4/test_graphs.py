"""``graph.warm`` through the SDK: a task that has already succeeded, saying what it read;
after a restart the graph's first search finds its vector matrices loaded (SQLite, which
keeps them in the process); the error contract."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from zep_cloud import Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.api.zep_v4.test_debug_logs import project_client
from tests.conftest import Server, wait_for_task
from tests.inprocess import InProcess

UNKNOWN = "0190e3c2-0000-7000-8000-000000000000"
FACTS = ["Ada works at Initech.", "Ada lives in Porto.", "Ada plays the cello on Sundays."]


def _fill(zep: Zep, graph_uuid: str) -> None:
    for text in FACTS:
        added = zep.graph.episode.add(graph_uuid, data=text)
        assert added.task is not None
        assert wait_for_task(zep, added.task.uuid_) == "succeeded"


def _caches(server: Server) -> dict[str, Any]:
    with server.http() as http:
        health = http.get("/healthz").json()
    caches: dict[str, Any] = health["caches"]
    return caches


def test_warm_returns_a_succeeded_task_saying_what_it_read(server: InProcess, zep: Zep) -> None:
    graph = zep.graph.create(name="warm-me")
    _fill(zep, graph.uuid_)
    result = zep.graph.warm(graph.uuid_)
    assert result.task is not None
    assert result.task.type == "graph.warm" and result.task.status == "succeeded"
    assert zep.task.get(result.task.uuid_).status == "succeeded"
    warmed = result.task.model_dump().get("result") or {}
    if isinstance(server.db, Path):  # SQLite reads the graph's copies into the process
        episodes = len(list(zep.graph.episode.list(graph.uuid_)))
        nodes = len(list(zep.graph.node.list(graph.uuid_)))
        edges = len(list(zep.graph.edge.list(graph.uuid_)))
        assert warmed["vector_rows"] == episodes + nodes + edges
        assert warmed["filter_column_rows"] == episodes + nodes + edges
    assert warmed["term_indexes_building"] >= 0  # both backends keep term indexes

    # A user's uuid names its graph.
    user = zep.user.create(first_name="Warm")
    assert zep.graph.warm(user.uuid_).task.status == "succeeded"


def test_warm_errors(server: InProcess, zep: Zep) -> None:
    with pytest.raises(NotFoundError) as info:
        zep.graph.warm(UNKNOWN)
    assert info.value.body.error.param == "graph_uuid"
    with pytest.raises(BadRequestError) as info_bad:
        zep.graph.warm("not-a-uuid")
    assert info_bad.value.body.error.param == "graph_uuid"
    mine = zep.graph.create(name="not-yours")
    with pytest.raises(NotFoundError):
        project_client(server, "warm-other").graph.warm(mine.uuid_)


# Slow: a server process restarted on the same database.
@pytest.mark.slow
def test_after_a_restart_warm_loads_what_the_first_search_reads(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    db = tmp_path / "warm.db"
    first = make_server(db)
    zep = first.client()
    graph = zep.graph.create(name="cold")
    _fill(zep, graph.uuid_)
    first.stop()

    second = make_server(db)
    zep = second.client()
    cold = _caches(second)
    assert cold["vector_matrices"]["entries"] == 0  # nothing of the graph read yet
    assert cold["filter_columns"]["ready"] == 0
    zep.graph.warm(graph.uuid_)
    warm = _caches(second)
    # One matrix per searchable kind of a graph, and the filter columns of each kind
    # filtered by columns.
    assert warm["vector_matrices"]["entries"] == 5
    assert warm["filter_columns"]["ready"] == 3
    misses = warm["vector_matrices"]["misses"]
    hits = zep.graph.search_edges(graph.uuid_, query="Where does Ada work?").items or []
    assert hits and "Initech" in str(hits[0].fact)
    after = _caches(second)["vector_matrices"]
    assert after["misses"] == misses and after["hits"] > warm["vector_matrices"]["hits"]
