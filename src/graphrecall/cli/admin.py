"""The administration commands: API keys, webhooks, Memory Engine spaces, failed
ingestion tasks. Each opens the database directly; none loads a model."""

from __future__ import annotations

import argparse
from typing import Any

from graphrecall.cli.options import open_store
from graphrecall.services.accounts import projects


def cmd_keys(args: argparse.Namespace) -> int:
    store = open_store(args)
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

    store = open_store(args)
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
    from graphrecall.services.accounts import spaces

    store = open_store(args)
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


def cmd_tasks(args: argparse.Namespace) -> int:
    from graphrecall.services.tasks import retry_failed

    store = open_store(args)
    try:
        retried = retry_failed(store, args.task)
        print(f"queued {len(retried)} failed task(s) again; a running server picks them up")
    finally:
        store.close()
    return 0


def add_commands(sub: Any) -> None:
    keys = sub.add_parser("keys", help="manage API keys")
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

    task_cmd = sub.add_parser("tasks", help="ingestion tasks")
    task_sub = task_cmd.add_subparsers(dest="tasks_command", required=True)
    retry = task_sub.add_parser("retry", help="queue failed tasks again (all, or one by uuid)")
    retry.add_argument("task", nargs="?", help="task uuid (default: every failed task)")
    task_cmd.set_defaults(func=cmd_tasks)
