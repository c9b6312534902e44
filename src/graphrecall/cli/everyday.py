"""The everyday commands: import, search, context, stats, export.

Each opens the database in process with the library (:class:`graphrecall.GraphRecall`),
so no server needs to run; a server on the same database may run at the same time (both
process ingestion tasks, each task once). Tables and progress bars go to stderr where
they are only for the eye, so ``--json`` output and ``export`` can be piped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from graphrecall.retrieval import rerank
from graphrecall.retrieval.request import DEFAULT_RERANKER, SearchOptions

# Input the user must fix (a malformed file, an unreachable source, a refused key): one
# line and this exit code, as for a bad setting (graphrecall.cli.EXIT_CONFIG).
EXIT_BAD_INPUT = 2
SCOPES = ("edges", "nodes", "episodes", "observations", "thread-summaries")
# The option that gives each request field a reranker may require (rerank.Reranker.requires).
_OPTION_OF = {
    "center_node_uuid": "--center-node NODE_UUID",
    "filters.episode_uuids": "--episode EPISODE_UUID (repeatable)",
    "mmr_lambda": "--mmr-lambda",
}


def _open(args: argparse.Namespace, *, worker: bool = True) -> Any:
    from graphrecall.config import load_settings
    from graphrecall.library import GraphRecall

    db = getattr(args, "db", None)
    return GraphRecall(settings=load_settings(**({"db": db} if db else {})), worker=worker)


def _graph_of(gr: Any, args: argparse.Namespace) -> str:
    if args.graph:
        return str(args.graph)
    return str(gr.user.lookup(user_id=args.user).graph_uuid)


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


# -- import --------------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    from graphrecall.domain.errors import BadRequest
    from graphrecall.library.importers import ImportProblem

    try:
        return _import(args)
    except (ImportProblem, BadRequest) as exc:  # the input is at fault: the user fixes it
        print(f"graphrecall: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(
            "graphrecall: interrupted; a ChatGPT, Claude or --from-zep import run again goes"
            " on where this one stopped",
            file=sys.stderr,
        )
        return 130


def _import(args: argparse.Namespace) -> int:
    from graphrecall.library import transfer
    from graphrecall.library.importers import ImportProblem, chat_exports, zep, zep_source

    source = None
    records: list[Any] = []
    path = Path(args.file or "")
    if args.from_zep:
        if args.file:
            raise ImportProblem("give a file or --from-zep, not both")
        key = args.zep_api_key or os.environ.get(zep_source.API_KEY_ENV)
        if not key:
            raise ImportProblem(f"--from-zep needs --zep-api-key or ${zep_source.API_KEY_ENV}")
        source = zep_source.ZepSource(args.from_zep, key)
        source.call("POST", "/users/list", params={"page_size": 1}, json={})  # fail fast
        kind, what = "zep", f"the Zep v4 server at {source.url}"
    elif args.file:
        kind, records = transfer.read_file(path)
        what = str(path)
    else:
        raise ImportProblem("give a file to import, or --from-zep URL")
    out = _console()
    # --no-wait leaves the work to a server or worker: a worker here would be stopped
    # mid-task when the command returns.
    with _open(args, worker=not args.no_wait) as gr:
        if source is not None:
            with source:
                done = _add_with_progress(zep.import_from_zep(gr, source))
        elif kind == "export":
            done = _add_with_progress(transfer.import_export(gr, records, args.user))
            what += f" as a graphrecall export of graph {records[0]['graph']['uuid']}"
        else:
            if not args.user:
                raise ImportProblem(f"--user is required to import {kind}")
            if kind == "locomo":
                conversations = transfer.conversations_from_locomo(path, args.user, args.sample)
                what += f" as LoCoMo, {len(conversations)} conversation(s)"
            elif kind in ("chatgpt", "claude"):
                conversations = [chat_exports.conversations(kind, records, args.user)]
                name = chat_exports.ASSISTANT_NAMES[kind]
                what += f" as a {name} export, {len(records)} conversation(s)"
            else:
                conversations = transfer.conversations_from_messages(
                    records, args.user, args.thread
                )
                what += " as messages"
            done = _add_with_progress(transfer.add_conversations(gr, conversations))
        users = ", ".join(f"{u.user_id} (graph {u.graph_uuid})" for u in done.users) or "-"
        out.print(f"read {what}")
        out.print(
            f"added {done.messages} message(s) in {done.threads} thread(s), {done.episodes}"
            f" episode(s), {done.edges} fact(s), {done.nodes} node(s); user(s): {users}"
        )
        if done.graphs or done.present or done.dropped:
            out.print(
                f"also: {done.graphs} graph(s) made; {done.present} message(s) or episode(s)"
                f" already there, skipped; {done.dropped} message(s) left out (system, tool"
                " or empty)"
            )
        if args.no_wait or not done.tasks:
            if done.tasks:
                out.print(
                    f"{len(done.tasks)} task(s) queued; a running server or worker processes them"
                )
            return 0
        failed = _wait_with_progress(gr, done.tasks, args.timeout)
        stats = gr.stats(done.users[0].graph_uuid) if len(done.users) == 1 else gr.stats()
        counts = stats["counts"]
        out.print(
            "processed: "
            + ", ".join(
                f"{counts[k]} {k.replace('_', ' ')}" for k in ("episodes", "nodes", "edges")
            )
            + (f"; {failed} task(s) failed (see graphrecall tasks retry)" if failed else "")
        )
        return 1 if failed else 0


def _add_with_progress(steps: Any) -> Any:
    """Runs ``steps``; the bar counts the conversations (users and graphs) gone through."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    done = None
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=_console(stderr=True), transient=True) as bar:
        job = bar.add_task("adding", total=None)
        for done in steps:
            bar.update(
                job,
                total=done.planned or None,
                completed=done.visited,
                description=f"adding: {done.messages} message(s), {done.threads} thread(s),"
                f" {done.episodes} episode(s), {done.present} already there",
            )
    if done is None:
        from graphrecall.library.importers.records import Imported

        done = Imported()
    return done


