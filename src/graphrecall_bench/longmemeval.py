"""``graphrecall bench longmemeval``: evidence retrieval on LongMemEval (Wu et al., ICLR
2025), user/assistant chats with long haystacks, LoCoMo's complement.

Every question brings its own haystack (~50 sessions, ~500 turns): it becomes its own user,
each session a thread, each turn a message (role user or assistant, reference time = the
session's date), through the real ``zep-cloud`` SDK into a ``graphrecall serve``
subprocess (``bench locomo``'s ingestion). A turn over the message limit goes as several
messages, counted. Then the question goes through ``search_episodes`` (page 50),
``search_edges`` (page 10) and ``get_context``, and the same baselines as ``bench
locomo`` rank its episodes: BM25-only and vector-only in-process, hybrid RRF,
cross_encoder and MMR through the SDK, and the plain baselines over the raw turns.

The API takes no "now": a question's ``question_date`` is recorded, but time phrases in
it are read against the server's clock (the haystacks date from 2023).

Metrics are LongMemEval's own (``retrieval_metrics``): recall_any@k, recall_all@k and
NDCG@k at the turn level (a turn is relevant when ``has_answer``, or when its answer
session marks none) and the session level (LongMemEval's turn-to-session reading), k in
5, 10, 30, 50; overall and per question type, abstention questions (no evidence) apart.
The first search of each graph is timed apart (it loads the graph's indexes) and asked
again for the measured call.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrecall.domain.clock import to_iso
from graphrecall_bench.ingest_runs import API_KEY, IngestedSample, ingest_sdk, search_trigger
from graphrecall_bench.judge import JudgedQuestion, write_questions
from graphrecall_bench.locomo_report import copies_note
from graphrecall_bench.longmemeval_data import LmeItem, load, session_of, turn_of
from graphrecall_bench.longmemeval_report import draw_chart, table
from graphrecall_bench.plain_baselines import NAMES as PLAIN_NAMES
from graphrecall_bench.plain_baselines import PlainIndex, document
from graphrecall_bench.retrieval_calls import (
    BASELINES,
    ContextCalls,
    context_provenance,
    engine_rankings,
    sdk_edge_episodes,
    sdk_episodes,
    timed,
)
from graphrecall_bench.retrieval_metrics import (
    covered,
    evaluate,
    evaluate_turn2session,
    recall_at,
    units,
)
from graphrecall_bench.tables import latency, mean, write_json

if TYPE_CHECKING:
    from zep_cloud import Zep

KS = (5, 10, 30, 50)
EPISODE_PAGE = 50  # the API's largest page
EDGE_PAGE = 10
CONTEXT_CHARS = 2500
WARMUP_QUESTIONS = 1  # in-process baselines only: the SDK calls time each graph's first
REFERENCE: dict[str, Any] = {
    "longmemeval_paper_m_session_recall@5": {"bm25": 0.634, "contriever": 0.723},
}
# turn_recall@k is the share of a question's evidence turns in the top k: LoCoMo's recall and
# what ``bench judge`` and issue 29's targets read, beside LongMemEval's own any / all.
LIFT_KEYS = (
    "turn_recall@5",
    "turn_recall@10",
    "session_recall_any@5",
    "session_recall_any@10",
    "turn_recall_any@5",
    "turn_recall_any@10",
    "turn_ndcg@10",
)
RANKINGS = ("search_episodes", *(b.name for b in BASELINES), *PLAIN_NAMES)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="a LongMemEval JSON file (.json or .gz)")
    parser.add_argument(
        "--json", help="where to write the results (default bench-out/longmemeval.json)"
    )
    parser.add_argument("--png", help="where to draw the chart (default: next to the JSON, .png)")
    parser.add_argument(
        "--max-questions",
        type=int,
        help="only N questions, one of each type in turn (each brings ~500 turns to ingest)",
    )
    parser.add_argument(
        "--no-facts",
        action="store_true",
        help="ingest without fact extraction (GRAPHRECALL_EXTRACTOR=none): faster, but"
        " search_edges and get_context then have no facts; reported in the results",
    )
    parser.add_argument(
        "--workdir", help="keep the database and the server log here (default: a temp dir)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        from zep_cloud import Zep
    except ImportError as exc:
        raise RuntimeError(
            "bench longmemeval drives the server through the zep-cloud SDK:"
            " pip install 'graphrecall[dev]'"
        ) from exc
    from graphrecall_bench.machine import machine
    from graphrecall_bench.server import ServerProcess

    data_path = Path(args.data)
    items = load(data_path, args.max_questions)
    json_path = Path(args.json) if args.json else Path("bench-out") / "longmemeval.json"
    png_path = Path(args.png) if args.png else json_path.with_suffix(".png")
    result: dict[str, Any] = {
        "benchmark": "longmemeval",
        "version": 1,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "params": {
            "data": str(data_path),
            "questions": len(items),
            "max_questions": args.max_questions,
            "fact_extraction": not args.no_facts,
            "episode_page": EPISODE_PAGE,
            "edge_page": EDGE_PAGE,
            "context_max_characters": CONTEXT_CHARS,
            "ks": list(KS),
        },
        "reference": REFERENCE,
        "data": {
            "questions": len(items),
            "abstention_questions": sum(i.question.abstention for i in items),
            "sessions": sum(len(i.sample.sessions) for i in items),
            "turns": sum(len(i.question.turn_ids) for i in items),
            "messages": sum(i.messages for i in items),
            "split_turns": sum(i.split_turns for i in items),
            "truncated_turns": 0,  # a long turn is split, never cut
            "unmarked_answer_sessions": sum(i.question.unmarked_answer_sessions for i in items),
            "question_types": _count(i.question.question_type for i in items),
        },
    }
    d = result["data"]
    print(
        f"LongMemEval: {d['questions']} questions ({d['abstention_questions']} abstention),"
        f" {d['sessions']} sessions, {d['turns']} turns -> {d['messages']} messages"
        f" ({d['split_turns']} turns over the message limit split)",
        flush=True,
    )
    env = {"GRAPHRECALL_EXTRACTOR": "none"} if args.no_facts else {}
    with tempfile.TemporaryDirectory(prefix="graphrecall-bench-lme-") as tmp:
        work = Path(args.workdir) if args.workdir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        db = work / "longmemeval.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        log = work / "longmemeval-server.log"
        with ServerProcess(db, API_KEY, log, extra_env=env) as server:
            client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)
            print("ingesting through the SDK (messages in batches of 30)", flush=True)
            ingested = ingest_sdk(client, [i.sample for i in items], log=_log, user_prefix="lme")
            result["ingestion"] = {
                **ingested.summary(),
                "layer": "sdk (HTTP, loopback)",
                "seconds_per_question": round(ingested.seconds / len(items), 1),
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
            rows, context = _ask_sdk(client, items, ingested.samples)
            _write_questions(work, db, items, ingested.samples)
            queries = [
                (s.graph_uuid, i.question.question)
                for i, s in zip(items, ingested.samples, strict=True)
            ]
            for name, ranked in engine_rankings(
                db, queries, EPISODE_PAGE, WARMUP_QUESTIONS
            ).items():
                for row, (took, uuids) in zip(rows, ranked, strict=True):
                    row["ms"][name] = took
                    row[name] = units(uuids, row["turn_of_episode"])
        _plain(items, rows)
        result.update(summarise(rows, context))
    print(table(result), flush=True)
    write_json(json_path, result)
    print(f"wrote {json_path}", flush=True)
    if draw_chart(result, png_path):
        print(f"wrote {png_path}", flush=True)
    return 0


def _write_questions(
    work: Path, db: Path, items: Sequence[LmeItem], ingested: Sequence[IngestedSample]
) -> None:
    """What ``bench judge`` asks again (answerable questions; units are turns): halves are
    the even and odd questions."""
    write_questions(
        work,
        "longmemeval",
        db.name,
        [
            JudgedQuestion(
                id=item.question.question_id,
                graph=s.graph_uuid,
                query=item.question.question,
                relevant=tuple(item.question.evidence_turns),
                half=n % 2,
                unit_of={uuid: turn_of(mid) for mid, uuid in s.episodes.items()},
            )
            for n, (item, s) in enumerate(zip(items, ingested, strict=True))
            if not item.question.abstention and item.question.evidence_turns
        ],
    )


def _log(text: str) -> None:
    print(text, flush=True)


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


# -- through the SDK -------------------------------------------------------------------------


def _ask_sdk(
    client: Zep, items: Sequence[LmeItem], ingested: Sequence[IngestedSample]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    context = ContextCalls(client, CONTEXT_CHARS)
    sdk_baselines = [b for b in BASELINES if b.layer == "sdk"]
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for n, (item, s) in enumerate(zip(items, ingested, strict=True), 1):
        q, g = item.question, s.graph_uuid
        turn_of_episode = {uuid: turn_of(mid) for mid, uuid in s.episodes.items()}
        row: dict[str, Any] = {
            "question_id": q.question_id,
            "question_type": q.question_type,
            "abstention": q.abstention,
            "relevant": list(q.evidence_turns),
            "corpus": list(q.turn_ids),
            "turn_of_episode": turn_of_episode,
            "ms": {},
        }
        # The graph's first search loads its indexes: timed apart, then asked again.
        row["ms"]["first_search_episodes"], _ = timed(
            sdk_episodes, client, g, q.question, EPISODE_PAGE
        )
        took, uuids = timed(sdk_episodes, client, g, q.question, EPISODE_PAGE)
        row["ms"]["search_episodes"], row["search_episodes"] = took, units(uuids, turn_of_episode)
        took, cited = timed(sdk_edge_episodes, client, g, q.question, EDGE_PAGE)
        row["ms"]["search_edges"] = took
        row["edge_turns"] = units([u for eps in cited for u in eps], turn_of_episode)
        row["edges_returned"] = len(cited)
        asked = context.ask(g, q.question)
        if asked is not None:
            context.calls_ok += 1
            row["ms"]["get_context"], response = asked
            provenance = context_provenance(response)
            if provenance is not None:
                facts, with_nodes, extra = provenance
                row["context"] = {
                    "turns": units(sorted(facts), turn_of_episode),
                    "turns_with_nodes": units(sorted(with_nodes), turn_of_episode),
                    **extra,
                }
        for b in sdk_baselines:
            took, uuids = timed(sdk_episodes, client, g, q.question, EPISODE_PAGE, b)
            row["ms"][b.name], row[b.name] = took, units(uuids, turn_of_episode)
        rows.append(row)
        print(
            f"  asked {n}/{len(items)} questions ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    state = {
        "unavailable": context.unavailable,
        "errors": context.errors,
        "first_error": context.first_error,
    }
    return rows, state


def _plain(items: Sequence[LmeItem], rows: list[dict[str, Any]]) -> None:
    """The plain baselines over each haystack's raw turns, whole (not split)."""
    from graphrecall import runtime
    from graphrecall.ml.embedder import STOCK

    # the stock model: the plain baselines are the anchor, unchanged by our training
    embedder = runtime.minilm(model=STOCK)
    started = time.perf_counter()
    for item, row in zip(items, rows, strict=True):
        turns = [(f"{sid}", t) for sid, t in _rawunits(item)]
        index_started = time.perf_counter()
        index = PlainIndex([i for i, _ in turns], [t for _, t in turns], embedder)
        row["ms"]["plain_index"] = (time.perf_counter() - index_started) * 1000
        took, ranked = timed(index.rankings, item.question.question, EPISODE_PAGE)
        row["ms"]["plain"] = took
        row.update(ranked)
    print(f"  plain baselines: done ({time.perf_counter() - started:.0f} s)", flush=True)


