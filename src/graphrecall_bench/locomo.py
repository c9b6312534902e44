"""``graphrecall bench locomo``: evidence retrieval quality and latency on LoCoMo.

Each sample becomes a user (first name = speaker A) with its user graph; each session a
thread; each turn a message (role ``user``, name = the speaker, reference time = the
session's date). Everything goes through the real ``zep-cloud`` SDK into a
``graphrecall serve`` subprocess on loopback with a fresh database; the run waits for every
ingestion task. A message's uuid is its episode's uuid, so every dialogue id maps to one
episode.

For every question with evidence the question text is the query, and the measures are:

- ``search_episodes`` (page of 25, default reranker): evidence recall@5/@10/@25 (share of
  the question's evidence turns among the top k) and NDCG@10 with binary relevance;
- ``search_edges`` (page of 10): recall@10 through the facts' episode provenance;
- ``get_context`` at 2,500 characters: share of evidence turns represented through the
  provenance of the selected edges, observations and episodes (``coverage``); nodes are
  counted separately (``coverage_with_nodes``) since a person's node cites most turns;
- latency p50/p95 of each call through the SDK (after a short warm-up); the first search to
  each graph the warm-up did not touch is timed apart (``first_per_graph``) and asked again;
- baselines on the same data in the same run: BM25 only and vector only, in-process with
  ``retrieval.engine.search`` on the server's database (the API cannot ask for one leg);
  hybrid RRF, hybrid + cross_encoder (the offline default scorer) and hybrid + MMR
  (lambda 0.5) through the SDK;
- the plain baselines over each sample's raw turns (``plain_baselines``: BM25 1.2 / 0.75,
  the embedder's cosine, their RRF) and the lift of the shipped search over each.

Recalls are averaged over questions (macro), overall and per category. The table is
printed, the results written to JSON, and a PNG chart drawn when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrecall.domain.clock import to_iso
from graphrecall.library.locomo import Question, category_name, load
from graphrecall_bench.build import is_postgres, reset_schema, with_schema
from graphrecall_bench.ingest_runs import API_KEY, IngestedSample, ingest_sdk, search_trigger
from graphrecall_bench.judge import JudgedQuestion, write_questions
from graphrecall_bench.locomo_report import copies_note, draw_chart, table
from graphrecall_bench.plain_baselines import NAMES as PLAIN_NAMES
from graphrecall_bench.retrieval_calls import (
    BASELINES,
    ContextCalls,
    context_provenance,
    engine_rankings,
    sdk_edge_episodes,
    sdk_episodes,
    timed,
)
from graphrecall_bench.retrieval_metrics import covered, ndcg_at, recall_at
from graphrecall_bench.tables import latency, mean, pct, write_json

if TYPE_CHECKING:
    from zep_cloud import Zep


KS = (5, 10, 25)
EPISODE_PAGE = 25
PAGE = 10
CONTEXT_CHARS = 2500
WARMUP_QUESTIONS = 3
PLAIN_DEPTH = 25  # the plain baselines rank as deep as the episode page
TARGETS = {"recall@5": 0.75, "recall@10": 0.85, "context_coverage": 0.80}
REFERENCE: dict[str, Any] = {
    "locomo_table3_dragon_recall": {"@5": 0.567, "@10": 0.662, "@25": 0.767, "@50": 0.827},
    "mem0_paper_search_latency_ms": {
        "mem0": {"p50": 148, "p95": 200},
        "mem0g": {"p50": 476, "p95": 657},
        "zep": {"p50": 513, "p95": 778},
    },
}


@dataclass
class Item:
    """One question to ask, with its evidence as episode uuids."""

    sample: IngestedSample
    question: Question
    relevant: list[str]  # episode uuids of the resolved evidence turns


# -- metrics -------------------------------------------------------------------------------


def ranking_metrics(rows: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """Mean recall@k / NDCG@10 / hit@10 of ranked lists stored under ``row[key]``."""
    out: dict[str, Any] = {"questions": len(rows)}
    for k in KS:
        out[f"recall@{k}"] = mean([recall_at(r[key], r["relevant"], k) for r in rows])
    out["ndcg@10"] = mean([ndcg_at(r[key], r["relevant"], 10) for r in rows])
    out["hit@10"] = mean([float(recall_at(r[key], r["relevant"], 10) > 0) for r in rows])
    return out


def by_category(
    rows: Sequence[dict[str, Any]], metric: Callable[[Sequence[dict[str, Any]]], dict[str, Any]]
) -> dict[str, Any]:
    out = {}
    for number in sorted({r["category"] for r in rows}):
        subset = [r for r in rows if r["category"] == number]
        out[category_name(number)] = metric(subset)
    return out


# -- the command -----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--json", help="where to write the results (default bench-out/locomo.json)")
    parser.add_argument("--samples", type=int, help="only the first N samples")
    parser.add_argument("--png", help="where to draw the chart (default: next to the JSON, .png)")
    parser.add_argument(
        "--max-questions", type=int, help="ask at most N questions (with evidence) per sample"
    )
    parser.add_argument(
        "--workdir", help="keep the database and the server log here (default: a temp dir)"
    )
    parser.add_argument(
        "--no-facts",
        action="store_true",
        help="ingest without fact extraction (GRAPHRECALL_EXTRACTOR=none): episode rankings"
        " without the facts column and leg, search_edges and get_context without facts;"
        " recorded in the results",
    )
    parser.add_argument(
        "--db",
        help="ingest into this PostgreSQL server (postgresql://...; schema bench_locomo,"
        " emptied first) instead of a SQLite file in the work directory",
    )


def run(args: argparse.Namespace) -> int:
    try:
        from zep_cloud import Zep
    except ImportError as exc:
        raise RuntimeError(
            "bench locomo drives the server through the zep-cloud SDK:"
            " pip install 'graphrecall[dev]'"
        ) from exc
    from graphrecall_bench.machine import machine
    from graphrecall_bench.server import ServerProcess

    if args.max_questions is not None and args.max_questions < 1:
        raise ValueError("--max-questions must be at least 1")
    if args.db is not None and not is_postgres(args.db):
        raise ValueError("--db takes a postgresql:// URL (without it: SQLite)")
    data_path = Path(args.data)
    samples = load(data_path, args.samples)
    json_path = Path(args.json) if args.json else Path("bench-out") / "locomo.json"
    png_path = Path(args.png) if args.png else json_path.with_suffix(".png")
    result: dict[str, Any] = {
        "benchmark": "locomo",
        "version": 1,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "params": {
            "data": str(data_path),
            "samples": len(samples),
            "max_questions_per_sample": args.max_questions,
            "episode_page": EPISODE_PAGE,
            "page": PAGE,
            "context_max_characters": CONTEXT_CHARS,
            "warmup_questions": WARMUP_QUESTIONS,
            "fact_extraction": not args.no_facts,
        },
        "reference": REFERENCE,
        "targets": TARGETS,
    }
    turns = sum(len(s.turns) for s in samples)
    print(
        f"LoCoMo: {len(samples)} samples, {sum(len(s.sessions) for s in samples)} sessions,"
        f" {turns} turns, {sum(len(s.questions) for s in samples)} questions",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="graphrecall-bench-locomo-") as tmp:
        work = Path(args.workdir) if args.workdir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        db: Path | str = work / "locomo.db"
        if args.db is not None:
            db = with_schema(args.db, "bench_locomo")
            reset_schema(db)
        else:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        result["params"]["backend"] = "sqlite" if isinstance(db, Path) else "postgresql"
        env = {"GRAPHRECALL_EXTRACTOR": "none"} if args.no_facts else {}
        with ServerProcess(db, API_KEY, work / "locomo-server.log", extra_env=env) as server:
            client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)
            print("ingesting through the SDK (messages in batches of 30)", flush=True)
            ingested = ingest_sdk(client, samples, log=_log)
            result["ingestion"] = {
                **ingested.summary(),
                "layer": "sdk (HTTP, loopback)",
                "copies_built_s": server.wait_for_copies(
                    search_trigger(client, ingested.samples[0].graph_uuid)
                ),
            }
            print(
                f"ingested {ingested.messages} messages in {ingested.seconds:.1f} s"
                f" = {ingested.messages_per_s:.1f} messages/s"
                f" ({len(ingested.failed_tasks)} failed tasks)" + copies_note(result["ingestion"]),
                flush=True,
            )
            items = _items(ingested.samples, args.max_questions, result)
            _write_questions(work, db, items, ingested.samples)
            rows, context = _ask_sdk(client, items)
            _baselines_in_process(db, items, rows)
        result.update(_summarise(rows, context))
    print(table(result), flush=True)
    write_json(json_path, result)
    print(f"wrote {json_path}", flush=True)
    if draw_chart(result, png_path):
        print(f"wrote {png_path}", flush=True)
    return 0


def _write_questions(
    work: Path, db: Path | str, items: Sequence[Item], samples: Sequence[IngestedSample]
) -> None:
    """What ``bench judge`` asks again: halves are the first and second half of the samples."""
    order = {s.sample.sample_id: n for n, s in enumerate(samples)}
    first_half = (len(samples) + 1) // 2
    write_questions(
        work,
        "locomo",
        db.name if isinstance(db, Path) else db,
        [
            JudgedQuestion(
                id=f"{i.sample.sample.sample_id}/{i.question.index}",
                graph=i.sample.graph_uuid,
                query=i.question.question,
                relevant=tuple(i.relevant),
                half=0 if order[i.sample.sample.sample_id] < first_half else 1,
            )
            for i in items
        ],
    )


def _log(text: str) -> None:
    print(text, flush=True)


def _items(
    ingested: Sequence[IngestedSample], max_questions: int | None, result: dict[str, Any]
) -> list[Item]:
    """Questions with evidence, and the accounting of every evidence id."""
    items: list[Item] = []
    unresolved: list[dict[str, Any]] = []
    normalised: list[dict[str, Any]] = []
    without_evidence = unresolvable = 0
    for s in ingested:
        taken = 0
        for q in s.sample.questions:
            if not q.evidence_raw:
                without_evidence += 1
                continue
            if max_questions is not None and taken >= max_questions:
                continue
            taken += 1
            where = {"sample_id": s.sample.sample_id, "question": q.index}
            unresolved += [{**where, "raw": raw} for raw in q.unresolved]
            normalised += [{**where, "raw": a, "resolved": b} for a, b in q.normalised]
            relevant = [s.episodes[d] for d in q.evidence if d in s.episodes]
            missing = [d for d in q.evidence if d not in s.episodes]
            unresolved += [{**where, "raw": d, "why": "turn not ingested"} for d in missing]
            if not relevant:
                unresolvable += 1
                continue
            items.append(Item(s, q, relevant))
    result["questions"] = len(items)
    result["questions_total"] = sum(len(s.sample.questions) for s in ingested)
    result["questions_without_evidence"] = without_evidence
    result["questions_unresolvable"] = unresolvable
    result["evidence_turns"] = sum(len(i.relevant) for i in items)
    result["unresolved_evidence"] = len(unresolved)
    result["unresolved_evidence_ids"] = unresolved
    result["normalised_evidence_ids"] = normalised
    print(
        f"{len(items)} questions with evidence ({result['evidence_turns']} evidence turns);"
        f" {len(unresolved)} evidence ids unresolved, {len(normalised)} normalised",
        flush=True,
    )
    return items


# -- through the SDK -------------------------------------------------------------------------


def _ask_sdk(client: Zep, items: Sequence[Item]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every question through the SDK; the per-question rows and the context state."""
    context = ContextCalls(client, CONTEXT_CHARS)
    sdk_baselines = [b for b in BASELINES if b.layer == "sdk"]
    episodes = partial(sdk_episodes, client)

    def edges(g: str, q: str) -> list[list[str]]:
        return sdk_edge_episodes(client, g, q, PAGE)

    # Warm-up: the server's first calls load the models and vector matrices.
    for item in items[:WARMUP_QUESTIONS]:
        g, q = item.sample.graph_uuid, item.question.question
        episodes(g, q, EPISODE_PAGE)
        edges(g, q)
        context.ask(g, q)
        for b in sdk_baselines:
            episodes(g, q, PAGE, b)
    if context.unavailable:
        print(f"get_context unavailable: {context.unavailable}", flush=True)

    rows: list[dict[str, Any]] = []
    seen = {item.sample.graph_uuid for item in items[:WARMUP_QUESTIONS]}
    started = time.perf_counter()
    next_note = started + 30
    for n, item in enumerate(items, 1):
        g, q = item.sample.graph_uuid, item.question.question
        row: dict[str, Any] = {
            "sample_id": item.sample.sample.sample_id,
            "question": item.question.index,
            "category": item.question.category,
            "relevant": item.relevant,
            "ms": {},
        }
        if g not in seen:
            # A graph's first search reads its copies: timed apart (issue 31), then asked again.
            seen.add(g)
            row["ms"]["first_search_episodes"], _ = timed(episodes, g, q, EPISODE_PAGE)
        row["ms"]["search_episodes"], row["episodes"] = timed(episodes, g, q, EPISODE_PAGE)
        row["ms"]["search_edges"], edge_eps = timed(edges, g, q)
        row["edge_episodes"] = sorted({u for eps in edge_eps for u in eps})
        asked = context.ask(g, q)
        if asked is not None:
            context.calls_ok += 1
            row["ms"]["get_context"], response = asked
            provenance = context_provenance(response)
            if provenance is not None:
                facts, with_nodes, extra = provenance
                row["context"] = {
                    "coverage": covered(facts, item.relevant),
                    "coverage_with_nodes": covered(with_nodes, item.relevant),
                    **extra,
                }
        for b in sdk_baselines:
            row["ms"][b.name], row[b.name] = timed(episodes, g, q, PAGE, b)
        rows.append(row)
        if time.perf_counter() >= next_note or n == len(items):
            so_far = ranking_metrics(rows, "episodes")
            print(
                f"  asked {n}/{len(items)} questions ({time.perf_counter() - started:.0f} s);"
                f" search_episodes recall@10 so far {pct(so_far['recall@10'])} %",
                flush=True,
            )
            next_note = time.perf_counter() + 30
    state = {
        "unavailable": context.unavailable,
        "errors": context.errors,
        "first_error": context.first_error,
    }
    return rows, state


