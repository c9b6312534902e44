"""Files in and out of a graph, through the library's Zep methods.

Three input formats (``read_file`` tells them apart):

- **messages**: JSON (a list, or ``{"messages": [...]}``) or JSONL, one message a record:
  ``content`` (required), ``role`` (default ``user``), ``name``, ``timestamp`` (ISO 8601,
  the message's reference time) and ``thread_id`` (messages are grouped into one thread
  per id, in file order; default one thread for the whole file);
- **LoCoMo** (Maharana et al., 2024): each conversation a user, each session a thread,
  each turn a message (role ``user``, name = the speaker, time = the session's);
- **a graphrecall export** (``export_graph``): JSONL, first line
  ``{"type": "graphrecall-export", ...}``, then threads, episodes, nodes and edges;
- **ChatGPT's or Claude's data export** (``conversations.json``, or the export's zip):
  read by :mod:`graphrecall.library.importers.chat_exports`.

A Zep v4 server is read over HTTP instead (:mod:`graphrecall.library.importers.zep`).
Chat exports and Zep imports are idempotent and resumable (see
:mod:`graphrecall.library.importers.once`): their threads get ``thread_id``s derived
from the source, and a re-run adds only what is missing.

Importing an export replays its raw input (every message into a thread, every text or
JSON episode into the graph), so the target database derives the graph again with its own
models; facts and entities added by hand (with no episode) are added back as triples and
nodes. Imported records get new uuids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphrecall.domain import limits
from graphrecall.domain.errors import BadRequest, NotFound
from graphrecall.library import locomo
from graphrecall.library.client import GraphRecall
from graphrecall.library.importers import once
from graphrecall.library.importers.records import Conversation, Imported
from graphrecall.wire.zep_v4 import wire

EXPORT_TYPE = "graphrecall-export"
BATCH = limits.MAX_MESSAGES_PER_CALL


def read_file(path: Path) -> tuple[str, list[Any]]:
    """``("messages" | "locomo" | "export" | "chatgpt" | "claude", records)``."""
    from graphrecall.library.importers import chat_exports

    text = chat_exports.read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise BadRequest(f"{path} is empty", param="file")
    records: list[Any]
    if stripped.startswith("["):
        records = chat_exports.parse(text, path)
    elif stripped.startswith("{") and _single_json(text) is not None:
        single = _single_json(text)
        records = single.get("messages", [single]) if isinstance(single, dict) else []
    else:
        records = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except ValueError as exc:
                raise BadRequest(f"{path} line {n}: not JSON ({exc})", param="file") from None
    if not records:
        raise BadRequest(f"{path} holds no records", param="file")
    first = records[0]
    if not isinstance(first, dict):
        raise BadRequest(f"{path}: records must be JSON objects", param="file")
    if first.get("type") == EXPORT_TYPE:
        return "export", records
    if "conversation" in first:
        return "locomo", records
    kind = chat_exports.kind_of(first)
    if kind is not None:
        return kind, records
    return "messages", records


def _single_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def conversations_from_messages(
    records: list[Any], user_id: str, default_thread: str = "imported"
) -> list[Conversation]:
    conversation = Conversation(user_id)
    for n, record in enumerate(records):
        if not isinstance(record, dict) or not str(record.get("content") or "").strip():
            raise BadRequest(f"record {n}: a message needs a non-empty content", param="content")
        message = {
            "role": record.get("role") or "user",
            "content": record["content"],
            "name": record.get("name"),
            "reference_time": record.get("timestamp") or record.get("reference_time"),
            "metadata": record.get("metadata"),
        }
        thread = str(record.get("thread_id") or default_thread)
        conversation.threads.setdefault(thread, []).append(message)
    return [conversation]


def conversations_from_locomo(
    path: Path, user_id: str, samples: list[int] | None = None
) -> list[Conversation]:
    """``samples`` are 1-based positions in the file (all when None); with more than
    one, each conversation's user is ``<user_id>-<sample_id>``."""
    loaded = locomo.load(path)
    chosen = loaded
    if samples:
        for n in samples:
            if not 1 <= n <= len(loaded):
                raise BadRequest(f"--sample {n}: the file has {len(loaded)}", param="sample")
        chosen = [loaded[n - 1] for n in samples]
    out = []
    for sample in chosen:
        conversation = Conversation(
            user_id if len(chosen) == 1 else f"{user_id}-{sample.sample_id}",
            first_name=sample.speaker_a,
        )
        for session in sample.sessions:
            when = session.reference_time.isoformat().replace("+00:00", "Z")
            conversation.threads[f"session_{session.index}"] = [
                {"role": "user", "name": t.speaker, "content": t.content, "reference_time": when}
                for t in session.turns
            ]
        out.append(conversation)
    return out


