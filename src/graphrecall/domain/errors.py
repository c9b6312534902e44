"""Errors raised below the API layer; the API maps each to one HTTP status.

Every error that a caller can cause names the offending field in ``param`` so the
client can tell what to fix.
"""

from __future__ import annotations

from typing import Any


class GraphRecallError(Exception):
    """Base class: ``code`` is the machine-readable error code on the wire."""

    status = 500
    code = "internal_error"

    def __init__(
        self, message: str, *, param: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.details = details


class BadRequest(GraphRecallError):
    status = 400
    code = "bad_request"


class UnsupportedFilter(BadRequest):
    code = "unsupported_filter"


class Unauthorized(GraphRecallError):
    status = 401
    code = "unauthorized"


class Forbidden(GraphRecallError):
    status = 403
    code = "permission_denied"


class NotFound(GraphRecallError):
    status = 404
    code = "not_found"

    def __init__(self, resource: str, ident: str, *, param: str | None = None) -> None:
        super().__init__(f"{resource} not found: {ident}", param=param)
        self.resource = resource


class Conflict(GraphRecallError):
    status = 409
    code = "conflict"


class PayloadTooLarge(GraphRecallError):
    status = 413
    code = "payload_too_large"


class NotImplementedYet(BadRequest):
    """An option graphrecall does not build. 400, not 501: the zep-cloud SDK retries
    every 5xx with back-off before the caller sees the message."""

    code = "not_implemented"


class TooManyRequests(GraphRecallError):
    """Too many of the caller's requests at once; ``retry_after_s`` goes out as the
    ``Retry-After`` header, which the zep-cloud SDK waits before retrying."""

    status = 429
    code = "too_many_requests"
    retry_after_s = 1
