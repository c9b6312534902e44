"""The ASGI application: the Zep v4 face under ``/api/v4`` (and at the root, as the SDK
docs suggest), Zep v3 under ``/api/v2``, error mapping, middleware, and the ingestion
worker's lifetime."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from graphrecall import __version__
from graphrecall.api import docs, errors, memory_engine, openapi, ui, zep_v2, zep_v3
from graphrecall.api.middleware import RequestContext
from graphrecall.api.zep_v2.reference_routes_v2 import ZEP_V2_ROUTES
from graphrecall.api.zep_v3.reference_routes import ZEP_V3_ROUTES
from graphrecall.api.zep_v4 import (
    batches,
    context,
    debug_logs,
    derived,
    documents,
    edges,
    episodes,
    graphs,
    hyperedges,
    lookup,
    nodes,
    ontology,
    query,
    search,
    summary_instructions,
    tasks,
    threads,
    user_groups,
    users,
)
from graphrecall.api.zep_v4.reference_routes import ZEP_V4_ROUTES
from graphrecall.config import Settings
from graphrecall.runtime import Runtime, build
from graphrecall.store.base import Store

log = logging.getLogger(__name__)
# The longest a starting app waits for the store's copies saved by an earlier process
# (seconds; 281 MB of term indexes for 1,000 users read in ~4 s here).
SAVED_COPY_WAIT_S = 60

# The Zep routers, those callers hit most first. Routes are matched one by one, in order
# (~5 µs a route, ~20 µs a router's turn on FastAPI 0.165): the health probe, the Memory
# Engine face and these go before the 405 stubs of the Zep routes not built. No two
# routes can match the same request (tests/api/test_app.py), so the order changes no
# match, only the time spent finding it.
ZEP_ROUTERS = (
    search.router,
    context.router,
    threads.router,
    edges.router,
    nodes.router,
    episodes.router,
    graphs.router,
    users.router,
    tasks.router,
    derived.router,
    ontology.router,
    batches.router,
    summary_instructions.router,
    debug_logs.router,
    documents.router,
    hyperedges.router,
    user_groups.router,
    lookup.router,
    query.router,
)


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    run_worker: bool = True,
) -> FastAPI:
    """The app over ``runtime`` (built from ``settings`` when not given; the app then owns
    it and closes it on shutdown). ``run_worker=False`` serves the API only: ingestion is
    left to ``graphrecall worker`` processes on the same database. Models not warmed
    before are warmed in the background; ``/healthz`` answers 503 until they are."""
    owned = runtime is None
    rt = runtime if runtime is not None else build(settings)
    store = rt.store
    copies = threading.Event()  # set once the copies saved by an earlier process are read

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The store's in-memory copies (a big table's term index) start building now,
        # beside the model loads, not at the first search after a restart: until one is
        # built that table's searches run on FTS5, slower at scale (docs/benchmarks.md).
        threading.Thread(target=_start_store_copies, args=(store, copies), daemon=True).start()
        if not rt.ready:
            threading.Thread(target=rt.warm, name="warm-up", daemon=True).start()
        if run_worker:
            rt.start_worker()
        try:
            yield
        finally:
            if owned:
                rt.close()
            else:
                if run_worker:
                    rt.worker.stop()
                # The owner may never close the store: uvicorn re-raises the SIGTERM it
                # caught once it has stopped, which ends `serve` before its cleanup. So
                # a stopping server erases what is marked and empties the WAL here.
                _finish_erasure(store)

    app = FastAPI(
        title="graphrecall",
        version=__version__,
        description="Zep v4 compatible context-graph server (offline by default).",
        lifespan=lifespan,
        # served from package files by api.docs (FastAPI's own pages need a CDN)
        docs_url=None,
        redoc_url=None,
    )
    app.state.ctx = rt.context
    app.state.runtime = rt
    errors.install(app)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> JSONResponse:
        # 503 until the models are loaded and the store's saved copies read: a load
        # balancer or a test waits for "ok".
        ready = rt.ready and copies.is_set()
        return JSONResponse(
            {
                "status": "ok" if ready else "starting",
                "ready": ready,
                "worker": "running" if run_worker else "off (graphrecall worker)",
                "version": __version__,
                "vector_indexes": store.maintenance.vector_index_status(),
                "text_indexes": store.maintenance.text_index_status(),
                "filter_columns": store.maintenance.filter_column_status(),
                "caches": store.maintenance.cache_status(),
            },
            status_code=200 if ready else 503,
        )

    # -- the Memory Engine face: JSON-RPC /api/v1/memory/rpc, /api/v1/version, MCP /mcp --
    memory_engine.install(app, rt.settings.host)
    # ------------------------------------------------------------------------------------
    prefixes = (("/api/v4", True), ("", False))
    for prefix, documented in prefixes:
        for router in ZEP_ROUTERS:
            app.include_router(router, prefix=prefix, include_in_schema=documented)
    for prefix, _ in prefixes:
        _add_unbuilt_routes(app, prefix, ZEP_ROUTERS, ZEP_V4_ROUTES, "Zep v4")
        _refuse_other_methods_on_literals(app, prefix)
    # -- Zep v3 (zep-cloud 3.x clients) under /api/v2: a translation onto the v4 services --
    for router in zep_v3.ROUTERS:
        app.include_router(router, prefix=zep_v3.PREFIX, include_in_schema=False)
    _add_unbuilt_routes(app, zep_v3.PREFIX, zep_v3.ROUTERS, ZEP_V3_ROUTES, "Zep v3")
    # -- Zep Cloud v2 / CE 2.x (sessions, memory) under the same prefix, on the same users --
    for router in zep_v2.ROUTERS:
        app.include_router(router, prefix=zep_v3.PREFIX, include_in_schema=False)
    _add_unbuilt_routes(app, zep_v3.PREFIX, zep_v2.ROUTERS, ZEP_V2_ROUTES, "Zep Cloud v2")
    docs.install(app)
    ui.install(app)
    app.add_middleware(RequestContext, body_timeout=rt.settings.http_body_timeout)
    openapi.install(app)
    return app


def _finish_erasure(store: Store) -> None:
    """At shutdown: what deletes marked is erased, and SQLite's WAL emptied."""
    try:
        store.maintenance.erase()
    except Exception:  # the next open finishes it
        log.warning("erasure at shutdown did not finish", exc_info=True)


