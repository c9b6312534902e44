"""One episode's extraction applied to its graph, inside the episode's transaction:
entities resolved to nodes, facts to edges (a restatement merges into the edge it
restates, a contradiction retires the old value), observations, node and thread
summaries, document summaries. What changed is counted in an ``Outcome``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Graph, Node, Record
from graphrecall.graph_model import graph_writes
from graphrecall.graph_model.embedding import text_of
from graphrecall.ingest import derive, documents, temporal, trace
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.ontology import map_label, map_relation, relation_name, types_of
from graphrecall.ingest.resolution import (
    EntityResolver,
    find_restatement,
    resolve_contradictions,
)
from graphrecall.ml.extraction import ExtractedFact, Extraction

SUMMARY_FIELDS = ("summary", "updated_at")  # what derive.summarised changes


@dataclass
class Outcome:
    nodes_created: int = 0
    edges_created: int = 0
    edges_merged: int = 0
    edges_invalidated: int = 0
    dirty: dict[type[Record], dict[str, Record]] = field(default_factory=dict)
    fresh: list[Edge] = field(default_factory=list)  # edges inserted (this episode)

    def touch(self, record: Record) -> None:
        self.dirty.setdefault(type(record), {})[record.uuid] = record

    def add(self, other: Outcome) -> None:
        """Fold in a later episode's outcome (its copies of records are the newer ones)."""
        self.nodes_created += other.nodes_created
        self.edges_created += other.edges_created
        self.edges_merged += other.edges_merged
        self.edges_invalidated += other.edges_invalidated
        for kind, records in other.dirty.items():
            self.dirty.setdefault(kind, {}).update(records)


@dataclass(frozen=True)
class Run:
    """What every episode of one run is applied with: its graph, the run's entity
    resolver, the ontology (strict: what it has no type for is dropped), the time zone
    relative dates are read in."""

    ctx: IngestContext
    graph: Graph
    resolver: EntityResolver
    ontology: dict[str, Any]
    strict: bool
    tz: str | None


@dataclass
class Applying:
    """One episode being applied: what was read from it, who speaks in it (name ->
    whether the speaker is the graph's user), what it changed so far, its debug log."""

    episode: Episode
    extraction: Extraction
    voices: dict[str, bool]
    outcome: Outcome
    rec: trace.Recorder | None = None
    nodes: dict[str, Node] = field(default_factory=dict)  # casefolded name -> its node


def apply(run: Run, this: Applying) -> None:
    """Write what ``this`` episode's extraction says (the caller holds the transaction)."""
    store, episode = run.ctx.store, this.episode
    _entities(run, this)
    new_facts: list[Edge] = []
    touched: dict[str, None] = {}  # the facts' ends, read once after the facts are written
    seen: set[tuple[str, str, str]] = set()
    for fact in this.extraction.facts:
        final = _fact(run, this, fact, seen)
        if final is not None:
            new_facts.append(final)
            touched.update(dict.fromkeys((final.source_node_uuid, final.target_node_uuid)))
    if new_facts:  # the episode is also found by the facts linked to it
        graph_writes.refresh_facts(store, run.graph.uuid, [episode.uuid])
    _summaries(run, this, touched)
    summary = derive.thread_summary(store, episode, new_facts, list(this.voices))
    if summary is not None:
        this.outcome.touch(summary)
    documents.summarise(store, episode, new_facts)


def _entities(run: Run, this: Applying) -> None:
    """The extracted entities resolved to nodes (new ones inserted), each linked to the
    episode; ``this.nodes`` maps their names to them."""
    store, graph, resolver, rec = run.ctx.store, run.graph, run.resolver, this.rec
    nodes = this.nodes
    for entity in this.extraction.entities:
        keep, labels = map_label(entity.label, run.ontology, run.strict)
        is_speaker = entity.name in this.voices
        speaker_is_user = this.voices.get(entity.name, False)
        if not keep and not is_speaker:
            if rec is not None:
                rec.entity_dropped(entity.name, entity.label, "not a type of the ontology (strict)")
            continue
        known = len(resolver.created)  # nodes it had made before this entity
        node = resolver.resolve(entity.name, labels, is_speaker_user=is_speaker and speaker_is_user)
        nodes[entity.name.casefold()] = node
        if rec is not None:
            new = any(n.uuid == node.uuid for n in resolver.created[known:])
            rec.entity_resolved(entity.name, node, new, node is resolver.user_node)
    created = [
        n for n in resolver.created if store.get(Node, n.uuid, {"graph_uuid": n.graph_uuid}) is None
    ]
    if created:
        created = graph_writes.insert_nodes(store, created)
        this.outcome.nodes_created += len(created)
        for node in created:
            this.outcome.touch(node)
    resolver.created.clear()
    if nodes:
        for node in {n.uuid: n for n in nodes.values()}.values():
            store.link_episodes(Node, graph.uuid, node.uuid, [this.episode.uuid])


