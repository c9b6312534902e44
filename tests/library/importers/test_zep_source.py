"""The Zep v4 reader's wire rules where a real server will not misbehave on cue: a rate
limit retried after its Retry-After, a cursor followed until a page comes back empty, and
answers that are not Zep v4 named as such. The reader against a real server is
test_zep.py."""

from __future__ import annotations

import httpx
import pytest

from graphrecall.library.importers import ImportProblem
from graphrecall.library.importers.zep_source import ZepSource


def reader(answers: list[httpx.Response], seen: list[httpx.Request]) -> ZepSource:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    return ZepSource("http://zep.test/api/v4/", "k", transport=httpx.MockTransport(answer))


def test_rate_limits_are_waited_out_and_cursors_followed() -> None:
    seen: list[httpx.Request] = []
    source = reader(
        [
            httpx.Response(429, headers={"Retry-After": "0"}, json={"error": {"code": "x"}}),
            httpx.Response(200, json={"items": [{"uuid": "u1"}], "next_cursor": "c2"}),
            httpx.Response(200, json={"items": [{"uuid": "u2"}], "next_cursor": "c3"}),
            httpx.Response(200, json={"items": [], "next_cursor": "c4"}),  # stops here
        ],
        seen,
    )
    assert [u["uuid"] for u in source.users()] == ["u1", "u2"]
    assert len(seen) == 4
    assert seen[0].headers["Authorization"] == "Api-Key k"
    assert seen[0].url.path == "/api/v4/users/list" and seen[0].content == b"{}"
    assert seen[2].url.params["cursor"] == "c2" and seen[3].url.params["cursor"] == "c3"
    assert seen[2].url.params["page_size"] == "100"


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (httpx.Response(200, text="<html>hello</html>"), "other than JSON"),
        (httpx.Response(200, json={"users": []}), "no 'items' list"),
        (httpx.Response(400, json={"error": {"message": "bad cursor"}}), "HTTP 400 bad cursor"),
    ],
)
def test_answers_that_are_not_zep_v4(answer: httpx.Response, problem: str) -> None:
    with pytest.raises(ImportProblem, match=problem):
        list(reader([answer], []).users())
