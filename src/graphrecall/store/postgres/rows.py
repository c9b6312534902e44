"""Records as PostgreSQL rows, and scopes and predicates as SQL (the shared part:
``store/rows.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TABLES
from graphrecall.store import rows as shared
from graphrecall.store.base import R, Scope
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.predicates import DIALECT, Compiler
from graphrecall.store.rows import JSON_FIELDS
from graphrecall.store.rows import matches_nothing as matches_nothing  # re-exported
from graphrecall.store.rows import table as table  # re-exported: rowmap.table(kind)


def columns(kind: type[Record]) -> str:
    """The model's columns, qualified by the alias ``t`` (rows carry extra columns)."""
    return ", ".join(f"t.{name}" for name in kind.model_fields)


def to_row(record: Record) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name in type(record).model_fields:
        value = getattr(record, name)
        if name in JSON_FIELDS and value is not None:
            value = Jsonb(value)
        row[name] = value
    return row


def from_row(kind: type[R], row: dict[str, Any]) -> R:
    return kind.model_validate({name: row[name] for name in kind.model_fields})


def where(
    kind: type[Record],
    scope: Scope,
    predicate: Predicate | None = None,
    text_collation: str = "C",
) -> tuple[str, list[Any]]:
    """SQL (over the table aliased ``t``) and its parameters for ``scope`` and
    ``predicate`` (regexes classify characters in ``text_collation``)."""
    compiler = Compiler(TABLES[kind], frozenset(kind.model_fields), text_collation)
    return shared.where(kind, scope, predicate, DIALECT, compiler.compile)


def passing(
    db: Database, kind: type[Record], sql_where: str, params: list[Any], uuids: Sequence[str]
) -> set[str]:
    """Which of ``uuids`` match the compiled filter."""
    found: set[str] = set()
    for start in range(0, len(uuids), 1000):
        chunk = list(uuids[start : start + 1000])
        rows = db.query(
            f"SELECT t.uuid FROM {TABLES[kind]} t WHERE t.uuid = ANY(%s) AND {sql_where}",
            [chunk, *params],
        )
        found.update(r["uuid"] for r in rows)
    return found


def field(kind: type[Record], name: str) -> str:
    """``name`` if it is a field of ``kind`` (safe to put in SQL)."""
    if name not in kind.model_fields:
        raise ValueError(f"{kind.__name__} has no field {name!r}")
    return name