def _fact(
    run: Run, this: Applying, fact: ExtractedFact, seen: set[tuple[str, str, str]]
) -> Edge | None:
    """One extracted fact as an edge: merged into the edge it restates, or inserted
    (retiring what it contradicts), with its observation. None: dropped."""
    store, graph, episode, outcome, rec = (
        run.ctx.store,
        run.graph,
        this.episode,
        this.outcome,
        this.rec,
    )
    edge = _edge(run, this, fact)
    if edge is None:
        return None
    # One statement is one fact: a second reading of a clause (same source, same
    # text) or the same triple again is not a second edge of this episode.
    keys = [
        (edge.source_node_uuid, edge.name, edge.target_node_uuid),
        (edge.source_node_uuid, "", " ".join(edge.fact.casefold().split())),
    ]
    if any(k in seen for k in keys):
        if rec is not None:
            rec.fact_dropped(fact, "a second reading of a statement already taken")
        return None
    seen.update(keys)
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
        changed: list[tuple[Edge, str]] = []
        notes = []
    else:
        resolved = resolve_contradictions(
            store, episode, edge, target=fact.target, past=fact.past, also=fact.also
        )
        edge, changed, notes = resolved.edge, resolved.retired, resolved.notes
        graph_writes.insert_edges(store, [edge])
        store.link_episodes(Edge, graph.uuid, edge.uuid, [episode.uuid])
        outcome.edges_created += 1
        outcome.edges_invalidated += len(changed)
        outcome.touch(edge)
        outcome.fresh.append(edge)
        final = edge
    if rec is not None:
        rec.fact_resolved(
            fact,
            final,
            merged=restated is not None,
            invalidated=changed,
            times=trace.times_explained(fact, final, episode),
            notes=notes,
        )
    if restated is None:  # a new edge (a fresh uuid): linked to this episode only
        supporting = [episode.uuid]
    else:
        supporting = store.episodes_of(Edge, final.graph_uuid, [final.uuid])[final.uuid][0]
    observation = derive.observe(store, final, supporting)
    if observation is not None:
        outcome.touch(observation)
    return final


def _summaries(run: Run, this: Applying, touched: dict[str, None]) -> None:
    """The summaries of the nodes the facts touched, rewritten; a node whose text changed
    is marked for re-embedding."""
    store = run.ctx.store
    scope = {"graph_uuid": run.graph.uuid, "uuid": [*touched]}
    found = {n.uuid: n for n in store.find(Node, scope)} if touched else {}
    current = [found[u] for u in touched if u in found]
    summarised = derive.summaries(store, current)
    # Written together: one batch instead of a read and a write per node.
    rewritten = [u for u, n in zip(summarised, current, strict=True) if u is not n]
    store.update_many(rewritten, SUMMARY_FIELDS)
    for node, updated in zip(current, summarised, strict=True):
        if updated is not node:
            run.resolver.refresh(updated)
            if text_of(updated) != text_of(node):  # re-embed only when its text changed
                this.outcome.touch(updated)


def _edge(run: Run, this: Applying, fact: ExtractedFact) -> Edge | None:
    """The edge a fact reads as (its ends resolved, its times read), not yet written;
    None when the ontology (strict) or its ends rule it out."""
    ctx, graph, episode, resolver = run.ctx, run.graph, this.episode, run.resolver
    outcome, rec, nodes, tz = this.outcome, this.rec, this.nodes, run.tz
    relation = relation_name(fact.relation)
    mapped = map_relation(relation, run.ontology, run.strict)
    if mapped is None:
        if rec is not None:
            rec.fact_dropped(fact, f"{relation} is not an edge type of the ontology (strict)")
        return None
    ends = []
    for name in (fact.source, fact.target):
        node = nodes.get(name.casefold())
        if node is None:
            if run.strict and types_of(run.ontology, "entity_types"):
                if rec is not None:
                    rec.fact_dropped(fact, f"{name!r} is not an entity of the ontology (strict)")
                return None
            node = resolver.resolve(name, [])
            if rec is not None:  # an end the extractor did not list as an entity
                new = any(n.uuid == node.uuid for n in resolver.created)
                rec.entity_resolved(name, node, new, node is resolver.user_node)
            if resolver.created:
                resolver.created = graph_writes.insert_nodes(ctx.store, resolver.created)
                outcome.nodes_created += len(resolver.created)
                for created in resolver.created:
                    outcome.touch(created)
                resolver.created.clear()
            ctx.store.link_episodes(Node, graph.uuid, node.uuid, [episode.uuid])
            nodes[name.casefold()] = node
        ends.append(node)
    source, target = ends
    if source.uuid == target.uuid:
        if rec is not None:
            rec.fact_dropped(fact, f"both ends are the node {source.name!r}")
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
