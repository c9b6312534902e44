"""What ingestion did with an episode, recorded while debug logging is on for its project
(``debug_log.enable``): a debug log in words (``EpisodeDebugLog``) and one trace per step
(``IngestionTrace``: ``combined_extraction``, ``resolve_nodes``, ``resolve_edges``) in the
Zep wire's shape, every decision with its explanation, so a user can see why a message
gave no fact.

The pipeline holds a :class:`Recorder` per episode only while logging is on (one primary
key read per run decides it); otherwise it holds ``None`` and every hook is skipped, so
the hot path pays nothing else. The records are written in the episode's own
transaction: a rolled-back episode leaves no log claiming it was applied.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    DebugLogging,
    Edge,
    Episode,
    EpisodeDebugLog,
    IngestionTrace,
    Node,
)
from graphrecall.ml.extraction import ExtractedFact, Extraction, ExtractionInput
from graphrecall.store.base import Store

log = logging.getLogger(__name__)

# How long one ``debug_log.enable`` keeps logging on (Zep: one hour below Enterprise).
DURATION_SECONDS = 3600
# A trace is a debugging aid: an episode's lists are cut here, with a log line saying so.
MAX_ENTRIES = 200


def enabled(store: Store, project_uuid: str) -> bool:
    """Whether episodes of the project processed now are recorded."""
    switch = store.get(DebugLogging, project_uuid, {"project_uuid": project_uuid})
    return switch is not None and switch.enabled_until > clock.now()


def _node(node: Node, explanation: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "uuid": node.uuid,
        "name": node.name,
        "labels": node.labels,
        "created_at": node.created_at,
    }
    if node.summary:
        out["summary"] = node.summary
    if explanation:
        out["explanation"] = explanation
    return out


def _edge(edge: Edge, explanation: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "uuid": edge.uuid,
        "name": edge.name,
        "fact": edge.fact,
        "source_node_uuid": edge.source_node_uuid,
        "target_node_uuid": edge.target_node_uuid,
        "created_at": edge.created_at,
    }
    for key in ("valid_at", "invalid_at", "expired_at"):
        if getattr(edge, key) is not None:
            out[key] = getattr(edge, key)
    if explanation:
        out["explanation"] = explanation
    return out


def _extracted_fact(fact: ExtractedFact, explanation: str | None = None) -> dict[str, Any]:
    """An extracted fact as a trace edge: its ends are still names (``attributes``)."""
    attributes: dict[str, Any] = {"source": fact.source, "target": fact.target}
    for key in ("valid_at", "invalid_at", "rule"):
        if getattr(fact, key) is not None:
            attributes[key] = getattr(fact, key)
    for key in ("past", "also"):  # how it was told, when it matters (single values)
        if getattr(fact, key):
            attributes[key] = True
    out: dict[str, Any] = {
        "name": fact.relation,
        "fact": fact.fact,
        "attributes": attributes,
    }
    if explanation:
        out["explanation"] = explanation
    return out


def times_explained(fact: ExtractedFact, edge: Edge, episode: Episode) -> str:
    """How the fact's time phrases were read (or that it had none)."""
    parts = [
        f"{key} {phrase!r} read as {getattr(edge, key) or 'nothing (not understood)'}"
        for key, phrase in (("valid_at", fact.valid_at), ("invalid_at", fact.invalid_at))
        if phrase
    ]
    if not fact.valid_at:
        parts.append("no time phrase: valid from the episode's reference time")
    return "; " + "; ".join(parts)


def fact_line(fact: ExtractedFact) -> str:
    return f'"{fact.fact}" ({fact.source} {fact.relation} {fact.target})'


