"""The episode pipeline: extract -> resolve entities -> resolve facts (restatements merge,
contradictions invalidate) -> resolve times -> node summaries, thread summary,
observations -> mark processed.

Extraction and embedding (the slow, CPU-bound steps) run outside any transaction; each
episode's writes and its ``processed`` flag then commit in one transaction, so after a
crash an episode is either fully applied or still unprocessed and is redone when its task
is retried. Already-processed episodes are skipped, which makes a retried task idempotent.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    Edge,
    Episode,
    Graph,
    Node,
    Observation,
    Ontology,
    Project,
    Record,
    Task,
    ThreadSummary,
    User,
)
from graphrecall.ingest import derive, temporal
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.embedding import embed_records, text_of
from graphrecall.ingest.resolution import (
    EntityResolver,
    contradicted_by,
    find_restatement,
    invalidate,
)
from graphrecall.ml.extraction import (
    EdgeType,
    EntityType,
    ExtractedFact,
    Extraction,
    ExtractionInput,
)

log = logging.getLogger(__name__)
_RELATION = re.compile(r"[^A-Z0-9]+")


@dataclass
class Outcome:
    nodes_created: int = 0
    edges_created: int = 0
    edges_merged: int = 0
    edges_invalidated: int = 0
    dirty: dict[type[Record], dict[str, Record]] = field(default_factory=dict)

    def touch(self, record: Record) -> None:
        self.dirty.setdefault(type(record), {})[record.uuid] = record


def effective_ontology(ctx: IngestContext, graph: Graph) -> dict[str, Any]:
    own = ctx.store.get(Ontology, graph.uuid)
    if own is not None and not own.data.get("inherited"):
        return own.data
    project = ctx.store.get(Ontology, graph.project_uuid)
    return project.data if project is not None else {}


def process_episodes(ctx: IngestContext, task: Task) -> dict[str, Any]:
    store = ctx.store
    assert task.graph_uuid is not None
    graph = store.get(Graph, task.graph_uuid)
    if graph is None:  # deleted since it was queued
        return {"skipped": "graph deleted"}
    wanted = list(task.payload.get("episodes", []))
    episodes = [
        e
        for e in store.find(
            Episode, {"graph_uuid": graph.uuid, "uuid": wanted}, order_by="created_at"
        )
        if not e.processed
    ]
    skip = set(task.payload.get("skip_extraction", []))
    strict = bool(task.payload.get("strict_ontology"))
    user_node, user = _user_node(ctx, graph)
    ontology = effective_ontology(ctx, graph)
    project = store.get(Project, graph.project_uuid)
    tz = (
        (user.time_zone if user else None)
        or graph.time_zone
        or (project.default_time_zone if project else None)
    )
    embed_records(store, ctx.embedder, episodes)
    inputs = [_input(e, graph, user, user_node, ontology) for e in episodes]
    to_extract = [i for i, e in enumerate(episodes) if e.uuid not in skip]
    extractions: dict[int, Extraction] = {}
    if ctx.extractor is not None and to_extract:
        results = ctx.extractor.extract([inputs[i] for i in to_extract])
        extractions = dict(zip(to_extract, results, strict=True))
    outcome = Outcome()
    resolver = EntityResolver(store, graph.uuid, user_node)
    for i, episode in enumerate(episodes):
        with store.transaction():
            extraction = extractions.get(i)
            if extraction is not None:
                _apply(
                    ctx,
                    graph,
                    episode,
                    inputs[i],
                    extraction,
                    resolver,
                    ontology,
                    strict,
                    outcome,
                    tz,
                )
            store.update(episode.model_copy(update={"processed": True}))
    for kind in (Node, Edge, ThreadSummary):
        records = list(outcome.dirty.get(kind, {}).values())
        if records:
            embed_records(store, ctx.embedder, records)
    _observation_vectors(ctx, list(outcome.dirty.get(Observation, {}).values()))
    return {
        "episode_uuid": episodes[0].uuid if len(episodes) == 1 else None,
        "episodes": [{"uuid": e.uuid} for e in episodes],
        "nodes_created": outcome.nodes_created,
        "edges_created": outcome.edges_created,
        "edges_merged": outcome.edges_merged,
        "edges_invalidated": outcome.edges_invalidated,
    }


def _observation_vectors(ctx: IngestContext, observations: list[Any]) -> None:
    """An observation restates one fact, so it shares that edge's vector (no second
    transformer pass); ones whose edge has no vector yet are embedded directly."""
    if not observations:
        return
    by_edge = {o.attributes.get("edge_uuid"): o for o in observations if o.attributes}
    vectors = ctx.store.get_embeddings(Edge, [u for u in by_edge if u])
    shared = [(o.uuid, vectors[e]) for e, o in by_edge.items() if e in vectors]
    if shared:
        ctx.store.set_embeddings(Observation, observations[0].graph_uuid, shared)
    rest = [o for o in observations if o.uuid not in {u for u, _ in shared}]
    embed_records(ctx.store, ctx.embedder, rest)


def _user_node(ctx: IngestContext, graph: Graph) -> tuple[Node | None, User | None]:
    if graph.type != "user" or graph.user_uuid is None:
        return None, None
    user = ctx.store.get(User, graph.user_uuid)
    if user is None:
        return None, None
    return ctx.store.get(Node, user.node_uuid, {"graph_uuid": graph.uuid}), user


def speaker_of(
    episode: Episode, user: User | None, user_node: Node | None
) -> tuple[str | None, bool]:
    """(speaker name, whether the speaker is the graph's user)."""
    if episode.source != "message":
        return None, False
    name = episode.role_name
    if episode.role == "user" and user_node is not None:
        if not name:
            return user_node.name, True
        known = {user_node.name.casefold()}
        if user is not None:
            known |= {x.casefold() for x in (user.first_name, user.user_id) if x}
        if name.casefold() in known or name.split()[0].casefold() in known:
            return user_node.name, True
    if name:
        return name, False
    return (episode.role or "speaker").capitalize(), False


def _input(
    episode: Episode,
    graph: Graph,
    user: User | None,
    user_node: Node | None,
    ontology: dict[str, Any],
) -> ExtractionInput:
    speaker, _ = speaker_of(episode, user, user_node)
    text = episode.content
    if episode.source == "json":
        text = json_to_text(episode.content)
    return ExtractionInput(
        text=text,
        speaker=speaker,
        speaker_label="Person" if episode.role in ("user", None) else "Assistant",
        reference_time=episode.reference_time,
        entity_types=[EntityType(**t) for t in _types(ontology, "entity_types")],
        edge_types=[EdgeType(**t) for t in _types(ontology, "edge_types")],
    )


def _types(ontology: dict[str, Any], key: str) -> list[dict[str, str]]:
    return [
        {"name": str(t.get("name", "")), "description": str(t.get("description") or "")}
        for t in ontology.get(key) or []
        if t.get("name")
    ]


def json_to_text(content: str) -> str:
    """A JSON document as sentences ("price: 30.") so text extraction can read it."""
    try:
        data = json.loads(content)
    except ValueError:
        return content
    lines: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path} {key}".strip())
        elif isinstance(value, list):
            for item in value:
                walk(item, path)
        else:
            lines.append(f"{path}: {value}.")

    walk(data, "")
    return " ".join(lines)[:5000]


