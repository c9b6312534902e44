"""Writes that an import may repeat: a re-run adds nothing twice, and a run cut short
(Ctrl-C, a lost connection, a crash) goes on where it stopped when started again.

A thread is found again by its ``thread_id``, which the importers derive from the
source's own conversation id; a graph by its ``graph_id``. Within a thread (or a graph)
the messages (episodes) already present are matched by role (source), content and time,
as a multiset: a message sent twice in the source is imported twice, once per run. So
the source is the only state a run needs; nothing is written beside the imported data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from graphrecall.domain import limits
from graphrecall.domain.errors import NotFound

if TYPE_CHECKING:
    from graphrecall.library.client import GraphRecall
    from graphrecall.library.importers.records import Imported

BATCH = limits.MAX_MESSAGES_PER_CALL
PAGE = limits.LIST_PAGE_SIZE_MAX


class ImportProblem(Exception):
    """The source cannot be read as asked (a malformed file, an unreachable URL, a key the
    source refuses): the user fixes it outside graphrecall; one line, no traceback."""


def instant(value: Any) -> str | None:
    """A timestamp as one comparable string: UTC, whole seconds. Sources and the
    destination write the same instant differently (``Z`` or ``+00:00``, fractions)."""
    if value in (None, ""):
        return None
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).replace(microsecond=0).isoformat()


def _key(kind: str | None, content: str, when: Any) -> tuple[str, str, str | None]:
    return (kind or "", content, instant(when))


def _missing(
    wanted: list[dict[str, Any]], present: Counter[tuple[str, str, str | None]], kind_field: str
) -> tuple[list[dict[str, Any]], int]:
    """The records of ``wanted`` not yet in ``present``, and how many were."""
    todo, found = [], 0
    for record in wanted:
        key = _key(record.get(kind_field), record["content"], record.get("reference_time"))
        if present[key] > 0:
            present[key] -= 1
            found += 1
        else:
            todo.append(record)
    return todo, found


# -- threads -------------------------------------------------------------------------------


def thread_for(gr: GraphRecall, user_uuid: str, thread_id: str) -> tuple[str, bool]:
    """The uuid of the user's thread ``thread_id``, made if missing; ``True`` if made."""
    try:
        found = gr.thread.lookup(thread_id=thread_id)
    except NotFound:
        # The v4 thread.create takes no thread_id; the service (as Zep v3 does) does.
        from graphrecall.services.graph import threads

        return threads.create_thread(
            gr._session.ctx, gr._session.project, user_uuid, thread_id
        ).uuid, True
    if found.user_uuid != user_uuid:
        raise ImportProblem(
            f"thread_id {thread_id!r} is already a thread of another user in this database"
        )
    return found.uuid, False


def add_thread_once(
    gr: GraphRecall,
    user_uuid: str,
    thread_id: str,
    messages: list[dict[str, Any]],
    done: Imported,
) -> Iterator[Imported]:
    """Adds those of ``messages`` the thread lacks, in order, a batch a call; yields
    ``done`` after each call (and once when nothing was missing)."""
    thread_uuid, made = thread_for(gr, user_uuid, thread_id)
    done.threads += made
    present: Counter[tuple[str, str, str | None]] = Counter()
    if not made:
        for message in gr.thread.list_messages(thread_uuid, page_size=PAGE):
            present[_key(message.role, message.content, message.reference_time)] += 1
    todo, found = _missing(messages, present, "role")
    done.present += found
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        added = gr.thread.add_messages(thread_uuid, messages=batch)
        done.messages += len(added.messages)
        done.tasks[added.task.uuid] = len(added.messages)
        yield done
    if not todo:
        yield done


# -- graphs --------------------------------------------------------------------------------


def graph_for(gr: GraphRecall, graph_id: str, fields: dict[str, Any]) -> tuple[str, bool]:
    """The uuid of the standard graph ``graph_id``, made (with ``fields``: name,
    description, time_zone) if missing; ``True`` if made."""
    try:
        return gr.graph.lookup(graph_id=graph_id).uuid, False
    except NotFound:
        from graphrecall.domain.inputs import GraphCreate
        from graphrecall.services.graph import graphs

        body = GraphCreate.model_validate({k: v for k, v in fields.items() if v is not None})
        return graphs.create_graph(gr._session.ctx, gr._session.project, body, graph_id).uuid, True


def add_episodes_once(
    gr: GraphRecall, graph_uuid: str, episodes: list[dict[str, Any]], done: Imported
) -> Iterator[Imported]:
    """Adds those of ``episodes`` (``content``, ``source``: text, json or message,
    ``reference_time``, ...) the graph lacks, one call each."""
    present: Counter[tuple[str, str, str | None]] = Counter()
    if episodes:
        for episode in gr.graph.episode.list(graph_uuid, page_size=PAGE):
            present[_key(episode.source, episode.content, episode.reference_time)] += 1
    todo, found = _missing(episodes, present, "source")
    done.present += found
    for record in todo:
        added = gr.graph.episode.add(
            graph_uuid,
            data=record["content"],
            type=record["source"],
            metadata=record.get("metadata"),
            reference_time=record.get("reference_time"),
            source_description=record.get("source_description"),
            document_id=record.get("document_id"),
        )
        done.episodes += 1
        done.tasks[added.task.uuid] = 1
        yield done


def node_names(gr: GraphRecall, graph_uuid: str) -> set[str]:
    """The names of the graph's entities: a hand-made node already there is not added
    again (hand-made facts need no such check: they are added with ``deduplicate``)."""
    return {node.name for node in gr.graph.node.list(graph_uuid, page_size=PAGE)}
