"""Records as SQLite rows, and scopes and predicates as SQL (the shared part:
``store/rows.py``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TABLES
from graphrecall.store import rows as shared
from graphrecall.store.base import R, Scope
from graphrecall.store.rows import JSON_FIELDS
from graphrecall.store.rows import matches_nothing as matches_nothing  # re-exported
from graphrecall.store.rows import table as table  # re-exported: rowmap.table(kind)
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.predicates import DIALECT, Compiler

BOOL_FIELDS = frozenset({"processed", "disable_default_ontology", "strict_ontology"})


def to_row(record: Record) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name in type(record).model_fields:
        value = getattr(record, name)
        if name in JSON_FIELDS and value is not None:
            value = json.dumps(value, separators=(",", ":"))
        elif name in BOOL_FIELDS and value is not None:
            value = int(value)
        row[name] = value
    return row


def from_row(kind: type[R], row: sqlite3.Row) -> R:
    data: dict[str, Any] = {}
    for name in kind.model_fields:
        value = row[name]
        if name in JSON_FIELDS and value is not None:
            value = json.loads(value)
        elif name in BOOL_FIELDS and value is not None:
            value = bool(value)
        data[name] = value
    return kind.model_validate(data)


def where(
    kind: type[Record], scope: Scope, predicate: Predicate | None = None
) -> tuple[str, list[Any]]:
    """SQL (over the table aliased ``t``) and its parameters for ``scope`` and
    ``predicate``."""
    compiler = Compiler(TABLES[kind], frozenset(kind.model_fields))
    return shared.where(kind, scope, predicate, DIALECT, compiler.compile)


def passing(
    db: Database, kind: type[Record], sql_where: str, params: list[Any], uuids: Sequence[str]
) -> set[str]:
    """Which of ``uuids`` match the compiled filter."""
    found: set[str] = set()
    for start in range(0, len(uuids), 500):
        chunk = list(uuids[start : start + 500])
        # The uuids drive the loop (CROSS JOIN keeps them outer), one primary-key lookup
        # each: with ``uuid IN (...)`` the planner may prefer an index of the filter (a
        # memory tree path), which scanned ~20x the rows at 100k memories.
        rows = db.query(
            f"SELECT t.uuid FROM json_each(?) j CROSS JOIN {TABLES[kind]} t"
            f" ON t.uuid = j.value WHERE {sql_where}",
            [json.dumps(chunk), *params],
        )
        found.update(r[0] for r in rows)
    return found
