"""What every v3 route shares: query parameters read the way old clients send them, and
v3's page-number paging over the v4 keyset pages."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, TypeVar

from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest, GraphRecallError
from graphrecall.domain.models import Page, PageRequest

T = TypeVar("T")
# The most rows one v3 page may hold (v4 lists hold at most LIST_PAGE_SIZE_MAX).
PAGE_SIZE_MAX = limits.LIST_PAGE_SIZE_MAX


def int_param(value: str | None, name: str, *, ge: int, le: int | None = None) -> int | None:
    """An integer query parameter. Old clients send an unset one as an empty string
    (``?lastn=``): that is absent, not a 422. Anything else not an integer in range is a
    400 naming ``name``."""
    if value is None or not value.strip():
        return None
    try:
        number = int(value)
    except ValueError:
        raise BadRequest(f"{name} must be an integer; got {value!r}", param=name) from None
    if number < ge or (le is not None and number > le):
        bound = f"between {ge} and {le}" if le is not None else f"at least {ge}"
        raise BadRequest(f"{name} must be {bound}; got {number}", param=name)
    return number


def bool_param(value: str | None, name: str) -> bool | None:
    if value is None or not value.strip():
        return None
    lowered = value.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise BadRequest(f"{name} must be true or false; got {value!r}", param=name)


def str_param(value: str | None) -> str | None:
    return value if value else None


@dataclass(frozen=True)
class NumberedPage:
    """v3's page-number paging, read from the query as sent (``page_number`` or
    ``pageNumber``, ``page_size`` or ``pageSize``: the SDK spells them per route)."""

    number: int
    size: int
    order_by: str
    order: Literal["asc", "desc"]


def numbered(
    number: str | None,
    size: str | None,
    order_by: str | None,
    asc: str | None,
    allowed: tuple[str, ...],
    *,
    names: tuple[str, str] = ("page_number", "page_size"),
) -> NumberedPage:
    order_name = str_param(order_by) or allowed[0]
    if order_name not in allowed:
        raise BadRequest(
            f"order_by must be one of {', '.join(allowed)}; got {order_name!r}", param="order_by"
        )
    return NumberedPage(
        number=int_param(number, names[0], ge=1) or 1,
        size=int_param(size, names[1], ge=1, le=PAGE_SIZE_MAX) or limits.LIST_PAGE_SIZE_DEFAULT,
        order_by=order_name,
        order="asc" if bool_param(asc, "asc") else "desc",
    )


def numbered_page(
    fetch: Callable[[PageRequest], Page[T]], wanted: NumberedPage
) -> tuple[list[T], int]:
    """Page ``wanted.number`` (1-based) and the total: v3 pages by number, v4 by keyset
    cursor, so the earlier pages' cursors are followed (each a keyset read of one page)."""
    request = PageRequest(page_size=wanted.size, order_by=wanted.order_by, order=wanted.order)
    page = fetch(request)
    for _ in range(wanted.number - 1):
        if page.next_cursor is None:
            return [], page.total_size or 0
        page = fetch(request.model_copy(update={"cursor": page.next_cursor}))
    return page.items, page.total_size or 0


@contextmanager
def v3_fields(names: dict[str, str]) -> Iterator[None]:
    """An error raised inside that names a field as v4 does is re-raised naming it as v3
    does: ``names`` maps a pattern of the v4 ``param`` (a regular expression) to its v3
    spelling (``{r"^batch_uuid$": "batch_id", r"^filters\\.": "search_filters."}``); the
    message says the same name."""
    try:
        yield
    except GraphRecallError as exc:
        old = exc.param
        if old is None:
            raise
        new = old
        for pattern, replacement in names.items():
            new = re.sub(pattern, replacement, new)
        if new != old:
            # The old name as a whole word only ("name", not the start of "named").
            exc.message = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, exc.message)
            exc.param = new
        raise
