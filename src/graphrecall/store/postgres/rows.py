"""Records as PostgreSQL rows, and scopes and predicates as SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TABLES
from graphrecall.store.base import R, Scope
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.predicates import Compiler

JSON_FIELDS = frozenset({"metadata", "attributes", "labels", "payload", "result", "error", "data"})
JSON_FIELDS |= {"meta", "actor"}  # memories, memory events
JSON_FIELDS |= {"ignore_roles"}  # batches


def table(kind: type[Record]) -> str:
    return TABLES[kind]


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
    sql, params = scoped(kind, scope)
    if predicate is not None:
        compiler = Compiler(TABLES[kind], frozenset(kind.model_fields), text_collation)
        pred_sql, pred_params = compiler.compile(predicate)
        sql = f"{sql} AND {pred_sql}"
        params += pred_params
    return sql, params


def scoped(kind: type[Record], scope: Scope) -> tuple[str, list[Any]]:
    fields = kind.model_fields
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in scope.items():
        if key not in fields:
            raise ValueError(f"{kind.__name__} has no field {key!r}")
        if value is None:
            clauses.append(f"t.{key} IS NULL")
        elif isinstance(value, list | tuple | set | frozenset):
            values = list(value)
            if not values:
                clauses.append("false")
                continue
            clauses.append(f"t.{key} = ANY(%s)")
            params.append(values)
        else:
            clauses.append(f"t.{key} = %s")
            params.append(value)
    return (" AND ".join(clauses) or "true"), params


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
