"""graphrecall's app in the test process, driven through the real zep-cloud SDK.

A subprocess server costs an interpreter, its imports and a model load (7-27 s on this
machine) before its first request; most tests need none of that, only the real app over a
real store. :class:`InProcess` builds what ``graphrecall serve`` builds (``runtime.build``,
the first key and space, ``create_app`` with its ingestion worker) and serves it through
Starlette's ``TestClient``, which runs the ASGI app in this process; an ``httpx.Client``
over it (:class:`AppTransport`) is the SDK's ``httpx_client``, so every request still goes
through the SDK's serialisation, the middleware, the routes and the store, and only the
socket is left out. The app's lifespan runs as under uvicorn (the worker thread starts, the store's
saved copies are read), so tasks complete as they do on a server.

The models are loaded once per test process and shared by every in-process app with the
same model settings (the server shares them between its threads the same way).

It has the subprocess ``Server``'s surface (``db``, ``api_key``, ``base_url``,
``client()``, ``stop()``) and ``http()``, a raw HTTP client at the server's root, which
``Server`` has too. Tests where a process is the point (kill -9, restarts, SIGTERM,
racing processes, the ``me`` binary and the browser, which need a TCP port) keep
``tests.conftest.Server``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import threading
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient
from zep_cloud import Zep

from graphrecall import runtime
from graphrecall.api.app import create_app
from graphrecall.cli import main
from graphrecall.cli.server import _first_key
from graphrecall.config import Settings, env_name

ROOT = "http://testserver"

# Models by the settings that choose them (runtime.Models.from_settings): loaded once per
# test process (the first app's warm-up loads them; the others' find them loaded).
_models: dict[tuple[object, ...], runtime.Models] = {}
_models_lock = threading.Lock()


def _model_key(settings: Settings) -> tuple[object, ...]:
    return (
        settings.embedder,
        settings.embed_threads,
        settings.model_cache,
        settings.cross_encoder,
        settings.cross_encoder_model,
        settings.cross_encoder_api_key,
        settings.extractor,
        settings.llm_base_url,
        settings.llm_model,
        settings.llm_api_key,
        settings.llm_concurrency,
        settings.llm_max_retries,
    )


def _shared_models(settings: Settings) -> runtime.Models:
    key = _model_key(settings)
    with _models_lock:
        models = _models.get(key)
        if models is None:
            models = _models[key] = runtime.Models.from_settings(settings)
    # A copy: runtime.build replaces the embedder by the one the store's vectors were made
    # with, which must not change another app's.
    return dataclasses.replace(models)


def settings_of(db: Path | str, api_key: str, env: dict[str, str] | None = None) -> Settings:
    """The settings ``serve --db db`` would read with ``GRAPHRECALL_API_KEY=api_key`` and
    the ``GRAPHRECALL_*`` variables of ``env`` set (the environment's others as well)."""
    given: dict[str, object] = {"db": str(db), "api_key": api_key}
    for name, value in (env or {}).items():
        field = name.removeprefix(env_name(""))
        assert field != name, f"{name}: only GRAPHRECALL_* settings apply in process"
        given[field.lower()] = value
    return Settings(**given)  # type: ignore[arg-type]


def cli(*args: str) -> str:
    """``graphrecall ARGS`` run in this process (the CLI's own ``main``, as the console
    script runs it): its standard output, stripped. A failure fails the test with what it
    printed. Tests of the command line itself run it as a process (tests/cli)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert code == 0, f"graphrecall {' '.join(args)}: exit {code}\n{out.getvalue()}{err.getvalue()}"
    return out.getvalue().strip()


class AppTransport(httpx.BaseTransport):
    """httpx's synchronous transport, answered by the app through its ``TestClient``.

    The zep-cloud SDK wants an ``httpx.Client``; Starlette's ``TestClient`` is a client of
    its own httpx fork (``httpx2``), which the SDK's requests do not fit. This hands each
    request over as it is and the app's answer back, redirects included (the caller's
    client decides whether to follow them)."""

    def __init__(self, app: TestClient) -> None:
        self._app = app

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self._app.request(
            request.method,
            str(request.url),
            headers=list(request.headers.multi_items()),
            content=request.read(),
            follow_redirects=False,
        )
        return httpx.Response(
            answer.status_code,
            headers=answer.headers.multi_items(),
            content=answer.content,
            request=request,
        )


class InProcess:
    """The app over a database of its own, served in this process (see the module doc)."""

    def __init__(
        self,
        db: Path | str,
        api_key: str,
        env: dict[str, str] | None = None,
        *,
        worker: bool = True,
    ) -> None:
        """``worker=False`` is ``serve --no-worker``: the API only, tasks left queued."""
        self.db, self.api_key, self.env = db, api_key, env
        settings = settings_of(db, api_key, env)
        self.runtime = runtime.build(settings, models=_shared_models(settings))
        try:
            # As `serve` does before it serves: the key and space, then the models loaded
            # (at once when another app loaded them), so the app starts ready.
            _first_key(self.runtime.store, settings)
            self.runtime.warm()
            # raise_server_exceptions=False: an unhandled error is the 500 a client gets
            # over the wire, not an exception in the test.
            self._http = TestClient(
                create_app(runtime=self.runtime, run_worker=worker),
                base_url=ROOT,
                raise_server_exceptions=False,
            )
            self._http.__enter__()  # the lifespan: worker started, saved copies read
        except BaseException:
            self.runtime.close()
            raise
        self._stopped = False
        self._transport = AppTransport(self._http)
        self._sdk_http = httpx.Client(transport=self._transport)

    @property
    def base_url(self) -> str:
        return f"{ROOT}/api/v4"

    def client(self, api_key: str | None = None, max_retries: int | None = 0) -> Zep:
        """The SDK on this app (``max_retries=None``: the SDK's default retries)."""
        return Zep(
            api_key=api_key or self.api_key,
            base_url=self.base_url,
            max_retries=max_retries,
            httpx_client=self._sdk_http,
        )

    def http(self, path: str = "", **options: Any) -> httpx.Client:
        """A raw HTTP client at ``path`` under the server's root (``options``: httpx's,
        e.g. ``headers``); close it when done."""
        return httpx.Client(base_url=ROOT + path, transport=self._transport, **options)

    def cli(self, *args: str) -> str:
        """``graphrecall --db DB ARGS`` on this app's database; its output, stripped."""
        return cli("--db", str(self.db), *args)

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._http.__exit__(None, None, None)  # the lifespan's end: the worker stops
            self.runtime.close()
