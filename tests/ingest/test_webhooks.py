"""The webhook sender against a local HTTP server: signatures, the backoff schedule, the
last attempt, a claimed delivery left alone, endpoints checked when set."""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import Project, WebhookDelivery
from graphrecall.ingest import webhooks
from graphrecall.services.accounts import projects
from graphrecall.store import Store


class Answers:
    def __init__(self) -> None:
        self.status = 503
        self.bodies: list[bytes] = []


@pytest.fixture()
def answers() -> Iterator[tuple[Answers, str]]:
    state = Answers()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            state.bodies.append(self.rfile.read(int(self.headers["content-length"])))
            self.send_response(state.status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}/in"
    server.shutdown()
    server.server_close()


def _project(store: Store) -> Project:
    return projects.get_or_create_project(store, "hooks")


def _make_due(store: Store) -> None:
    """Skip the wait: every pending delivery is due now."""
    for d in store.find(WebhookDelivery, {"status": "pending"}):
        earlier = clock.to_iso(clock.now_dt() - timedelta(seconds=1))
        store.update(d.model_copy(update={"next_attempt_at": earlier}))


def test_the_signature_is_the_standard_webhooks_one() -> None:
    secret = "whsec_" + base64.b64encode(b"k" * 24).decode()
    signature = webhooks.sign(secret, "msg_1", 1700000000, b'{"a":1}')
    expected = hmac.new(b"k" * 24, b'msg_1.1700000000.{"a":1}', hashlib.sha256).digest()
    assert signature == "v1," + base64.b64encode(expected).decode()


def test_retries_back_off_then_fail(store: Store, answers: tuple[Answers, str]) -> None:
    state, url = answers
    project = _project(store)
    webhooks.set_endpoint(store, project, url, ["ingest.batch.completed"])
    with store.transaction():
        webhooks._emit(store, project.uuid, "ingest.batch.completed", {"batch_id": "b"})
    with httpx.Client(timeout=5) as client:
        for attempt in range(1, webhooks.MAX_ATTEMPTS + 1):
            before = clock.now_dt()
            assert webhooks.send_due(store, client) == 1
            after = clock.now_dt()
            assert webhooks.send_due(store, client) == 0  # not due again yet
            [row] = store.find(WebhookDelivery, {"project_uuid": project.uuid})
            assert row.attempts == attempt and row.last_error == "HTTP 503"
            if attempt < webhooks.MAX_ATTEMPTS:
                assert row.status == "pending"
                # The backoff counts from the failed send, somewhere between
                # `before` and `after` on a slow machine (CI once took > 0.5 s).
                due = clock.parse_iso(row.next_attempt_at, param="t")
                wait = webhooks.BACKOFF_SECONDS[attempt - 1]
                slack = timedelta(milliseconds=1)
                assert before + timedelta(seconds=wait) - slack <= due
                assert due <= after + timedelta(seconds=wait) + slack
                _make_due(store)
        assert row.status == "failed"
        assert len(state.bodies) == webhooks.MAX_ATTEMPTS


def test_a_delivered_event_is_not_sent_again(store: Store, answers: tuple[Answers, str]) -> None:
    state, url = answers
    state.status = 204
    project = _project(store)
    webhooks.set_endpoint(store, project, url)
    with store.transaction():
        webhooks._emit(store, project.uuid, "episode.processed", {"episode_uuid": "e"})
    with httpx.Client(timeout=5) as client:
        assert webhooks.send_due(store, client) == 1
        _make_due(store)
        assert webhooks.send_due(store, client) == 0
    [row] = store.find(WebhookDelivery, {"project_uuid": project.uuid})
    assert row.status == "delivered" and row.delivered_at and row.attempts == 1
    assert len(state.bodies) == 1


def test_without_an_endpoint_a_delivery_fails(store: Store) -> None:
    project = _project(store)
    with store.transaction():
        webhooks._emit(store, project.uuid, "episode.processed", {"episode_uuid": "e"})
    with httpx.Client(timeout=5) as client:
        assert webhooks.send_due(store, client) == 1
    [row] = store.find(WebhookDelivery, {"project_uuid": project.uuid})
    assert row.status == "failed" and row.last_error == "no webhook endpoint configured"


def test_endpoints_are_checked(store: Store) -> None:
    project = _project(store)
    with pytest.raises(BadRequest) as info:
        webhooks.set_endpoint(store, project, "file:///etc/passwd")
    assert info.value.param == "url"
    with pytest.raises(BadRequest) as info:
        webhooks.set_endpoint(store, project, "https://x.test/h", ["nope"])
    assert info.value.param == "events"
    with pytest.raises(BadRequest) as info:
        webhooks.set_endpoint(store, project, "https://x.test/h", secret="plain")
    assert info.value.param == "secret"
    first = webhooks.set_endpoint(store, project, "https://x.test/h")
    again = webhooks.set_endpoint(store, project, "https://x.test/other", secret=first.secret)
    assert again.secret == first.secret and again.created_at == first.created_at
    assert webhooks.get_endpoint(store, project.uuid) == again
    assert webhooks.clear_endpoint(store, project)
    assert webhooks.get_endpoint(store, project.uuid) is None