# -- in-process baselines ----------------------------------------------------------------------


def _baselines_in_process(
    db: Path | str, items: Sequence[Item], rows: list[dict[str, Any]]
) -> None:
    """The engine's single-leg rankings, and the plain baselines over each sample's turns."""
    queries = [(i.sample.graph_uuid, i.question.question) for i in items]
    for name, ranked in engine_rankings(db, queries, PAGE, WARMUP_QUESTIONS).items():
        for row, (took, uuids) in zip(rows, ranked, strict=True):
            row["ms"][name], row[name] = took, uuids
    _plain_baselines(items, rows)


def _plain_baselines(items: Sequence[Item], rows: list[dict[str, Any]]) -> None:
    """BM25, cosine and their RRF over each sample's raw turns ("speaker: text"), ids the
    turns' episode uuids, so the rankings compare with the episode search's directly."""
    from graphrecall import runtime
    from graphrecall.ml.embedder import STOCK
    from graphrecall_bench.plain_baselines import PlainIndex, document

    # the stock model: the plain baselines are the anchor, unchanged by our training
    embedder = runtime.minilm(model=STOCK)
    indexes: dict[str, PlainIndex] = {}
    started = time.perf_counter()
    for item, row in zip(items, rows, strict=True):
        s = item.sample
        index = indexes.get(s.graph_uuid)
        if index is None:
            turns = [t for t in s.sample.turns if t.dia_id in s.episodes]
            index = PlainIndex(
                [s.episodes[t.dia_id] for t in turns],
                [document(t.speaker, t.content) for t in turns],
                embedder,
            )
            indexes[s.graph_uuid] = index
        took, ranked = timed(index.rankings, item.question.question, PLAIN_DEPTH)
        row["ms"]["plain"] = took
        row.update(ranked)
    print(f"  plain baselines: done ({time.perf_counter() - started:.0f} s)", flush=True)


