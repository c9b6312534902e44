"""Identifiers: UUIDv7 everywhere (time-ordered, so ``uuid desc`` lists newest first,
and Memory Engine clients require v7), validated on the way in."""

from __future__ import annotations

import os
import threading
import time
import uuid

from graphrecall.domain.errors import BadRequest

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def new_id() -> str:
    """A RFC 9562 UUIDv7: 48-bit Unix ms, then a 12-bit counter that keeps ids made
    in the same millisecond in creation order, then 62 random bits."""
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            _counter += 1
            if _counter > 0xFFF:
                _last_ms += 1
                _counter = 0
            ms = _last_ms
        else:
            _last_ms = ms
            _counter = int.from_bytes(os.urandom(2), "big") & 0x3FF
        counter = _counter
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | rand
    return str(uuid.UUID(int=value))


def check_uuid(value: str, *, param: str) -> str:
    """Return the canonical form of ``value`` or raise a 400 naming ``param``."""
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        raise BadRequest(f"{param} is not a valid UUID: {value!r}", param=param) from None
