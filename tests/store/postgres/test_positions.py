"""Both change logs' positions (store/postgres/positions.py) are read once per read point
(store/read_point.py) by every copy a request checks, and a write committed before the
point opened is searched inside it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge
from graphrecall.store import Store, read_point
from graphrecall.store.postgres import positions
from tests.store.conformance.records import edge, node


def test_a_read_point_reads_the_logs_once_and_sees_what_was_written_before_it(
    pg_url: str, open_pg: Callable[[str], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = open_pg(pg_url), open_pg(pg_url)
    graph = new_id()
    a, b = node(graph, "A"), node(graph, "B")
    rng = np.random.default_rng(3)
    facts = [edge(graph, a, b, f"alpha fact {i}", t=i) for i in range(20)]
    writer.insert([a, b, *facts])
    vectors = rng.normal(size=(20, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    writer.set_embeddings(Edge, graph, [(f.uuid, vectors[i]) for i, f in enumerate(facts)])
    scope = {"graph_uuid": graph}

    def both() -> tuple[list[str], list[str]]:
        lexical = reader.text_search(Edge, scope, ["alpha"], limit=50)
        nearest = reader.vector_search(Edge, graph, vectors[0], scope=scope, limit=50)
        return [u for u, _ in lexical], [u for u, _ in nearest]

    both()  # the copies are read
    reads: list[int] = []
    real = positions.read
    monkeypatch.setattr(positions, "read", lambda db: reads.append(1) or real(db))
    both()
    assert len(reads) == 2  # outside a point: each copy checks the logs itself
    later = edge(graph, a, b, "alpha written later", t=99)
    writer.insert([later])
    writer.set_embeddings(Edge, graph, [(later.uuid, vectors[0])])
    reads.clear()
    with read_point.scope():
        lexical, nearest = both()
        again = both()
    assert len(reads) == 1  # one statement for four checks
    assert later.uuid in lexical and later.uuid in nearest[:2]
    assert again == (lexical, nearest)
