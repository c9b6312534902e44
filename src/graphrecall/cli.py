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
