"""The application's routes (api/app.py): routes are tried in order, so the app lists the
hot ones first; that is only safe while no request can match two of them."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.routing import APIRoute
from starlette.routing import Match

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