def map_label(label: str | None, ontology: dict[str, Any], strict: bool) -> tuple[bool, list[str]]:
    """Map an extracted label onto the ontology's entity types: (keep?, labels)."""
    types = _types(ontology, "entity_types")
    if not types:
        return True, [label] if label else []
    for t in types:
        if label and t["name"].casefold() == label.casefold():
            return True, [t["name"]]
    for t in types:
        if label and re.search(rf"\b{re.escape(label)}\b", t["description"], re.I):
            return True, [t["name"]]
    return (not strict), ([label] if label and not strict else [])


def map_relation(relation: str, ontology: dict[str, Any], strict: bool) -> str | None:
    types = [t["name"] for t in _types(ontology, "edge_types")]
    if not types:
        return relation
    words = set(relation.split("_"))
    for name in types:
        if name.upper() == relation:
            return name
    for name in types:
        if set(name.upper().split("_")) <= words | {"IS", "HAS"}:
            return name
    return None if strict else relation


def _apply(
    ctx: IngestContext,
    graph: Graph,
    episode: Episode,
    item: ExtractionInput,
    extraction: Extraction,
    resolver: EntityResolver,
    ontology: dict[str, Any],
    strict: bool,
    outcome: Outcome,
    tz: str | None,
) -> None:
    store = ctx.store
    speaker_is_user = (
        item.speaker is not None
        and resolver.user_node is not None
        and (item.speaker == resolver.user_node.name)
    )
    nodes: dict[str, Node] = {}
    for entity in extraction.entities:
        keep, labels = map_label(entity.label, ontology, strict)
        is_speaker = item.speaker is not None and entity.name == item.speaker
        if not keep and not is_speaker:
            continue
        node = resolver.resolve(entity.name, labels, is_speaker_user=is_speaker and speaker_is_user)
        nodes[entity.name.casefold()] = node
    created = [n for n in resolver.created if store.get(Node, n.uuid) is None]
    if created:
        store.insert(created)
        outcome.nodes_created += len(created)
        for node in created:
            outcome.touch(node)
    resolver.created.clear()
    if nodes:
        for node in {n.uuid: n for n in nodes.values()}.values():
            store.link_episodes(Node, graph.uuid, node.uuid, [episode.uuid])
    new_facts: list[Edge] = []
    touched: dict[str, Node] = {}
    seen: set[tuple[str, str, str]] = set()
    for fact in extraction.facts:
        edge = _edge(ctx, graph, episode, fact, nodes, resolver, ontology, strict, outcome, tz)
        if edge is None:
            continue
        key = (edge.source_node_uuid, edge.name, edge.target_node_uuid)
        if key in seen:
            continue
        seen.add(key)
        restated = find_restatement(
            store, graph.uuid, edge, explicit_date=edge.valid_at != episode.reference_time
        )
        if restated is not None:
            store.link_episodes(Edge, graph.uuid, restated.uuid, [episode.uuid])
            if restated.valid_at is None and edge.valid_at is not None:
                restated = restated.model_copy(update={"valid_at": edge.valid_at})
                store.update(restated)
            outcome.edges_merged += 1
            final = restated
        else:
            edge, changed = invalidate(store, edge, contradicted_by(store, graph.uuid, edge))
            store.insert([edge])
            store.link_episodes(Edge, graph.uuid, edge.uuid, [episode.uuid])
            outcome.edges_created += 1
            outcome.edges_invalidated += len(changed)
            outcome.touch(edge)
            final = edge
        new_facts.append(final)
        for node_uuid in (final.source_node_uuid, final.target_node_uuid):
            found = store.get(Node, node_uuid)
            if found is not None:
                touched[found.uuid] = found
        supporting = store.episodes_of(Edge, [final.uuid])[final.uuid][0]
        observation = derive.observe(store, final, supporting)
        if observation is not None:
            outcome.touch(observation)
    for node in touched.values():
        updated = derive.node_summary(store, node)
        if updated is not node:
            resolver.refresh(updated)
            if text_of(updated) != text_of(node):  # re-embed only when its text changed
                outcome.touch(updated)
    speakers = [item.speaker] if item.speaker else []
    summary = derive.thread_summary(store, episode, new_facts, speakers)
    if summary is not None:
        outcome.touch(summary)


