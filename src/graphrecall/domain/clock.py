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


def to_iso(dt: datetime, *, param: str = "timestamp") -> str:
    """The stored form. The year is always four digits (``strftime("%Y")`` writes year 5
    as ``5``, which is not RFC 3339 and sorts after 2020); a time that leaves years
    1-9999 when moved to UTC is a :class:`BadRequest` naming ``param``."""
    utc = _as_utc(dt, param=param)
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}"
        f":{utc.second:02d}.{utc.microsecond:06d}Z"
    )


def _as_utc(dt: datetime, *, param: str) -> datetime:
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except OverflowError:
        raise BadRequest(
            f"{param}: {dt.isoformat()} is outside 0001-01-01..9999-12-31 in UTC", param=param
        ) from None


def parse_iso(value: str, *, param: str) -> datetime:
    """Parse an RFC 3339 timestamp; naive values are taken as UTC. The result is in UTC,
    so it can always be formatted and stored."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"{param} is not an RFC 3339 timestamp: {value!r}", param=param) from None
    return _as_utc(dt, param=param)


def normalize(value: str | None, *, param: str) -> str | None:
    """Validate an incoming timestamp and return its canonical stored form."""
    if value is None:
        return None
    return to_iso(parse_iso(value, param=param), param=param)