def _rawunits(item: LmeItem) -> list[tuple[str, str]]:
    """(turn id, "role: text") of every turn, its split parts joined again."""
    out: dict[str, list[str]] = {}
    roles: dict[str, str] = {}
    for session in item.sample.sessions:
        for t in session.turns:
            tid = turn_of(t.dia_id)
            out.setdefault(tid, []).append(t.content)
            roles[tid] = t.role
    return [(tid, document(roles[tid], " ".join(parts))) for tid, parts in out.items()]


# -- summary -------------------------------------------------------------------------------------


def question_metrics(row: dict[str, Any], key: str) -> dict[str, float]:
    """LongMemEval's metrics of one question's ranking ``row[key]`` (turn ids)."""
    ranked, relevant, corpus = row[key], row["relevant"], row["corpus"]
    out: dict[str, float] = {}
    for k in KS:
        t_any, t_all, t_ndcg = evaluate(ranked, relevant, corpus, k)
        s_any, s_all, s_ndcg = evaluate_turn2session(ranked, relevant, corpus, k, session_of)
        out |= {
            f"session_recall_any@{k}": s_any,
            f"session_recall_all@{k}": s_all,
            f"session_ndcg@{k}": s_ndcg,
            f"turn_recall@{k}": recall_at(ranked, relevant, k),
            f"turn_recall_any@{k}": t_any,
            f"turn_recall_all@{k}": t_all,
            f"turn_ndcg@{k}": t_ndcg,
        }
    return out


