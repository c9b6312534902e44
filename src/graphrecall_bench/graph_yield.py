"""What an ingested graph holds, for ``bench ingest``: counts of nodes, edges,
invalidations, observations and summaries, and a seeded sample of facts with the messages
they came from (JSON and Markdown) for a human to judge precision.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from graphrecall.domain.models import (
    Edge,
    Episode,
    Node,
    Observation,
    ThreadSummary,
)
from graphrecall.store.base import Store
from graphrecall_bench.ingest_runs import IngestedSample


def graph_stats(store: Store, graph_uuids: Sequence[str]) -> dict[str, Any]:
    """Counts over the given graphs: what ingestion produced."""
    scope = {"graph_uuid": list(graph_uuids)}
    edges: list[Edge] = []
    support: dict[str, tuple[list[str], bool]] = {}
    for g in graph_uuids:
        graph_edges = list(store.iter_all(Edge, {"graph_uuid": g}))
        edges += graph_edges
        support.update(store.episodes_of(Edge, g, [e.uuid for e in graph_edges]))
    relations = Counter(e.name for e in edges)
    labels = Counter(
        label
        for g in graph_uuids
        for n in store.iter_all(Node, {"graph_uuid": g})
        for label in (n.labels or ["(none)"])
    )
    episodes = store.count(Episode, scope)
    return {
        "graphs": len(graph_uuids),
        "episodes": episodes,
        "episodes_processed": store.count(Episode, {**scope, "processed": True}),
        "nodes": store.count(Node, scope),
        "edges": len(edges),
        "edges_invalidated": sum(e.invalid_at is not None for e in edges),
        "edges_expired": sum(e.expired_at is not None for e in edges),
        "edges_restated": sum(len(support.get(e.uuid, ([], False))[0]) > 1 for e in edges),
        "edges_per_message": round(len(edges) / episodes, 3) if episodes else None,
        "observations": store.count(Observation, scope),
        "thread_summaries": store.count(ThreadSummary, scope),
        "top_relations": relations.most_common(15),
        "node_labels": labels.most_common(12),
    }


def sample_facts(
    store: Store, ingested: Sequence[IngestedSample], n: int, seed: int
) -> list[dict[str, Any]]:
    """``n`` facts drawn at random (seeded) with the messages they were extracted from."""
    dia_of = {uuid: dia for s in ingested for dia, uuid in s.episodes.items()}
    sample_of = {uuid: s.sample.sample_id for s in ingested for uuid in s.episodes.values()}
    edges = sorted(
        (e for s in ingested for e in store.iter_all(Edge, {"graph_uuid": s.graph_uuid})),
        key=lambda e: e.uuid,
    )
    picked = random.Random(seed).sample(edges, min(n, len(edges)))
    support: dict[str, tuple[list[str], bool]] = {}
    for graph_uuid in dict.fromkeys(e.graph_uuid for e in picked):
        uuids = [e.uuid for e in picked if e.graph_uuid == graph_uuid]
        support.update(store.episodes_of(Edge, graph_uuid, uuids, limit=3))
    out = []
    for edge in picked:
        src = store.get(Node, edge.source_node_uuid, {"graph_uuid": edge.graph_uuid})
        dst = store.get(Node, edge.target_node_uuid, {"graph_uuid": edge.graph_uuid})
        sources = []
        for uuid in support.get(edge.uuid, ([], False))[0]:
            ep = store.get(Episode, uuid, {"graph_uuid": edge.graph_uuid})
            if ep is not None:
                sources.append(
                    {
                        "dia_id": dia_of.get(uuid),
                        "sample_id": sample_of.get(uuid),
                        "speaker": ep.role_name,
                        "reference_time": ep.reference_time,
                        "text": ep.content,
                    }
                )
        out.append(
            {
                "uuid": edge.uuid,
                "relation": edge.name,
                "fact": edge.fact,
                "source": src.name if src else None,
                "target": dst.name if dst else None,
                "valid_at": edge.valid_at,
                "invalid_at": edge.invalid_at,
                "messages": sources,
            }
        )
    return out


def facts_markdown(facts: Sequence[dict[str, Any]], seed: int) -> str:
    lines = [
        f"# {len(facts)} extracted facts, sampled at random (seed {seed})",
        "",
        "For each: is the fact stated (or clearly implied) by its message, with the right",
        "entities and relation? Mark correct / partly / wrong.",
        "",
    ]
    for i, f in enumerate(facts, 1):
        lines.append(f"## {i}. {f['fact']}")
        lines.append("")
        lines.append(f"- relation: `{f['source']}` -[{f['relation']}]-> `{f['target']}`")
        when = f"valid_at {f['valid_at']}" + (
            f", invalid_at {f['invalid_at']}" if f["invalid_at"] else ""
        )
        lines.append(f"- {when}")
        for m in f["messages"]:
            lines.append(f"- {m['sample_id']} {m['dia_id']} {m['speaker']}: {m['text']}")
        lines.append("- verdict: ")
        lines.append("")
    return "\n".join(lines)
