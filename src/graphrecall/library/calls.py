"""What every library method does around its route handler: inputs in, results out.

Inputs may be plain dicts, graphrecall's own models or any pydantic model with the same
fields (a ``zep_cloud`` ``Message`` too); they are validated by the route's own body
model, and a bad one raises :class:`~graphrecall.domain.errors.BadRequest` naming the
field as the HTTP face does (``messages[0].role``). Results are the wire models the HTTP
face serialises, so their field names are the Zep API's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from graphrecall.api.errors import param_path
from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import PageRequest

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


def page(
    paging: Callable[..., PageRequest],
    page_size: int | None,
    cursor: str | None,
    order_by: str | None = None,
    order: str | None = None,
    *,
    max_size: int = limits.LIST_PAGE_SIZE_MAX,
) -> PageRequest:
    """The route's own paging dependency, called with the caller's arguments."""
    size = limits.LIST_PAGE_SIZE_DEFAULT if page_size is None else page_size
    if not 1 <= size <= max_size:
        raise BadRequest(f"page_size must be between 1 and {max_size}", param="page_size")
    if order not in (None, "asc", "desc"):
        raise BadRequest("order must be asc or desc", param="order")
    return paging(page_size=size, cursor=cursor, order_by=order_by, order=order)


def result(model: type[M], value: Any) -> M:
    """A handler's return value as ``model``: a handler on the hot path returns the
    serialised response, others a dict or the model itself."""
    if isinstance(value, model):
        return value
    if isinstance(value, Response):
        return model.model_validate_json(bytes(value.body))
    return model.model_validate(value)


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


def pager(item: type[M], value: Any, fetch: Callable[[str], Pager[M]] | None = None) -> Pager[M]:
    """A handler's page (``{"items", "next_cursor", "total_size"}``, or its serialised
    form) as a :class:`Pager` of ``item`` models."""
    if isinstance(value, Response):
        import json

        value = json.loads(bytes(value.body))
    items = [result(item, x) for x in value["items"]]
    return Pager(items, value.get("next_cursor"), value.get("total_size"), fetch)