def ensure_user(gr: GraphRecall, user_id: str, first_name: str | None = None) -> wire.UserWire:
    try:
        return gr.user.lookup(user_id=user_id)
    except NotFound:
        return gr.user.create(user_id=user_id, first_name=first_name)


def add_conversations(gr: GraphRecall, conversations: list[Conversation]) -> Iterator[Imported]:
    """Adds every message, yielding the running totals after each call."""
    done = Imported(planned=sum(len(c.threads) for c in conversations))
    for conversation in conversations:
        user = ensure_user(gr, conversation.user_id, conversation.first_name)
        done.users.append(user)
        done.dropped += conversation.dropped
        for key, messages in conversation.threads.items():
            if conversation.thread_ids:
                yield from once.add_thread_once(gr, user.uuid, key, messages, done)
                done.visited += 1
                continue
            thread = gr.thread.create(user_uuid=user.uuid)
            done.threads += 1
            for start in range(0, len(messages), BATCH):
                batch = messages[start : start + BATCH]
                added = gr.thread.add_messages(thread.uuid, messages=batch)
                done.messages += len(added.messages)
                done.tasks[added.task.uuid] = len(added.messages)
                yield done
            done.visited += 1


# -- export --------------------------------------------------------------------------------


def export_graph(gr: GraphRecall, graph_uuid: str) -> Iterator[dict[str, Any]]:
    """The records of one graph (a graph or user uuid), header first."""
    graph = gr.graph.get(graph_uuid)
    user = gr.user.get(graph.user_uuid) if graph.user_uuid else None
    yield {
        "type": EXPORT_TYPE,
        "version": 1,
        "graph": graph.model_dump(exclude_none=True),
        "user": user.model_dump(exclude_none=True) if user else None,
    }
    if user is not None:
        for thread in gr.thread.list(user_uuid=user.uuid, order_by="created_at", order="asc"):
            yield {"type": "thread", **thread.model_dump(exclude_none=True)}
    listed = gr.graph.episode.list(
        graph.uuid, page_size=limits.LIST_PAGE_SIZE_MAX, order_by="created_at", order="asc"
    )
    for episode in listed:
        yield {"type": "episode", **episode.model_dump(exclude_none=True)}
    for node in gr.graph.node.list(graph.uuid, page_size=limits.LIST_PAGE_SIZE_MAX):
        yield {"type": "node", **node.model_dump(exclude_none=True)}
    for edge in gr.graph.edge.list(graph.uuid, page_size=limits.LIST_PAGE_SIZE_MAX):
        yield {"type": "edge", **edge.model_dump(exclude_none=True)}


