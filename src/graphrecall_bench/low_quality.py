"""``graphrecall bench low-quality``: what ``filter_low_quality_results`` keeps and what it
costs in recall, on LoCoMo.

The samples are ingested in-process (``ingest_offline``); each question with evidence is
then searched with the ``cross_encoder`` reranker (the one the filter is valid with),
without and with the filter, through the search service:

- edges: a fact counts as finding the evidence turns it was extracted from (its
  provenance), so recall@10 is the share of evidence turns behind the first 10 facts;
- episodes: Zep refuses the filter on episode search, so the same knee cut
  (``retrieval/quality.kept``) is applied to the ranked episodes' relevance here, to see
  what it would do where the evidence is the result itself.

Printed and written per scope: results returned without and with the filter, and
recall@10 of both; and, for comparison, the rule before the knee (at least 5, then every
result of relevance 0.5 or more).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from graphrecall.domain.clock import to_iso
from graphrecall.library.locomo import load
from graphrecall_bench.ingest_runs import ingest_offline
from graphrecall_bench.tables import mean, text_table, write_json

PAGE = 100  # every result the search ranks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--samples", type=int, default=1, help="the first N samples (1)")
    parser.add_argument("--json", help="default bench-out/low_quality.json")
    parser.add_argument("--workdir", help="keep the database here")


def _recall(found: list[set[str]], relevant: set[str], k: int = 10) -> float:
    seen: set[str] = set()
    for episodes in found[:k]:
        seen |= episodes
    return len(seen & relevant) / len(relevant)


def _threshold_kept(scores: list[float]) -> int:
    """The rule before the knee (for comparison): at least 5, then relevance >= 0.5."""
    return max(min(5, len(scores)), sum(1 for s in scores if s >= 0.5))


def _hits(ctx: Any, project: Any, graph_uuid: str, scope: str, params: Any) -> list[Any]:
    from graphrecall.services.graph import search

    _, pairs, _ = search.search(
        ctx, project, graph_uuid, scope, params, page_size=PAGE, cursor=None
    )
    return [hit for _, hit in pairs]


def run(args: argparse.Namespace) -> int:
    from graphrecall import runtime
    from graphrecall.config import load_settings
    from graphrecall.domain.models import Edge, Project
    from graphrecall.retrieval import quality
    from graphrecall.services.graph import search

    samples = load(Path(args.data), args.samples)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="graphrecall-bench-lowq-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "locomo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    ingested = ingest_offline(db, samples)
    settings = load_settings(db=str(db))
    models = runtime.Models(runtime.minilm(settings), None, runtime.make_cross_encoder(settings))
    rt = runtime.build(settings, models=models)
    store, ctx = rt.store, rt.context
    rows: dict[str, list[dict[str, float]]] = {"edges": [], "episodes": []}
    try:
        project = store.find(Project, {})[0]
        for s in ingested.samples:
            for q in s.sample.questions:
                relevant = {s.episodes[d] for d in q.evidence if d in s.episodes}
                if not relevant:
                    continue
                params = search.SearchParams(query=q.question, reranker="cross_encoder")
                lean = dataclasses.replace(params, filter_low_quality_results=True)
                edges = _hits(ctx, project, s.graph_uuid, "edges", params)
                cut = _hits(ctx, project, s.graph_uuid, "edges", lean)
                sources = store.episodes_of(Edge, s.graph_uuid, [h.uuid for h in edges])

                def behind(hits: Any, sources: Any = sources) -> list[set[str]]:
                    return [set(sources.get(h.uuid, ([], False))[0]) for h in hits]

                old = _threshold_kept([h.relevance or 0.0 for h in edges])
                rows["edges"].append(
                    {
                        "all": len(edges),
                        "kept": len(cut),
                        "recall_all": _recall(behind(edges), relevant),
                        "recall_kept": _recall(behind(cut), relevant),
                        "kept_threshold": old,
                        "recall_threshold": _recall(behind(edges[:old]), relevant),
                    }
                )
                episodes = _hits(ctx, project, s.graph_uuid, "episodes", params)
                scores = [h.relevance or 0.0 for h in episodes]
                keep, old = quality.kept(scores), _threshold_kept(scores)
                found = [{h.uuid} for h in episodes]
                rows["episodes"].append(
                    {
                        "all": len(found),
                        "kept": keep,
                        "recall_all": _recall(found, relevant),
                        "recall_kept": _recall(found[:keep], relevant),
                        "kept_threshold": old,
                        "recall_threshold": _recall(found[:old], relevant),
                    }
                )
    finally:
        rt.close()
    result: dict[str, Any] = {
        "benchmark": "low_quality",
        "started_at": to_iso(datetime.now().astimezone()),
        "params": {"data": str(args.data), "samples": len(samples), "page": PAGE},
        "questions": len(rows["edges"]),
    }
    table = []
    for scope, scope_rows in rows.items():
        summary = {
            key: mean([r[key] for r in scope_rows])
            for key in (
                "all",
                "kept",
                "recall_all",
                "recall_kept",
                "kept_threshold",
                "recall_threshold",
            )
        }
        result[scope] = summary
        table.append(
            [
                scope,
                str(len(scope_rows)),
                f"{summary['all'] or 0:.1f}",
                f"{summary['kept'] or 0:.1f}",
                f"{100 * (summary['recall_all'] or 0):.1f}",
                f"{100 * (summary['recall_kept'] or 0):.1f}",
                f"{summary['kept_threshold'] or 0:.1f}",
                f"{100 * (summary['recall_threshold'] or 0):.1f}",
            ]
        )
    header = ["scope", "questions", "results", "kept (knee)", "recall@10 all"]
    header += ["recall@10 knee", "kept (>= 0.5)", "recall@10 >= 0.5"]
    print(text_table(header, table))
    json_path = Path(args.json) if args.json else Path("bench-out") / "low_quality.json"
    write_json(json_path, result)
    print(f"wrote {json_path}")
    return 0
