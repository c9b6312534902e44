"""The ASGI application: the Zep v4 face under ``/api/v4`` (and at the root, as the SDK
docs suggest), error mapping, middleware, and the ingestion worker's lifetime."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from graphrecall import __version__
from graphrecall.api import errors, memory_engine, openapi
from graphrecall.api.middleware import RequestContext
from graphrecall.api.zep_v4 import (
    context,
    derived,
    edges,
    episodes,
    graphs,
    nodes,
    ontology,
    search,
    tasks,
    threads,
    users,
)
from graphrecall.api.zep_v4.reference_routes import ZEP_V4_ROUTES
from graphrecall.config import Settings
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.worker import Worker
from graphrecall.ml.cross_encoder import load_cross_encoder
from graphrecall.ml.embedder import Embedder, MiniLMEmbedder
from graphrecall.ml.extraction import Extractor
from graphrecall.ml.offline_extractor import OfflineExtractor
from graphrecall.services import relative_time
from graphrecall.services.context import Context
from graphrecall.store import open_store

# The Zep routers, those callers hit most first. Routes are matched one by one, in order
# (~5 µs a route, ~20 µs a router's turn on FastAPI 0.165): the health probe, the Memory
# Engine face and these go before the 501 stubs of the Zep routes not built. No two
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
)


def make_embedder(settings: Settings) -> Embedder | None:
    if settings.embedder == "none":
        return None
    return MiniLMEmbedder(quantize=settings.embedder == "minilm")


def make_extractor(settings: Settings) -> Extractor | None:
    choice = settings.extractor
    if choice == "auto":
        choice = "llm" if settings.llm_base_url else "offline"
    if choice == "none":
        return None
    if choice == "llm":
        from graphrecall.ml.llm import LlmExtractor, OpenAIChatClient

        if not settings.llm_base_url:
            raise ValueError("GRAPHRECALL_EXTRACTOR=llm needs GRAPHRECALL_LLM_BASE_URL")
        client = OpenAIChatClient(
            settings.llm_base_url,
            model=settings.llm_model,
            api_key=settings.llm_api_key,
            concurrency=settings.llm_concurrency,
            max_retries=settings.llm_max_retries,
        )
        return LlmExtractor(client)
    return OfflineExtractor()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    store = open_store(settings.db)
    embedder = make_embedder(settings)
    worker = Worker(IngestContext(store, embedder, make_extractor(settings)))
    ctx = Context(
        store=store,
        embedder=embedder,
        wake_worker=worker.wake,
        cross_encoder=load_cross_encoder(
            settings.cross_encoder,
            model=settings.cross_encoder_model,
            api_key=settings.cross_encoder_api_key,
        ),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        worker.start()
        threading.Thread(target=relative_time.warm_up, name="warm-up", daemon=True).start()
        try:
            yield
        finally:
            worker.stop()
            store.close()

    app = FastAPI(
        title="graphrecall",
        version=__version__,
        description="Zep v4 compatible context-graph server (offline by default).",
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    app.state.worker = worker
    errors.install(app)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, object]:
        return {
            "status": "ok",
            "version": __version__,
            "vector_indexes": store.vector_index_status(),
            "text_indexes": store.text_index_status(),
            "filter_columns": store.filter_column_status(),
        }

    # -- the Memory Engine face: JSON-RPC /api/v1/memory/rpc, /api/v1/version, MCP /mcp --
    memory_engine.install(app, settings.host)
    # ------------------------------------------------------------------------------------
    prefixes = (("/api/v4", True), ("", False))
    for prefix, documented in prefixes:
        for router in ZEP_ROUTERS:
            app.include_router(router, prefix=prefix, include_in_schema=documented)
    for prefix, _ in prefixes:
        _add_unbuilt_routes(app, prefix)
    app.add_middleware(RequestContext, body_timeout=settings.http_body_timeout)
    openapi.install(app)
    return app


def _add_unbuilt_routes(app: FastAPI, prefix: str) -> None:
    # Read off the routers: FastAPI 0.165 lists an included router as one entry of
    # app.routes, not as its routes.
    built = {
        (method, route.path)
        for router in ZEP_ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in (route.methods or ())
    }
    for method, path in ZEP_V4_ROUTES:
        if (method, path) in built:
            continue
        full = prefix + path

        async def not_built(request: Request, _m: str = method, _p: str = path) -> JSONResponse:
            return errors.error_response(
                request,
                501,
                "not_implemented",
                f"{_m} {_p} is part of the Zep v4 API but graphrecall does not implement it yet",
            )

        app.add_api_route(full, not_built, methods=[method], include_in_schema=False)
