"""What is derived from facts after each episode: node summaries, thread summaries and
observations. All offline and extractive (no LLM): summaries are built from the facts
themselves, so they never state anything the graph does not contain."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    DocumentSummary,
    Edge,
    Episode,
    Node,
    Observation,
    SummaryInstructions,
    ThreadSummary,
    User,
)
from graphrecall.domain.predicates import JsonPath
from graphrecall.ingest import repeats
from graphrecall.store.base import Store

SUMMARY_FACTS = 6
SUMMARY_CHARS = 600
STEERED_FACTS = 200  # a steered summary chooses among the newest this many facts
STOPWORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "about",
        "any",
        "all",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "not",
        "but",
        "from",
        "that",
        "this",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "how",
        "why",
        "their",
        "them",
        "they",
        "its",
        "his",
        "her",
        "our",
        "your",
        "you",
        "include",
        "includes",
        "mention",
        "mentions",
        "focus",
        "keep",
        "note",
        "always",
        "never",
        "only",
        "user",
        "users",
        "summary",
    ]
)
THREAD_POINTS = 12
THREAD_CHARS = 1500

PREFERENCE_RELATIONS = re.compile(
    r"^(NOT_)?(LIKES|LOVES|ENJOYS|PREFERS|HATES|DISLIKES|FAVORS|ADORES|WANTS|NEEDS)(_|$)"
)
COMMITMENT = re.compile(r"\b(will|going to|plans? to|planning to|promised?|intends? to)\b", re.I)
DECISION = re.compile(r"\b(decided|decides|chose|chooses|agreed|settled on)\b", re.I)


def user_instructions(store: Store, node: Node) -> list[str]:
    """The texts of the instructions that steer this node's summary: a user's node
    follows its user's own instructions, else its project's; other nodes have none."""
    if "User" not in node.labels:
        return []
    users = store.find(User, {"graph_uuid": node.graph_uuid, "node_uuid": node.uuid}, limit=1)
    if not users:
        return []
    user = users[0]
    tenant = {"project_uuid": user.project_uuid}
    found = store.get(SummaryInstructions, user.uuid, tenant) or store.get(
        SummaryInstructions, user.project_uuid, tenant
    )
    if found is None:
        return []
    return [str(i.get("text", "")) for i in found.data.get("instructions", [])]


def _words(text: str) -> set[str]:
    """Content words cut to their first 5 letters (a crude stem: "allergies" and
    "allergic" meet), for matching facts to instructions."""
    return {
        word[:5]
        for word in re.findall(r"[a-z0-9]+", text.lower())
        if len(word) >= 3 and word not in STOPWORDS
    }


def node_summary(store: Store, node: Node) -> Node:
    """The node's summary (:func:`summarised`); written when it changed."""
    updated = summarised(store, node)
    if updated is not node:
        store.update(updated)
    return updated


def summarised(store: Store, node: Node) -> Node:
    """``node`` with its summary (:func:`summaries` of one node)."""
    return summaries(store, [node])[0]


def summaries(store: Store, nodes: Sequence[Node]) -> list[Node]:
    """Each node with its summary, not written (the node itself when its summary is
    unchanged): its most recent live facts, newest first, within 600 chars. A user's node
    with summary instructions (``user_instructions``) puts first the facts that share the
    most words with the instructions, newest first among equals, so the instructions steer
    what the summary says (offline: word overlap, no model). The nodes' facts are read
    together (one statement on PostgreSQL, not two a node); nodes of one graph."""
    if not nodes:
        return []
    steers = {n.uuid: set().union(*(_words(t) for t in user_instructions(store, n))) for n in nodes}
    limits = {u: STEERED_FACTS if steer else SUMMARY_FACTS for u, steer in steers.items()}
    newest = store.newest_edges(nodes[0].graph_uuid, limits)
    return [_summarised(node, newest[node.uuid], steers[node.uuid]) for node in nodes]


def _summarised(node: Node, recent: list[Edge], steer: set[str]) -> Node:
    """``node`` with the summary of ``recent`` (its newest facts, newest first)."""
    recent = list(recent)
    if steer:  # stable: recency decides among facts that match equally
        recent.sort(key=lambda e: len(steer & _words(e.fact)), reverse=True)
    sentences: list[str] = []
    said: set[str] = set()
    for edge in recent[:SUMMARY_FACTS]:
        sentence = edge.fact.rstrip(".") + "."
        key = " ".join(sentence.casefold().split())
        if key in said:  # a summary never repeats a sentence
            continue
        said.add(key)
        if sum(len(s) + 1 for s in sentences) + len(sentence) > SUMMARY_CHARS:
            break
        sentences.append(sentence)
    summary = " ".join(sentences) or node.summary
    if summary == node.summary:
        return node
    return node.model_copy(update={"summary": summary, "updated_at": clock.now()})


