"""The graphrecall command: serve, run workers, manage API keys and spaces, benchmarks."""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sqlite3
import sys
import threading
from collections.abc import Sequence
from typing import Any

from graphrecall.config import DB_HELP, Settings, SettingsError, env_name, load_settings
from graphrecall.runtime import StartupError, open_database
from graphrecall.services import projects
from graphrecall.store import Store
from graphrecall.store.schema import shown

# Start-up problems a user fixes outside graphrecall (a setting, a path, a port): one line
# and this exit code, never a traceback.
EXIT_CONFIG = 2


def _settings(args: argparse.Namespace) -> Settings:
    wanted = ("db", "host", "port", "worker_threads")
    overrides = {k: v for k, v in vars(args).items() if k in wanted and v is not None}
    return load_settings(**overrides)


def _open(args: argparse.Namespace) -> Store:
    return open_database(_settings(args))


def _configure_logging(settings: Settings) -> None:
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
        from graphrecall.services import spaces

        spaces.ensure_space(store, settings.space)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from graphrecall import runtime
    from graphrecall.api.app import create_app
    from graphrecall.api.server import freeze_startup_heap, share_interpreter, uvicorn_options
    from graphrecall.store.sqlite import pattern_workers

    share_interpreter()
    settings = _settings(args)
    _configure_logging(settings)
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
        print(
            f"graphrecall serving http://{settings.host}:{settings.port}/api/v4"
            f" (db: {shown(settings.db)}; {worker})",
            flush=True,
        )
        server.run(sockets=[sock])
    finally:
        sock.close()
        rt.close()
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Ingestion only, until interrupted (SIGINT/SIGTERM); any number of these may share
    a database with each other and with ``serve --no-worker``."""
    from graphrecall import runtime

    settings = _settings(args)
    _configure_logging(settings)
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

    settings = _settings(args)
    try:
        done = schema.migrate(settings.db, lambda: open_database(settings))
    except (sqlite3.Error, psycopg.Error) as exc:
        raise StartupError(f"cannot read the schema of {schema.shown(settings.db)}: {exc}") from exc
    change = "already current" if done.after == done.before else f"migrated from {done.before}"
    where = schema.shown(settings.db)
    print(f"schema version {done.after} ({change}; newest {done.newest}) in {where}")
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    store = _open(args)
    try:
        if args.keys_command == "create":
            project = projects.get_or_create_project(store, args.project)
            print(projects.create_key(store, project, name=args.name))
        elif args.keys_command == "list":
            for key, project in projects.list_keys(store):
                state = f"revoked {key.revoked_at}" if key.revoked_at else "active"
                name = key.name or "-"
                print(f"{key.uuid}  {key.prefix}…  name={name}  project={project.name}  {state}")
        elif args.keys_command == "revoke":
            revoked = projects.revoke_key(store, args.key)
            print(f"revoked {revoked.uuid}")
    finally:
        store.close()
    return 0


def cmd_webhooks(args: argparse.Namespace) -> int:
    from graphrecall.domain.models import WebhookDelivery
    from graphrecall.ingest import webhooks

    store = _open(args)
    try:
        project = projects.get_or_create_project(store, args.project)
        if args.webhooks_command == "set":
            events = [e.strip() for e in (args.events or "").split(",") if e.strip()] or None
            endpoint = webhooks.set_endpoint(store, project, args.url, events, args.secret)
            print(endpoint.secret)
        elif args.webhooks_command == "show":
            found = webhooks.get_endpoint(store, project.uuid)
            if found is None:
                print("no webhook endpoint")
            else:
                print(f"{found.url}  events={','.join(found.events)}  secret={found.secret}")
        elif args.webhooks_command == "clear":
            print("cleared" if webhooks.clear_endpoint(store, project) else "no webhook endpoint")
        else:
            rows = store.find(
                WebhookDelivery,
                {"project_uuid": project.uuid},
                order_by="uuid",
                descending=True,
                limit=args.limit,
            )
            for d in rows:
                error = f"  error={d.last_error}" if d.last_error else ""
                print(f"{d.uuid}  {d.event_name}  {d.status}  attempts={d.attempts}{error}")
    finally:
        store.close()
    return 0


def cmd_spaces(args: argparse.Namespace) -> int:
    from graphrecall.services import spaces

    store = _open(args)
    try:
        if args.spaces_command == "create":
            project = projects.get_or_create_project(store, args.project)
            print(spaces.create_space(store, project, args.name).slug)
        else:
            for space, project in spaces.list_spaces(store):
                print(f"{space.slug}  {space.name}  project={project.name}")
    finally:
        store.close()
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from graphrecall import runtime
    from graphrecall.api import mcp

    settings = _settings(args)
    logging.basicConfig(level="WARNING", stream=sys.stderr)  # stdout carries the protocol
    with runtime.build(settings) as rt:
        access = mcp.local_access(rt.context, args.space or settings.space, args.api_key)
        rt.start_worker()  # embeds the memories this session writes
        mcp.build(lambda _tool: access).run("stdio")
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from graphrecall.services.tasks import retry_failed

    store = _open(args)
    try:
        retried = retry_failed(store, args.task)
        print(f"queued {len(retried)} failed task(s) again; a running server picks them up")
    finally:
        store.close()
    return 0


def cmd_bench_search(args: argparse.Namespace) -> int:
    from graphrecall.bench import search as bench_search

    return bench_search.run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphrecall", description=__doc__)
    parser.add_argument(
        "--db", help=DB_HELP + " (default: $GRAPHRECALL_DB or the user data folder)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the API server and the ingestion worker")
    serve.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
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
    worker.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
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
    migrate.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
    migrate.set_defaults(func=cmd_migrate)

    keys = sub.add_parser("keys", help="manage API keys")
    keys.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key and print it once")
    create.add_argument(
        "--project",
        default=projects.DEFAULT_PROJECT,
        help="the project (tenant) the key acts in; made if missing (default: default)",
    )
    create.add_argument("--name", help="a label shown by 'keys list' and 'me apikey list'")
    keys_sub.add_parser("list", help="list keys (never their secret)")
    revoke = keys_sub.add_parser("revoke", help="revoke a key by uuid or prefix")
    revoke.add_argument("key", help="the key's uuid or its 8-character prefix (see 'keys list')")
    keys.set_defaults(func=cmd_keys)

    hooks = sub.add_parser("webhooks", help="where a project's events are posted (signed)")
    hooks.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
    hooks_sub = hooks.add_subparsers(dest="webhooks_command", required=True)
    hook_set = hooks_sub.add_parser("set", help="post the project's events to a URL")
    hook_set.add_argument("url", help="an http(s) URL that answers 2xx")
    hook_set.add_argument(
        "--events",
        help="comma-separated event names (default: episode.processed,ingest.batch.completed)",
    )
    hook_set.add_argument("--secret", help="the signing secret, whsec_<base64> (default: new)")
    hooks_sub.add_parser("show", help="print the project's endpoint and its secret")
    hooks_sub.add_parser("clear", help="stop posting (undelivered events are dropped)")
    hook_log = hooks_sub.add_parser("deliveries", help="the project's latest deliveries")
    hook_log.add_argument("--limit", type=int, default=20, help="how many (default: 20)")
    for command in hooks_sub.choices.values():
        command.add_argument(
            "--project", default=projects.DEFAULT_PROJECT, help="the project (default: default)"
        )
    hooks.set_defaults(func=cmd_webhooks)

    spaces_cmd = sub.add_parser("spaces", help="Memory Engine spaces (the X-Me-Space slugs)")
    spaces_cmd.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
    spaces_sub = spaces_cmd.add_subparsers(dest="spaces_command", required=True)
    space_create = spaces_sub.add_parser("create", help="create a space and print its slug")
    space_create.add_argument("name", help="the space's display name")
    space_create.add_argument(
        "--project",
        default=projects.DEFAULT_PROJECT,
        help="the project whose keys may use the space (default: default)",
    )
    spaces_sub.add_parser("list", help="list spaces")
    spaces_cmd.set_defaults(func=cmd_spaces)

    mcp_cmd = sub.add_parser("mcp", help="serve the MCP tools over stdio")
    mcp_cmd.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
    mcp_cmd.add_argument("--space", help="space slug for the memory tools ($GRAPHRECALL_SPACE)")
    mcp_cmd.add_argument("--api-key", help="act as this key's project (default: the space's)")
    mcp_cmd.set_defaults(func=cmd_mcp)

    task_cmd = sub.add_parser("tasks", help="ingestion tasks")
    task_cmd.add_argument("--db", help=DB_HELP, default=argparse.SUPPRESS)
    task_sub = task_cmd.add_subparsers(dest="tasks_command", required=True)
    retry = task_sub.add_parser("retry", help="queue failed tasks again (all, or one by uuid)")
    retry.add_argument("task", nargs="?", help="task uuid (default: every failed task)")
    task_cmd.set_defaults(func=cmd_tasks)

    from graphrecall import cli_everyday

    cli_everyday.add_commands(sub)

    # Benchmarks: one subcommand each.
    from graphrecall.bench import search as bench_search

    bench = sub.add_parser("bench", help="benchmarks: print a table and write JSON")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    bench_search_cmd = bench_sub.add_parser(
        "search", help="search latency on synthetic graphs (in-process and through the SDK)"
    )
    bench_search.add_arguments(bench_search_cmd)
    bench_search_cmd.set_defaults(func=cmd_bench_search)
    from graphrecall.bench import memory as bench_memory

    bench_memory_cmd = bench_sub.add_parser(
        "memory", help="memory.search latency per mode (in-process and JSON-RPC over HTTP)"
    )
    bench_memory.add_arguments(bench_memory_cmd)
    bench_memory_cmd.set_defaults(func=bench_memory.run)
    from graphrecall.bench import batch as bench_batch
    from graphrecall.bench import cold as bench_cold
    from graphrecall.bench import extract as bench_extract
    from graphrecall.bench import graphiti as bench_graphiti
    from graphrecall.bench import ingest as bench_ingest
    from graphrecall.bench import isolation as bench_isolation
    from graphrecall.bench import judge as bench_judge
    from graphrecall.bench import locomo as bench_locomo
    from graphrecall.bench import longmemeval as bench_longmemeval
    from graphrecall.bench import low_quality as bench_low_quality
    from graphrecall.bench import scale as bench_scale

    for name, module, text in (
        ("locomo", bench_locomo, "LoCoMo evidence recall, context coverage and latency"),
        (
            "longmemeval",
            bench_longmemeval,
            "LongMemEval-S evidence recall (its own metrics), baselines, latency, ingestion",
        ),
        (
            "judge",
            bench_judge,
            "a ranking change on both data sets' bench databases: recall, halves, verdict",
        ),
        ("ingest", bench_ingest, "LoCoMo ingestion: messages/s, graph yield, sampled facts"),
        ("extract", bench_extract, "extraction quality: precision, recall, dates, duplicates"),
        ("batch", bench_batch, "live add_messages latency while a batch runs vs idle"),
        (
            "low-quality",
            bench_low_quality,
            "LoCoMo: results kept and recall@10 with filter_low_quality_results",
        ),
        (
            "graphiti",
            bench_graphiti,
            "Graphiti (optional extra) side by side: hybrid edge search latency and hit@10",
        ),
        (
            "isolation",
            bench_isolation,
            "one tenant's worst-case regex searches: the delay they add to another tenant",
        ),
        (
            "cold",
            bench_cold,
            "first query to each of many user graphs (cold) vs again (warm), through the SDK",
        ),
        (
            "scale",
            bench_scale,
            "10k/100k/1M facts: search and get_context p50/p95, ingestion, bytes per fact, PNG",
        ),
    ):
        bench_cmd = bench_sub.add_parser(name, help=text)
        module.add_arguments(bench_cmd)
        bench_cmd.set_defaults(func=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result: int = args.func(args)
    except (SettingsError, StartupError) as exc:  # the user fixes these outside graphrecall
        print(f"graphrecall: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:  # Ctrl-C while starting (the models can take seconds)
        return 130
    except Exception as exc:  # a CLI user gets a message, not a traceback
        if _debug():
            raise
        print(f"graphrecall: {exc}", file=sys.stderr)
        return 1
    return result


def _debug() -> bool:
    try:
        return load_settings().debug
    except SettingsError:
        return False
