"""The v3 routes under /api/v2: each request reaches the route meant for it (routes are
tried in order, so a literal path such as ``/graph/list-all`` is tried before
``/graph/{graph_id}``), and nothing under /api/v2 shadows or is shadowed by the v4 face,
the Memory Engine face under /api/v1, or the root routes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fastapi.routing import APIRoute
from starlette.routing import Match

from graphrecall.api import zep_v3
from graphrecall.api.app import create_app
from graphrecall.api.zep_v3.reference_routes import ZEP_V3_ROUTES
from graphrecall.config import Settings

OTHER = [
    ("POST", "/api/v1/memory/rpc"),
    ("POST", "/api/v1/user/rpc"),
    ("GET", "/api/v1/version"),
    ("GET", "/healthz"),
    ("POST", "/api/v4/users"),
    ("GET", "/api/v4/users/x1"),
    ("POST", "/threads"),  # v4 at the root
]
# Literal paths that a parameter route of the same method would also match.
LITERALS = [
    ("GET", "/graph/list-all", "list_graphs"),
    ("POST", "/graph/search", "search_graph"),
    ("POST", "/graph/create", "create_graph"),
    ("GET", "/users-ordered", "list_users_ordered"),
    ("GET", "/user-groups/users/members", "list_for_user"),  # a user's groups
]


V3_ROUTES = [r for router in zep_v3.ROUTERS for r in router.routes if isinstance(r, APIRoute)]


def _scope(method: str, path: str) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "headers": []}


def _first_v3(method: str, path: str) -> APIRoute | None:
    """The v3 route a request under /api/v2 reaches: the app tries the v3 routers in
    ROUTERS order, and each router its routes in order."""
    for route in V3_ROUTES:
        if route.matches(_scope(method, path))[0] == Match.FULL:
            return route
    return None


def _app_entries(app: Any, method: str, path: str) -> list[Any]:
    """The app's top-level entries (a route, or an included router) matching a request."""
    return [r for r in app.router.routes if r.matches(_scope(method, path))[0] == Match.FULL]


def _is_v3(entry: Any) -> bool:
    return getattr(entry, "original_router", None) in zep_v3.ROUTERS


def test_each_v3_route_is_reached_and_collides_with_nothing(tmp_path: Path) -> None:
    app = create_app(Settings(db=str(tmp_path / "routes.db")))
    assert len(V3_ROUTES) >= 40
    for route in V3_ROUTES:
        for method in route.methods or ():
            path = re.sub(r"\{[^}]+\}", "x1", route.path)
            assert _first_v3(method, path) is route, (method, path)
            # Under /api/v2 only the v3 routers answer.
            entries = _app_entries(app, method, zep_v3.PREFIX + path)
            assert entries and all(_is_v3(e) for e in entries), (method, path, entries)
    for method, path, name in LITERALS:
        found = _first_v3(method, path)
        assert found is not None and found.name == name, (method, path, found)
    # The other faces' routes are still theirs: no v3 router matches them.
    for method, path in OTHER:
        entries = _app_entries(app, method, path)
        assert entries and not any(_is_v3(e) for e in entries), (method, path)


def test_every_v3_route_is_translated_or_says_it_is_not(tmp_path: Path) -> None:
    """A v3 route graphrecall does not translate is a 405 stub, never a 404 (which the
    SDKs read as a missing record); the v3 routes built are all in the reference."""
    app = create_app(Settings(db=str(tmp_path / "routes.db")))
    unnamed = {(m, re.sub(r"\{[^}]+\}", "{}", p)) for m, p in ZEP_V3_ROUTES}
    for route in V3_ROUTES:
        for method in route.methods or ():
            assert (method, re.sub(r"\{[^}]+\}", "{}", route.path)) in unnamed, route.path
    stubs = 0
    for method, template in ZEP_V3_ROUTES:
        path = zep_v3.PREFIX + re.sub(r"\{[^}]+\}", "x1", template)
        entries = _app_entries(app, method, path)
        assert len(entries) == 1, (method, template, entries)
        if not _is_v3(entries[0]):
            assert entries[0].name == "not_built", (method, template)
            stubs += 1
    assert stubs == len(ZEP_V3_ROUTES) - sum(len(r.methods or ()) for r in V3_ROUTES)


def test_the_migration_page_counts_the_routes_served() -> None:
    page = (Path(__file__).parents[3] / "docs" / "migrating-from-zep-v3.md").read_text()
    built = {
        (method, re.sub(r"\{[^}]+\}", "{}", r.path))
        for r in V3_ROUTES
        for method in r.methods or ()
    }
    assert f"{len(built)} of the {len(ZEP_V3_ROUTES)} routes of the v3 SDK are served" in page
    assert f"The other {len(ZEP_V3_ROUTES) - len(built)} have nothing built" in page
