"""``graphrecall projects list|delete``: the tenants of a database, and deleting one
whole, erased (services/project_erasure.py). Opens the database directly; loads no model.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from graphrecall.cli.options import open_store


def cmd_projects(args: argparse.Namespace) -> int:
    from graphrecall.services import project_erasure
    from graphrecall.services.container import Services

    store = open_store(args)
    try:
        ctx = Services(store=store, embedder=None)
        if args.projects_command == "list":
            for project, counts in project_erasure.list_projects(ctx):
                held = "  ".join(f"{k}={v}" for k, v in counts.items())
                print(f"{project.uuid}  {project.name}  {held}")
        else:
            project = project_erasure.find_project(ctx, args.project)
            # The receipt (ids, counts, tables, times; never content), for the operator.
            print(json.dumps(project_erasure.delete_project(ctx, project), indent=2))
    finally:
        store.close()
    return 0


def add_commands(sub: Any) -> None:
    command = sub.add_parser("projects", help="projects (tenants): list, or delete one whole")
    projects_sub = command.add_subparsers(dest="projects_command", required=True)
    projects_sub.add_parser("list", help="every project, with its keys, users, graphs, spaces")
    delete = projects_sub.add_parser(
        "delete",
        help="delete a project and all it holds, erased from every file; prints the receipt",
    )
    delete.add_argument("project", help="the project's uuid or name (see 'projects list')")
    command.set_defaults(func=cmd_projects)
