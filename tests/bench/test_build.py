"""The benchmark graph is inserted whole, with its search columns and degrees computed in
memory: they must be what a graph written record by record gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrecall.domain.models import Edge
from graphrecall.store.sqlite import migrations
from graphrecall.store.sqlite.store import SQLiteStore
from graphrecall_bench.build import _searchable
from graphrecall_bench.synthetic import generate
from tests.ingest.search_columns import expected_columns, stored_columns


def test_the_columns_computed_at_once_are_the_old_triggers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = generate(300, seed=5)
    nodes, episodes = _searchable(graph)
    built = SQLiteStore(tmp_path / "built.db")
    with built.transaction():
        built.insert([*nodes, *episodes, *graph.edges])
        for edge_uuid, linked in graph.edge_links.items():
            built.link_episodes(Edge, graph.graph.uuid, edge_uuid, linked)
    # The same records written one kind after another into a version-15 database, whose
    # triggers computed the columns.
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:15])
    old = SQLiteStore(tmp_path / "triggers.db")
    monkeypatch.undo()
    # The column a later migration (21) gives the rows written here.
    old.db.conn.execute("ALTER TABLE edges ADD COLUMN hyperedge_uuid TEXT")
    with old.transaction():
        old.insert([*graph.nodes, *graph.episodes, *graph.edges])
        for edge_uuid, linked in graph.edge_links.items():
            old.link_episodes(Edge, graph.graph.uuid, edge_uuid, linked)
    columns = stored_columns(built.db.conn)
    assert columns == stored_columns(old.db.conn) == expected_columns(built.db.conn)
    assert sum(1 for c in columns[0].values() if c[0] and c[1] and c[2]) > 100
    assert max(columns[1].values()) > 10 and len(columns[1]) == len(graph.nodes)
    built.close()
    old.close()
