"""What ``bench search`` measures and how one case is timed: the cases (scope x reranker,
plus a filtered search and get_context), the plan of a run, and ``measure`` (warm-up, then
wall-clock per call, p50/p95 and hit@10).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphrecall_bench.synthetic import SPAN, START, Query

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
    db: str | None = None  # a PostgreSQL URL (bench search --db); None: SQLite


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


def progress(size: int, m: Measurement) -> None:
    note = f" (stopped early after {m.n})" if m.stopped_early else ""
    print(
        f"[{size:,}] {m.layer:<7} {m.case:<24} p50 {m.p50_ms:8.1f} ms  p95 {m.p95_ms:8.1f} ms"
        f"  hit@10 {m.hit_at_10:.2f}{note}",
        flush=True,
    )
