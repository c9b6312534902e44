"""Keyset pagination: cursors carry the last row's sort key and uuid, so a listing returns
every record exactly once across pages even while rows are added; and the page's SQL,
shared by the SQL backends (each passes its placeholder and its filter's SQL)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any, get_args

from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Page, PageRequest, Record
from graphrecall.domain.scopes import TABLES
from graphrecall.store.base import R


def encode(page: PageRequest, key: Any, uuid: str) -> str:
    raw = json.dumps([page.order_by, page.order, key, uuid], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(cursor: str, page: PageRequest) -> tuple[Any, str]:
    """The (sort key, uuid) a cursor of ``page``'s ordering carries; a 400 naming
    ``cursor`` for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        order_by, order, key, uuid = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError, binascii.Error):
        raise BadRequest("cursor is not a cursor this server issued", param="cursor") from None
    if order_by != page.order_by or order != page.order or not isinstance(uuid, str):
        raise BadRequest("cursor was issued for a different ordering", param="cursor")
    return key, uuid


def sort_expression(kind: type[Record], order_by: str) -> str:
    """The SQL a listing of ``kind`` (aliased ``t``) sorts by; a 400 naming ``order_by``
    for a field the kind has not. A NULL key sorts as "" (ties with it) on every backend;
    COALESCE only where NULLs can occur: an expression is something no index can order
    by (listing a 100k-fact graph by uuid on SQLite: 130 ms sorted, 0.2 ms read in index
    order)."""
    if order_by not in kind.model_fields:
        raise BadRequest(f"cannot order by {order_by!r}", param="order_by")
    nullable = type(None) in get_args(kind.model_fields[order_by].annotation)
    column = f"t.{order_by}"
    return f"COALESCE({column}, '')" if nullable else column


def like_pattern(search: str) -> str:
    """A case-insensitive substring ``search`` as a LIKE pattern escaped with ``\\``."""
    return "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def read_page(
    kind: type[R],
    page: PageRequest,
    *,
    sort: str,
    sql_where: str,
    params: list[Any],
    query: Callable[[str, list[Any]], Sequence[Any]],
    from_row: Callable[[type[R], Any], R],
    mark: str,
    order_key: str,
) -> Page[R]:
    """One page of ``kind``'s rows matching ``sql_where``, ordered by ``sort`` then uuid,
    after ``page.cursor``'s row. ``mark``: the backend's parameter placeholder;
    ``order_key``: what its ORDER BY names (``sort`` itself, or its alias ``_sort``)."""
    table = TABLES[kind]
    total = int(query(f"SELECT count(*) AS n FROM {table} t WHERE {sql_where}", params)[0]["n"])
    direction = "DESC" if page.order == "desc" else "ASC"
    keyset = ""
    key_params: list[Any] = []
    if page.cursor:
        last_key, last_uuid = decode(page.cursor, page)
        op = "<" if page.order == "desc" else ">"
        keyset = f" AND ({sort}, t.uuid) {op} ({mark}, {mark})"
        key_params = [last_key, last_uuid]
    sql = (
        f"SELECT t.*, {sort} AS _sort FROM {table} t WHERE {sql_where}{keyset}"
        f" ORDER BY {order_key} {direction}, t.uuid {direction}"
        f" LIMIT {page.page_size + 1}"
    )
    rows = query(sql, [*params, *key_params])
    more = len(rows) > page.page_size
    rows = rows[: page.page_size]
    items = [from_row(kind, row) for row in rows]
    next_cursor = encode(page, rows[-1]["_sort"], rows[-1]["uuid"]) if more else None
    return Page[R](items=items, next_cursor=next_cursor, total_size=total)
