"""The request middleware on its own: an unhandled error is answered once (one logged
traceback, a JSON 500 the client can read, the connection kept), a body that stops
arriving is a 408, an oversized one a 413."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from graphrecall.api.middleware import RequestContext


async def broken(scope: Scope, receive: Receive, send: Send) -> None:
    raise RuntimeError("boom")


async def echo(scope: Scope, receive: Receive, send: Send) -> None:
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def run(app: Any, method: str = "GET", body: bytes | None = None) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.request(method, "/x", content=body)

    return asyncio.run(go())


def test_an_unhandled_error_is_one_500_and_one_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        response = run(RequestContext(broken))
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal_error"
    assert "connection" not in response.headers  # kept alive
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1


def test_bodies_are_checked_capped_and_replayed() -> None:
    app = RequestContext(echo, max_body=100)
    assert run(app, "POST", b'{"a": [1, 2]}').content == b'{"a": [1, 2]}'
    too_big = run(app, "POST", b"[" + b"1," * 60 + b"1]")
    assert too_big.status_code == 413
    bad = run(app, "POST", b'{"a": 99999999999999999999}')
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "a"


def test_a_body_that_stops_arriving_is_a_408() -> None:
    sent: list[Message] = []

    async def stalled() -> Message:
        await asyncio.sleep(10)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/x", "headers": []}
    asyncio.run(RequestContext(echo, body_timeout=0.2)(scope, stalled, send))
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]