class Recorder:
    """Collects one episode's decisions; :meth:`write` stores them."""

    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.started_at = clock.now()
        self.entries: list[dict[str, Any]] = []
        self.extracted_nodes: list[dict[str, Any]] = []
        self.extracted_edges: list[dict[str, Any]] = []
        self.extraction_input: dict[str, Any] = {"episode_content": episode.content}
        self.extracted: dict[str, str] = {}  # extracted entity name -> its trace uuid
        self.resolutions: list[dict[str, Any]] = []
        self.duplicates: list[dict[str, Any]] = []
        self.nodes: dict[str, dict[str, Any]] = {}
        self.edges: list[dict[str, Any]] = []
        self.new_edges: list[dict[str, Any]] = []
        self.invalidations: list[dict[str, Any]] = []
        self.facts_kept = 0
        self.facts_seen = 0
        self.extraction_ran = False

    # -- the debug log -------------------------------------------------------------------

    def log(self, level: str, message: str) -> None:
        if len(self.entries) < MAX_ENTRIES:
            self.entries.append({"level": level, "logged_at": clock.now(), "message": message})

    # -- combined_extraction ---------------------------------------------------------------

    def extraction(self, item: ExtractionInput, result: Extraction, how: str) -> None:
        self.extraction_ran = True
        self.extraction_input.update(
            {
                "episodes": [
                    {
                        "uuid": self.episode.uuid,
                        "content": self.episode.content,
                        "source": self.episode.source,
                        "valid_at": self.episode.reference_time,
                    }
                ],
                "entity_types": [t.model_dump() for t in item.entity_types],
                "edge_types": [t.model_dump() for t in item.edge_types],
            }
        )
        for entity in result.entities[:MAX_ENTRIES]:
            uuid = self.extracted.setdefault(entity.name.casefold(), new_id())
            node: dict[str, Any] = {
                "uuid": uuid,
                "name": entity.name,
                "labels": [entity.label] if entity.label else [],
                "episode_indexes": [0],
            }
            self.extracted_nodes.append(node)
        self.extracted_edges = [_extracted_fact(f) for f in result.facts[:MAX_ENTRIES]]
        self.facts_seen = len(result.facts)
        names = ", ".join(e.name for e in result.entities) or "none"
        self.log(
            "info",
            f"extraction ({how}): {len(result.entities)} entities ({names}),"
            f" {len(result.facts)} facts",
        )
        for fact in result.facts:
            rule = f" by rule {fact.rule}" if fact.rule else ""
            times = "".join(
                f", {key} phrase {value!r}"
                for key, value in (("valid_at", fact.valid_at), ("invalid_at", fact.invalid_at))
                if value
            )
            self.log("debug", f"extracted{rule}: {fact_line(fact)}{times}")

    # -- resolve_nodes ---------------------------------------------------------------------

    def entity_dropped(self, name: str, label: str | None, reason: str) -> None:
        self.log("info", f"entity {name!r} ({label or 'no type'}) dropped: {reason}")

    def entity_resolved(self, name: str, node: Node, created: bool, is_user: bool) -> None:
        if is_user:
            reason = "the graph's user (the speaker)"
        elif created:
            reason = "new node: no node of that name"
        else:
            reason = "an existing node of the same name"
        uuid = self.extracted.setdefault(name.casefold(), new_id())
        self.resolutions.append(
            {"extracted_node_uuid": uuid, "resolved_node_uuid": node.uuid, "explanation": reason}
        )
        if not created:
            self.duplicates.append(
                {
                    "extracted_node": {"uuid": uuid, "name": name},
                    "existing_node": _node(node, reason),
                }
            )
        self.nodes[node.uuid] = _node(node, reason)
        self.log("debug", f"entity {name!r} -> node {node.name!r} ({node.uuid}): {reason}")

    # -- resolve_edges ---------------------------------------------------------------------

    def fact_dropped(self, fact: ExtractedFact, reason: str) -> None:
        self.log("info", f"fact {fact_line(fact)} dropped: {reason}")

    def fact_resolved(
        self,
        fact: ExtractedFact,
        edge: Edge,
        *,
        merged: bool,
        invalidated: list[tuple[Edge, str]],
        times: str,
        notes: list[str] | None = None,
    ) -> None:
        self.facts_kept += 1
        if merged:
            reason = (
                f"restates the existing fact {edge.uuid}: this episode was added to its"
                " sources, no new edge"
            )
        else:
            reason = "new fact"
        reason += times
        for note in notes or []:
            reason += f"; {note}"
        self.edges.append(_edge(edge, reason))
        if not merged:
            self.new_edges.append(_edge(edge))
        self.log("info", f"fact {fact_line(fact)}: {reason}")
        for old, because in invalidated:
            why = f"contradicted by {edge.uuid} ({edge.name}: {edge.fact!r}): {because}"
            self.invalidations.append(
                {
                    "invalidated_edge_uuid": old.uuid,
                    "invalidating_edges": [{"uuid": edge.uuid, "explanation": why}],
                }
            )
            self.log(
                "info",
                f"fact {old.uuid} ({old.fact!r}) invalidated (invalid_at {old.invalid_at}): {why}",
            )

    # -- storing ---------------------------------------------------------------------------

    def _verdict(self) -> None:
        if self.facts_kept:
            return
        if not self.extraction_ran:
            return  # the reason was logged where extraction was skipped
        if not self.facts_seen:
            self.log("warning", "no fact: the extractor found no statement it could read")
        else:
            self.log(
                "warning",
                f"no fact: all {self.facts_seen} extracted facts were dropped (see above)",
            )

    def write(self, store: Store, graph_uuid: str, error: str | None = None) -> None:
        """Store the debug log and the traces (in the caller's transaction)."""
        if error is None:
            self._verdict()
        else:
            self.log("error", f"ingestion failed: {error}")
        now = clock.now()
        log = EpisodeDebugLog(
            uuid=self.episode.uuid,
            graph_uuid=graph_uuid,
            status="error" if error else "completed",
            entries=self.entries,
            error_message=error,
            started_at=self.started_at,
            completed_at=None if error else now,
        )
        store.delete(EpisodeDebugLog, {"graph_uuid": graph_uuid, "uuid": self.episode.uuid})
        store.insert([log])
        if error or not self.extraction_ran:
            return
        steps = (
            (
                "combined_extraction",
                self.extraction_input,
                {"extracted_nodes": self.extracted_nodes, "extracted_edges": self.extracted_edges},
            ),
            (
                "resolve_nodes",
                {"extracted_nodes": self.extracted_nodes},
                {
                    "nodes": list(self.nodes.values()),
                    "node_resolutions": self.resolutions,
                    "node_duplicates": self.duplicates,
                },
            ),
            (
                "resolve_edges",
                {"extracted_edges": self.extracted_edges, "resolved_nodes": [*self.nodes.values()]},
                {
                    "edges": self.edges,
                    "new_edges": self.new_edges,
                    "edge_invalidations": self.invalidations,
                },
            ),
        )
        store.insert(
            [
                IngestionTrace(
                    uuid=new_id(),
                    graph_uuid=graph_uuid,
                    episode_uuid=self.episode.uuid,
                    step=step,
                    seq=seq,
                    input=given,
                    output=made,
                    created_at=now,
                )
                for seq, (step, given, made) in enumerate(steps)
            ]
        )


@contextmanager
def failure_logged(store: Store, graph_uuid: str, rec: Recorder | None) -> Iterator[None]:
    """While debug logging is on, an episode that fails gets a debug log with its error
    (written after its own transaction rolled back); the failure goes on as it was."""
    try:
        yield
    except Exception as exc:
        if rec is not None:
            try:
                with store.transaction():
                    rec.write(store, graph_uuid, error=f"{type(exc).__name__}: {exc}")
            except Exception:  # the original failure matters more than its log
                log.exception("writing the debug log of episode %s failed", rec.episode.uuid)
        raise
