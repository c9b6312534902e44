"""What one request may make the server compute (issue 47, item 7): a query of more
distinct words than ``MAX_QUERY_TERMS`` is a 400 naming it; one at the cap is answered.
Templates' slot and item caps are in test_context.py, memory.search's in the Memory
Engine tests; ``graphrecall bench stall`` measures what the caps buy."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from graphrecall.domain import limits
from tests.inprocess import InProcess


@pytest.fixture(scope="module")
def http(server: InProcess) -> Iterator[httpx.Client]:
    with server.http("/api/v4", headers={"Authorization": f"Api-Key {server.api_key}"}) as client:
        yield client


@pytest.fixture(scope="module")
def graph(http: httpx.Client) -> str:
    return str(http.post("/graphs", json={"name": "cost caps"}).json()["uuid"])


def words(count: int) -> str:
    # Each word said twice: distinct words are counted, not words.
    return " ".join(f"word{i % count}" for i in range(2 * count))


@pytest.mark.parametrize("path", ["/search/edges", "/search/episodes", "/context"])
def test_a_query_of_too_many_distinct_words_is_a_400(
    http: httpx.Client, graph: str, path: str
) -> None:
    over = http.post(f"/graphs/{graph}{path}", json={"query": words(limits.MAX_QUERY_TERMS + 1)})
    assert over.status_code == 400, over.text[:300]
    error = over.json()["error"]
    assert error["param"] == "query" and "distinct words" in error["message"]
    at_cap = http.post(f"/graphs/{graph}{path}", json={"query": words(limits.MAX_QUERY_TERMS)})
    assert at_cap.status_code == 200, at_cap.text[:300]
