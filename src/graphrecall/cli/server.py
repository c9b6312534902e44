"""The long-running commands: ``serve``, ``worker``, ``mcp``, ``migrate`` (which every
one of them also does on open) and ``reembed``."""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sqlite3
import sys
import threading
from typing import Any

from graphrecall.cli.options import settings as settings_of
from graphrecall.config import Settings, env_name
from graphrecall.runtime import StartupError, open_database
from graphrecall.services.accounts import projects
from graphrecall.store import Store
from graphrecall.store.schema import shown


def configure_logging(settings: Settings) -> None:
    """graphrecall's own lines at the configured level; other libraries' only from
    WARNING up (onnxruntime's quantiser reports each tensor at INFO; faiss's loader tells
    at INFO which CPU builds it did not find)."""
    logging.basicConfig(
        level=logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("graphrecall").setLevel(settings.log_level.upper())


def _bind(settings: Settings) -> socket.socket:
    """The server's socket, bound before the models load so that a port in use is
    reported at once; uvicorn serves on it. It listens only once the models are loaded:
    until then a client is refused at once instead of hanging in the backlog."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.host, settings.port))
    except OSError as exc:
        sock.close()
        reason = "is in use" if exc.errno == 98 else f"cannot be bound ({exc.strerror})"
        raise StartupError(
            f"port {settings.port} on {settings.host} {reason}; choose another with --port or"
            f" {env_name('port')} (and --host or {env_name('host')})"
        ) from None
    sock.set_inheritable(True)
    return sock


def _first_key(store: Store, settings: Settings) -> None:
    if settings.api_key:
        projects.ensure_key(store, settings.api_key)
    elif not projects.list_keys(store):
        key = projects.create_key(store, projects.get_or_create_project(store), name="first")
        print(f"Created the first API key (shown once, keep it):\n\n  {key}\n", flush=True)
    if settings.space:
        from graphrecall.services.accounts import spaces

        spaces.ensure_space(store, settings.space)


def banner(settings: Settings, worker: str) -> str:
    """What ``serve`` prints once it listens: where each face is."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    root = f"http://{host}:{settings.port}"
    return "\n".join(
        (
            f"graphrecall serving {root}/api/v4 (db: {shown(settings.db)}; {worker})",
            f"  explorer       {root}/ui/",
            f"  Zep v4 API     {root}/api/v4  (zep-cloud SDK: base_url)",
            f"  Zep v3 API     {root}/api/v2  (zep-cloud 3.x SDKs: base_url)",
            f"  Memory Engine  {root}  (me client: ME_SERVER)",
            f"  MCP            {root}/mcp",
            f"  API docs       {root}/docs",
        )
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from graphrecall import runtime
    from graphrecall.api.app import create_app
    from graphrecall.api.server import freeze_startup_heap, share_interpreter, uvicorn_options
    from graphrecall.store.sqlite import pattern_workers

    share_interpreter()
    settings = settings_of(args)
    configure_logging(settings)
    sock = _bind(settings)
    try:
        rt = runtime.build(settings)
    except BaseException:
        sock.close()
        raise
    try:
        _first_key(rt.store, settings)
        # Once the database opened (a server that cannot start leaves no workers behind).
        pattern_workers.configure(settings.regex_workers, start=True)
        rt.warm()
        run_worker = not args.no_worker
        app = create_app(runtime=rt, run_worker=run_worker)
        config = uvicorn.Config(app, log_level="warning", **uvicorn_options(settings))
        server = uvicorn.Server(config)
        worker = "with its ingestion worker" if run_worker else "API only (no worker)"
        freeze_startup_heap()
        sock.listen(2048)  # true from here: connections wait for the server loop
        print(banner(settings, worker), flush=True)
        # uvicorn shuts down cleanly on SIGINT / SIGTERM, then raises the signal again with
        # the handler it found: these make that a clean exit through the finally below
        # (closing the store: its WAL emptied, its erasures finished), not a killed process.
        signal.signal(signal.SIGTERM, _stopped)
        try:
            server.run(sockets=[sock])
        except (KeyboardInterrupt, _Stopped):
            print("graphrecall stopped", flush=True)
    finally:
        sock.close()
        rt.close()
    return 0


class _Stopped(Exception):
    pass


def _stopped(signum: int, _frame: Any) -> None:
    raise _Stopped


def cmd_worker(args: argparse.Namespace) -> int:
    """Ingestion only, until interrupted (SIGINT/SIGTERM); any number of these may share
    a database with each other and with ``serve --no-worker``."""
    from graphrecall import runtime

    settings = settings_of(args)
    configure_logging(settings)
    stop = threading.Event()

    def interrupted(signum: int, _frame: Any) -> None:
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, interrupted)
    with runtime.build(settings) as rt:
        rt.warm()
        rt.start_worker()
        print(
            f"graphrecall worker processing tasks in {shown(settings.db)}"
            f" ({rt.worker.threads} thread(s), lease {settings.task_lease_seconds:g} s)",
            flush=True,
        )
        while not stop.wait(1.0):
            pass
        print(f"graphrecall worker stopping after {rt.worker.done} task(s)", flush=True)
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    """Bring the database's schema to this version's (what every command does on open),
    and say which version it was and is."""
    import psycopg

    from graphrecall.store import schema

    settings = settings_of(args)
    try:
        done = schema.migrate(settings.db, lambda: open_database(settings))
    except (sqlite3.Error, psycopg.Error) as exc:
        raise StartupError(f"cannot read the schema of {schema.shown(settings.db)}: {exc}") from exc
    change = "already current" if done.after == done.before else f"migrated from {done.before}"
    where = schema.shown(settings.db)
    print(f"schema version {done.after} ({change}; newest {done.newest}) in {where}")
    return 0


def cmd_reembed(args: argparse.Namespace) -> int:
    """Re-embed the database with the configured embedder (``GRAPHRECALL_EMBEDDER``), with
    its servers and workers stopped (ingest/reembed.py)."""
    from graphrecall import runtime
    from graphrecall.ingest.reembed import reembed
    from graphrecall.ml.embedder import EMBEDDER_SETTING

    settings = settings_of(args)
    if settings.embedder == "none":
        raise StartupError("GRAPHRECALL_EMBEDDER is none: there is no embedder to re-embed with")
    embedder = runtime.minilm(settings)
    store = open_database(settings)
    try:
        recorded = store.setting(EMBEDDER_SETTING, embedder.family)
        if recorded == embedder.family and not args.force:
            print(f"already embedded by {recorded}; nothing to do (--force re-embeds anyway)")
            return 0
        print(f"re-embedding with {embedder.family} (was {recorded})", flush=True)
        done = reembed(store, embedder, _progress)
    finally:
        store.close()
    print("done: " + ", ".join(f"{n} {scope}" for scope, n in done.items()))
    return 0


def _progress(scope: str, done: int) -> None:
    if done % 1024 < 256:  # about every thousand records (they come in batches of 256)
        print(f"  {scope}: {done}", flush=True)


def cmd_mcp(args: argparse.Namespace) -> int:
    from graphrecall import runtime
    from graphrecall.api import mcp

    settings = settings_of(args)
    logging.basicConfig(level="WARNING", stream=sys.stderr)  # stdout carries the protocol
    with runtime.build(settings) as rt:
        access = mcp.local_access(rt.context, args.space or settings.space, args.api_key)
        rt.start_worker()  # embeds the memories this session writes
        mcp.build(lambda _tool: access).run("stdio")
    return 0


def add_commands(sub: Any) -> None:
    serve = sub.add_parser("serve", help="run the API server and the ingestion worker")
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.add_argument(
        "--no-worker",
        action="store_true",
        help="serve the API only; run ingestion in separate 'graphrecall worker' processes",
    )
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser(
        "worker",
        help="run only the ingestion worker on a database (any number may share one)",
    )
    worker.add_argument(
        "--threads",
        dest="worker_threads",
        metavar="N",
        type=int,
        help="worker threads (default: $GRAPHRECALL_WORKER_THREADS, else 2, 1 on one core)",
    )
    worker.set_defaults(func=cmd_worker)

    migrate = sub.add_parser(
        "migrate",
        help="apply the schema migrations and print the version before and after (every"
        " command also migrates on open; safe while other processes run or migrate)",
    )
    migrate.set_defaults(func=cmd_migrate)
    again = sub.add_parser(
        "reembed",
        help="re-embed the database with the configured embedder (GRAPHRECALL_EMBEDDER);"
        " stop its servers and workers first",
    )
    again.add_argument("--force", action="store_true", help="even if already embedded by it")
    again.set_defaults(func=cmd_reembed)

    mcp_cmd = sub.add_parser("mcp", help="serve the MCP tools over stdio")
    mcp_cmd.add_argument("--space", help="space slug for the memory tools ($GRAPHRECALL_SPACE)")
    mcp_cmd.add_argument("--api-key", help="act as this key's project (default: the space's)")
    mcp_cmd.set_defaults(func=cmd_mcp)