def _wait_with_progress(gr: Any, tasks: dict[str, int], timeout: float) -> int:
    """Waits for every task, a bar counting the items processed; returns how many failed."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    pending = dict(tasks)
    failed = 0
    deadline = time.monotonic() + timeout
    columns = (
        "processing",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=_console(stderr=True)) as bar:
        job = bar.add_task("processing", total=sum(tasks.values()))
        while pending:
            for uuid in list(pending):
                status = gr.task.get(uuid).status
                if status in ("succeeded", "partial", "failed"):
                    failed += status == "failed"
                    bar.advance(job, pending.pop(uuid))
            if pending and time.monotonic() > deadline:
                raise TimeoutError(
                    f"{len(pending)} task(s) still running after {timeout:g} s; they go on"
                    " in any graphrecall serve or worker on this database"
                )
            time.sleep(0.2)
    return failed


# -- search and context --------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    if args.reranker:
        asked = SearchOptions(
            query=args.query,
            reranker=args.reranker,
            mmr_lambda=args.mmr_lambda,
            center_node_uuid=args.center_node,
            mention_episodes=tuple(args.episode or ()),
        )
        missing = rerank.REGISTRY[args.reranker].requires(asked)
        if missing is not None:
            raise ValueError(f"--reranker {args.reranker} needs {_OPTION_OF[missing[1]]}")
    with _open(args, worker=False) as gr:
        graph = _graph_of(gr, args)
        method = getattr(gr.graph, "search_" + args.scope.replace("-", "_"))
        options: dict[str, Any] = {"query": args.query, "page_size": args.limit}
        if args.reranker:  # --mmr-lambda has a default; only mmr reads it
            options["reranker"] = args.reranker
            options["mmr_lambda"] = args.mmr_lambda
        if args.center_node:
            options["center_node_uuid"] = args.center_node
        if args.episode:
            options["filters"] = {"episode_uuids": args.episode}
        found = method(graph, **options).items
        if args.json:
            print(json.dumps([f.model_dump(exclude_none=True) for f in found], indent=2))
            return 0
        _search_table(args.scope, found)
    return 0


def _search_table(scope: str, found: list[Any]) -> None:
    from rich.table import Table

    out = _console()
    if not found:
        out.print("no results")
        return
    table = Table(show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    columns: dict[str, tuple[str, ...]] = {
        "edges": ("fact", "valid", "invalid"),
        "nodes": ("name", "labels", "summary"),
        "episodes": ("time", "who", "content"),
        "observations": ("name", "summary"),
        "thread-summaries": ("summary",),
    }
    for name in columns[scope]:
        table.add_column(name, overflow="fold")
    for n, item in enumerate(found, start=1):
        table.add_row(
            str(n), f"{item.score:.4f}" if item.score is not None else "", *_cells(scope, item)
        )
    out.print(table)


def _short(text: str | None) -> str:
    return (text or "")[:300]


def _cells(scope: str, item: Any) -> tuple[str, ...]:
    short = _short
    if scope == "edges":
        return item.fact, (item.valid_at or "")[:19], (item.invalid_at or "")[:19]
    if scope == "nodes":
        return item.name, ", ".join(item.labels), short(item.summary)
    if scope == "episodes":
        return (
            (item.reference_time or item.created_at)[:19],
            item.role_name or "",
            short(item.content),
        )
    if scope == "observations":
        return item.name, short(item.summary)
    return (short(item.summary),)


def cmd_context(args: argparse.Namespace) -> int:
    with _open(args, worker=False) as gr:
        graph = _graph_of(gr, args)
        found = gr.graph.get_context(graph, query=args.query, max_characters=args.max_characters)
        if args.json:
            print(json.dumps(found.model_dump(exclude_none=True), indent=2))
        else:
            print(found.context)
            if found.truncated:
                print("(cut to fit --max-characters)", file=sys.stderr)
    return 0


# -- stats and export ----------------------------------------------------------------------


def cmd_stats(args: argparse.Namespace) -> int:
    with _open(args, worker=False) as gr:
        graph = _graph_of(gr, args) if (args.graph or args.user) else None
        found = gr.stats(graph)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    out = _console()
    head = {k: v for k, v in found.items() if k not in ("counts", "tasks", "indexes")}
    for key, value in head.items():
        out.print(f"{key.replace('_', ' ')}: {value}")
    out.print(
        "records: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in found["counts"].items())
    )
    out.print("tasks: " + ", ".join(f"{v} {k}" for k, v in found["tasks"].items()))
    for kind, state in found["indexes"].items():
        out.print(f"{kind} index: " + ", ".join(f"{k}={v}" for k, v in state.items()))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from graphrecall.library import transfer

    target = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
    try:
        with _open(args, worker=False) as gr:
            lines = 0
            for record in transfer.export_graph(gr, _graph_of(gr, args)):
                target.write(json.dumps(record, ensure_ascii=False) + "\n")
                lines += 1
        print(f"exported {lines} record(s)", file=sys.stderr)
    finally:
        if target is not sys.stdout:
            target.close()
    return 0


# -- the parser ----------------------------------------------------------------------------


def _which_graph(parser: argparse.ArgumentParser, required: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--user", help="the user's id (user_id); searches the user's graph")
    group.add_argument("--graph", help="a graph uuid (or a user uuid)")


def add_commands(sub: Any) -> None:
    """Adds the everyday commands to ``graphrecall``'s subcommands."""
    imp = sub.add_parser(
        "import",
        help="add a conversation file (messages, LoCoMo, an export, ChatGPT or Claude) or"
        " copy a Zep v4 server",
        description=(
            "Add a file's messages as threads of a user and wait for processing. Formats:"
            " JSON or JSONL messages (content, role, name, timestamp, thread_id; see"
            " docs/cli.md), the LoCoMo JSON format, a graphrecall export, or ChatGPT's or"
            " Claude's data export (conversations.json or the export's zip). Or copy every"
            " user, thread, message, graph and episode of a Zep v4 server (--from-zep)."
            " ChatGPT, Claude and Zep imports can be run again: they add only what is"
            " missing, so an interrupted run goes on where it stopped."
        ),
    )
    imp.add_argument("file", nargs="?", help="the file to read")
    imp.add_argument(
        "--from-zep",
        metavar="URL",
        help="copy a Zep v4 server instead: its API base URL, e.g. https://api.getzep.com/api/v4",
    )
    imp.add_argument(
        "--zep-api-key", metavar="KEY", help="the Zep server's API key (default: $ZEP_API_KEY)"
    )
    imp.add_argument("--user", help="user_id to add to (made if missing)")
    imp.add_argument(
        "--thread",
        default="imported",
        help="thread for messages without a thread_id (default: one thread for them all)",
    )
    imp.add_argument(
        "--sample",
        type=int,
        action="append",
        help="LoCoMo: import this conversation (1-based; repeatable; default all)",
    )
    imp.add_argument(
        "--no-wait", action="store_true", help="queue the work and return without processing it"
    )
    imp.add_argument(
        "--timeout", type=float, default=3600, help="seconds to wait for processing (default 3600)"
    )
    imp.set_defaults(func=cmd_import)

    search = sub.add_parser("search", help="search a user's or a graph's memory")
    search.add_argument("query", help="what to look for")
    _which_graph(search)
    search.add_argument(
        "--scope", choices=SCOPES, default="edges", help="what to search (default edges)"
    )
    search.add_argument(
        "--reranker", choices=rerank.NAMES, help=f"how to rank (default {DEFAULT_RERANKER})"
    )
    search.add_argument(
        "--mmr-lambda", type=float, default=0.5, help="diversity for --reranker mmr (default 0.5)"
    )
    search.add_argument(
        "--center-node",
        metavar="NODE_UUID",
        help="the node that --reranker node_distance ranks by distance from",
    )
    search.add_argument(
        "--episode",
        metavar="EPISODE_UUID",
        action="append",
        help="search only what these episodes mention (repeatable); what --reranker"
        " episode_mentions ranks by",
    )
    search.add_argument(
        "--limit", type=int, default=10, help="how many results (default 10, max 50)"
    )
    search.add_argument("--json", action="store_true", help="print the results as JSON")
    search.set_defaults(func=cmd_search)

    context = sub.add_parser("context", help="print the context block an agent would get")
    context.add_argument("query", help="what the agent is about to answer")
    _which_graph(context)
    context.add_argument("--max-characters", type=int, help="cut the block to this many characters")
    context.add_argument("--json", action="store_true", help="print the response as JSON")
    context.set_defaults(func=cmd_context)

    stats = sub.add_parser("stats", help="record counts, ingestion tasks and index state")
    _which_graph(stats, required=False)
    stats.add_argument("--json", action="store_true", help="print as JSON")
    stats.set_defaults(func=cmd_stats)

    export = sub.add_parser(
        "export", help="write a graph as JSONL (graphrecall import reads it back)"
    )
    _which_graph(export)
    export.add_argument("-o", "--output", help="file to write (default: standard output)")
    export.set_defaults(func=cmd_export)
