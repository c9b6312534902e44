"""Stable pagination for ranked results.

The full ranked list is computed once and stored (1 hour) under a random token; the cursor
names the token and the next offset and is signed with the database's secret, so a
tampered cursor is rejected, as is an expired one, one from another project or one used
with a different request.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from weakref import WeakKeyDictionary

from graphrecall.domain.errors import BadRequest
from graphrecall.retrieval.engine import Hit
from graphrecall.store.base import Store

TTL_SECONDS = 3600


def fingerprint(*parts: object) -> str:
    raw = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


_SECRETS: WeakKeyDictionary[Store, bytes] = WeakKeyDictionary()


def _secret(store: Store) -> bytes:
    """The database's signing secret, read once per store (reading it is a write-capable
    transaction, which every search would otherwise pay)."""
    secret = _SECRETS.get(store)
    if secret is None:
        secret = store.setting("cursor_secret", secrets.token_hex(32)).encode()
        _SECRETS[store] = secret
    return secret


def _sign(store: Store, token: str, offset: int) -> str:
    mac = hmac.new(_secret(store), f"{token}.{offset}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:12]).decode().rstrip("=")


def first_page(
    store: Store, project_uuid: str, fp: str, hits: Sequence[Hit], page_size: int
) -> tuple[list[Hit], str | None]:
    page = list(hits[:page_size])
    if len(hits) <= page_size:
        return page, None
    token = secrets.token_urlsafe(18)
    results = json.dumps([[h.uuid, h.score, h.relevance] for h in hits], separators=(",", ":"))
    store.save_cursor(token, project_uuid, fp, results, TTL_SECONDS)
    return page, f"{token}.{page_size}.{_sign(store, token, page_size)}"


def next_page(
    store: Store, project_uuid: str, fp: str, cursor: str, page_size: int
) -> tuple[list[Hit], str | None]:
    try:
        token, offset_text, signature = cursor.split(".")
        offset = int(offset_text)
    except ValueError:
        raise BadRequest("cursor is not a cursor this server issued", param="cursor") from None
    if offset < 0 or not hmac.compare_digest(signature, _sign(store, token, offset)):
        raise BadRequest("cursor is not a cursor this server issued", param="cursor")
    saved = store.load_cursor(token)
    if saved is None:
        raise BadRequest("cursor has expired; run the search again", param="cursor")
    owner, saved_fp, results = saved
    if owner != project_uuid or saved_fp != fp:
        raise BadRequest("cursor was issued for a different search", param="cursor")
    hits = [Hit(u, s, r) for u, s, r in json.loads(results)]
    end = offset + page_size
    next_cursor = f"{token}.{end}.{_sign(store, token, end)}" if end < len(hits) else None
    return hits[offset:end], next_cursor
