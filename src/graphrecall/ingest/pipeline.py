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
from collections.abc import Mapping
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
from graphrecall.graph_model import graph_writes
from graphrecall.graph_model.embedding import embed_records, episode_vector_texts, text_of
from graphrecall.ingest import derive, documents, speakers, temporal, trace, webhooks
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.resolution import (
    EntityResolver,
    find_restatement,
    resolve_contradictions,
)
from graphrecall.ml import json_facts
from graphrecall.ml.embedder import EmbedderUnavailable
from graphrecall.ml.extraction import (
    MAX_NAME_CHARS,
    EdgeType,
    EntityType,
    ExtractedFact,
    Extraction,
    ExtractionInput,
    bounded,
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


def effective_ontology(ctx: IngestContext, graph: Graph) -> dict[str, Any]:
    own = ctx.store.get(Ontology, graph.uuid, {"project_uuid": graph.project_uuid})
    if own is not None and not own.data.get("inherited"):
        return own.data
    project = ctx.store.get(Ontology, graph.project_uuid, {"project_uuid": graph.project_uuid})
    return project.data if project is not None else {}


def process_episodes(ctx: IngestContext, task: Task) -> dict[str, Any]:
    """The handler of one episode task (``graph.add``, ``thread.add_messages``)."""
    return process_run(ctx, [task])[0]


@dataclass
class _Batch:
    """One task's share of a run."""

    task: Task
    episodes: list[Episode]
    first: int  # index of its first episode in the run
    outcome: Outcome = field(default_factory=Outcome)
    failed: list[dict[str, str]] = field(default_factory=list)  # left unprocessed, and why
    unextracted: list[dict[str, str]] = field(default_factory=list)  # processed without facts


def process_run(ctx: IngestContext, tasks: list[Task]) -> list[dict[str, Any]]:
    """Process the episodes of several queued tasks of one graph, in order, and return
    each task's result.

    The slow steps are shared by the whole run: one extraction call, one embedding call
    for every episode and every extracted fact text, and one embedding of the nodes and
    thread summaries the run changed (a node touched by ten tasks is embedded once, with
    its final text). Each episode still commits alone, in order, with its vector, its
    edges and their vectors, and its ``processed`` flag.
    """
    store = ctx.store
    graph_uuid = tasks[0].graph_uuid
    assert graph_uuid is not None and all(t.graph_uuid == graph_uuid for t in tasks)
    graph = store.get(Graph, graph_uuid, {"project_uuid": tasks[0].project_uuid})
    if graph is None:  # deleted since it was queued
        return [{"skipped": "graph deleted"} for _ in tasks]
    batches: list[_Batch] = []
    episodes: list[Episode] = []
    for task in tasks:
        wanted = list(task.payload.get("episodes", []))
        found = [
            e
            for e in store.find(
                Episode, {"graph_uuid": graph.uuid, "uuid": wanted}, order_by="created_at"
            )
            if not e.processed
        ]
        batches.append(_Batch(task, found, len(episodes)))
        episodes.extend(found)
    user_node, user = _user_node(ctx, graph)
    ontology = effective_ontology(ctx, graph)
    project = store.get(Project, graph.project_uuid)
    tz = (
        (user.time_zone if user else None)
        or graph.time_zone
        or (project.default_time_zone if project else None)
    )
    inputs = [_input(e, graph, user, user_node, ontology) for e in episodes]
    read_as = [_turns(e, item, user, user_node) for e, item in zip(episodes, inputs, strict=True)]
    parts = [p for p, _ in read_as]
    voices = [who for _, who in read_as]
    # Debug logging on: what is done with each episode is recorded (ingest/trace.py).
    recorders = (
        [trace.Recorder(e) for e in episodes] if trace.enabled(store, graph.project_uuid) else []
    )
    skip = {u for t in tasks for u in t.payload.get("skip_extraction", [])}
    to_extract = [i for i, e in enumerate(episodes) if e.uuid not in skip]
    extractions: dict[int, Extraction] = {}
    if ctx.extractor is not None:
        # A JSON record's facts are read from its structure (keys name the relations
        # and type the values); only documents without a record go to the extractor.
        for i in list(to_extract):
            if episodes[i].source == "json":
                read = json_facts.extract(episodes[i].content, inputs[i].edge_types)
                if read is not None:
                    extractions[i] = read
                    to_extract.remove(i)
                    if recorders:
                        recorders[i].extraction(inputs[i], read, "JSON record, by its keys")
    # Episodes whose extraction failed (index -> why): they stay unprocessed and their
    # task fails naming them, so a retry redoes them; the rest of the run goes on.
    failed: dict[int, str] = {}
    if ctx.extractor is not None and to_extract:
        # A text written as a chat is read turn by turn, each as its speaker's message.
        flat = [(i, part) for i in to_extract for part in parts[i]]
        results = _extract(ctx, [part for _, part in flat])
        for i in to_extract:
            mine = [r for (j, _), r in zip(flat, results, strict=True) if j == i]
            why = [r for r in mine if isinstance(r, str)]
            if why:
                failed[i] = why[0]
                continue
            extractions[i] = _merged([r for r in mine if not isinstance(r, str)])
            if recorders:
                how = type(ctx.extractor).__name__
                if len(parts[i]) > 1 or parts[i][0] is not inputs[i]:
                    who = ", ".join(dict.fromkeys(str(p.speaker) for p in parts[i]))
                    how += f"; read as {len(parts[i])} speaker turn(s) of {who}"
                recorders[i].extraction(inputs[i], extractions[i], how)
    for i in list(extractions):
        extractions[i], notes = bounded(extractions[i])
        for note in notes if recorders else ():
            recorders[i].log("warning", f"extraction bounded: {note}")
    for i, episode in enumerate(episodes) if recorders else ():
        if episode.uuid in skip:
            recorders[i].log("info", "extraction skipped: the message's role is ignored")
        elif ctx.extractor is None:
            recorders[i].log("info", "extraction skipped: no extractor is configured")
    # Episodes and the facts' texts in one call (fact texts become edge texts; a fact that
    # turns out to restate a known edge costs one wasted vector).
    # An episode's vector text is contextual (its date and the message it replies to).
    episode_texts = episode_vector_texts(store, episodes)
    vectors = _embed(
        ctx,
        [*episode_texts.values(), *(f.fact for x in extractions.values() for f in x.facts)],
    )
    resolver = EntityResolver(store, graph.uuid, user_node)
    unembedded: dict[str, Edge] = {}  # edges whose text was not embedded up front
    hook = webhooks.episode_hook(store, graph)
    try:
        for batch in batches:
            strict = bool(batch.task.payload.get("strict_ontology"))
            commit = _Commit(
                ctx, graph, resolver, ontology, strict, tz, hook, vectors, episode_texts, unembedded
            )
            for i, episode in enumerate(batch.episodes, start=batch.first):
                if i in failed:
                    batch.failed.append({"uuid": episode.uuid, "error": failed[i]})
                    continue
                rec = recorders[i] if recorders else None
                try:
                    outcome = commit.episode(episode, inputs[i], voices[i], extractions.get(i), rec)
                except Exception as exc:
                    if extractions.get(i) is None:
                        raise
                    # Applying what was read from this episode failed (its transaction
                    # rolled back): it is kept without its facts rather than left
                    # unprocessed for good, since a retry would fail the same way.
                    log.exception("episode %s: applying its extraction failed", episode.uuid)
                    resolver.forget()
                    # Its debug log (when on) was written with the error by failure_logged.
                    outcome = commit.episode(episode, inputs[i], voices[i], None, None)
                    batch.unextracted.append(
                        {"uuid": episode.uuid, "error": f"{type(exc).__name__}: {exc}"[:500]}
                    )
                batch.outcome.add(outcome)
    finally:
        # What the run changed, with its final text, in one embedding call. (Also after a
        # failure: the episodes committed so far keep their vectors.)
        _embed_changes(ctx, batches, vectors, unembedded)
    return [
        {
            "episode_uuid": b.episodes[0].uuid if len(b.episodes) == 1 else None,
            "episodes": [{"uuid": e.uuid} for e in b.episodes],
            "nodes_created": b.outcome.nodes_created,
            "edges_created": b.outcome.edges_created,
            "edges_merged": b.outcome.edges_merged,
            "edges_invalidated": b.outcome.edges_invalidated,
            # What went wrong with some of its episodes (ingest/worker.py fails the task
            # over ``failed_episodes``; ``unextracted`` ones are processed without facts).
            **({"failed_episodes": b.failed} if b.failed else {}),
            **({"unextracted_episodes": b.unextracted} if b.unextracted else {}),
        }
        for b in batches
    ]


def _extract(ctx: IngestContext, items: list[ExtractionInput]) -> list[Extraction | str]:
    """Each item's extraction, or why it failed. One call for all; when that fails, one
    call each, so an episode the extractor cannot read does not hold back the others."""
    assert ctx.extractor is not None
    try:
        return list(ctx.extractor.extract(items))
    except Exception as exc:
        if len(items) == 1:
            log.warning("extraction failed: %s", exc)
            return [f"extraction failed: {type(exc).__name__}: {exc}"[:500]]
        log.warning("extracting %d episodes failed; extracting them one by one", len(items))
    return [_extract(ctx, [item])[0] for item in items]


@dataclass
class _Commit:
    """What one run's episodes are committed with."""

    ctx: IngestContext
    graph: Graph
    resolver: EntityResolver
    ontology: dict[str, Any]
    strict: bool
    tz: str | None
    hook: dict[str, Any] | None
    vectors: Vectors
    episode_texts: Mapping[str, str]
    unembedded: dict[str, Edge]  # the run's edges whose text was not embedded up front

    def episode(
        self,
        episode: Episode,
        item: ExtractionInput,
        voices: dict[str, bool],
        extraction: Extraction | None,
        rec: trace.Recorder | None,
    ) -> Outcome:
        """Apply ``extraction`` to ``episode`` and mark it processed, in one transaction.
        Its outcome is counted only once committed: a failed episode leaves no trace."""
        ctx, graph, store = self.ctx, self.graph, self.ctx.store
        outcome = Outcome()
        with trace.failure_logged(store, graph.uuid, rec), store.transaction():
            current = store.get(Episode, episode.uuid, {"graph_uuid": graph.uuid})
            if current is None or current.processed:
                # Done meanwhile by a worker that took this task over when this one's
                # lease ran out (or deleted): applying it again would double it.
                return outcome
            if extraction is not None:
                _apply(
                    ctx,
                    graph,
                    episode,
                    item,
                    voices,
                    extraction,
                    self.resolver,
                    self.ontology,
                    self.strict,
                    outcome,
                    self.tz,
                    rec,
                )
            _store_vectors(ctx, self.vectors, [episode], {}, self.episode_texts)
            _store_vectors(ctx, self.vectors, outcome.fresh, self.unembedded)
            store.update(episode.model_copy(update={"processed": True}))
            if rec is not None:
                rec.write(store, graph.uuid)
            if self.hook is not None:
                webhooks.episode_processed(store, self.hook, episode)
        return outcome


Vectors = dict[str, Any]  # text -> its vector (numpy row)


def _embed(ctx: IngestContext, texts: list[str]) -> Vectors:
    """Vectors for ``texts`` (each distinct text once); empty without an embedder."""
    distinct = list(dict.fromkeys(texts))
    if ctx.embedder is None or not distinct:
        return {}
    try:
        matrix = ctx.embedder.embed(distinct)
    except EmbedderUnavailable as exc:
        log.warning("embedder unavailable, continuing lexical-only: %s", exc)
        return {}
    return {text: matrix[i] for i, text in enumerate(distinct)}


def _store_vectors(
    ctx: IngestContext,
    vectors: Vectors,
    records: list[Any],
    missing: dict[str, Any],
    texts: Mapping[str, str] | None = None,
) -> None:
    """Store the vectors of ``records`` (one kind, one graph) from ``vectors``; records
    whose text has none are put in ``missing``."""
    items = []
    for record in records:
        vector = vectors.get((texts or {}).get(record.uuid) or text_of(record))
        if vector is None:
            missing[record.uuid] = record
        else:
            items.append((record.uuid, vector))
    if items:
        ctx.store.set_embeddings(type(records[0]), records[0].graph_uuid, items)


def _embed_changes(
    ctx: IngestContext, batches: list[_Batch], vectors: Vectors, unembedded: dict[str, Edge]
) -> None:
    run = Outcome()
    for batch in batches:
        run.add(batch.outcome)
    dirty = run.dirty
    later: list[Record] = [
        *unembedded.values(),
        *dirty.get(Node, {}).values(),
        *dirty.get(ThreadSummary, {}).values(),
    ]
    if ctx.embedder is not None and later:
        vectors.update(_embed(ctx, [text_of(r) for r in later]))
        with ctx.store.transaction():
            for kind in (Edge, Node, ThreadSummary):
                records = [r for r in later if isinstance(r, kind)]
                if records:
                    _store_vectors(ctx, vectors, records, {})
    _observation_vectors(ctx, list(dirty.get(Observation, {}).values()))


def _observation_vectors(ctx: IngestContext, observations: list[Any]) -> None:
    """An observation restates one fact, so it shares that edge's vector (no second
    transformer pass); ones whose edge has no vector yet are embedded directly."""
    if not observations:
        return
    by_edge = {o.attributes.get("edge_uuid"): o for o in observations if o.attributes}
    graph_uuid = observations[0].graph_uuid
    vectors = ctx.store.get_embeddings(Edge, graph_uuid, [u for u in by_edge if u])
    shared = [(o.uuid, vectors[e]) for e, o in by_edge.items() if e in vectors]
    if shared:
        ctx.store.set_embeddings(Observation, graph_uuid, shared)
    done = {u for u, _ in shared}
    embed_records(ctx.store, ctx.embedder, [o for o in observations if o.uuid not in done])


def _user_node(ctx: IngestContext, graph: Graph) -> tuple[Node | None, User | None]:
    if graph.type != "user" or graph.user_uuid is None:
        return None, None
    user = ctx.store.get(User, graph.user_uuid, {"project_uuid": graph.project_uuid})
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
    if speaker is not None and len(speaker) > MAX_NAME_CHARS:
        # Stored before names were capped: the speaker is still a name the extraction
        # can keep (bounded() would drop every fact about it).
        log.info("episode %s: speaker name cut to %d characters", episode.uuid, MAX_NAME_CHARS)
        speaker = speaker[:MAX_NAME_CHARS].rstrip()
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


def _turns(
    episode: Episode, item: ExtractionInput, user: User | None, user_node: Node | None
) -> tuple[list[ExtractionInput], dict[str, bool]]:
    """What the extractor reads of an episode, and its speakers (name -> whether the
    speaker is the graph's user). A text written as a chat ("Bob: I moved to Berlin",
    "[Bob] ...", or a log of such lines: ``ingest/speakers.py``) is read as its speakers'
    messages, one extraction input per turn; a message that repeats its own speaker's
    name as a prefix is read without it."""
    if episode.source == "message":
        is_user = user_node is not None and item.speaker == user_node.name
        text = speakers.strip_own_prefix(item.text, episode.role_name or item.speaker)
        own = item if text == item.text else item.model_copy(update={"text": text})
        return [own], ({item.speaker: is_user} if item.speaker else {})
    found = speakers.turns(item.text) if episode.source == "text" else None
    if not found:
        return [item], {}
    out: list[ExtractionInput] = []
    who: dict[str, bool] = {}
    for turn in found:
        name, is_user = turn.speaker, False
        if turn.role == "assistant":
            label = "Assistant"
        else:
            label = "Person"
            if user_node is not None and _names_user(turn.speaker, user, user_node):
                name, is_user = user_node.name, True
        if label == "Person":
            who[name] = is_user
        out.append(
            item.model_copy(update={"text": turn.text, "speaker": name, "speaker_label": label})
        )
    return out, who


def _names_user(name: str, user: User | None, user_node: Node) -> bool:
    """ "Alice", "alice-42" or "User" written as the speaker of a user's graph's text."""
    known = {user_node.name.casefold(), *speakers.USERS}
    if user is not None:
        known |= {x.casefold() for x in (user.first_name, user.user_id) if x}
    return name.casefold() in known or name.split()[0].casefold() in known


def _merged(results: list[Extraction]) -> Extraction:
    """The extractions of one episode's turns as one (each entity once, by name)."""
    if len(results) == 1:
        return results[0]
    entities: dict[str, Any] = {}
    facts = []
    for result in results:
        for entity in result.entities:
            known = entities.setdefault(entity.name.casefold(), entity)
            if known.label is None and entity.label:
                known.label = entity.label
        facts.extend(result.facts)
    return Extraction(entities=list(entities.values()), facts=facts)


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


SUMMARY_FIELDS = ("summary", "updated_at")  # what derive.summarised changes


def _apply(
    ctx: IngestContext,
    graph: Graph,
    episode: Episode,
    item: ExtractionInput,
    voices: dict[str, bool],
    extraction: Extraction,
    resolver: EntityResolver,
    ontology: dict[str, Any],
    strict: bool,
    outcome: Outcome,
    tz: str | None,
    rec: trace.Recorder | None = None,
) -> None:
    store = ctx.store
    nodes: dict[str, Node] = {}
    for entity in extraction.entities:
        keep, labels = map_label(entity.label, ontology, strict)
        is_speaker = entity.name in voices
        speaker_is_user = voices.get(entity.name, False)
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
        outcome.nodes_created += len(created)
        for node in created:
            outcome.touch(node)
    resolver.created.clear()
    if nodes:
        for node in {n.uuid: n for n in nodes.values()}.values():
            store.link_episodes(Node, graph.uuid, node.uuid, [episode.uuid])
    new_facts: list[Edge] = []
    touched: dict[str, None] = {}  # the facts' ends, read once after the facts are written
    seen: set[tuple[str, str, str]] = set()
    for fact in extraction.facts:
        edge = _edge(ctx, graph, episode, fact, nodes, resolver, ontology, strict, outcome, tz, rec)
        if edge is None:
            continue
        # One statement is one fact: a second reading of a clause (same source, same
        # text) or the same triple again is not a second edge of this episode.
        keys = [
            (edge.source_node_uuid, edge.name, edge.target_node_uuid),
            (edge.source_node_uuid, "", " ".join(edge.fact.casefold().split())),
        ]
        if any(k in seen for k in keys):
            if rec is not None:
                rec.fact_dropped(fact, "a second reading of a statement already taken")
            continue
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
        new_facts.append(final)
        touched.update(dict.fromkeys((final.source_node_uuid, final.target_node_uuid)))
        if restated is None:  # a new edge (a fresh uuid): linked to this episode only
            supporting = [episode.uuid]
        else:
            supporting = store.episodes_of(Edge, final.graph_uuid, [final.uuid])[final.uuid][0]
        observation = derive.observe(store, final, supporting)
        if observation is not None:
            outcome.touch(observation)
    if new_facts:  # the episode is also found by the facts linked to it
        graph_writes.refresh_facts(store, graph.uuid, [episode.uuid])
    scope = {"graph_uuid": graph.uuid, "uuid": [*touched]}
    found = {n.uuid: n for n in store.find(Node, scope)} if touched else {}
    current = [found[u] for u in touched if u in found]
    summarised = derive.summaries(store, current)
    # Written together: one batch instead of a read and a write per node.
    rewritten = [u for u, n in zip(summarised, current, strict=True) if u is not n]
    store.update_many(rewritten, SUMMARY_FIELDS)
    for node, updated in zip(current, summarised, strict=True):
        if updated is not node:
            resolver.refresh(updated)
            if text_of(updated) != text_of(node):  # re-embed only when its text changed
                outcome.touch(updated)
    summary = derive.thread_summary(store, episode, new_facts, list(voices))
    if summary is not None:
        outcome.touch(summary)
    documents.summarise(store, episode, new_facts)


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
    rec: trace.Recorder | None = None,
) -> Edge | None:
    relation = _RELATION.sub("_", fact.relation.upper()).strip("_") or "RELATES_TO"
    mapped = map_relation(relation, ontology, strict)
    if mapped is None:
        if rec is not None:
            rec.fact_dropped(fact, f"{relation} is not an edge type of the ontology (strict)")
        return None
    ends = []
    for name in (fact.source, fact.target):
        node = nodes.get(name.casefold())
        if node is None:
            if strict and _types(ontology, "entity_types"):
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
