"""Webhooks: events posted to the URL a project configured (``graphrecall webhooks set``).

An event is an outbox row (``WebhookDelivery``) written in the same transaction as the
change it reports (an episode marked processed, a batch settled), so none is lost to a
crash and none reports a change that rolled back. A sender thread of each worker posts
due rows, signed the Standard Webhooks way that Zep's provider (Svix) uses, so Svix's
and standardwebhooks' verifiers accept them: ``webhook-id``, ``webhook-timestamp`` and
``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`` keyed by the
secret's bytes (``whsec_<base64>``), repeated as ``svix-*`` headers. A delivery that gets
no 2xx is retried after 1 s, 5 s, 30 s, 2 min, 10 min, 30 min and 1 h, then marked
failed. Delivery is at least once: receivers dedupe by ``webhook-id``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    Batch,
    Episode,
    Graph,
    Project,
    User,
    WebhookDelivery,
    WebhookEndpoint,
)
from graphrecall.domain.predicates import Column
from graphrecall.store.base import Store

log = logging.getLogger(__name__)

EPISODE_PROCESSED = "episode.processed"
BATCH_COMPLETED = "ingest.batch.completed"
EVENTS = (EPISODE_PROCESSED, BATCH_COMPLETED)
# Seconds to wait before each retry; after the last, the delivery is failed.
BACKOFF_SECONDS = (1, 5, 30, 120, 600, 1800, 3600)
MAX_ATTEMPTS = len(BACKOFF_SECONDS) + 1
# A claimed delivery is not due again for this long (a sender that died mid-post leaves
# it to the next one).
CLAIM_SECONDS = 60
TIMEOUT_SECONDS = 15.0  # Zep asks receivers to answer within 15 s
DUE_PER_ROUND = 50


# -- configuration ----------------------------------------------------------------------


def set_endpoint(
    store: Store,
    project: Project,
    url: str,
    events: list[str] | None = None,
    secret: str | None = None,
) -> WebhookEndpoint:
    """Configure (or replace) the project's endpoint; a new secret unless one is given."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadRequest(f"not an http(s) URL: {url!r}", param="url")
    chosen = list(events or EVENTS)
    unknown = [e for e in chosen if e not in EVENTS]
    if unknown:
        raise BadRequest(f"unknown events {unknown}; known: {', '.join(EVENTS)}", param="events")
    if secret is not None and not _key(secret):
        raise BadRequest("a secret is whsec_ followed by base64 (16+ bytes)", param="secret")
    stamp = clock.now()
    with store.transaction():
        current = store.get(WebhookEndpoint, project.uuid, {"project_uuid": project.uuid})
        endpoint = WebhookEndpoint(
            uuid=project.uuid,
            project_uuid=project.uuid,
            url=url,
            secret=secret or "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode(),
            events=chosen,
            created_at=current.created_at if current else stamp,
            updated_at=stamp,
        )
        if current is None:
            store.insert([endpoint])
        else:
            store.update(endpoint)
    return endpoint


def get_endpoint(store: Store, project_uuid: str) -> WebhookEndpoint | None:
    return store.get(WebhookEndpoint, project_uuid, {"project_uuid": project_uuid})


def clear_endpoint(store: Store, project: Project) -> bool:
    """Stop posting the project's events; those not yet delivered are dropped."""
    with store.transaction():
        store.delete(WebhookDelivery, {"project_uuid": project.uuid, "status": "pending"})
        return store.delete(WebhookEndpoint, {"project_uuid": project.uuid}) > 0


def subscribed(store: Store, project_uuid: str, event: str) -> bool:
    endpoint = get_endpoint(store, project_uuid)
    return endpoint is not None and event in endpoint.events


# -- events (inside the caller's transaction) -------------------------------------------


def _emit(store: Store, project_uuid: str, event: str, data: dict[str, Any]) -> None:
    stamp = clock.now()
    uuid = new_id()
    payload = {
        "event_name": event,
        "event_uuid": uuid,
        "project_uuid": project_uuid,
        **data,
        "created_at": stamp,
    }
    store.insert(
        [
            WebhookDelivery(
                uuid=uuid,
                project_uuid=project_uuid,
                event_name=event,
                payload=payload,
                next_attempt_at=stamp,
                created_at=stamp,
            )
        ]
    )


def graph_fields(store: Store, graph: Graph) -> dict[str, Any]:
    """Which graph an event is about: its uuid, and its user's (uuid and id) or its id."""
    if graph.type != "user" or graph.user_uuid is None:
        return {"graph_uuid": graph.uuid, "graph_id": graph.graph_id}
    user = store.get(User, graph.user_uuid, {"project_uuid": graph.project_uuid})
    return {
        "graph_uuid": graph.uuid,
        "user_uuid": graph.user_uuid,
        "user_id": user.user_id if user else None,
    }


