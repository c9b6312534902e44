"""``graphrecall bench search``: search latency on synthetic chat-memory graphs.

For each size: build (or reuse) the database, derive questions from its facts, then time
every case (scope x reranker, plus a filtered search) at three layers:

- ``engine``: ``retrieval.engine.search`` in-process (the ranking alone);
- ``service``: ``services.graph.search.search`` in-process (ranking, cursor, hydration);
- ``sdk``: the real ``zep-cloud`` SDK against a ``graphrecall serve`` subprocess on
  loopback (adds the router's views, JSON, HTTP and the SDK's parsing).

Every case is warmed up first; the cold first call is reported separately. Latencies are
wall-clock per call. The table is printed and everything goes to a JSON file.

The cases and ``measure`` are ``bench.search_cases``, the layers ``bench.search_layers``,
the machine description ``bench.machine``; this module is the command and the runner.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from graphrecall.domain.clock import to_iso
from graphrecall_bench import report
from graphrecall_bench.build import Built, ensure_db, working_copy
from graphrecall_bench.machine import code_version, loadavg, machine
from graphrecall_bench.search_cases import (
    CASES,
    CASES_BY_NAME,
    LAYERS,
    PAGE_SIZE,
    TARGET,
    Case,
    Measurement,
    Plan,
)
from graphrecall_bench.search_layers import in_process, through_sdk
from graphrecall_bench.synthetic import make_queries
from graphrecall_bench.writes import Writer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common_arguments(
        parser, sizes="10000,100000", queries=200, layers=LAYERS, case_budget=120.0,
        json_name="search.json",
    )  # fmt: skip
    parser.add_argument(
        "--db",
        help="build and search on this PostgreSQL server (postgresql://...; each size in a"
        " schema of its own, reused by later runs) instead of SQLite files under --out",
    )
    parser.add_argument(
        "--embed-cap",
        type=int,
        default=0,
        help="embed at most N records per kind for real, derive the rest (bench/build.py;"
        " latency only, not a quality number; 0, the default: embed all)",
    )


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
    db = getattr(args, "db", None)
    if db is not None and not str(db).startswith(("postgres://", "postgresql://")):
        raise ValueError("--db takes a postgresql:// URL (without it: SQLite under --out)")
    if db is not None and args.write_rate:
        # The PostgreSQL build is searched in place (no copy): writes would change it.
        raise ValueError("--write-rate is for SQLite runs only (it would change the cached build)")
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
        db=db,
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
            "backend": "postgresql" if plan.db else "sqlite",
        },
        "runs": [],
    }


def run(args: argparse.Namespace) -> int:
    plan = make_plan(args, "search.json")
    result = {**new_result("search", plan), "target": dict(TARGET)}
    cap = args.embed_cap or None
    if args.embed_cap < 0:
        raise ValueError("--embed-cap must not be negative")
    result["params"]["embed_cap"] = cap
    for size in plan.sizes:
        built = ensure_db(size, plan.seed, plan.out_dir, embed_cap=cap, db=plan.db)
        run_result = run_size(built, plan)
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
    built database (a PostgreSQL build: the build itself); then ``on_copy(copy)`` (which
    may change it: it runs last) adds its keys to the result. The copy is deleted
    afterwards."""
    db = working_copy(built, plan.out_dir)
    queries = make_queries(built.graph, plan.queries, plan.seed)
    load_before = loadavg()
    measured: list[Measurement] = []
    extra: dict[str, Any] = {}
    more: dict[str, Any] = {}
    try:
        with Writer(db, built.graph.graph.uuid, plan.write_rate, plan.seed) as writer:
            if plan.cases and ("engine" in plan.layers or "service" in plan.layers):
                measured += in_process(db, built, queries, plan, extra)
            if plan.cases and "sdk" in plan.layers:
                measured += through_sdk(db, built, queries, plan, extra)
        if writer.summary() is not None:
            extra["writes"] = writer.summary()
        if on_copy is not None:
            if not isinstance(db, Path):  # it may change the database: copies only
                raise ValueError("this benchmark's extra steps run on SQLite copies only")
            more = on_copy(db)
    finally:
        if isinstance(db, Path):  # a SQLite copy; a PostgreSQL build is used in place
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            shutil.rmtree(f"{db}-termindex", ignore_errors=True)  # its saved term indexes
    return {
        "size": built.graph.size,
        "build": asdict(built.stats),
        "extra": extra,
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
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
