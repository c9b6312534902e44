"""Time helpers: every timestamp is stored and sent as RFC 3339 UTC with a ``Z``.

The fixed-width form (microseconds always present) sorts lexicographically in time
order, which the store relies on for ordering and keyset pagination. ``now()`` is
strictly increasing within a process, so records created in one call keep their order.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from graphrecall.domain.errors import BadRequest

_lock = threading.Lock()
_last = datetime.min.replace(tzinfo=UTC)


def now_dt() -> datetime:
    global _last
    with _lock:
        current = datetime.now(UTC)
        if current <= _last:
            current = _last + timedelta(microseconds=1)
        _last = current
        return current


def now() -> str:
    return to_iso(now_dt())


def to_iso(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(value: str, *, param: str) -> datetime:
    """Parse an RFC 3339 timestamp; naive values are taken as UTC."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"{param} is not an RFC 3339 timestamp: {value!r}", param=param) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt


def normalize(value: str | None, *, param: str) -> str | None:
    """Validate an incoming timestamp and return its canonical stored form."""
    if value is None:
        return None
    return to_iso(parse_iso(value, param=param))
