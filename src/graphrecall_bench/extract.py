"""``graphrecall bench extract``: how well an extractor turns episodes into a graph.

The benchmark's own data (``bench/data/extraction.txt``, hand-written: short chat messages
and JSON records, each with the facts, entities and dates a careful reader takes from it,
see ``bench/extract_data.py`` for the format and the matching rules) is ingested
in-process through the services and the worker's own code into a fresh SQLite database,
one user graph per case, episodes in order; what the graph then holds is scored:

- precision: share of the edges an episode produced (edges linked to it, merged
  restatements included) that match one of its gold facts; recall: share of gold facts
  matched by one of them; both also split into messages and JSON records;
- date accuracy: among matched gold facts with a date, share with a matching edge whose
  ``valid_at`` has that date;
- duplicate rate: share of a graph's edges whose fact text (ignoring case and spacing)
  equals another edge's of that graph;
- entities: expected names found among the nodes; noise: names that must not be nodes
  (a gerund, a role, "Assistant", a stray "Acme Corp.") found as nodes, exactly;
- invalidation: "a move invalidates the old home" checks, at the end of a case: every
  edge from the subject to exactly the named object is invalid (or one is live), leaving
  out facts that themselves say something ended ("Bob left Acme Corp").

With ``--locomo FILE`` the same extractor also ingests the first ``--locomo-samples``
LoCoMo conversations (in-process, no embedder) and reports their duplicate rate and facts
per message. ``--llm-url`` runs the LLM extractor (any OpenAI-compatible endpoint)
instead of the offline one. No embedder runs: extraction and the graph writes do not use
vectors.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrecall.ml.extraction import Extractor
from graphrecall.store.base import Store
from graphrecall_bench.extract_data import Case, Item, fact_matches, load, names_match, norm
from graphrecall_bench.tables import pct, text_table, write_json

# A fact that says something ended ("Bob left Acme Corp") stays live itself; the
# invalidation checks are about the facts it ends.
ENDED = re.compile(r"LEAVE|LEFT|QUIT|MOVES_FROM|RETIRE", re.I)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", help="where to write the results (default bench-out/extract.json)"
    )
    parser.add_argument("--data", help="a benchmark data file (default: the packaged one)")
    parser.add_argument("--locomo", help="a LoCoMo-format JSON file: also its duplicate rate")
    parser.add_argument("--locomo-samples", type=int, default=1, help="LoCoMo samples (default 1)")
    parser.add_argument("--llm-url", help="an OpenAI-compatible base URL: run the LLM extractor")
    parser.add_argument("--llm-model", default="gpt-4o-mini", help="the LLM's model name")
    parser.add_argument("--llm-key", default=None, help="the LLM endpoint's API key, if any")
    parser.add_argument("--workdir", help="keep the databases here (default: a temporary dir)")


def run(args: argparse.Namespace) -> int:
    extractor = make_extractor(args.llm_url, args.llm_model, args.llm_key)
    cases = load(Path(args.data)) if args.data else load()
    with tempfile.TemporaryDirectory(prefix="gr-bench-extract-") as tmp:
        work = Path(args.workdir) if args.workdir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for old in [*work.glob("extract.db*"), *work.glob("locomo.db*")]:
            old.unlink()  # always a fresh database
        result = benchmark(work / "extract.db", cases, extractor)
        if args.locomo:
            result["locomo"] = locomo_yield(
                work / "locomo.db", Path(args.locomo), args.locomo_samples, extractor
            )
    print(report(result))
    out = Path(args.json or "bench-out/extract.json")
    write_json(out, result)
    print(f"wrote {out}")
    return 0


def make_extractor(url: str | None, model: str, key: str | None) -> Extractor:
    if url:
        from graphrecall.ml.llm import LlmExtractor, OpenAIChatClient

        return LlmExtractor(OpenAIChatClient(url, model=model, api_key=key))
    from graphrecall.ml.offline_extractor import OfflineExtractor

    return OfflineExtractor()


# -- ingestion -------------------------------------------------------------------------------


def ingest_cases(store: Store, cases: Sequence[Case], extractor: Extractor) -> dict[str, Any]:
    """Every case as a user (its graph) with one thread; every episode added alone, in
    order, then all tasks run. Returns case id -> (graph uuid, episode uuid per item)."""
    from graphrecall.domain.inputs import EpisodeCreate, MessageCreate, MessagesAdd, UserCreate
    from graphrecall.services.accounts import projects
    from graphrecall.services.container import Services
    from graphrecall.services.graph import episodes, threads, users
    from graphrecall_bench.ingest_runs import drain_tasks

    ctx = Services(store=store, embedder=None)
    project = projects.get_or_create_project(store)
    placed: dict[str, Any] = {}
    for case in cases:
        first, _, last = case.user.partition(" ")
        body = UserCreate(
            user_id=f"bench-{case.case_id}",
            first_name=first,
            last_name=last or None,
            time_zone=case.time_zone,
        )
        user = users.create_user(ctx, project, body)
        thread = threads.create_thread(ctx, project, user.uuid)
        uuids: list[str] = []
        for item in case.items:
            if item.is_json:
                episode, _ = episodes.add_episode(
                    ctx,
                    project,
                    user.graph_uuid,
                    EpisodeCreate(type="json", data=item.text, reference_time=item.reference_time),
                )
                uuids.append(episode.uuid)
            else:
                message = MessageCreate(
                    role=item.role,  # type: ignore[arg-type]
                    name=item.speaker,
                    content=item.text,
                    reference_time=item.reference_time,
                )
                rows, _ = threads.add_messages(
                    ctx, project, thread.uuid, MessagesAdd(messages=[message])
                )
                uuids.append(rows[0].uuid)
        placed[case.case_id] = (user.graph_uuid, uuids)
    drain_tasks(store, None, extractor, log=lambda _: None, threads=1)
    return placed


def graph_edges(store: Store, graph_uuid: str) -> list[dict[str, Any]]:
    """Every edge of a graph with its end names and its episodes."""
    from graphrecall.domain.models import Edge, Node

    edges = store.find(Edge, {"graph_uuid": graph_uuid}, limit=1_000_000)
    names = {n.uuid: n.name for n in store.find(Node, {"graph_uuid": graph_uuid}, limit=1_000_000)}
    linked = store.episodes_of(Edge, graph_uuid, [e.uuid for e in edges]) if edges else {}
    return [
        {
            "source": names.get(e.source_node_uuid, "?"),
            "relation": e.name,
            "target": names.get(e.target_node_uuid, "?"),
            "fact": e.fact,
            "valid_at": e.valid_at,
            "invalid_at": e.invalid_at,
            "expired_at": e.expired_at,
            "episodes": linked.get(e.uuid, ([], False))[0],
        }
        for e in edges
    ]


def duplicates(edges: Sequence[dict[str, Any]]) -> int:
    """Edges whose fact text equals another edge's (of the same graph)."""
    counts = Counter(norm(e["fact"]) for e in edges)
    return sum(1 for e in edges if counts[norm(e["fact"])] > 1)