# -- summary -------------------------------------------------------------------------------------


def _summarise(rows: list[dict[str, Any]], context: dict[str, Any]) -> dict[str, Any]:
    def lat(name: str, subset: Sequence[dict[str, Any]] = rows) -> dict[str, Any]:
        return latency([r["ms"][name] for r in subset if name in r["ms"]])

    def edge_metric(subset: Sequence[dict[str, Any]]) -> dict[str, Any]:
        recalls = [covered(set(r["edge_episodes"]), r["relevant"]) for r in subset]
        return {"questions": len(subset), "recall@10": mean(recalls)}

    def context_metric(subset: Sequence[dict[str, Any]]) -> dict[str, Any]:
        got = [r["context"] for r in subset if "context" in r]
        return {
            "questions": len(got),
            "coverage": mean([c["coverage"] for c in got]),
            "coverage_with_nodes": mean([c["coverage_with_nodes"] for c in got]),
        }

    out: dict[str, Any] = {}
    episodes = ranking_metrics(rows, "episodes")
    episodes.update({k: v for k, v in lat("search_episodes").items() if k != "n"})
    episodes["page_size"] = EPISODE_PAGE
    episodes["first_per_graph"] = lat("first_search_episodes")
    episodes["by_category"] = by_category(rows, partial(ranking_metrics, key="episodes"))
    out["search_episodes"] = episodes

    edge = edge_metric(rows)
    edge.update({k: v for k, v in lat("search_edges").items() if k != "n"})
    edge["page_size"] = PAGE
    edge["by_category"] = by_category(rows, edge_metric)
    out["search_edges"] = edge

    with_context = [r for r in rows if "context" in r]
    if with_context:
        ctx = context_metric(rows)
        ctx.update({k: v for k, v in lat("get_context").items() if k != "n"})
        ctx["max_characters"] = CONTEXT_CHARS
        ctx["chars_mean"] = mean([r["context"]["chars"] for r in with_context])
        ctx["truncated_share"] = mean([float(r["context"]["truncated"]) for r in with_context])
        for kind in ("edges", "nodes", "observations", "thread_summaries"):
            ctx[f"{kind}_mean"] = mean([r["context"][kind] for r in with_context])
        ctx["errors"] = context["errors"]
        ctx["first_error"] = context["first_error"]
        ctx["by_category"] = by_category(with_context, context_metric)
        out["context"] = ctx
    else:
        out["context"] = None
        out["context_error"] = (
            context["unavailable"]
            or context["first_error"]
            or "get_context answered without results (include_results was ignored)"
        )

    baselines: dict[str, Any] = {}
    for b in BASELINES:
        m = ranking_metrics(rows, b.name)
        m = {k: v for k, v in m.items() if k != "recall@25"}  # pages of 10
        m.update({k: v for k, v in lat(b.name).items() if k != "n"})
        m["layer"] = b.layer
        m["legs"] = list(b.legs)
        m["reranker"] = b.reranker
        if b.mmr_lambda is not None:
            m["mmr_lambda"] = b.mmr_lambda
        m["by_category"] = {
            name: {"recall@10": v["recall@10"]}
            for name, v in by_category(rows, partial(ranking_metrics, key=b.name)).items()
        }
        baselines[b.name] = m
    out["baselines"] = baselines
    out["plain_baselines"] = plain_summary(rows, episodes)

    per_sample = []
    for sample_id in dict.fromkeys(r["sample_id"] for r in rows):
        subset = [r for r in rows if r["sample_id"] == sample_id]
        m = ranking_metrics(subset, "episodes")
        per_sample.append(
            {
                "sample_id": sample_id,
                "questions": len(subset),
                "recall@10": m["recall@10"],
                "edges_recall@10": edge_metric(subset)["recall@10"],
            }
        )
    out["per_sample"] = per_sample
    out["per_question"] = [_question_row(r) for r in rows]
    out["target_verdicts"] = _verdicts(out)
    return out