def thread_summary(
    store: Store, episode: Episode, new_facts: list[Edge], speakers: list[str]
) -> ThreadSummary | None:
    """Extend the thread's summary with the facts this message added (incremental: the
    previous summary's points are kept, newest last, within the size budget). A fact
    the summary already states, or nearly (``ingest/repeats.py``), adds no point."""
    thread_uuid = episode.thread_uuid
    if thread_uuid is None:
        return None
    found = store.find(ThreadSummary, {"thread_uuid": thread_uuid}, limit=1)
    now = clock.now()
    existing = found[0] if found else None
    points = _points(existing.summary) if existing else []
    points = [p for i, p in enumerate(points) if not repeats.said(points[:i], p)]
    people = _participants(existing.summary) if existing else []
    for name in speakers:
        if name and name not in people:
            people.append(name)
    for edge in new_facts:  # a point the summary already makes is not made again
        point = repeats.one_line(edge.fact)
        if point and not repeats.said(points, point):
            points.append(point)
    if not points and existing is None and not people:
        return None
    text = fit(points[-THREAD_POINTS:], lambda kept: _render(people, kept), THREAD_CHARS)
    return save_rolling(
        store,
        existing,
        text,
        episode.reference_time,
        now,
        lambda stamps: ThreadSummary(
            uuid=new_id(),
            graph_uuid=episode.graph_uuid,
            thread_uuid=thread_uuid,
            created_at=now,
            **stamps,
        ),
    )


def fit(points: list[str], render: Callable[[list[str]], str], chars: int) -> str:
    """``render(points)``, dropping the oldest points until it is at most ``chars`` long
    (one point is always kept)."""
    text = render(points)
    while len(text) > chars and len(points) > 1:
        points = points[1:]
        text = render(points)
    return text


Rolling = TypeVar("Rolling", ThreadSummary, DocumentSummary)


def save_rolling(
    store: Store,
    existing: Rolling | None,
    text: str,
    reference_time: str,
    now: str,
    new: Callable[[dict[str, str]], Rolling],
) -> Rolling:
    """Write a rolling summary (a thread's, a document's): ``existing`` rewritten, or
    ``new(stamps)`` inserted; it stays dated by the newest episode it has folded in."""
    previous = existing.last_summarized_episode_valid_at if existing else None
    stamps = {
        "summary": text,
        "last_summarized_at": now,
        "last_summarized_episode_valid_at": max(reference_time, previous or ""),
    }
    if existing is None:
        summary = new(stamps)
        store.insert([summary])
        return summary
    updated = existing.model_copy(update=stamps)
    store.update(updated)
    return updated


def _render(people: list[str], points: list[str]) -> str:
    head = f"Conversation with {', '.join(people)}." if people else "Conversation."
    body = "".join(f"\n- {p}." for p in points)
    return head + body


def _points(summary: str) -> list[str]:
    return [line[2:].rstrip(".") for line in summary.splitlines() if line.startswith("- ")]


def _participants(summary: str) -> list[str]:
    first = summary.splitlines()[0] if summary else ""
    match = re.match(r"Conversation with (.*)\.$", first)
    return [p.strip() for p in match.group(1).split(",")] if match else []


def observe(store: Store, edge: Edge, episode_uuids: list[str]) -> Observation | None:
    """A durable observation for a preference, commitment, decision or a recurring fact
    (one stated in two or more episodes), citing the episodes that support it."""
    category = None
    if PREFERENCE_RELATIONS.match(edge.name):
        category = "Preference"
    elif DECISION.search(edge.fact):
        category = "Decision"
    elif COMMITMENT.search(edge.fact):
        category = "Commitment"
    elif len(set(episode_uuids)) >= 2:
        category = "Pattern"
    if category is None or not episode_uuids:
        return None
    found = store.find(
        Observation,
        {"graph_uuid": edge.graph_uuid},
        where=JsonPath("attributes", "edge_uuid", "eq", edge.uuid),
        limit=1,
    )
    name = f"{category}: {edge.fact.rstrip('.')}"[:200]
    if not found:
        # One clause can give several edges ("loves hiking", "loves hiking in the Alps"):
        # they share one observation, which cites the episodes of them all.
        found = store.find(Observation, {"graph_uuid": edge.graph_uuid, "name": name}, limit=1)
        if found:
            store.link_episodes(Observation, edge.graph_uuid, found[0].uuid, episode_uuids)
            cited = store.episodes_of(Observation, edge.graph_uuid, [found[0].uuid])
            episode_uuids = cited[found[0].uuid][0]
    now = clock.now()
    times = len(set(episode_uuids))
    summary = edge.fact.rstrip(".") + "." + (f" (stated {times} times)" if times > 1 else "")
    if found:
        observation = found[0].model_copy(
            update={"summary": summary, "labels": [category], "updated_at": now}
        )
        store.update(observation)
    else:
        observation = Observation(
            uuid=new_id(),
            graph_uuid=edge.graph_uuid,
            name=name,
            labels=[category],
            summary=summary,
            attributes={"edge_uuid": edge.uuid, "relation": edge.name},
            created_at=now,
            updated_at=now,
        )
        store.insert([observation])
    store.link_episodes(Observation, edge.graph_uuid, observation.uuid, episode_uuids)
    return observation
