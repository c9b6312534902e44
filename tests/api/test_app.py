"""The application's routes (api/app.py): routes are tried in order, so the app lists the
hot ones first; that is only safe while no request can match two of them."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from starlette.routing import Match

from graphrecall.api import app as app_module
from graphrecall.api.app import ZEP_ROUTERS, create_app
from graphrecall.api.zep_v4.reference_routes import ZEP_V4_ROUTES
from graphrecall.config import Settings

PREFIXES = ("/api/v4", "")
OTHER_ROUTES = {("GET", "/healthz"), ("POST", "/api/v1/memory/rpc"), ("POST", "/mcp")}


def test_no_request_matches_two_routes_and_every_zep_route_answers(tmp_path: Path) -> None:
    app = create_app(Settings(db=str(tmp_path / "routes.db")))
    built = {
        (method, route.path)
        for router in ZEP_ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in route.methods or ()
    }
    zep = {(m, prefix + path) for m, path in built | set(ZEP_V4_ROUTES) for prefix in PREFIXES}
    assert len(zep) > 300
    for method, template in sorted(zep | OTHER_ROUTES):
        path = re.sub(r"\{[^}]+\}", "x1", template)
        scope = {
            "type": "http",
            "method": method,
            "path": path,
            "root_path": "",
            "headers": [],
            "query_string": b"",
            "app": app,
        }
        matching = [r for r in app.router.routes if r.matches(dict(scope))[0] == Match.FULL]
        # One route: a second would be a route the order shadows (or a 501 stub left
        # beside the route it stands for).
        assert len(matching) == 1, (method, template, matching)


def test_healthz_says_starting_until_the_models_are_loaded(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from graphrecall import runtime

    settings = Settings(db=str(tmp_path / "health.db"), embedder="none", extractor="none")
    rt = runtime.build(settings)
    try:
        app = create_app(runtime=rt, run_worker=False)
        with TestClient(app) as client:
            # Not warmed before: the app warms in the background and answers 503 meanwhile.
            deadline = time.monotonic() + 60
            first = client.get("/healthz")
            while first.status_code == 503 and time.monotonic() < deadline:
                assert first.json()["status"] == "starting" and not first.json()["ready"]
                time.sleep(0.05)
                first = client.get("/healthz")
            body = first.json()
            assert first.status_code == 200 and body["status"] == "ok" and body["ready"]
            assert body["worker"].startswith("off")
    finally:
        rt.close()


def test_healthz_says_starting_until_the_saved_copies_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from graphrecall import runtime

    settings = Settings(db=str(tmp_path / "copies.db"), embedder="none", extractor="none")
    rt = runtime.build(settings)
    read = threading.Event()
    asked: list[float] = []

    def reading(timeout: float) -> bool:  # the saved copies take as long as the test says
        asked.append(timeout)
        return read.wait(timeout)

    monkeypatch.setattr(rt.store.maintenance, "wait_for_saved_copies", reading)
    try:
        rt.warm()  # the models are ready: only the copies hold the app back
        app = create_app(runtime=rt, run_worker=False)
        with TestClient(app) as client:
            waiting = client.get("/healthz")
            assert waiting.status_code == 503 and not waiting.json()["ready"]
            read.set()
            deadline = time.monotonic() + 30
            while client.get("/healthz").status_code == 503 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert client.get("/healthz").json()["status"] == "ok"
        assert asked == [app_module.SAVED_COPY_WAIT_S]
    finally:
        rt.close()
