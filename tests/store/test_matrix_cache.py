"""The bounded cache of vector matrices (store/matrix_cache.py): least recently
used dropped past the bound, hits and misses counted, and a dropped owner's matrix read
again with the same answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Node
from graphrecall.store import matrix_cache, open_store
from graphrecall.store.matrix_cache import ROW_OVERHEAD_BYTES, Entry, MatrixCache
from tests.store.test_vector_index import unit


def entry(rows: int) -> Entry:
    uuids = [f"u{i}" for i in range(rows)]
    return (1, uuids, {u: i for i, u in enumerate(uuids)}, np.zeros((rows, 4), np.float32))


def test_least_recently_used_go_first_past_the_bound() -> None:
    one = 10 * (16 + ROW_OVERHEAD_BYTES)  # an entry of 10 rows of 4 floats
    cache = MatrixCache(max_bytes=2 * one)
    cache.put(("t", "a"), entry(10))
    cache.put(("t", "b"), entry(10))
    assert cache.get(("t", "a")) is not None  # a is now the most recently used
    cache.put(("t", "c"), entry(10))
    assert cache.get(("t", "b")) is None
    assert cache.get(("t", "a")) is not None and cache.get(("t", "c")) is not None
    status = cache.status()
    assert status["entries"] == 2 and status["bytes"] == 2 * one and status["evicted"] == 1
    cache.put(("t", "d"), entry(100))  # alone over the bound: kept, the rest dropped
    assert cache.status()["entries"] == 1 and cache.get(("t", "d")) is not None


def test_a_dropped_matrix_is_read_again(tmp_path: Path) -> None:
    store = open_store(tmp_path / "bounded.db")
    try:
        cache = store._vectors.matrices  # type: ignore[attr-defined]
        cache.max_bytes = 1  # one matrix at a time
        owners = ("g1", "g2")
        vectors = unit(6, 3)
        for owner in owners:
            stamp = clock.now()
            nodes = [
                Node(
                    uuid=new_id(),
                    graph_uuid=owner,
                    name=f"n{i}",
                    created_at=stamp,
                    updated_at=stamp,
                )
                for i in range(3)
            ]
            store.insert(nodes)
            store.set_embeddings(Node, owner, [(n.uuid, vectors[i]) for i, n in enumerate(nodes)])
        first = {
            o: store.vector_search(Node, o, vectors[0], scope={"graph_uuid": o}) for o in owners
        }
        again = {
            o: store.vector_search(Node, o, vectors[0], scope={"graph_uuid": o}) for o in owners
        }
        assert first == again and all(len(found) == 3 for found in first.values())
        status = cache.status()
        assert status["entries"] == 1 and status["misses"] == 4 and status["hits"] == 0
        store.vector_search(Node, "g2", vectors[1], scope={"graph_uuid": "g2"})
        assert cache.status()["hits"] == 1
    finally:
        store.close()


def test_the_default_bound_holds_one_big_graphs_matrices_together() -> None:
    # 1M facts: 1.5 GB of fact vectors, 1.1 GB of message vectors, searched by one request.
    total = matrix_cache.machine_bytes()
    bound = MatrixCache().max_bytes
    assert bound >= matrix_cache.FLOOR_BYTES
    if total is not None:
        assert bound == max(matrix_cache.FLOOR_BYTES, total // 4)
    try:
        matrix_cache.configure(64)
        assert MatrixCache().max_bytes == 64 * 2**20
    finally:
        matrix_cache.configure(None)
    assert MatrixCache().max_bytes == bound


def test_a_container_limit_lower_than_the_machine_bounds_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = tmp_path / "memory.max"
    limit.write_text("1073741824\n")  # 1 GiB
    monkeypatch.setattr(matrix_cache, "CGROUP_LIMITS", (str(limit),))
    assert matrix_cache.machine_bytes() == 2**30
    assert matrix_cache.default_max_bytes() == matrix_cache.FLOOR_BYTES  # 1 GiB / 4 < 512 MB
    limit.write_text("max\n")  # no limit: the machine's memory
    unlimited = matrix_cache.machine_bytes()
    assert unlimited is None or unlimited > 2**30
