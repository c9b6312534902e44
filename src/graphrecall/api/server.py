"""How ``graphrecall serve`` runs uvicorn so that slow clients cannot hold the server:
a deadline for a request's headers, one for its body (api/middleware.py), an idle
deadline between requests, and a cap on connections.

uvicorn has the idle (keep-alive) deadline and the cap (``limit_concurrency``: a 503
beyond it) but no deadline for headers: its keep-alive timer restarts on every byte, and
a connection that never sends a byte has none, so 600 half-sent requests stayed open
indefinitely. :func:`protocol_class` adds that deadline to uvicorn's httptools protocol.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from graphrecall.config import Settings


def _timeout_response(seconds: float) -> bytes:
    body = json.dumps(
        {
            "error": {
                "code": "request_timeout",
                "message": f"the request headers were not received within {seconds:g} s",
            }
        }
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def protocol_class(header_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol, closing a connection (after a 408) whose request
    headers are not complete ``header_timeout`` seconds after it opened or after the
    request's first byte."""
    response = _timeout_response(header_timeout)

    class HeaderDeadlineProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._header_timer is None:
                self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._header_timer = self.loop.call_later(header_timeout, self._expire)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expire(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.write(response)
                self.transport.close()

    return HeaderDeadlineProtocol


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.run`` that bound slow and numerous clients."""
    return {
        "http": protocol_class(settings.http_header_timeout),
        "timeout_keep_alive": settings.http_keep_alive_timeout,
        "limit_concurrency": settings.http_max_connections,
    }


# How long a thread that wants the interpreter lock waits before the holder must hand it
# over (Python's default: 5 ms). A cheap request takes and gives back the lock a dozen
# times or more (each SQLite call, each hop between the event loop and a worker thread);
# while another tenant's search keeps the lock busy it waited up to the whole interval at
# each, ~100 ms a request at 5 ms (bench isolation, docs/security.md).
SWITCH_INTERVAL_S = 0.0005


def share_interpreter() -> None:
    """Make the interpreter lock change hands within SWITCH_INTERVAL_S (``serve``)."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def freeze_startup_heap() -> None:
    """Put what ``serve`` loaded before serving (models, parsers, caches) out of the
    cyclic collector's reach: it lives as long as the process, and a full collection
    walked all of it holding the interpreter lock, 130-340 ms at a time on the loaded
    2-core machine, set off every few seconds by a busy tenant's requests (bench
    isolation, docs/security.md). A full collection now walks only newer objects."""
    gc.freeze()
