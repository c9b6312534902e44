"""``graphrecall bench search``: search latency on synthetic chat-memory graphs.

For each size: build (or reuse) the database, derive questions from its facts, then time
every case (scope x reranker, plus a filtered search) at three layers:

- ``engine``: ``retrieval.engine.search`` in-process (the ranking alone);
- ``service``: ``services.search.search`` in-process (ranking, cursor, hydration);
- ``sdk``: the real ``zep-cloud`` SDK against a ``graphrecall serve`` subprocess on
  loopback (adds the router's views, JSON, HTTP and the SDK's parsing).

Every case is warmed up first; the cold first call is reported separately. Latencies are
wall-clock per call. The table is printed and everything goes to a JSON file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from graphrecall.bench import report
from graphrecall.bench.build import Built, ensure_db, working_copy
from graphrecall.bench.server import store_index_status, wait_for_builds
from graphrecall.bench.synthetic import SPAN, START, Query, make_queries
from graphrecall.bench.writes import Writer
from graphrecall.domain import scopes
from graphrecall.domain.clock import to_iso

PAGE_SIZE = 10
# The scopes whose first search starts a big graph's index builds (waited for before timing).
INDEXED_SCOPES = ("edges", "nodes", "episodes")
API_KEY = "gr_bench_search_key"
LAYERS = ("engine", "service", "sdk")
# The goal this benchmark tracks: hybrid RRF edge search through the SDK, 100k facts.
TARGET = {"case": "edges/rrf", "layer": "sdk", "size": 100_000, "p95_ms_max": 25.0}
# The filtered case keeps current facts (not expired) learned after this time.
FILTER_SINCE = START + SPAN / 4


@dataclass(frozen=True)
class Case:
    name: str
    scope: str
    reranker: str
    mmr_lambda: float | None = None
    center: bool = False  # node_distance around the user's node (the biggest hub)
    mentions: bool = False  # episode_mentions with filters.episode_uuids
    filtered: bool = False  # edge_types + date filter


CASES: tuple[Case, ...] = (
    Case("edges/rrf", "edges", "rrf"),
    Case("edges/mmr", "edges", "mmr", mmr_lambda=0.5),
    Case("edges/cross_encoder", "edges", "cross_encoder"),
    Case("edges/node_distance", "edges", "node_distance", center=True),
    Case("edges/episode_mentions", "edges", "episode_mentions", mentions=True),
    Case("edges/rrf+filters", "edges", "rrf", filtered=True),
    Case("nodes/rrf", "nodes", "rrf"),
    Case("nodes/mmr", "nodes", "mmr", mmr_lambda=0.5),
    Case("nodes/cross_encoder", "nodes", "cross_encoder"),
    Case("nodes/node_distance", "nodes", "node_distance", center=True),
    Case("episodes/rrf", "episodes", "rrf"),
    Case("episodes/mmr", "episodes", "mmr", mmr_lambda=0.5),
    Case("episodes/cross_encoder", "episodes", "cross_encoder"),
    # get_context (issue target: p95 <= 60 ms at 100k edges); through the SDK only.
    Case("context/2500", "context", "-"),
)
CASES_BY_NAME = {c.name: c for c in CASES}
FILTERED = CASES_BY_NAME["edges/rrf+filters"]

Call = Callable[[Query], list[str]]


@dataclass
class Measurement:
    case: str
    scope: str
    reranker: str
    layer: str
    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    first_ms: float  # the first call, before warm-up (model and vector-matrix loading)
    hit_at_10: float  # share of questions whose fact/answer/message is in the first page
    results_mean: float
    stopped_early: bool  # the case's time budget ran out before every question was asked


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(
        parser, sizes="10000,100000", queries=200, layers=LAYERS, case_budget=120.0,
        json_name="search.json",
    )  # fmt: skip


def add_common_arguments(
    parser: argparse.ArgumentParser,
    *,
    sizes: str,
    queries: int,
    layers: Sequence[str],
    case_budget: float,
    json_name: str,
) -> None:
    """The options every benchmark built on this runner takes (``bench search``,
    ``bench scale``), with that benchmark's defaults."""
    parser.add_argument(
        "--sizes", default=sizes, help=f"facts per graph, comma-separated ({sizes})"
    )
    parser.add_argument(
        "--queries", type=int, default=queries, help=f"questions per case ({queries})"
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of graphs and questions (7)")
    parser.add_argument(
        "--out", default="bench-out", help="cache and output directory (bench-out/)"
    )
    parser.add_argument("--json", help=f"where to write the results (default OUT/{json_name})")
    parser.add_argument(
        "--cases",
        help=f"comma-separated subset of: {', '.join(CASES_BY_NAME)} (default all;"
        " none: no search)",
    )
    parser.add_argument(
        "--layers",
        default=",".join(layers),
        help=f"comma-separated subset of engine,service,sdk ({','.join(layers)})",
    )
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls per case (10)")
    parser.add_argument(
        "--case-budget",
        type=float,
        default=case_budget,
        help=f"seconds one case may take per layer; slower cases stop early ({case_budget:g})",
    )
    parser.add_argument(
        "--write-rate",
        type=float,
        default=0.0,
        help="while searching, add this many facts and messages a second to the graph"
        " (bench/writes.py; 0, the default: none)",
    )


@dataclass
class Plan:
    """What one run of the runner measures, from the command-line options."""

    sizes: list[int]
    cases: list[Case]
    layers: list[str]
    out_dir: Path
    json_path: Path
    queries: int
    seed: int
    warmup: int
    case_budget: float
    write_rate: float = 0.0


def make_plan(args: argparse.Namespace, json_name: str) -> Plan:
    sizes = [int(s.replace("_", "")) for s in str(args.sizes).split(",") if s.strip()]
    if args.cases == "none":  # build stats (and a benchmark's own extras) only
        cases: list[Case] = []
    else:
        cases = _pick(args.cases, CASES_BY_NAME, "case") if args.cases else list(CASES)
    layers = _pick(args.layers, {name: name for name in LAYERS}, "layer")
    if args.queries < 1 or not sizes or any(size < 1 for size in sizes):
        raise ValueError("--queries and --sizes must be positive")
    if args.write_rate < 0:
        raise ValueError("--write-rate must not be negative")
    out_dir = Path(args.out)
    return Plan(
        sizes=sizes,
        cases=cases,
        layers=layers,
        out_dir=out_dir,
        json_path=Path(args.json) if args.json else out_dir / json_name,
        queries=args.queries,
        seed=args.seed,
        warmup=args.warmup,
        case_budget=args.case_budget,
        write_rate=args.write_rate,
    )


def new_result(benchmark: str, plan: Plan) -> dict[str, Any]:
    """The JSON document's header: what ran, where, with which parameters."""
    return {
        "benchmark": benchmark,
        "version": 1,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "code": code_version(),
        "params": {
            "sizes": plan.sizes,
            "queries": plan.queries,
            "seed": plan.seed,
            "page_size": PAGE_SIZE,
            "warmup": plan.warmup,
            "case_budget_s": plan.case_budget,
            "cases": [c.name for c in plan.cases],
            "layers": plan.layers,
            "write_rate": plan.write_rate,
        },
        "runs": [],
    }


def run(args: argparse.Namespace) -> int:
    plan = make_plan(args, "search.json")
    result = {**new_result("search", plan), "target": dict(TARGET)}
    for size in plan.sizes:
        run_result = run_size(ensure_db(size, plan.seed, plan.out_dir), plan)
        result["runs"].append(run_result)
        print(report.table(run_result, plan.queries), flush=True)
        result["target"]["verdicts"] = report.verdicts(result)
        _write(plan.json_path, result)
    print(report.target_lines(result), flush=True)
    print(f"wrote {plan.json_path}", flush=True)
    return 0


def run_size(
    built: Built, plan: Plan, *, on_copy: Callable[[Path], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Measure every case of ``plan`` on every layer against a throw-away copy of the
    built database; then ``on_copy(copy)`` (which may change it: it runs last) adds its
    keys to the result. The copy is deleted afterwards."""
    db = working_copy(built, plan.out_dir)
    queries = make_queries(built.graph, plan.queries, plan.seed)
    load_before = _loadavg()
    measured: list[Measurement] = []
    extra: dict[str, Any] = {}
    more: dict[str, Any] = {}
    try:
        with Writer(db, built.graph.graph.uuid, plan.write_rate, plan.seed) as writer:
            if plan.cases and ("engine" in plan.layers or "service" in plan.layers):
                measured += _in_process(db, built, queries, plan, extra)
            if plan.cases and "sdk" in plan.layers:
                measured += _through_sdk(db, built, queries, plan, extra)
        if writer.summary() is not None:
            extra["writes"] = writer.summary()
        if on_copy is not None:
            more = on_copy(db)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    return {
        "size": built.graph.size,
        "build": asdict(built.stats),
        "extra": extra,
        "loadavg_before": load_before,
        "loadavg_after": _loadavg(),
        "results": [asdict(m) for m in measured],
        **more,
    }


def _pick(text: str, known: dict[str, Any], what: str) -> list[Any]:
    out = []
    for name in (n.strip() for n in text.split(",")):
        if name not in known:
            raise ValueError(f"unknown {what} {name!r} (known: {', '.join(known)})")
        out.append(known[name])
    return out


def _write(path: Path, result: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    os.replace(tmp, path)


# -- measuring ---------------------------------------------------------------------------


def measure(
    case: Case,
    layer: str,
    call: Call,
    queries: Sequence[Query],
    expected: Callable[[Query], str],
    *,
    warmup: int,
    budget_s: float,
) -> Measurement:
    """Time ``call`` on every question after a warm-up; stop early past ``budget_s``."""
    started = time.perf_counter()
    call(queries[0])
    first_ms = (time.perf_counter() - started) * 1000
    for q in queries[1 : warmup + 1]:
        call(q)
    samples: list[float] = []
    hits = results = 0
    deadline = time.perf_counter() + budget_s
    for q in queries:
        t0 = time.perf_counter()
        ids = call(q)
        samples.append((time.perf_counter() - t0) * 1000)
        hits += expected(q) in ids[:10]
        results += len(ids)
        if time.perf_counter() > deadline:
            break
    arr = np.asarray(samples)
    p50, p95 = np.percentile(arr, [50, 95])
    return Measurement(
        case=case.name,
        scope=case.scope,
        reranker=case.reranker,
        layer=layer,
        n=len(samples),
        p50_ms=round(float(p50), 3),
        p95_ms=round(float(p95), 3),
        mean_ms=round(float(arr.mean()), 3),
        min_ms=round(float(arr.min()), 3),
        max_ms=round(float(arr.max()), 3),
        first_ms=round(first_ms, 3),
        hit_at_10=round(hits / len(samples), 3),
        results_mean=round(results / len(samples), 2),
        stopped_early=len(samples) < len(queries),
    )


def expected_for(scope: str) -> Callable[[Query], str]:
    if scope in ("edges", "context"):
        return lambda q: q.edge_uuid
    if scope == "nodes":
        return lambda q: q.answer_node_uuid
    return lambda q: q.episode_uuid


def _progress(size: int, m: Measurement) -> None:
    note = f" (stopped early after {m.n})" if m.stopped_early else ""
    print(
        f"[{size:,}] {m.layer:<7} {m.case:<24} p50 {m.p50_ms:8.1f} ms  p95 {m.p95_ms:8.1f} ms"
        f"  hit@10 {m.hit_at_10:.2f}{note}",
        flush=True,
    )


# -- the in-process layers -------------------------------------------------------------


def _in_process(
    db: Path, built: Built, queries: Sequence[Query], plan: Plan, extra: dict[str, Any]
) -> list[Measurement]:
    from graphrecall import runtime
    from graphrecall.config import load_settings
    from graphrecall.domain.models import Project
    from graphrecall.retrieval import engine
    from graphrecall.services import search

    settings = load_settings(db=str(db))
    embedder = runtime.minilm(settings)
    models = runtime.Models(embedder, None, runtime.make_cross_encoder(settings))
    rt = runtime.build(settings, models=models)
    store, ctx = rt.store, rt.context
    project = store.get(Project, built.graph.project.uuid)
    assert project is not None
    graph_uuid = built.graph.graph.uuid
    hub = built.graph.hub_uuid
    size = built.graph.size
    out: list[Measurement] = []
    try:
        extra["first_search_ms"] = _timed(
            lambda: engine.search(
                store,
                embedder,
                ctx.cross_encoder,
                scopes.SCOPES["edges"],
                graph_uuid,
                search.options(params_for(CASES[0], queries[0], hub), "edges"),
            )
        )
        both_legs = engine.SearchOptions(query=queries[0].text, legs=("bm25", "vector"))
        filtered = search.options(params_for(FILTERED, queries[0], hub), "edges")
        run = partial(engine.search, store, embedder, None)
        extra["index_build_s"] = wait_for_builds(
            [
                *(partial(run, scopes.SCOPES[s], graph_uuid, both_legs) for s in INDEXED_SCOPES),
                # The filter columns the filtered case reads (filter_columns.py).
                partial(run, scopes.SCOPES["edges"], graph_uuid, filtered),
            ],
            lambda: store_index_status(store),
        )
        embed_case = Case("query embedding", "-", "-")
        embedded = measure(
            embed_case,
            "engine",
            lambda q: [str(embedder.embed([q.text]).shape)],
            queries,
            lambda q: "",
            warmup=plan.warmup,
            budget_s=plan.case_budget,
        )
        extra["query_embedding_ms"] = {"p50": embedded.p50_ms, "p95": embedded.p95_ms}
        for case in plan.cases:
            if case.scope not in scopes.SCOPES:
                continue  # get_context is measured through the SDK only
            spec = scopes.SCOPES[case.scope]
            if "engine" in plan.layers:

                def call_engine(q: Query, case: Case = case, spec: Any = spec) -> list[str]:
                    opts = search.options(params_for(case, q, hub), case.scope)
                    run = engine.search(store, embedder, ctx.cross_encoder, spec, graph_uuid, opts)
                    return [h.uuid for h in run.hits[:PAGE_SIZE]]

                out.append(_timed_case(case, "engine", call_engine, queries, plan, size))
            if "service" in plan.layers:

                def call_service(q: Query, case: Case = case) -> list[str]:
                    _, found, _ = search.search(
                        ctx,
                        project,
                        graph_uuid,
                        case.scope,
                        params_for(case, q, hub),
                        page_size=PAGE_SIZE,
                        cursor=None,
                    )
                    return [record.uuid for record, _ in found]

                out.append(_timed_case(case, "service", call_service, queries, plan, size))
        extra["indexes_after_engine"] = store_index_status(store)
    finally:
        rt.close()
    return out


def _timed_case(
    case: Case,
    layer: str,
    call: Callable[[Query], list[str]],
    queries: Sequence[Query],
    plan: Plan,
    size: int,
) -> Measurement:
    """Measure one case on one layer and print its progress line."""
    m = measure(
        case,
        layer,
        call,
        queries,
        expected_for(case.scope),
        warmup=plan.warmup,
        budget_s=plan.case_budget,
    )
    _progress(size, m)
    return m


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return round((time.perf_counter() - started) * 1000, 3)


def params_for(case: Case, q: Query, hub: str) -> Any:
    """The service-layer request for one question."""
    from graphrecall.retrieval.filters import (
        DateFilter,
        DateFilterGroup,
        DateFilters,
        Filters,
    )
    from graphrecall.services.search import SearchParams

    filters = Filters()
    if case.mentions:
        filters = Filters(episode_uuids=list(q.mention_episodes))
    elif case.filtered:
        since = DateFilter(field="created_at", operator="gte", value=to_iso(FILTER_SINCE))
        current = DateFilter(field="expired_at", operator="is_null")
        filters = Filters(
            edge_types=list(q.edge_types),
            date_filters=DateFilters(any_of=[DateFilterGroup(all_of=[since, current])]),
        )
    return SearchParams(
        query=q.text,
        reranker=case.reranker,
        mmr_lambda=case.mmr_lambda,
        center_node_uuid=hub if case.center else None,
        filters=filters,
    )


# -- through the SDK ---------------------------------------------------------------------


def _through_sdk(
    db: Path, built: Built, queries: Sequence[Query], plan: Plan, extra: dict[str, Any]
) -> list[Measurement]:
    try:
        from zep_cloud import Zep
        from zep_cloud.types import (
            DateFilter,
            DateFilterGroup,
            DateFilters,
            EdgeSearchFilters,
        )
    except ImportError as exc:
        raise RuntimeError(
            "the sdk layer needs the zep-cloud package (pip install 'graphrecall[dev]');"
            " or pass --layers engine,service"
        ) from exc
    from graphrecall.bench.server import ServerProcess

    graph_uuid = built.graph.graph.uuid
    hub = built.graph.hub_uuid
    size = built.graph.size
    out: list[Measurement] = []
    log_path = plan.out_dir / f"server-n{size}.log"
    started = time.perf_counter()
    with ServerProcess(db, API_KEY, log_path) as server:
        extra["server_start_ms"] = round((time.perf_counter() - started) * 1000, 3)
        client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)
        methods = {
            "edges": client.graph.search_edges,
            "nodes": client.graph.search_nodes,
            "episodes": client.graph.search_episodes,
        }
        since = DateFilter(field="created_at", operator="gte", value=FILTER_SINCE)
        current = DateFilter(field="expired_at", operator="is_null")
        dates = DateFilters(any_of=[DateFilterGroup(all_of=[since, current])])
        filters = EdgeSearchFilters(edge_types=list(queries[0].edge_types), date_filters=dates)
        extra["index_build_s"] = wait_for_builds(
            [
                *(
                    partial(methods[s], graph_uuid, query=queries[0].text, page_size=PAGE_SIZE)
                    for s in INDEXED_SCOPES
                ),
                partial(
                    client.graph.search_edges, graph_uuid, query=queries[0].text, filters=filters
                ),
            ],
            server.index_status,
        )
        for case in plan.cases:

            def call(q: Query, case: Case = case) -> list[str]:
                kwargs: dict[str, Any] = {"query": q.text, "page_size": PAGE_SIZE}
                kwargs["reranker"] = case.reranker
                if case.mmr_lambda is not None:
                    kwargs["mmr_lambda"] = case.mmr_lambda
                if case.center:
                    kwargs["center_node_uuid"] = hub
                if case.mentions:
                    kwargs["filters"] = EdgeSearchFilters(episode_uuids=list(q.mention_episodes))
                elif case.filtered:
                    kwargs["filters"] = EdgeSearchFilters(
                        edge_types=list(q.edge_types), date_filters=dates
                    )
                if case.scope == "context":
                    response = client.graph.get_context(
                        graph_uuid, query=q.text, max_characters=2500, include_results=True
                    )
                    edges = response.results.edges if response.results else None
                    return [str(e.uuid_) for e in edges or ()]
                pager: Any = methods[case.scope](graph_uuid, **kwargs)
                return [str(item.uuid_) for item in pager.items or ()]

            out.append(_timed_case(case, "sdk", call, queries, plan, size))
        extra["indexes_after_sdk"] = server.index_status()
    return out


# -- context -----------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import onnxruntime

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gib: float | None = None
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory_gib = round(pages / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "memory_gib": memory_gib,
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "numpy": np.__version__,
        "onnxruntime": getattr(onnxruntime, "__version__", "?"),
    }


def code_version() -> dict[str, Any] | None:
    """The git commit measured and the source files changed on top of it (other work in
    progress in the tree is part of what was measured); None outside a git checkout."""
    import subprocess

    root = Path(__file__).resolve().parents[3]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "changed": [line[3:] for line in status.splitlines()]}


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None
