"""The composition root: Settings -> store, models, worker, services context.

The HTTP app, the CLI commands, MCP over stdio, the in-process library and the benchmarks
all build their parts here, so each model is wired one way (``make_embedder``,
``make_extractor``, ``make_cross_encoder``) and every setting comes from ``Settings``.

``Runtime.warm()`` loads the models before anything says it is ready: the embedder's
integer-kernel model is built (first start) or read from the cache, spaCy is loaded, and
each phase is logged once with its time.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol, runtime_checkable

from graphrecall.config import Settings, default_db_path, env_name, load_settings
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.worker import Worker
from graphrecall.ml.cross_encoder import CrossEncoder, load_cross_encoder
from graphrecall.ml.embedder import (
    CHAT,
    EMBEDDER_SETTING,
    MODELS,
    REEMBEDDING,
    STOCK,
    Embedder,
    MiniLMEmbedder,
    ModelFile,
)
from graphrecall.ml.extraction import Extractor
from graphrecall.services import admission
from graphrecall.services.container import Services
from graphrecall.services.memory_engine import writes as memory_writes
from graphrecall.store import Store, location, matrix_cache, open_store
from graphrecall.store.schema import shown

log = logging.getLogger("graphrecall.startup")


class StartupError(RuntimeError):
    """Something outside graphrecall keeps it from starting (a path, a port); the message
    names it and says how to fix it."""


def open_database(settings: Settings) -> Store:
    """``open_store(settings.db)``, with an error that names the problem and the fix
    when the location is of a kind graphrecall does not serve, when a file's folder is
    missing or cannot be written, or when a PostgreSQL server cannot be used. Nothing is
    created before the location is known to be good; only the default data folder is
    made for the user."""
    try:
        where = location.parse(settings.db)
    except location.UnsupportedLocation as exc:
        raise StartupError(str(exc)) from None
    fix = f"choose another with --db or {env_name('db')}"
    if where.backend == "postgresql":
        return _open_postgres(where.text)
    path = where.path
    folder = path.parent
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise StartupError(f"database folder {folder}: {existing} is not a folder; {fix}")
    if not folder.exists() and path != default_db_path():
        raise StartupError(f"database folder {folder} does not exist; make it or {fix}")
    if not folder.exists() and existing is not None and not os.access(existing, os.W_OK):
        raise StartupError(
            f"cannot create the database folder {folder} (no write access); make it or {fix}"
        )
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise StartupError(
            f"database folder {folder} is not writable (SQLite writes its journal next"
            f" to {path.name}); make it writable or {fix}"
        )
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise StartupError(f"database {path} is read-only; make it writable or {fix}")
    try:
        return open_store(path)
    except (sqlite3.Error, OSError) as exc:
        raise StartupError(f"cannot open the database {path}: {exc}; {fix}") from exc


def _open_postgres(url: str) -> Store:
    import psycopg
    import psycopg_pool

    from graphrecall.store.postgres.connection import ServerProblem, check_server

    try:
        check_server(url)
        return open_store(url)
    except ServerProblem as exc:
        raise StartupError(str(exc)) from None
    except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
        raise StartupError(f"cannot open the database {shown(url)}: {exc}") from exc


@runtime_checkable
class Warmable(Protocol):
    """A model that can load itself ahead of its first use."""

    def warm(self) -> None: ...


def make_embedder(settings: Settings) -> Embedder | None:
    if settings.embedder == "none":
        return None
    return minilm(settings)


def minilm(settings: Settings | None = None, model: ModelFile | None = None) -> MiniLMEmbedder:
    """A bundled embedder as the settings configure it (``model``, else the one they
    name: the stock file on integer kernels unless ``minilm-exact``); benchmarks measure
    it even where ``GRAPHRECALL_EMBEDDER=none``."""
    settings = settings or load_settings()
    if model is None:
        model = CHAT if settings.embedder == "chat" else STOCK
    return MiniLMEmbedder(
        model=model,
        quantize=settings.embedder != "minilm-exact",
        threads=settings.embed_threads,
        model_cache=settings.model_cache,
    )


def store_embedder(store: Store, embedder: Embedder | None, settings: Settings) -> Embedder | None:
    """The embedder whose vectors ``store`` holds, so that no ranking mixes two models'
    vectors: a store records the family of its vectors (``settings.embedder_model``; an
    empty store records the configured one on its first start), and a configured
    embedder of another family gives way to the recorded one, with a warning, until
    ``graphrecall reembed`` re-embeds the store (ingest/reembed.py). A store whose
    re-embedding was interrupted is refused."""
    if not isinstance(embedder, MiniLMEmbedder):
        return embedder
    recorded = store.setting(EMBEDDER_SETTING, embedder.family)
    if recorded == embedder.family:
        return embedder
    if recorded.startswith(REEMBEDDING):
        raise StartupError(
            f"re-embedding this database with {recorded.removeprefix(REEMBEDDING)} was"
            " interrupted: run `graphrecall reembed` again"
        )
    model = MODELS.get(recorded)
    if model is None:
        raise StartupError(
            f"this database's vectors were made by the embedder {recorded!r}, which this"
            " graphrecall does not have; upgrade graphrecall"
        )
    log.warning(
        "this database's vectors were made by %s, not the configured %s: searching with %s"
        " until `graphrecall reembed` re-embeds it",
        recorded,
        embedder.family,
        recorded,
    )
    return minilm(settings, model)


def make_extractor(settings: Settings) -> Extractor | None:
    choice = settings.extractor
    if choice == "auto":
        choice = "llm" if settings.llm_base_url else "offline"
    if choice == "none":
        return None
    if choice == "llm":
        from graphrecall.ml.llm import LlmExtractor, OpenAIChatClient

        assert settings.llm_base_url  # Settings refuses extractor=llm without it
        client = OpenAIChatClient(
            settings.llm_base_url,
            model=settings.llm_model,
            api_key=settings.llm_api_key,
            concurrency=settings.llm_concurrency,
            max_retries=settings.llm_max_retries,
        )
        return LlmExtractor(client)
    from graphrecall.ml.offline_extractor import OfflineExtractor

    return OfflineExtractor()


def make_cross_encoder(settings: Settings) -> CrossEncoder | None:
    return load_cross_encoder(
        settings.cross_encoder,
        model=settings.cross_encoder_model,
        api_key=settings.cross_encoder_api_key,
    )


@dataclass
class Models:
    embedder: Embedder | None
    extractor: Extractor | None
    cross_encoder: CrossEncoder | None

    @classmethod
    def from_settings(cls, settings: Settings, *, extractor: bool = True) -> Models:
        return cls(
            embedder=make_embedder(settings),
            extractor=make_extractor(settings) if extractor else None,
            cross_encoder=make_cross_encoder(settings),
        )


@contextmanager
def phase(name: str, timings: dict[str, float] | None = None) -> Iterator[None]:
    """Log one line when a start-up phase is done, with its time."""
    started = time.perf_counter()
    yield
    seconds = time.perf_counter() - started
    if timings is not None:
        timings[name] = seconds
    log.info("%s: %.2f s", name, seconds)


@dataclass
class Runtime:
    """Everything one process needs, built from one ``Settings``; close it when done."""

    settings: Settings
    store: Store
    models: Models
    worker: Worker
    context: Services
    timings: dict[str, float] = field(default_factory=dict)
    _ready: threading.Event = field(default_factory=threading.Event)
    _worker_started: bool = False

    @property
    def ready(self) -> bool:
        """True once ``warm()`` has loaded every model."""
        return self._ready.is_set()

    def warm(self) -> dict[str, float]:
        """Load every configured model now; returns each phase's seconds."""
        models = self.models
        for name, model in (
            ("embedder", models.embedder),
            ("extractor", models.extractor),
            ("cross-encoder", models.cross_encoder),
        ):
            if isinstance(model, Warmable):
                with phase(f"{name} ready", self.timings):
                    model.warm()
        from graphrecall.services.get_context import relative_time

        with phase("date parser ready", self.timings):
            relative_time.warm_up()
        self._ready.set()
        return dict(self.timings)

    def start_worker(self) -> None:
        if not self._worker_started:
            self.worker.start()
            self._worker_started = True

    def close(self) -> None:
        if self._worker_started:
            self.worker.stop()
            self._worker_started = False
        self.store.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def build(
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    models: Models | None = None,
) -> Runtime:
    """Open the store and make the models, the worker and the services context.

    Nothing is loaded or started yet: ``warm()`` loads the models, ``start_worker()``
    starts ingestion in this process (a process that leaves ingestion to a separate
    ``graphrecall worker`` never starts it)."""
    settings = settings or load_settings()
    timings: dict[str, float] = {}
    matrix_cache.configure(settings.vector_cache_mb)
    if store is None:
        with phase("database open", timings):
            store = open_database(settings)
    try:
        models = models or Models.from_settings(settings)
        models.embedder = store_embedder(store, models.embedder, settings)
        worker = Worker(
            IngestContext(store, models.embedder, models.extractor),
            threads=settings.worker_threads,
            lease_seconds=settings.task_lease_seconds,
        )
        context = Services(
            store=store,
            embedder=models.embedder,
            wake_worker=worker.wake,
            cross_encoder=models.cross_encoder,
            deleted_history_seconds=settings.deleted_history_seconds,
            admission=admission.gate(settings.project_concurrency),
        )
        # A deleted memory's history is erased once its retention window has passed.
        worker.idle_jobs.append(lambda: memory_writes.expire_deleted_history(context))
    except BaseException:
        store.close()
        raise
    return Runtime(settings, store, models, worker, context, timings)
