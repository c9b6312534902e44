"""The library's one pager: every list and search reads its pages through it."""

from __future__ import annotations

import pytest

from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Page, PageRequest
from graphrecall.library.calls import ListArgs, listing, pages
from graphrecall.wire.zep_v4 import paging as rules


def test_pages_read_each_next_page_with_the_cursor_it_was_given() -> None:
    book = {None: ([1, 2], "b"), "b": ([3], "c"), "c": ([], None)}
    asked: list[str | None] = []

    def read(cursor: str | None) -> tuple[list[int], str | None, int | None]:
        asked.append(cursor)
        items, following = book[cursor]
        return items, following, 3

    first = pages(read, None)
    assert (first.items, first.next_cursor, first.total_size) == ([1, 2], "b", 3)
    assert list(first) == [1, 2, 3]  # an empty page ends the iteration
    assert asked == [None, "b", "c"]


def test_a_listing_checks_its_arguments_before_any_read() -> None:
    requests: list[PageRequest] = []

    def read(request: PageRequest) -> tuple[Page[int], list[int]]:
        requests.append(request)
        return Page(items=[7], next_cursor=None, total_size=1), [7]

    found = listing(rules.THREADS, read, {"page_size": 2, "order": "asc"})
    assert found.items == [7] and found.next_page() is None
    assert (requests[0].page_size, requests[0].order_by, requests[0].order) == (
        2,
        "uuid",
        "asc",
    )
    refused: list[tuple[ListArgs, str]] = [
        ({"page_size": 0}, "page_size"),
        ({"order_by": "name"}, "order_by"),
        ({"order": "up"}, "order"),
    ]
    for bad, param in refused:
        with pytest.raises(BadRequest) as info:
            listing(rules.THREADS, read, bad)
        assert info.value.param == param
    assert len(requests) == 1
