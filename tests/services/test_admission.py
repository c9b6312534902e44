"""Admission of expensive reads (services/admission.py): a project at its limit of
searches, ``memory.search`` calls and context assemblies waits for its turn, then gets a
429 with ``Retry-After`` (``RATE_LIMITED`` on the Memory Engine face); another project's
calls go straight through. Served in-process by the real app on each backend, so the
test can hold one project's slots itself."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from zep_cloud import Zep
from zep_cloud.core.api_error import ApiError

from graphrecall import runtime
from graphrecall.api.app import create_app
from graphrecall.config import Settings, SettingsError, load_settings
from graphrecall.domain.errors import TooManyRequests
from graphrecall.services import admission
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.project_gate import ProjectGate
from tests import pg_server
from tests.conftest import _free_port

KEY_A = "gr_test_admission_tenant_a"
KEY_B = "gr_test_admission_tenant_b"
SLUG_A = "admissionaaa"


def test_the_limit_is_a_setting_and_zero_turns_it_off() -> None:
    assert admission.gate(0) is None
    gate = admission.gate(3)
    assert gate is not None
    assert gate.running_max == 3 and gate.waiting_max == 3 * admission.WAITING_PER_SLOT
    assert Settings(db="x.db").project_concurrency == admission.DEFAULT_RUNNING


def test_a_waiting_call_gets_its_turn_when_a_slot_frees() -> None:
    gate = admission.gate(1)
    assert gate is not None
    inside = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with gate.slot("a"):
            inside.set()
            time.sleep(0.2)
            order.append("first")

    t = threading.Thread(target=holder)
    t.start()
    assert inside.wait(5)
    with gate.slot("b"):  # another project: no wait
        order.append("other")
    with gate.slot("a"):  # waits for the holder, well inside WAIT_S
        order.append("second")
    t.join(5)
    assert order == ["other", "first", "second"]
    assert gate.running("a") == 0 and gate.waiting("a") == 0


def test_a_full_queue_is_refused_with_the_gates_own_error() -> None:
    refusals: list[str | None] = []

    def refuse(param: str | None) -> TooManyRequests:
        refusals.append(param)
        return TooManyRequests("busy", param=param)

    gate = ProjectGate(1, 0, 5.0, refuse)
    with gate.slot("a"), pytest.raises(TooManyRequests), gate.slot("a", "query"):
        pass
    assert refusals == ["query"]


@dataclass
class App:
    http: httpx.Client
    gate: ProjectGate
    project_a: str
    graph_a: str
    graph_b: str


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    db = str(tmp_path_factory.mktemp("admission") / "graphrecall.db")
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"a{uuid.uuid4().hex}")
    # A short wait, so that the refusal comes quickly (the default is WAIT_S).
    patch = pytest.MonkeyPatch()
    patch.setattr(admission, "WAIT_S", 0.3)
    settings = Settings(db=db, embedder="none", extractor="none", project_concurrency=1)
    rt = runtime.build(settings)
    patch.undo()
    try:
        projects.ensure_key(rt.store, KEY_A, "admission-a")
        projects.ensure_key(rt.store, KEY_B, "admission-b")
        project_a = projects.get_or_create_project(rt.store, "admission-a")
        spaces.create_space(rt.store, project_a, "a", SLUG_A)
        # A real server in this process (the SDK needs one; the test holds the gate).
        port = _free_port()
        config = uvicorn.Config(
            create_app(runtime=rt, run_worker=False), port=port, log_level="warning"
        )
        served = uvicorn.Server(config)
        thread = threading.Thread(target=served.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not served.started and time.monotonic() < deadline:
            time.sleep(0.02)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            graphs = [
                http.post(
                    "/api/v4/graphs", json={"name": "g"}, headers={"Authorization": f"Api-Key {k}"}
                ).json()["uuid"]
                for k in (KEY_A, KEY_B)
            ]
            assert rt.context.admission is not None
            yield App(http, rt.context.admission, project_a.uuid, graphs[0], graphs[1])
        served.should_exit = True
        thread.join(30)
    finally:
        rt.close()


def _zep(app: App, key: str) -> Zep:
    return Zep(api_key=key, base_url=f"{str(app.http.base_url).rstrip('/')}/api/v4", max_retries=0)


def _memory_search(app: App) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "memory.search", "params": {"fulltext": "tea"}}
    headers = {"Authorization": f"Bearer {KEY_A}", "X-Me-Space": SLUG_A}
    answer = app.http.post("/api/v1/memory/rpc", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def test_a_project_at_its_limit_waits_then_gets_429_and_others_go_through(app: App) -> None:
    a, b = _zep(app, KEY_A), _zep(app, KEY_B)
    assert a.graph.search_edges(app.graph_a, query="tea").items is not None
    with app.gate.slot(app.project_a):  # project A's one slot is taken
        started = time.monotonic()
        with pytest.raises(ApiError) as refused:
            a.graph.search_edges(app.graph_a, query="tea")
        assert time.monotonic() - started >= 0.25  # it waited for its turn first
        assert refused.value.status_code == 429
        assert refused.value.headers is not None
        assert refused.value.headers.get("retry-after") == "1"
        assert isinstance(refused.value.body, dict)
        assert refused.value.body["error"]["code"] == "too_many_requests"
        context = app.http.post(
            f"/api/v4/graphs/{app.graph_a}/context",
            json={"query": "tea"},
            headers={"Authorization": f"Api-Key {KEY_A}"},
        )
        assert context.status_code == 429 and context.headers["retry-after"] == "1"
        error = _memory_search(app)["error"]
        assert error["code"] == -32000
        assert error["data"] == {"code": "RATE_LIMITED", "retryAfter": 1}
        # Project B is served while A's slot stays taken (had it waited on A's slot, it
        # would have been refused like A's calls above).
        assert b.graph.search_edges(app.graph_b, query="tea").items is not None
        assert app.gate.waiting(app.project_a) == 0
    # The slot is free again: A is served.
    assert a.graph.search_edges(app.graph_a, query="tea").items is not None
    assert "result" in _memory_search(app)
    assert app.gate.running(app.project_a) == 0


def test_cheap_calls_are_not_gated(app: App) -> None:
    with app.gate.slot(app.project_a):
        listed = app.http.get(
            f"/api/v4/graphs/{app.graph_a}", headers={"Authorization": f"Api-Key {KEY_A}"}
        )
        assert listed.status_code == 200, listed.text


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHRECALL_PROJECT_CONCURRENCY", "5")
    assert load_settings(db="x.db").project_concurrency == 5
    monkeypatch.setenv("GRAPHRECALL_PROJECT_CONCURRENCY", "-1")
    with pytest.raises(SettingsError, match="GRAPHRECALL_PROJECT_CONCURRENCY"):
        load_settings(db="x.db")
