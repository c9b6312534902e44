"""The ``graphrecall`` command: serve, and manage API keys."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from graphrecall.config import Settings
from graphrecall.services import projects
from graphrecall.store import open_store


def _settings(args: argparse.Namespace) -> Settings:
    overrides = {k: v for k, v in vars(args).items() if k in ("db", "host", "port") and v}
    return Settings(**overrides)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from graphrecall.api.app import create_app
    from graphrecall.api.server import uvicorn_options

    settings = _settings(args)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    store = open_store(settings.db)
    try:
        if settings.api_key:
            projects.ensure_key(store, settings.api_key)
        elif not projects.list_keys(store):
            key = projects.create_key(store, projects.get_or_create_project(store), name="first")
            print(f"Created the first API key (shown once, keep it):\n\n  {key}\n", flush=True)
        if settings.space:
            from graphrecall.services import spaces

            spaces.ensure_space(store, settings.space)
    finally:
        store.close()
    print(
        f"graphrecall serving http://{settings.host}:{settings.port}/api/v4 (db: {settings.db})",
        flush=True,
    )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level="warning",
        **uvicorn_options(settings),
    )
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    store = open_store(_settings(args).db)
    try:
        if args.keys_command == "create":
            project = projects.get_or_create_project(store, args.project)
            print(projects.create_key(store, project, name=args.name))
        elif args.keys_command == "list":
            for key, project in projects.list_keys(store):
                state = f"revoked {key.revoked_at}" if key.revoked_at else "active"
                print(f"{key.uuid}  {key.prefix}…  project={project.name}  {state}")
        elif args.keys_command == "revoke":
            revoked = projects.revoke_key(store, args.key)
            print(f"revoked {revoked.uuid}")
    finally:
        store.close()
    return 0


def cmd_spaces(args: argparse.Namespace) -> int:
    from graphrecall.services import spaces

    store = open_store(_settings(args).db)
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
    from graphrecall.api import mcp
    from graphrecall.api.app import create_app

    settings = _settings(args)
    logging.basicConfig(level="WARNING", stream=sys.stderr)
    app = create_app(settings)
    ctx, worker = app.state.ctx, app.state.worker
    try:
        access = mcp.local_access(ctx, args.space or settings.space, args.api_key)
        worker.start()  # embeds the memories this session writes
        mcp.build(lambda _tool: access).run("stdio")
    finally:
        worker.stop()
        ctx.store.close()
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    from graphrecall.services.tasks import retry_failed

    store = open_store(_settings(args).db)
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
    parser.add_argument("--db", help="database path (default: $GRAPHRECALL_DB or user data dir)")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the API server and the ingestion worker")
    serve.add_argument("--db", help="database path", default=argparse.SUPPRESS)
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.set_defaults(func=cmd_serve)

    keys = sub.add_parser("keys", help="manage API keys")
    keys.add_argument("--db", help="database path", default=argparse.SUPPRESS)
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key and print it once")
    create.add_argument("--project", default=projects.DEFAULT_PROJECT)
    create.add_argument("--name")
    keys_sub.add_parser("list", help="list keys (never their secret)")
    revoke = keys_sub.add_parser("revoke", help="revoke a key by uuid or prefix")
    revoke.add_argument("key")
    keys.set_defaults(func=cmd_keys)

    spaces_cmd = sub.add_parser("spaces", help="Memory Engine spaces (the X-Me-Space slugs)")
    spaces_cmd.add_argument("--db", help="database path", default=argparse.SUPPRESS)
    spaces_sub = spaces_cmd.add_subparsers(dest="spaces_command", required=True)
    space_create = spaces_sub.add_parser("create", help="create a space and print its slug")
    space_create.add_argument("name")
    space_create.add_argument("--project", default=projects.DEFAULT_PROJECT)
    spaces_sub.add_parser("list", help="list spaces")
    spaces_cmd.set_defaults(func=cmd_spaces)

    mcp_cmd = sub.add_parser("mcp", help="serve the MCP tools over stdio")
    mcp_cmd.add_argument("--db", help="database path", default=argparse.SUPPRESS)
    mcp_cmd.add_argument("--space", help="space slug for the memory tools ($GRAPHRECALL_SPACE)")
    mcp_cmd.add_argument("--api-key", help="act as this key's project (default: the space's)")
    mcp_cmd.set_defaults(func=cmd_mcp)

    task_cmd = sub.add_parser("tasks", help="ingestion tasks")
    task_cmd.add_argument("--db", help="database path", default=argparse.SUPPRESS)
    task_sub = task_cmd.add_subparsers(dest="tasks_command", required=True)
    retry = task_sub.add_parser("retry", help="queue failed tasks again (all, or one by uuid)")
    retry.add_argument("task", nargs="?", help="task uuid (default: every failed task)")
    task_cmd.set_defaults(func=cmd_tasks)

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
    from graphrecall.bench import graphiti as bench_graphiti
    from graphrecall.bench import ingest as bench_ingest
    from graphrecall.bench import locomo as bench_locomo
    from graphrecall.bench import scale as bench_scale

    for name, module, text in (
        ("locomo", bench_locomo, "LoCoMo evidence recall, context coverage and latency"),
        ("ingest", bench_ingest, "LoCoMo ingestion: messages/s, graph yield, sampled facts"),
        (
            "graphiti",
            bench_graphiti,
            "Graphiti (optional extra) side by side: hybrid edge search latency and hit@10",
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
    except Exception as exc:  # a CLI user gets a message, not a traceback
        if os.environ.get("GRAPHRECALL_DEBUG"):
            raise
        print(f"graphrecall: {exc}", file=sys.stderr)
        return 1
    return result
