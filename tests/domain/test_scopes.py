"""The scope declarations agree with what the backends built from them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphrecall.domain import scopes
from graphrecall.domain.models import Episode, Record
from graphrecall.store.sqlite import filter_columns
from graphrecall.store.sqlite.migrations import migrate


def test_every_scope_declares_its_index_columns_in_index_order(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "s.db")
    migrate(conn)
    for scope in scopes.SCOPES.values():
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({scope.table}_fts)")]
        assert columns == [f.name for f in scope.text_fields], scope.name


def test_declared_fields_are_fields_of_the_kind() -> None:
    for scope in scopes.SCOPES.values():
        fields = set(scope.kind.model_fields)
        named = {scope.owner_field, *scope.filter_columns, *scope.time_fields}
        assert named <= fields, (scope.name, named - fields)


def test_a_role_leg_reads_a_role_served_from_memory() -> None:
    # The role leg looks its candidates' role up on every query: from the filter copy.
    for scope in scopes.SCOPES.values():
        if scope.demoted_role is not None:
            assert "role" in scope.kind.model_fields
            assert "role" in scope.filter_text, scope.name


def test_an_exchange_leg_is_declared_on_episodes_only() -> None:
    # Store.exchanges reads episodes: a message's thread and creation time.
    with_leg = [s for s in scopes.SCOPES.values() if s.exchange_leg]
    assert [s.kind for s in with_leg] == [Episode]


def test_an_answer_leg_reads_a_declared_text_column_of_episodes_only() -> None:
    with_leg = [s for s in scopes.SCOPES.values() if s.answer_field is not None]
    assert [s.kind for s in with_leg] == [Episode]
    spec = with_leg[0]
    assert spec.answer_field in {f.name for f in spec.text_fields}


def test_tables_and_owners_come_from_the_declaration() -> None:
    assert set(scopes.TEXT_TABLES) == {s.table for s in scopes.SCOPES.values()}
    assert scopes.owner_field(scopes.SCOPES["memories"].kind) == "space_uuid"
    assert scopes.owner_field(Record) == "graph_uuid"
    assert filter_columns.COLUMNS["edges"] == (
        scopes.SCOPES["edges"].filter_text,
        scopes.SCOPES["edges"].filter_times,
    )
    assert set(filter_columns.COLUMNS) == {"edges", "nodes", "episodes"}
