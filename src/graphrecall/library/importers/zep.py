"""Copy a Zep v4 project into this database: users, their threads and messages, their
graphs' own episodes, standalone graphs, and the facts and entities added by hand.

As with a graphrecall export, the raw input is replayed and this database derives the
graph again with its own models: extracted facts and entities are not copied (they would
carry the source's model and not this one's), the messages and episodes they came from
are. What has no episode behind it (``graph.edge.add``, ``graph.node.add``) is copied as
it is. Ids are kept where a client addresses data by them: a user's ``user_id`` (its uuid
when it has none), a thread's ``thread_id`` (else its uuid), a graph's ``graph_id`` (else
its uuid); so a re-run finds what an earlier one made, and adds only what is missing
(:mod:`graphrecall.library.importers.once`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from graphrecall.domain.errors import NotFound
from graphrecall.library import transfer
from graphrecall.library.importers import once
from graphrecall.library.importers.records import Imported
from graphrecall.library.importers.zep_source import ZepSource

if TYPE_CHECKING:
    from graphrecall.library.client import GraphRecall
    from graphrecall.wire.zep_v4 import wire

_USER_FIELDS = ("email", "first_name", "last_name", "metadata", "time_zone")
_USER_FLAGS = ("disable_default_ontology",)
_EPISODE_TYPES = ("text", "json", "message")  # fact_triple episodes: the edges come below
_ROLES = ("system", "assistant", "user", "function", "tool")


def import_from_zep(gr: GraphRecall, source: ZepSource) -> Iterator[Imported]:
    """Copies every user and standalone graph of ``source``, yielding the running totals
    after each write (and once before the first, with ``planned`` set)."""
    done = Imported()
    users = list(source.users())
    graphs = list(source.graphs())
    done.planned = len(users) + len(graphs)
    yield done
    for found in users:
        user = _user(gr, found)
        done.users.append(user)
        copied: set[str] = set()  # thread uuids, and what their messages said when
        for thread in source.threads(found["uuid"]):
            copied.add(thread["uuid"])
            messages = [_message(m) for m in source.messages(thread["uuid"]) if m.get("content")]
            copied.update(_said(m["content"], m["reference_time"]) for m in messages)
            thread_id = thread.get("thread_id") or thread["uuid"]
            yield from once.add_thread_once(gr, user.uuid, thread_id, messages, done)
        graph_uuid = found.get("graph_uuid") or found["uuid"]  # a user uuid names its graph
        yield from _graph(gr, source, graph_uuid, user.graph_uuid, copied, done)
        done.visited += 1
    for graph in graphs:
        fields = {k: graph.get(k) for k in ("name", "description", "time_zone")}
        target, made = once.graph_for(gr, graph.get("graph_id") or graph["uuid"], fields)
        done.graphs += made
        yield from _graph(gr, source, graph["uuid"], target, set(), done)
        done.visited += 1
    yield done


def _user(gr: GraphRecall, found: dict[str, Any]) -> wire.UserWire:
    user_id = found.get("user_id") or found["uuid"]
    try:
        return gr.user.lookup(user_id=user_id)
    except NotFound:
        fields = {k: found[k] for k in _USER_FIELDS + _USER_FLAGS if found.get(k) is not None}
        return gr.user.create(user_id=user_id, **fields)


def _message(found: dict[str, Any]) -> dict[str, Any]:
    role = found.get("role")
    return {
        "role": role if role in _ROLES else "user",
        "name": found.get("name"),
        "content": found["content"],
        "metadata": found.get("metadata"),
        # The time it was said: a message sent without one took its arrival time.
        "reference_time": found.get("reference_time") or found.get("created_at"),
    }


def _said(content: str, when: Any) -> str:
    return f"{once.instant(when)} {content}"


def _graph(
    gr: GraphRecall,
    source: ZepSource,
    source_graph: str,
    target: str,
    thread_uuids: set[str],
    done: Imported,
) -> Iterator[Imported]:
    """The graph's episodes that are not messages of a copied thread (``thread_uuids``
    holds those threads' uuids and ``_said`` of their messages), then its facts and
    entities with no episode."""
    episodes = []
    for found in source.episodes(source_graph):
        kind = found.get("source") or "text"
        if kind not in _EPISODE_TYPES or not found.get("content"):
            continue
        when = found.get("reference_time") or found.get("created_at")
        if kind == "message" and (
            found.get("thread_uuid") in thread_uuids
            # a server that leaves thread_uuid off a message's episode: matched by content
            or _said(found["content"], when) in thread_uuids
        ):
            continue  # copied with its thread
        episodes.append(
            {
                "content": found["content"],
                "source": kind,
                "reference_time": when,
                "metadata": found.get("metadata"),
                "source_description": found.get("source_description"),
                "document_id": found.get("document_id"),
            }
        )
    yield from once.add_episodes_once(gr, target, episodes, done)
    nodes = [{"type": "node", **n} for n in source.nodes(source_graph)]
    edges = [
        {"type": "edge", **e} for e in source.edges(source_graph) if not e.get("episode_uuids")
    ]
    if not edges and all(n.get("episode_uuids") for n in nodes):
        return
    # What an earlier run added is left out here, so the summary counts only new records
    # (edge.add's deduplicate would also keep a fact from being added twice).
    facts = {e.fact for e in gr.graph.edge.list(target, page_size=once.PAGE)}
    new_edges = [e for e in edges if e.get("fact") not in facts]
    done.present += len(edges) - len(new_edges)
    names = once.node_names(gr, target)
    yield from transfer.add_hand_made(gr, target, nodes + new_edges, done, names)
