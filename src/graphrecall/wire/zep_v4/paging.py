"""The paging rules of each Zep v4 list: which ``order_by`` values it takes, its default
order and its largest page. The HTTP face reads them from the query string, the library
from its arguments; both build the same :class:`PageRequest` here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import PageRequest


@dataclass(frozen=True)
class Paging:
    allowed: tuple[str, ...] = ("uuid", "created_at")
    default_order_by: str = "uuid"
    default_order: Literal["asc", "desc"] = "desc"
    max_size: int = limits.LIST_PAGE_SIZE_MAX

    def request(
        self, page_size: int, cursor: str | None, order_by: str | None, order: str | None
    ) -> PageRequest:
        """The page asked for; ``page_size`` and ``order`` are checked by the caller's
        face (FastAPI's query rules, or the library's own message)."""
        if order_by is not None and order_by not in self.allowed:
            raise BadRequest(
                f"order_by must be one of {', '.join(self.allowed)}; got {order_by!r}",
                param="order_by",
            )
        return PageRequest(
            page_size=page_size,
            cursor=cursor or None,
            order_by=order_by or self.default_order_by,
            order=order or self.default_order,  # type: ignore[arg-type]
        )


USERS = Paging(("created_at", "user_id", "email", "uuid"))
THREADS = Paging(("created_at", "updated_at", "uuid"))
# Messages and a thread's episodes read in conversation order unless asked otherwise.
MESSAGES = Paging(("created_at",), default_order_by="created_at", default_order="asc")
THREAD_EPISODES = MESSAGES
TASKS = Paging(("uuid", "created_at"))
GRAPHS = Paging(("created_at", "name", "uuid"))
EDGES = Paging(("uuid", "created_at", "valid_at"))
NODES = Paging(("uuid", "created_at", "degree"))
NEIGHBORS = Paging(("uuid", "created_at"))
EPISODES = Paging(("created_at", "uuid"))
DERIVED = Paging(("uuid", "created_at"))  # observations and thread summaries
TEMPLATES = Paging(("uuid", "created_at"))