# -- scoring --------------------------------------------------------------------------------


@dataclass
class _Findings:
    """What scoring found wrong, listed in the JSON for a reader to check."""

    misses: list[dict[str, Any]] = field(default_factory=list)
    wrong: list[dict[str, Any]] = field(default_factory=list)
    dates_wrong: list[dict[str, Any]] = field(default_factory=list)
    checks_failed: list[dict[str, Any]] = field(default_factory=list)


def benchmark(db: Path, cases: Sequence[Case], extractor: Extractor) -> dict[str, Any]:
    from graphrecall.domain.models import Node
    from graphrecall.store import open_store

    store = open_store(db)
    try:
        started = time.perf_counter()
        placed = ingest_cases(store, cases, extractor)
        seconds = time.perf_counter() - started
        tally: dict[str, Counter[str]] = {"message": Counter(), "json": Counter()}
        findings = _Findings()
        total_edges = dup = 0
        for case in cases:
            graph_uuid, uuids = placed[case.case_id]
            edges = graph_edges(store, graph_uuid)
            nodes = [n.name for n in store.find(Node, {"graph_uuid": graph_uuid}, limit=100_000)]
            total_edges += len(edges)
            dup += duplicates(edges)
            for item, episode in zip(case.items, uuids, strict=True):
                found = [e for e in edges if episode in e["episodes"]]
                t = tally["json" if item.is_json else "message"]
                _score_item(case.case_id, item, found, nodes, t, findings)
            _check_validity(case, edges, tally["message"], findings)
    finally:
        store.close()
    both = tally["message"] + tally["json"]
    return {
        "extractor": extractor.name,
        "cases": len(cases),
        "episodes": {k: v["episodes"] for k, v in tally.items()},
        "seconds": round(seconds, 2),
        "overall": _scores(both),
        "messages": _scores(tally["message"]),
        "json": _scores(tally["json"]),
        "edges": total_edges,
        "duplicate_edges": dup,
        "duplicate_rate": round(dup / total_edges, 4) if total_edges else 0.0,
        "invalidation": {
            "moves_invalidate": _ratio(both["invalid_right"], both["invalid_checks"]),
            "still_live": _ratio(both["live_right"], both["live_checks"]),
            "failures": findings.checks_failed,
        },
        "misses": findings.misses,
        "dates_wrong": findings.dates_wrong,
        "wrong": findings.wrong,
    }


