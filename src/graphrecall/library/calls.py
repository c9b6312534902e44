"""What every library method does around its service call: inputs in, pages out.

Inputs may be plain dicts, graphrecall's own models or any pydantic model with the same
fields (a ``zep_cloud`` ``Message`` too); they are validated by the HTTP face's own body
model (``wire/``), and a bad one raises :class:`~graphrecall.domain.errors.BadRequest` naming the
field as the HTTP face does (``messages[0].role``). Results are the wire models the HTTP
face serialises, so their field names are the Zep API's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypedDict, TypeVar

from pydantic import BaseModel, ValidationError

from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Page, PageRequest
from graphrecall.wire.errors import param_path
from graphrecall.wire.zep_v4.paging import Paging

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

# An SDK argument left out: the field keeps the body model's default.
OMIT: Any = ...


def plain(value: Any) -> Any:
    """Models (ours or the SDK's) to dicts by their wire names, recursively."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def given(**fields: Any) -> dict[str, Any]:
    """The arguments a caller passed (``OMIT`` and ``None`` left out, as the SDK omits
    them from the request body)."""
    return {k: plain(v) for k, v in fields.items() if v is not OMIT and v is not None}


def body(model: type[M], **fields: Any) -> M:
    """``model`` validated from the given arguments, a 400-style error naming the field."""
    try:
        return model.model_validate(given(**fields))
    except ValidationError as exc:
        raise invalid(exc) from None


def invalid(exc: ValidationError) -> BadRequest:
    first = exc.errors()[0]
    param = param_path(first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    return BadRequest(f"{param}: {message}", param=param)


@dataclass(frozen=True)
class Pager(Generic[T]):
    """One page of a list or search, like the SDK's ``SyncPager``: ``items`` holds this
    page; iterating reads every page; ``next_page()`` fetches the next one."""

    items: list[T]
    next_cursor: str | None = None
    total_size: int | None = None
    fetch: Callable[[str], Pager[T]] | None = field(default=None, repr=False, compare=False)

    @property
    def has_next(self) -> bool:
        return self.next_cursor is not None and self.fetch is not None

    def next_page(self) -> Pager[T] | None:
        if not self.has_next or self.fetch is None or self.next_cursor is None:
            return None
        return self.fetch(self.next_cursor)

    def iter_pages(self) -> Iterator[Pager[T]]:
        current: Pager[T] | None = self
        while current is not None:
            yield current
            if not current.items:
                return
            current = current.next_page()

    def __iter__(self) -> Iterator[T]:
        for one in self.iter_pages():
            yield from one.items

    def __len__(self) -> int:
        return len(self.items)


def pages(
    read: Callable[[str | None], tuple[list[T], str | None, int | None]], cursor: str | None
) -> Pager[T]:
    """The one pager: ``read(cursor)`` gives a page's items, next cursor and total size;
    each next page is read the same way."""
    items, next_cursor, total_size = read(cursor)
    return Pager(items, next_cursor, total_size, lambda c: pages(read, c))


def checked_size(page_size: int | None, default: int, max_size: int) -> int:
    """``page_size`` (None: ``default``), refused outside 1..``max_size`` as the HTTP
    face refuses it."""
    size = default if page_size is None else page_size
    if not 1 <= size <= max_size:
        raise BadRequest(f"page_size must be between 1 and {max_size}", param="page_size")
    return size


class ListArgs(TypedDict, total=False):
    """The SDK's paging arguments of a list (one left out: the list's default)."""

    page_size: int | None
    cursor: str | None
    order_by: str | None
    order: str | None


class FilteredListArgs(ListArgs, total=False):
    filters: Any


def listing(
    rules: Paging, read: Callable[[PageRequest], tuple[Page[Any], list[T]]], args: ListArgs
) -> Pager[T]:
    """A list by its paging ``rules`` (the HTTP face's, ``wire/zep_v4/paging.py``):
    ``read`` gives the service's page and its items as wire models."""
    order_by, order = args.get("order_by"), args.get("order")
    size = checked_size(args.get("page_size"), limits.LIST_PAGE_SIZE_DEFAULT, rules.max_size)
    if order not in (None, "asc", "desc"):
        raise BadRequest("order must be asc or desc", param="order")
    rules.request(size, None, order_by, order)  # a bad order_by is refused before any read

    def read_page(at: str | None) -> tuple[list[T], str | None, int | None]:
        found, items = read(rules.request(size, at, order_by, order))
        return items, found.next_cursor, found.total_size

    return pages(read_page, args.get("cursor"))