def plain_summary(rows: Sequence[dict[str, Any]], episodes: dict[str, Any]) -> dict[str, Any]:
    """The plain baselines' metrics, and the lift of the shipped episode search over each
    (points of the same metric, shipped minus plain)."""
    plain: dict[str, Any] = {"depth": PLAIN_DEPTH, "ms_all_three": lat_of(rows, "plain")}
    for name in PLAIN_NAMES:
        m = ranking_metrics(rows, name)
        m["by_category"] = {
            cat: {"recall@10": v["recall@10"]}
            for cat, v in by_category(rows, partial(ranking_metrics, key=name)).items()
        }
        m["lift_of_search_episodes"] = {
            k: round(episodes[k] - m[k], 4)
            for k in ("recall@5", "recall@10", "recall@25", "ndcg@10")
            if episodes.get(k) is not None and m.get(k) is not None
        }
        plain[name] = m
    return plain


def lat_of(rows: Sequence[dict[str, Any]], name: str) -> dict[str, Any]:
    return {k: v for k, v in latency([r["ms"][name] for r in rows if name in r["ms"]]).items()}


def _question_row(r: dict[str, Any]) -> dict[str, Any]:
    ranks = []
    for u in r["relevant"]:
        ranks.append(r["episodes"].index(u) + 1 if u in r["episodes"] else None)
    row = {
        "sample_id": r["sample_id"],
        "question": r["question"],
        "category": r["category"],
        "evidence": len(r["relevant"]),
        "episode_ranks": ranks,  # rank of each evidence turn in the top 25 (None: absent)
        "edges_recall@10": round(covered(set(r["edge_episodes"]), r["relevant"]), 3),
        "ms": {k: round(v, 2) for k, v in r["ms"].items()},
    }
    if "context" in r:
        row["context_coverage"] = round(r["context"]["coverage"], 3)
    return row


def _verdicts(out: dict[str, Any]) -> dict[str, Any]:
    episodes = out["search_episodes"]
    context = out.get("context") or {}
    measured = {
        "recall@5": episodes["recall@5"],
        "recall@10": episodes["recall@10"],
        "context_coverage": context.get("coverage"),
    }
    return {
        name: {
            "target": target,
            "measured": measured[name],
            "met": None if measured[name] is None else measured[name] >= target,
        }
        for name, target in TARGETS.items()
    }