def _score_item(
    case_id: str,
    item: Item,
    found: list[dict[str, Any]],
    nodes: list[str],
    t: Counter[str],
    findings: _Findings,
) -> None:
    """Count one episode's edges against its gold facts, entities and non-entities."""
    t["episodes"] += 1
    t["edges"] += len(found)
    for edge in found:
        ok = any(
            fact_matches(g, edge["source"], edge["relation"], edge["target"]) for g in item.facts
        )
        t["correct"] += ok
        if not ok:
            findings.wrong.append({"case": case_id, "text": item.text, **_brief(edge)})
    for gold in item.facts:
        t["gold"] += 1
        hits = [e for e in found if fact_matches(gold, e["source"], e["relation"], e["target"])]
        t["found"] += bool(hits)
        if gold.date:
            t["dated"] += 1
            right = any((e["valid_at"] or "").startswith(gold.date) for e in hits)
            t["dated_right"] += right
            if hits and not right:
                findings.dates_wrong.append(
                    {
                        "case": case_id,
                        "text": item.text,
                        "gold": gold.date,
                        "found": [e["valid_at"] for e in hits],
                    }
                )
        if not hits:
            findings.misses.append(
                {
                    "case": case_id,
                    "text": item.text,
                    "gold": f"{gold.subject} | {' '.join(gold.relations)} | {gold.object}",
                    "extracted": [_brief(e) for e in found],
                }
            )
    for name in item.entities:
        t["entities"] += 1
        t["entities_found"] += any(names_match(name, n) for n in nodes)
    for name in item.not_entities:
        t["noise_checks"] += 1
        t["noise"] += any(n.strip().casefold() == name.casefold() for n in nodes)


def _check_validity(
    case: Case, edges: list[dict[str, Any]], t: Counter[str], findings: _Findings
) -> None:
    """The case's end-state checks: facts a move or a new job ended, facts still live."""
    for kind, checks in (("invalid", case.invalid), ("live", case.live)):
        for subject, obj in checks:
            about = [
                e
                for e in edges
                if names_match(subject, e["source"])
                and norm(obj) == norm(e["target"])
                and not ENDED.search(e["relation"])
            ]
            live = [e for e in about if not e["invalid_at"] and not e["expired_at"]]
            ok = bool(about) and (not live if kind == "invalid" else bool(live))
            t[f"{kind}_checks"] += 1
            t[f"{kind}_right"] += ok
            if not ok:
                findings.checks_failed.append(
                    {
                        "case": case.case_id,
                        "check": kind,
                        "subject": subject,
                        "object": obj,
                        "edges": [_brief(e) for e in about],
                    }
                )


