"""Keyset pagination cursors: the last row's sort key and uuid, so a listing returns every
record exactly once across pages even while rows are added (any backend)."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import PageRequest


def encode(page: PageRequest, key: Any, uuid: str) -> str:
    raw = json.dumps([page.order_by, page.order, key, uuid], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(cursor: str, page: PageRequest) -> tuple[Any, str]:
    """The (sort key, uuid) a cursor of ``page``'s ordering carries; a 400 naming
    ``cursor`` for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        order_by, order, key, uuid = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError, binascii.Error):
        raise BadRequest("cursor is not a cursor this server issued", param="cursor") from None
    if order_by != page.order_by or order != page.order or not isinstance(uuid, str):
        raise BadRequest("cursor was issued for a different ordering", param="cursor")
    return key, uuid