def _edge(
    ctx: IngestContext,
    graph: Graph,
    episode: Episode,
    fact: ExtractedFact,
    nodes: dict[str, Node],
    resolver: EntityResolver,
    ontology: dict[str, Any],
    strict: bool,
    outcome: Outcome,
    tz: str | None,
) -> Edge | None:
    relation = _RELATION.sub("_", fact.relation.upper()).strip("_") or "RELATES_TO"
    mapped = map_relation(relation, ontology, strict)
    if mapped is None:
        return None
    ends = []
    for name in (fact.source, fact.target):
        node = nodes.get(name.casefold())
        if node is None:
            if strict and _types(ontology, "entity_types"):
                return None
            node = resolver.resolve(name, [])
            if resolver.created:
                ctx.store.insert(resolver.created)
                outcome.nodes_created += len(resolver.created)
                for created in resolver.created:
                    outcome.touch(created)
                resolver.created.clear()
            ctx.store.link_episodes(Node, graph.uuid, node.uuid, [episode.uuid])
            nodes[name.casefold()] = node
        ends.append(node)
    source, target = ends
    if source.uuid == target.uuid:
        return None
    stamp = clock.now()
    valid = temporal.resolve(fact.valid_at, episode.reference_time, tz) or episode.reference_time
    invalid = temporal.resolve(fact.invalid_at, episode.reference_time, tz)
    return Edge(
        uuid=new_id(),
        graph_uuid=graph.uuid,
        name=mapped,
        fact=fact.fact,
        source_node_uuid=source.uuid,
        target_node_uuid=target.uuid,
        created_at=stamp,
        updated_at=stamp,
        valid_at=valid,
        invalid_at=invalid,
        expired_at=stamp if invalid is not None and invalid <= episode.reference_time else None,
    )
