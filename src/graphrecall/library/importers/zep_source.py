"""A Zep v4 server read over HTTP (plain httpx: the zep-cloud SDK is an extra, and an
import needs only lists): Zep Cloud (``https://api.getzep.com/api/v4``) or any server
that speaks its API, graphrecall included.

Every list is read to its end by following ``next_cursor`` (the SDK's own rule: stop at
no cursor, or at an empty page). Rate limits and server errors are retried with
backoff, honouring ``Retry-After``; anything else that goes wrong is one
:class:`ImportProblem` naming it (an unreachable URL, a refused key, a URL that is not a
v4 API).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx

from graphrecall.domain import limits
from graphrecall.library.importers.once import ImportProblem

API_KEY_ENV = "ZEP_API_KEY"  # the variable the zep-cloud SDK reads too
RETRIED = (408, 409, 429, 500, 502, 503, 504)
TRIES = 5


class ZepSource:
    """The lists of one Zep v4 project, by ``url`` (the API base, ``…/api/v4``) and key."""

    def __init__(
        self,
        url: str,
        api_key: str,
        *,
        timeout: float = 60.0,
        page_size: int = limits.LIST_PAGE_SIZE_MAX,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.page_size = page_size
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Api-Key {api_key}"},
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ZepSource:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- what an import reads ------------------------------------------------------------

    def users(self) -> Iterator[dict[str, Any]]:
        return self.pages("POST", "/users/list", order_by="created_at", order="asc")

    def graphs(self) -> Iterator[dict[str, Any]]:
        """The standalone graphs (a user's graph is read through its user)."""
        for graph in self.pages("POST", "/graphs/list", order_by="created_at", order="asc"):
            if graph.get("type") != "user" and not graph.get("user_uuid"):
                yield graph

    def threads(self, user_uuid: str) -> Iterator[dict[str, Any]]:
        return self.pages(
            "GET", "/threads", user_uuid=user_uuid, order_by="created_at", order="asc"
        )

    def messages(self, thread_uuid: str) -> Iterator[dict[str, Any]]:
        return self.pages(
            "GET", f"/threads/{thread_uuid}/messages", order_by="created_at", order="asc"
        )

    def episodes(self, graph_uuid: str) -> Iterator[dict[str, Any]]:
        return self.pages(
            "POST", f"/graphs/{graph_uuid}/episodes/list", order_by="created_at", order="asc"
        )

    def nodes(self, graph_uuid: str) -> Iterator[dict[str, Any]]:
        return self.pages("POST", f"/graphs/{graph_uuid}/nodes/list")

    def edges(self, graph_uuid: str) -> Iterator[dict[str, Any]]:
        return self.pages("POST", f"/graphs/{graph_uuid}/edges/list")

    # -- the wire ------------------------------------------------------------------------

    def pages(self, method: str, path: str, **query: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list; a POST list gets the body ``{}``."""
        cursor: str | None = None
        while True:
            params = {"page_size": self.page_size, **query}
            if cursor:
                params["cursor"] = cursor
            page = self.call(method, path, params=params, json={} if method == "POST" else None)
            items = page.get("items") if isinstance(page, dict) else None
            if not isinstance(items, list):
                raise ImportProblem(f"{self.url}{path} answered no 'items' list: not Zep v4")
            yield from (i for i in items if isinstance(i, dict))
            cursor = page.get("next_cursor")
            if not cursor or not items:
                return

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        where = f"{self.url}{path}"
        for attempt in range(TRIES):
            try:
                answer = self._http.request(method, path, **kwargs)
            except httpx.HTTPError as exc:
                if attempt + 1 < TRIES and isinstance(exc, httpx.TimeoutException):
                    time.sleep(2**attempt)
                    continue
                raise ImportProblem(f"cannot reach the Zep server at {self.url}: {exc}") from None
            if answer.status_code in RETRIED and attempt + 1 < TRIES:
                time.sleep(_wait(answer, attempt))
                continue
            break
        if answer.status_code in (401, 403):
            raise ImportProblem(
                f"the Zep server at {self.url} refused the API key (HTTP {answer.status_code})"
            )
        if answer.status_code == 404 and path in ("/users/list", "/graphs/list"):
            raise ImportProblem(
                f"{where} is not found: give the Zep v4 API base URL, such as"
                " https://api.getzep.com/api/v4 or http://localhost:8000/api/v4"
            )
        if answer.status_code >= 400:
            raise ImportProblem(
                f"{method} {where}: HTTP {answer.status_code} {_message(answer)}".rstrip()
            )
        try:
            return answer.json()
        except ValueError:
            raise ImportProblem(f"{where} answered something other than JSON") from None


def _wait(answer: httpx.Response, attempt: int) -> float:
    """Seconds before the next try: the server's ``Retry-After`` (capped), else 1, 2, 4…"""
    try:
        return min(float(answer.headers.get("retry-after", "")), 60.0)
    except ValueError:
        return float(2**attempt)


def _message(answer: httpx.Response) -> str:
    try:
        error = answer.json().get("error") or {}
        return str(error.get("message") or "")[:300]
    except (ValueError, AttributeError):
        return answer.text[:300]
