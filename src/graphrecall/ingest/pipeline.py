"""The episode pipeline: extract -> resolve entities -> resolve facts (restatements merge,
contradictions invalidate) -> resolve times -> node summaries, thread summary,
observations -> mark processed.

Extraction and embedding (the slow, CPU-bound steps) run outside any transaction; each
episode's writes and its ``processed`` flag then commit in one transaction, so after a
crash an episode is either fully applied or still unprocessed and is redone when its task
is retried. Already-processed episodes are skipped, which makes a retried task idempotent.

This module orchestrates a run; how an episode is read for the extractor is
``reading.py``, the ontology's part ``ontology.py``, and one episode's writes
``apply.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphrecall.domain.models import (
    Edge,
    Episode,
    Graph,
    Node,
    Observation,
    Project,
    Record,
    Task,
    ThreadSummary,
)
from graphrecall.graph_model.embedding import embed_records, episode_vector_texts, text_of
from graphrecall.ingest import trace, webhooks
from graphrecall.ingest.apply import Applying, Outcome, Run, apply
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.ontology import effective_ontology
from graphrecall.ingest.reading import extraction_input, merged, turns, user_of_graph
from graphrecall.ingest.resolution import EntityResolver
from graphrecall.ml import json_facts
from graphrecall.ml.embedder import EmbedderUnavailable
from graphrecall.ml.extraction import Extraction, ExtractionInput, bounded

log = logging.getLogger(__name__)


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
    user_node, user = user_of_graph(ctx, graph)
    ontology = effective_ontology(ctx, graph)
    project = store.get(Project, graph.project_uuid)
    tz = (
        (user.time_zone if user else None)
        or graph.time_zone
        or (project.default_time_zone if project else None)
    )
    inputs = [extraction_input(e, graph, user, user_node, ontology) for e in episodes]
    read_as = [turns(e, item, user, user_node) for e, item in zip(episodes, inputs, strict=True)]
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
            extractions[i] = merged([r for r in mine if not isinstance(r, str)])
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
            run = Run(ctx, graph, resolver, ontology, strict, tz)
            commit = _Commit(run, hook, vectors, episode_texts, unembedded)
            for i, episode in enumerate(batch.episodes, start=batch.first):
                if i in failed:
                    batch.failed.append({"uuid": episode.uuid, "error": failed[i]})
                    continue
                rec = recorders[i] if recorders else None
                try:
                    outcome = commit.episode(episode, voices[i], extractions.get(i), rec)
                except Exception as exc:
                    if extractions.get(i) is None:
                        raise
                    # Applying what was read from this episode failed (its transaction
                    # rolled back): it is kept without its facts rather than left
                    # unprocessed for good, since a retry would fail the same way.
                    log.exception("episode %s: applying its extraction failed", episode.uuid)
                    resolver.forget()
                    # Its debug log (when on) was written with the error by failure_logged.
                    outcome = commit.episode(episode, voices[i], None, None)
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

    run: Run
    hook: dict[str, Any] | None
    vectors: Vectors
    episode_texts: Mapping[str, str]
    unembedded: dict[str, Edge]  # the run's edges whose text was not embedded up front

    def episode(
        self,
        episode: Episode,
        voices: dict[str, bool],
        extraction: Extraction | None,
        rec: trace.Recorder | None,
    ) -> Outcome:
        """Apply ``extraction`` to ``episode`` and mark it processed, in one transaction.
        Its outcome is counted only once committed: a failed episode leaves no trace."""
        ctx, graph, store = self.run.ctx, self.run.graph, self.run.ctx.store
        outcome = Outcome()
        with trace.failure_logged(store, graph.uuid, rec), store.transaction():
            current = store.get(Episode, episode.uuid, {"graph_uuid": graph.uuid})
            if current is None or current.processed:
                # Done meanwhile by a worker that took this task over when this one's
                # lease ran out (or deleted): applying it again would double it.
                return outcome
            if extraction is not None:
                apply(self.run, Applying(episode, extraction, voices, outcome, rec))
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