def import_export(
    gr: GraphRecall, records: list[dict[str, Any]], user_id: str | None = None
) -> Iterator[Imported]:
    """Replays an export into a new graph (or the user ``user_id``, made if missing)."""
    header = records[0]
    exported_user = header.get("user")
    done = Imported()
    if exported_user is not None or user_id is not None:
        wanted = user_id or (exported_user or {}).get("user_id")
        if not wanted:
            raise BadRequest("the export's user has no user_id; give --user", param="user")
        user = ensure_user(gr, wanted, (exported_user or {}).get("first_name"))
        done.users.append(user)
        target = user.graph_uuid
    else:
        graph = header["graph"]
        target = gr.graph.create(name=graph.get("name"), description=graph.get("description")).uuid
    threads: dict[str, str] = {}
    by_thread: dict[str, list[dict[str, Any]]] = {}
    for record in records[1:]:
        if record.get("type") != "episode":
            continue
        if record.get("source") == "message" and record.get("thread_uuid") and done.users:
            by_thread.setdefault(record["thread_uuid"], []).append(record)
            continue
        added = gr.graph.episode.add(
            target,
            data=record["content"],
            type=record.get("source") if record.get("source") in ("text", "json") else "text",
            metadata=record.get("metadata"),
            reference_time=record.get("reference_time"),
            source_description=record.get("source_description"),
            document_id=record.get("document_id"),
        )
        done.episodes += 1
        done.tasks[added.task.uuid] = 1
        yield done
    for old, episodes in by_thread.items():
        threads[old] = gr.thread.create(user_uuid=done.users[0].uuid).uuid
        done.threads += 1
        for start in range(0, len(episodes), BATCH):
            batch = [
                {
                    "role": e.get("role") or "user",
                    "name": e.get("role_name"),
                    "content": e["content"],
                    "metadata": e.get("metadata"),
                    "reference_time": e.get("reference_time"),
                }
                for e in episodes[start : start + BATCH]
            ]
            added_messages = gr.thread.add_messages(threads[old], messages=batch)
            done.messages += len(batch)
            done.tasks[added_messages.task.uuid] = len(batch)
            yield done
    yield from add_hand_made(gr, target, records, done)


def add_hand_made(
    gr: GraphRecall,
    target: str,
    records: list[dict[str, Any]],
    done: Imported,
    present_names: set[str] | frozenset[str] = frozenset(),
) -> Iterator[Imported]:
    """Facts and entities with no episode were added by hand; add them back (facts
    deduplicated, entities whose name is in ``present_names`` left out)."""
    nodes = {r["uuid"]: r for r in records if r.get("type") == "node"}
    edges = [r for r in records if r.get("type") == "edge" and not r.get("episode_uuids")]
    used: set[str] = set()
    for start in range(0, len(edges), limits.MAX_EDGES_PER_CALL):
        batch = []
        for edge in edges[start : start + limits.MAX_EDGES_PER_CALL]:
            ends = [nodes.get(edge["source_node_uuid"]), nodes.get(edge["target_node_uuid"])]
            if None in ends:
                continue
            used.update(n["uuid"] for n in ends if n)
            refs = [
                {"name": n["name"], "labels": n["labels"], "summary": n.get("summary")}
                for n in ends
                if n
            ]
            batch.append(
                {
                    "fact": edge["fact"],
                    "fact_name": edge["name"],
                    "source_node": refs[0],
                    "target_node": refs[1],
                    "attributes": edge.get("attributes"),
                    "valid_at": edge.get("valid_at"),
                    "invalid_at": edge.get("invalid_at"),
                    "expired_at": edge.get("expired_at"),
                }
            )
        if batch:
            added = gr.graph.edge.add(target, edges=batch, deduplicate=True)
            done.edges += len(batch)
            done.tasks[added.task.uuid] = len(batch)
            yield done
    alone = [
        n
        for n in nodes.values()
        if not n.get("episode_uuids")
        and n["uuid"] not in used
        and "User" not in n["labels"]
        and n["name"] not in present_names
    ]
    for start in range(0, len(alone), limits.MAX_NODES_PER_CALL):
        batch = [
            {
                "name": n["name"],
                "label": next((x for x in n["labels"] if x != "Entity"), None),
                "summary": n.get("summary"),
                "attributes": n.get("attributes"),
            }
            for n in alone[start : start + limits.MAX_NODES_PER_CALL]
        ]
        added_nodes = gr.graph.node.add(target, nodes=batch)
        done.nodes += len(batch)
        done.tasks[added_nodes.task.uuid] = len(batch)
        yield done
