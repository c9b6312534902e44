"""The benchmarks' writer (``--write-rate``): it adds copies of the graph's facts and
messages while the searches run, and a search through the in-memory term index finds
them as FTS5 does."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from graphrecall.domain.models import Edge, Episode
from graphrecall.store import open_store
from graphrecall.store.sqlite import term_index
from graphrecall_bench.build import ensure_db, working_copy
from graphrecall_bench.writes import Writer


def test_the_writer_adds_facts_and_messages_that_searches_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(term_index, "MIN_ROWS", 0)
    built = ensure_db(200, 7, tmp_path, log=lambda *_: None)
    db = working_copy(built, tmp_path)
    graph = {"graph_uuid": built.graph.graph.uuid}
    store = open_store(db)
    try:
        facts, said = store.count(Edge, graph), store.count(Episode, graph)
        store.text_search(Edge, graph, ["zzz"])  # the copy is read
        assert store.maintenance.wait_until_warm(30)  # type: ignore[attr-defined]
        with Writer(db, built.graph.graph.uuid, rate=40.0, seed=3) as writer:
            deadline = time.monotonic() + 30
            while writer.writes < 5:
                assert time.monotonic() < deadline, "the writer wrote nothing"
                time.sleep(0.02)
        summary = writer.summary()
        assert summary is not None and summary["facts"] == writer.writes >= 5
        assert store.count(Edge, graph) == facts + writer.writes
        assert store.count(Episode, graph) == said + writer.writes
        # A written fact is a copy of one of the graph's: its words find both.
        newest = store.find(Edge, graph, order_by="created_at", descending=True, limit=1)[0]
        terms = newest.fact.split()[:3]
        found = store.text_search(Edge, graph, terms, limit=500)
        assert newest.uuid in {u for u, _ in found}
        with monkeypatch.context() as mp:
            mp.setattr(term_index, "MIN_ROWS", 10**12)
            assert store.text_search(Edge, graph, terms, limit=500) == found
        assert store.maintenance.text_index_status()["caught_up"] >= 1
    finally:
        store.close()


def test_no_rate_no_writer(tmp_path: Path) -> None:
    with Writer(tmp_path / "absent.db", "g", rate=0.0, seed=1) as writer:
        pass
    assert writer.summary() is None and writer.writes == 0
