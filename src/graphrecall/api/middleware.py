"""ASGI middleware: request ids, one log line per request, the body size cap and read
deadline, the JSON input check, and the last-resort 500.

Every body is read here, whole, before the app sees it: that is where the size cap
(413), the read deadline for a client that stops sending (408) and
:func:`graphrecall.domain.validation.loads` (400 naming the field) apply, once for every
route. The Memory Engine RPC and ``/mcp`` speak JSON-RPC and run the same check
themselves, to answer in their own error shape.
"""

from __future__ import annotations

import email.message
import json
import logging
import time
import uuid
from typing import Any
from urllib.parse import parse_qsl

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphrecall.domain import limits, validation
from graphrecall.domain.errors import BadRequest

log = logging.getLogger("graphrecall.access")
errors_log = logging.getLogger("graphrecall.api")

# Paths that parse and check their own bodies (JSON-RPC error shapes).
_OWN_BODY_CHECK = ("/api/v1/memory/rpc", "/api/v1/user/rpc", "/mcp")
BODY_TIMEOUT_S = 30.0


class _BodyTimeout(Exception):
    pass


class RequestContext:
    """Assigns a request id (echoed as ``X-Request-Id``), caps the body size at
    ``limits.MAX_BODY_BYTES`` (413 before the app sees it), gives the client
    ``body_timeout`` seconds to send the whole body (408), rejects a JSON body that
    :mod:`graphrecall.domain.validation` refuses (400), answers an unhandled error with
    one logged traceback and a 500 that keeps the connection, and logs each request."""

    def __init__(
        self,
        app: ASGIApp,
        max_body: int = limits.MAX_BODY_BYTES,
        body_timeout: float = BODY_TIMEOUT_S,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status_holder = {"status": 0}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self._handle(scope, receive, send_with_id, request_id)
        except Exception:
            # Logged once here, and answered: re-raising (as Starlette's error middleware
            # does) would log it a second time and make the server drop the connection.
            errors_log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            if not status_holder["status"]:
                await _reject(
                    send_with_id, 500, "internal_error", "internal server error", None, request_id
                )
        log.info(
            "%s %s %d %.1fms",
            scope["method"],
            scope["path"],
            status_holder["status"],
            (time.perf_counter() - started) * 1000,
        )

    async def _handle(self, scope: Scope, receive: Receive, send: Send, request_id: str) -> None:
        try:
            _check_target(scope)
            kind = _content_type(scope)
        except BadRequest as exc:
            await _reject(send, 400, exc.code, exc.message, exc.param, request_id)
            return
        headers = dict(scope.get("headers", []))
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            message = f"request body exceeds {self.max_body} bytes"
            await _reject(send, 413, "payload_too_large", message, "body", request_id)
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS") and declared is None:
            await self.app(scope, receive, send)
            return
        try:
            body, complete = await self._read_body(receive)
        except _BodyTimeout:
            message = f"the request body was not received within {self.body_timeout:g} s"
            await _reject(send, 408, "request_timeout", message, "body", request_id)
            return
        if not complete:
            message = f"request body exceeds {self.max_body} bytes"
            await _reject(send, 413, "payload_too_large", message, "body", request_id)
            return
        if body and _is_json(kind) and not scope["path"].startswith(_OWN_BODY_CHECK):
            try:
                validation.loads(body)
            except BadRequest as exc:
                await _reject(send, 400, exc.code, exc.message, exc.param, request_id)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Receive) -> tuple[bytes, bool]:
        """(body, whether it fitted the cap); the whole body within ``body_timeout``."""
        chunks: list[bytes] = []
        size, more = 0, True
        with anyio.move_on_after(self.body_timeout) as scope:
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    break
                chunk = message.get("body", b"")
                chunks.append(chunk)
                size += len(chunk)
                more = message.get("more_body", False)
                if size > self.max_body:
                    return b"", False
        if scope.cancelled_caught:
            raise _BodyTimeout
        return b"".join(chunks), True


def _check_target(scope: Scope) -> None:
    """A path or query parameter holding a NUL is refused, as a body's is (the same
    rule: validation.check_text); percent-decoding never yields a lone surrogate."""
    validation.check_text(scope["path"], param="path")
    query = scope.get("query_string", b"")
    if b"%00" in query or b"\x00" in query:
        for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
            validation.check_text(value, param=validation.printable(name))


def _content_type(scope: Scope) -> str | None:
    """The request's one ``Content-Type``. Two are refused: a JSON check that read one of
    them while the app read the other would let an unchecked body through (FastAPI reads
    the first, a ``dict`` of the headers the last)."""
    found = [v for k, v in scope.get("headers", []) if k == b"content-type"]
    if len(found) > 1:
        raise BadRequest("a request may carry one Content-Type header", param="Content-Type")
    return found[0].decode("latin-1") if found else None


def _is_json(kind: str | None) -> bool:
    """Whether FastAPI may read the body as JSON: ``application/json`` or
    ``application/*+json``, parsed as FastAPI parses it (0.165, fastapi/routing.py: an
    ``email.message.Message``'s main type and subtype); also no (or an empty) content
    type, which FastAPI reads as JSON unless a route is strict about it."""
    if not kind:
        return True
    message = email.message.Message()
    message["content-type"] = kind
    if message.get_content_maintype() != "application":
        return False
    subtype = message.get_content_subtype()
    return subtype == "json" or subtype.endswith("+json")


async def _reject(
    send: Send, status: int, code: str, message: str, param: str | None, request_id: str
) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if param is not None:
        error["param"] = param
    error["request_id"] = request_id
    body = json.dumps({"error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status in (408, 413):
        # The rest of the body is not read, so the connection cannot carry another request.
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