def _brief(edge: dict[str, Any]) -> dict[str, Any]:
    return {k: edge[k] for k in ("source", "relation", "target", "fact", "valid_at")}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _scores(t: Counter[str]) -> dict[str, Any]:
    return {
        "precision": _ratio(t["correct"], t["edges"]),
        "recall": _ratio(t["found"], t["gold"]),
        "date_accuracy": _ratio(t["dated_right"], t["dated"]),
        "entity_recall": _ratio(t["entities_found"], t["entities"]),
        "noise_rate": _ratio(t["noise"], t["noise_checks"]),
        "gold_facts": t["gold"],
        "edges": t["edges"],
        "facts_per_episode": _ratio(t["edges"], t["episodes"]),
    }


# -- LoCoMo ---------------------------------------------------------------------------------


def locomo_yield(db: Path, data: Path, samples: int, extractor: Extractor) -> dict[str, Any]:
    """The first ``samples`` LoCoMo conversations ingested in-process (no embedder): the
    duplicate rate and edges per message of their graphs."""
    from graphrecall.domain.clock import to_iso
    from graphrecall.domain.inputs import MessageCreate, MessagesAdd, UserCreate
    from graphrecall.library.locomo import load as load_locomo
    from graphrecall.services.accounts import projects
    from graphrecall.services.container import Services
    from graphrecall.services.graph import threads, users
    from graphrecall.store import open_store
    from graphrecall_bench.ingest_runs import drain_tasks

    store = open_store(db)
    try:
        ctx = Services(store=store, embedder=None)
        project = projects.get_or_create_project(store)
        graphs: list[str] = []
        messages = 0
        for sample in load_locomo(data, samples):
            body = UserCreate(first_name=sample.speaker_a, user_id=f"locomo-{sample.sample_id}")
            user = users.create_user(ctx, project, body)
            graphs.append(user.graph_uuid)
            for session in sample.sessions:
                thread = threads.create_thread(ctx, project, user.uuid)
                when = to_iso(session.reference_time)
                for start in range(0, len(session.turns), 30):
                    batch = [
                        MessageCreate(
                            role="user", name=t.speaker, content=t.content, reference_time=when
                        )
                        for t in session.turns[start : start + 30]
                    ]
                    threads.add_messages(ctx, project, thread.uuid, MessagesAdd(messages=batch))
                    messages += len(batch)
        started = time.perf_counter()
        drain_tasks(store, None, extractor, log=lambda _: None, threads=1)
        seconds = time.perf_counter() - started
        edges = [e for g in graphs for e in graph_edges(store, g)]
        dup = sum(duplicates(graph_edges(store, g)) for g in graphs)
    finally:
        store.close()
    return {
        "samples": samples,
        "messages": messages,
        "edges": len(edges),
        "facts_per_message": _ratio(len(edges), messages),
        "duplicate_edges": dup,
        "duplicate_rate": _ratio(dup, len(edges)) or 0.0,
        "seconds": round(seconds, 2),
    }


def report(result: dict[str, Any]) -> str:
    rows = []
    for part in ("overall", "messages", "json"):
        s = result[part]
        rows.append(
            [
                part,
                pct(s["precision"]),
                pct(s["recall"]),
                pct(s["date_accuracy"]),
                pct(s["entity_recall"]),
                pct(s["noise_rate"]),
                str(s["gold_facts"]),
                str(s["edges"]),
            ]
        )
    head = [
        "episodes",
        "precision %",
        "recall %",
        "dates %",
        "entities %",
        "noise %",
        "gold",
        "edges",
    ]
    lines = [
        f"extraction benchmark: {result['extractor']}, {result['cases']} cases, "
        f"{result['episodes']['message']} messages, {result['episodes']['json']} JSON records",
        text_table(head, rows),
        f"duplicate rate {pct(result['duplicate_rate'])} % "
        f"({result['duplicate_edges']} of {result['edges']} edges); moves invalidate "
        f"{pct(result['invalidation']['moves_invalidate'])} %, still live "
        f"{pct(result['invalidation']['still_live'])} %",
    ]
    if "locomo" in result:
        lo = result["locomo"]
        lines.append(
            f"LoCoMo ({lo['samples']} samples, {lo['messages']} messages): duplicate rate "
            f"{pct(lo['duplicate_rate'])} % ({lo['duplicate_edges']} of {lo['edges']} edges), "
            f"{lo['facts_per_message']} facts per message"
        )
    return "\n".join(lines)
