"""ASGI middleware: request ids, one log line per request, and the body size cap."""

from __future__ import annotations

import json
import logging
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphrecall.domain import limits

log = logging.getLogger("graphrecall.access")


class RequestContext:
    """Assigns a request id (echoed as ``X-Request-Id``), caps the body size at
    ``limits.MAX_BODY_BYTES`` (413 before the app sees it) and logs each request."""

    def __init__(self, app: ASGIApp, max_body: int = limits.MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body = max_body

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

        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await self._too_large(send_with_id, request_id)
        elif declared is not None:
            await self.app(scope, receive, send_with_id)
        else:
            # No declared length (chunked): buffer up to the cap, then replay.
            body, more, too_large = b"", True, False
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    break
                body += message.get("body", b"")
                more = message.get("more_body", False)
                if len(body) > self.max_body:
                    too_large = True
                    break
            if too_large:
                await self._too_large(send_with_id, request_id)
            else:
                replayed = False

                async def replay() -> Message:
                    nonlocal replayed
                    if not replayed:
                        replayed = True
                        return {"type": "http.request", "body": body, "more_body": False}
                    return await receive()

                await self.app(scope, replay, send_with_id)
        log.info(
            "%s %s %d %.1fms",
            scope["method"],
            scope["path"],
            status_holder["status"],
            (time.perf_counter() - started) * 1000,
        )

    async def _too_large(self, send: Send, request_id: str) -> None:
        body = json.dumps(
            {
                "error": {
                    "code": "payload_too_large",
                    "message": f"request body exceeds {self.max_body} bytes",
                    "param": "body",
                    "request_id": request_id,
                }
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