def _start_store_copies(store: Store, done: threading.Event) -> None:
    """Start the store's in-memory copies; set ``done`` once those saved by an earlier
    process are read (a few seconds; at most SAVED_COPY_WAIT_S): until then /healthz
    answers 503, so the first searches a balancer or a benchmark sends find them rather
    than the slower index path. A copy read whole (the first start's) is not waited for."""
    try:
        store.maintenance.wait_until_warm(0.0)  # starts the builds; does not wait
        if not store.maintenance.wait_for_saved_copies(SAVED_COPY_WAIT_S):
            log.warning("saved in-memory copies still loading after %d s", SAVED_COPY_WAIT_S)
    except Exception:  # a cache: searches fall back to the index itself
        log.warning("could not start building the store's in-memory copies", exc_info=True)
    finally:
        done.set()


def _refuse_other_methods_on_literals(app: FastAPI, prefix: str) -> None:
    """``GET /users/list`` is 405 (``Allow: POST``), not ``GET /users/{user_uuid}``
    answering 400 "not a valid UUID: 'list'": a path whose last segment is a literal of
    some route (``list``, ``lookup``, ...) is that route's, whatever the method; a method
    it does not take is 405. Only where the twin's parameter is a uuid, so no id a client
    chose (a document's) is ever read as a literal."""
    built: dict[str, set[str]] = {}
    for router in ZEP_ROUTERS:
        for route in router.routes:
            if isinstance(route, APIRoute):
                built.setdefault(route.path, set()).update(route.methods or ())
    for path, methods in built.items():
        parent, _, last = path.rpartition("/")
        if "{" in last:
            continue
        twins = [
            other_methods
            for other, other_methods in built.items()
            if other.rpartition("/")[0] == parent
            and re.fullmatch(r"\{[a-z_]*uuid\}", other.rpartition("/")[2])
        ]
        allow = ", ".join(sorted(methods))
        for method in sorted(set().union(*twins) - methods) if twins else ():

            async def refused(request: Request, _allow: str = allow) -> JSONResponse:
                response = errors.error_response(
                    request, 405, "method_not_allowed", "Method Not Allowed"
                )
                response.headers["Allow"] = _allow
                return response

            app.add_api_route(prefix + path, refused, methods=[method], include_in_schema=False)
            # Before the routers, whose parameter route would match the literal first.
            app.router.routes.insert(0, app.router.routes.pop())


def _add_unbuilt_routes(
    app: FastAPI,
    prefix: str,
    routers: Sequence[APIRouter],
    reference: Sequence[tuple[str, str]],
    api: str,
) -> None:
    """A route of the Zep ``api`` (``reference``: its every method and path) that
    graphrecall does not build answers 405 at once.

    Not 501: the zep-cloud SDK retries every 5xx (and 408, 409, 429) with back-off, so a
    501 kept the caller waiting ~3 s before the message. 405 is not retried and is not
    one of the statuses the SDK types (400, 404), so no caller mistakes it for a missing
    record or a bad field. ``Allow`` lists the methods graphrecall serves on that path.
    """
    # Read off the routers: FastAPI 0.165 lists an included router as one entry of
    # app.routes, not as its routes. Paths are compared with their parameters unnamed:
    # the reference names them as its SDK does ({uuid_}), a router as its handler does
    # ({uuid}), and a ``{name:path}`` parameter is the reference's ``{name}``.
    built = {
        (method, _unnamed(route.path))
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in (route.methods or ())
    }
    for method, path in reference:
        if (method, _unnamed(path)) in built:
            continue
        full = prefix + path
        allow = ", ".join(sorted(m for m, p in built if p == _unnamed(path)))

        async def not_built(
            request: Request, _m: str = method, _p: str = path, _allow: str = allow
        ) -> JSONResponse:
            response = errors.error_response(
                request,
                405,
                "not_implemented",
                f"{_m} {_p} is part of the {api} API, not implemented by graphrecall",
            )
            response.headers["Allow"] = _allow
            return response

        app.add_api_route(full, not_built, methods=[method], include_in_schema=False)


def _unnamed(path: str) -> str:
    """``path`` with each parameter written ``{}`` (``{name:path}`` too)."""
    return re.sub(r"\{[^}]*\}", "{}", path)