def episode_hook(store: Store, graph: Graph) -> dict[str, Any] | None:
    """What an ``episode.processed`` event of ``graph`` says about it, or None when its
    project receives none (read once per ingestion run)."""
    if not subscribed(store, graph.project_uuid, EPISODE_PROCESSED):
        return None
    return {"project_uuid": graph.project_uuid, **graph_fields(store, graph)}


def episode_processed(store: Store, about: dict[str, Any], episode: Episode) -> None:
    """``about``: :func:`episode_hook` of the episode's graph."""
    _emit(
        store,
        about["project_uuid"],
        EPISODE_PROCESSED,
        {
            **{k: v for k, v in about.items() if k != "project_uuid"},
            "episode_uuid": episode.uuid,
            "thread_uuid": episode.thread_uuid,
        },
    )


def batch_completed(
    store: Store,
    batch: Batch,
    counts: dict[str, int],
    episode_uuids: Callable[[], list[str]],
) -> None:
    """``episode_uuids`` is read only when the project receives the event."""
    if not subscribed(store, batch.project_uuid, BATCH_COMPLETED):
        return
    _emit(
        store,
        batch.project_uuid,
        BATCH_COMPLETED,
        {
            "batch_id": batch.uuid,
            "batch_uuid": batch.uuid,
            "status": batch.status,
            **counts,
            "episode_uuids": episode_uuids(),
        },
    )


# -- sending ----------------------------------------------------------------------------


def _key(secret: str) -> bytes | None:
    if not secret.startswith("whsec_"):
        return None
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except ValueError:
        return None
    return key if len(key) >= 16 else None


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for a body."""
    key = _key(secret)
    assert key is not None  # checked when the endpoint was set
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def _later(seconds: float) -> str:
    return clock.to_iso(clock.now_dt() + timedelta(seconds=seconds))


def _due(store: Store) -> list[WebhookDelivery]:
    return store.find(
        WebhookDelivery,
        {"status": "pending"},
        where=Column("next_attempt_at", "lte", clock.now()),
        order_by="next_attempt_at",
        limit=DUE_PER_ROUND,
    )


def _claim_due(store: Store) -> list[WebhookDelivery]:
    """Due deliveries, each pushed CLAIM_SECONDS later so another sender leaves it. An
    idle round is one indexed read, no transaction (SQLite's write lock stays free)."""
    if not _due(store):
        return []
    with store.transaction():
        due = _due(store)
        until = _later(CLAIM_SECONDS)
        claimed = [d.model_copy(update={"next_attempt_at": until}) for d in due]
        store.update_many(claimed, ["next_attempt_at"])
    return claimed


def _post(client: httpx.Client, endpoint: WebhookEndpoint, delivery: WebhookDelivery) -> str | None:
    """None when the receiver answered 2xx, else what went wrong."""
    body = json.dumps(delivery.payload, separators=(",", ":")).encode()
    stamp = int(time.time())
    message_id = f"msg_{delivery.uuid}"
    signature = sign(endpoint.secret, message_id, stamp, body)
    headers = {"content-type": "application/json", "user-agent": "graphrecall-webhooks"}
    for prefix in ("webhook", "svix"):
        headers[f"{prefix}-id"] = message_id
        headers[f"{prefix}-timestamp"] = str(stamp)
        headers[f"{prefix}-signature"] = signature
    try:
        answer = client.post(endpoint.url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"[:500]
    if 200 <= answer.status_code < 300:
        return None
    return f"HTTP {answer.status_code}"


def send_due(store: Store, client: httpx.Client) -> int:
    """Post every due delivery once; returns how many were attempted."""
    claimed = _claim_due(store)
    endpoints: dict[str, WebhookEndpoint | None] = {}
    for delivery in claimed:
        project = delivery.project_uuid
        if project not in endpoints:
            endpoints[project] = get_endpoint(store, project)
        endpoint = endpoints[project]
        attempts = delivery.attempts + 1
        error = "no webhook endpoint configured" if endpoint is None else None
        if endpoint is not None:
            error = _post(client, endpoint, delivery)
        if error is None:
            update: dict[str, Any] = {"status": "delivered", "delivered_at": clock.now()}
        elif endpoint is None or attempts >= MAX_ATTEMPTS:
            update = {"status": "failed"}
            log.warning("webhook %s failed for good: %s", delivery.uuid, error)
        else:
            update = {"next_attempt_at": _later(BACKOFF_SECONDS[attempts - 1])}
        done = delivery.model_copy(update={**update, "attempts": attempts, "last_error": error})
        store.update(done)
    return len(claimed)


def sender_loop(store: Store, stop: Any, poll_seconds: float = 1.0) -> None:
    """Post due deliveries until ``stop`` (a threading.Event) is set."""
    with httpx.Client(timeout=TIMEOUT_SECONDS, follow_redirects=False) as client:
        while not stop.is_set():
            try:
                busy = send_due(store, client) > 0
            except Exception:
                log.exception("could not send webhooks")
                busy = False
            if not busy:
                stop.wait(poll_seconds)
