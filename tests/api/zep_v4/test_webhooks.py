"""Webhooks end to end: a project's endpoint set with ``graphrecall webhooks set``, a
local HTTP server receiving ``episode.processed`` and ``ingest.batch.completed`` for work
sent through the SDK, signed (HMAC-SHA256, Standard Webhooks headers), retried after a
failed attempt; another project's events are not posted there."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from zep_cloud import BatchItemInput, Zep

from tests.conftest import wait_for_task
from tests.inprocess import InProcess


@dataclass
class Receiver:
    """Records every POST; answers 500 to the first ``fail_first`` of them."""

    fail_first: int = 1
    calls: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def accepted(self) -> list[tuple[dict[str, str], dict[str, Any]]]:
        with self.lock:
            return [(h, json.loads(b)) for status, h, b in self.calls if status == 200]

    def wait_for(self, check: Any, timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [p for _, p in self.accepted() if check(p)]
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError(f"no matching webhook in {timeout} s: {self.accepted()}")


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            with state.lock:
                status = 500 if len(state.calls) < state.fail_first else 200
                state.calls.append((status, {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/zep"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def _cli(server: InProcess, *args: str) -> str:
    return server.cli(*args)


def _verify(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """What a receiver does (the Standard Webhooks scheme Svix's libraries check)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(sig.removeprefix("v1,"), expected)
        for sig in headers["webhook-signature"].split()
    )


def test_events_are_posted_signed_and_retried(
    server: InProcess, zep: Zep, receiver: Receiver
) -> None:
    project = f"hooks-{time.monotonic_ns()}"
    secret = _cli(server, "webhooks", "set", receiver.url, "--project", project)
    assert secret.startswith("whsec_")
    assert receiver.url in _cli(server, "webhooks", "show", "--project", project)
    client = server.client(api_key=_cli(server, "keys", "create", "--project", project))

    user = client.user.create(user_id="hooked", first_name="Hana")
    added = client.graph.episode.add(user.uuid_, data="Hana adopted a cat named Miso.")
    assert added.task is not None and added.episode is not None
    assert wait_for_task(client, added.task.uuid_) == "succeeded"
    episode_uuid = added.episode.uuid_
    [event] = receiver.wait_for(lambda p: p.get("episode_uuid") == episode_uuid)
    assert event["event_name"] == "episode.processed"
    assert event["graph_uuid"] == user.graph_uuid and event["user_uuid"] == user.uuid_
    assert event["user_id"] == "hooked"
    # The first attempt got a 500; the same message (same id) came again and was taken.
    with receiver.lock:
        calls = list(receiver.calls)
    assert calls[0][0] == 500
    first_id = calls[0][1]["webhook-id"]
    assert any(status == 200 and h["webhook-id"] == first_id for status, h, _ in calls)
    for _, headers, body in calls:
        assert _verify(secret, headers, body)
        assert headers["svix-signature"] == headers["webhook-signature"]
        assert not _verify("whsec_" + base64.b64encode(b"x" * 24).decode(), headers, body)

    graph = client.graph.create(name="hook-batch")
    batch = client.batch.create()
    items = client.batch.add_items(
        batch.uuid_,
        items=[
            BatchItemInput(type="graph_episode", graph_uuid=graph.uuid_, data=text)
            for text in ("Omar teaches piano.", "Omar lives in Tunis.")
        ],
    ).items
    client.batch.process(batch.uuid_)
    [done] = receiver.wait_for(lambda p: p["event_name"] == "ingest.batch.completed")
    assert done["batch_id"] == batch.uuid_ and done["status"] == "succeeded"
    assert done["total_items"] == 2 and done["succeeded_items"] == 2
    assert sorted(done["episode_uuids"]) == sorted(i.episode_uuid for i in items or [])
    for item in items or []:
        receiver.wait_for(lambda p, u=item.episode_uuid: p.get("episode_uuid") == u)
    log = _cli(server, "webhooks", "deliveries", "--project", project)
    assert "delivered" in log and "attempts=2" in log

    # Another project's work is not posted to this project's URL.
    other = zep.graph.episode.add(
        zep.user.create(user_id=f"not-hooked-{project}").uuid_, data="Nobody hears this."
    )
    assert other.task is not None and other.episode is not None
    wait_for_task(zep, other.task.uuid_)
    time.sleep(1.5)  # a sender round
    assert all(p.get("episode_uuid") != other.episode.uuid_ for _, p in receiver.accepted())

    assert _cli(server, "webhooks", "clear", "--project", project) == "cleared"
    assert _cli(server, "webhooks", "show", "--project", project) == "no webhook endpoint"


def test_bad_endpoints_are_refused(server: InProcess) -> None:
    command = [sys.executable, "-m", "graphrecall", "--db", str(server.db), "webhooks", "set"]
    bad = subprocess.run(
        [*command, "ftp://example.com/x", "--project", "hooks-bad"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "not an http(s) URL" in bad.stderr
    bad = subprocess.run(
        [*command, "http://127.0.0.1:9/x", "--events", "user.created", "--project", "hooks-bad"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "unknown events" in bad.stderr
