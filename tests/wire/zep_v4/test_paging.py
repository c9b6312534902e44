"""The paging rules both faces read: the HTTP face through its query dependency, the
library through its arguments; a list's rules give the same page request either way."""

from __future__ import annotations

import pytest

from graphrecall.domain.errors import BadRequest
from graphrecall.wire.zep_v4 import paging as pages


def test_a_request_takes_the_lists_defaults() -> None:
    request = pages.MESSAGES.request(5, "", None, None)
    assert (request.page_size, request.cursor) == (5, None)
    assert (request.order_by, request.order) == ("created_at", "asc")
    asked = pages.USERS.request(3, "abc", "email", "asc")
    assert (asked.cursor, asked.order_by, asked.order) == ("abc", "email", "asc")


def test_an_order_by_the_list_does_not_take_is_refused_naming_it() -> None:
    with pytest.raises(BadRequest) as info:
        pages.EDGES.request(5, None, "name", None)
    assert info.value.param == "order_by"
    assert "uuid, created_at, valid_at" in info.value.message