def ranking_summary(rows: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    per = [question_metrics(r, key) for r in rows]
    out: dict[str, Any] = {"questions": len(rows)}
    for name in per[0] if per else ():
        out[name] = mean([p[name] for p in per])
    return out


def coverage(rows: Sequence[dict[str, Any]], get: Any) -> dict[str, Any]:
    """Share of questions whose evidence turns/sessions are all (any) among the turns a
    call cited, and the mean share of evidence turns cited."""
    got = [(get(r), r) for r in rows if get(r) is not None]
    sessions = [({session_of(t) for t in found}, {session_of(t) for t in r["relevant"]})
                for found, r in got]  # fmt: skip
    return {
        "questions": len(got),
        "turn_share": mean([covered(set(found), r["relevant"]) for found, r in got]),
        "turn_any": mean([float(bool(set(found) & set(r["relevant"]))) for found, r in got]),
        "session_any": mean([float(bool(f & w)) for f, w in sessions]),
        "session_all": mean([float(w <= f) for f, w in sessions]),
    }


def summarise(rows: list[dict[str, Any]], context: dict[str, Any]) -> dict[str, Any]:
    answerable = [r for r in rows if not r["abstention"] and r["relevant"]]
    types = sorted({r["question_type"] for r in answerable})

    def lat(name: str) -> dict[str, Any]:
        return latency([r["ms"][name] for r in rows if name in r["ms"]])

    def block(key: str) -> dict[str, Any]:
        m = ranking_summary(answerable, key)
        m["by_type"] = {
            t: ranking_summary([r for r in answerable if r["question_type"] == t], key)
            for t in types
        }
        m["latency"] = lat("plain" if key in PLAIN_NAMES else key)
        return m

    out: dict[str, Any] = {
        "questions_answerable": len(answerable),
        "questions_abstention": sum(r["abstention"] for r in rows),
        "rankings": {key: block(key) for key in RANKINGS},
    }
    abstention = [r for r in rows if r["abstention"] and r["relevant"]]
    out["abstention"] = {
        key: ranking_summary(abstention, key) for key in ("search_episodes", "plain_rrf")
    }
    shipped = out["rankings"]["search_episodes"]
    out["lift_over_plain"] = {
        name: {k: _minus(shipped.get(k), out["rankings"][name].get(k)) for k in LIFT_KEYS}
        for name in PLAIN_NAMES
    }
    edges = coverage(answerable, lambda r: r["edge_turns"])
    edges["latency"] = lat("search_edges")
    edges["facts_returned_mean"] = mean([r["edges_returned"] for r in rows])
    edges["by_type"] = {
        t: coverage([r for r in answerable if r["question_type"] == t], lambda r: r["edge_turns"])
        for t in types
    }
    out["search_edges"] = edges
    with_context = [r for r in rows if "context" in r]
    if with_context:
        ctx = coverage(answerable, lambda r: r.get("context", {}).get("turns"))
        ctx["with_nodes"] = coverage(
            answerable, lambda r: r.get("context", {}).get("turns_with_nodes")
        )
        ctx["latency"] = lat("get_context")
        ctx["chars_mean"] = mean([r["context"]["chars"] for r in with_context])
        ctx["errors"] = context["errors"]
        out["context"] = ctx
    else:
        out["context"] = None
        out["context_error"] = context["unavailable"] or context["first_error"]
    out["latency"] = {
        "first_search_episodes_per_graph": lat("first_search_episodes"),
        "search_episodes": lat("search_episodes"),
        "search_edges": lat("search_edges"),
        "get_context": lat("get_context"),
        "plain_index_build": lat("plain_index"),
    }
    out["per_question"] = [_question_row(r) for r in rows]
    return out


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 4)


def _question_row(r: dict[str, Any]) -> dict[str, Any]:
    ranks = [r["search_episodes"].index(t) + 1 if t in r["search_episodes"] else None
             for t in r["relevant"]]  # fmt: skip
    return {
        "question_id": r["question_id"],
        "question_type": r["question_type"],
        "abstention": r["abstention"],
        "evidence_turns": len(r["relevant"]),
        "episode_ranks": ranks,  # rank of each evidence turn in the top 50 (None: absent)
        "plain_rrf_ranks": [
            r["plain_rrf"].index(t) + 1 if t in r["plain_rrf"] else None for t in r["relevant"]
        ],
        "ms": {k: round(v, 2) for k, v in r["ms"].items()},
    }
