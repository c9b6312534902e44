"""Records as SQL rows, backend-neutral: which fields hold JSON, and a scope (with a
compiled predicate) as a WHERE clause over the table aliased ``t``. Each SQL backend
supplies its ``Dialect`` (``store/predicates.py``) and its own row conversions
(``sqlite/rows.py``, ``postgres/rows.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TABLES
from graphrecall.store.base import Scope
from graphrecall.store.predicates import Dialect

JSON_FIELDS = frozenset({"metadata", "attributes", "labels", "payload", "result", "error", "data"})
JSON_FIELDS |= {"meta", "actor"}  # memories, memory events
JSON_FIELDS |= {"ignore_roles"}  # batches
JSON_FIELDS |= {"entries", "input", "output"}  # debug logs, ingestion traces
JSON_FIELDS |= {"events"}  # webhook endpoints


def table(kind: type[Record]) -> str:
    return TABLES[kind]


def scoped(kind: type[Record], scope: Scope, dialect: Dialect) -> tuple[str, list[Any]]:
    """SQL and its parameters for ``scope``: a scalar is equality, a collection
    membership (none: nothing matches), ``None`` "is null"."""
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
                clauses.append(dialect.false)
                continue
            clauses.append(dialect.member(f"t.{key}", values, params))
        else:
            clauses.append(dialect.equal(f"t.{key}", value, params))
    return (" AND ".join(clauses) or dialect.true), params


def matches_nothing(scope: Scope) -> bool:
    """Whether ``scope`` names an empty collection (a caller's empty list of uuids): no
    row can match, so no statement need run."""
    return any(isinstance(v, list | tuple | set | frozenset) and not v for v in scope.values())


def where(
    kind: type[Record],
    scope: Scope,
    predicate: Predicate | None,
    dialect: Dialect,
    compile_predicate: Callable[[Predicate], tuple[str, list[Any]]],
) -> tuple[str, list[Any]]:
    """SQL (over the table aliased ``t``) and its parameters for ``scope`` and
    ``predicate`` (compiled by the backend's compiler)."""
    sql, params = scoped(kind, scope, dialect)
    if predicate is not None:
        pred_sql, pred_params = compile_predicate(predicate)
        sql = f"{sql} AND {pred_sql}"
        params += pred_params
    return sql, params
