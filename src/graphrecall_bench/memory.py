"""``graphrecall bench memory``: ``memory.search`` latency per mode at N memories.

Builds (or reuses) one space of N synthetic memories: sentences from the benchmark
vocabulary, spread over a few hundred tree paths, with meta and (for half of them) a time
range, embedded with the bundled model. Then times every mode with the same questions at
two layers:

- ``service``: ``services.memory_engine.search.search`` in-process (ranking, filters, hydration);
- ``rpc``: JSON-RPC over HTTP to a ``graphrecall serve`` subprocess on loopback (adds
  auth, params validation, the wire shape and JSON) - what the ``me`` client waits for,
  minus its own start-up.

Every case is warmed up first. A space of 20k+ memories gets an HNSW vector index, built in
a background thread after its first semantic search (exact search until then); each layer
waits for that build before timing. The table is printed and everything goes to a JSON file.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from graphrecall import runtime
from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Memory, Space
from graphrecall.retrieval.memory_filters import TemporalFilter
from graphrecall.services.accounts import projects, spaces
from graphrecall.services.container import Services
from graphrecall.services.memory_engine import search as memory_search
from graphrecall.services.memory_engine.writes import version_hash
from graphrecall.store import open_store
from graphrecall_bench import vocab
from graphrecall_bench.build import is_postgres, shown_url, with_schema
from graphrecall_bench.server import ServerProcess, store_index_status, wait_for_builds

API_KEY = "gr_bench_memory_key"
SLUG = "benchmemory1"
TARGET_P95_MS = 25.0
AREAS = ("share", "work", "personal", "ops", "research")
TYPES = ("decision", "note", "idea", "runbook", "preference")
TEAMS = (
    "platform",
    "payments",
    "search",
    "mobile",
    "infra",
    "growth",
    "data",
    "security",
    "design",
    "support",
    "sales",
    "legal",
)
TEMPLATES = (
    "{person} decided the {project} launch moves to {month}; {company} signs off first.",
    "{person} prefers {food} and is allergic to nothing on the {city} menu.",
    "Runbook: restart the {product} workers before rotating keys for {project}.",
    "The {team} team meets in {city} every {season} to plan {project}.",
    "{person} plays the {instrument} and teaches {hobby} on weekends.",
    "Idea: ship a {product} integration for {company} customers in {city}.",
    "{company} uses {product} for billing; {person} owns the contract until {month}.",
    "Note: {project} benchmarks regressed after the {product} upgrade in {month}.",
)
START = datetime(2022, 1, 1, tzinfo=UTC)


def _fill(rng: random.Random) -> dict[str, str]:
    return {
        "person": f"{rng.choice(vocab.FIRST_NAMES)} {rng.choice(vocab.LAST_NAMES)}",
        "project": rng.choice(vocab.PROJECT_CODENAMES),
        "month": rng.choice(vocab.MONTHS),
        "company": f"{rng.choice(vocab.COMPANY_PREFIXES)} {rng.choice(vocab.COMPANY_WORDS)}",
        "food": rng.choice(vocab.FOODS)[0],
        "city": rng.choice(vocab.CITIES)[0],
        "product": rng.choice(vocab.PRODUCTS)[0],
        "team": rng.choice(TEAMS),
        "season": rng.choice(vocab.SEASONS),
        "instrument": rng.choice(vocab.INSTRUMENTS),
        "hobby": rng.choice(vocab.HOBBIES),
    }


def _trees(rng: random.Random) -> list[str]:
    codenames = [c.lower() for c in vocab.PROJECT_CODENAMES[:8]]
    out = [f"{area}.{team}" for area in AREAS for team in TEAMS]
    out += [f"{area}.{team}.{c}" for area in AREAS[:3] for team in TEAMS for c in codenames]
    rng.shuffle(out)
    return out


def build(db: Path | str, size: int, seed: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Create the space and its memories with vectors (unless ``db`` already holds them)."""
    store = open_store(db)
    try:
        found = store.find(Space, {"slug": SLUG}, limit=1)
        if found and store.count(Memory, {"space_uuid": found[0].uuid}) == size:
            log(f"reusing {_shown(db)} ({size:,} memories)")
            return {"cached": True}
        projects.ensure_key(store, API_KEY)
        space = (
            found[0]
            if found
            else spaces.create_space(store, projects.get_or_create_project(store), "bench", SLUG)
        )
        rng = random.Random(seed)
        trees = _trees(rng)
        started = time.perf_counter()
        records: list[Memory] = []
        for i in range(size):
            content = rng.choice(TEMPLATES).format(**_fill(rng))
            tree = trees[int(rng.paretovariate(1.2)) % len(trees)]
            meta = {"type": rng.choice(TYPES), "n": i % 100}
            start = end = None
            if rng.random() < 0.5:
                t = START + timedelta(minutes=rng.randrange(3 * 365 * 24 * 60))
                start = clock.to_iso(t)
                end = start if rng.random() < 0.5 else clock.to_iso(t + timedelta(days=30))
            name = f"m{i}" if i % 10 == 0 else None
            temporal = (start, end) if start and end else None
            records.append(
                Memory(
                    uuid=new_id(),
                    space_uuid=space.uuid,
                    content=content,
                    meta=meta,
                    tree=tree,
                    name=name,
                    temporal_start=start,
                    temporal_end=end,
                    version_hash=version_hash(tree, name, meta, temporal, content),
                    created_at=clock.now(),
                )
            )
        for start_at in range(0, size, 5000):
            with store.transaction():
                store.insert(records[start_at : start_at + 5000])
        insert_s = time.perf_counter() - started
        log(f"inserted {size:,} memories in {insert_s:.1f} s")
        embedder = runtime.minilm()
        started = time.perf_counter()
        for start_at in range(0, size, 2048):
            chunk = records[start_at : start_at + 2048]
            vectors = embedder.embed([m.content for m in chunk])
            store.set_embeddings(
                Memory, space.uuid, [(m.uuid, vectors[i]) for i, m in enumerate(chunk)]
            )
            done = start_at + len(chunk)
            rate = done / (time.perf_counter() - started)
            log(f"embedded {done:,}/{size:,} ({rate:,.0f}/s)")
        return {"cached": False, "insert_s": insert_s, "embed_s": time.perf_counter() - started}
    finally:
        store.close()


def cases(rng: random.Random, queries: int) -> dict[str, list[dict[str, Any]]]:
    """Per mode, ``queries`` search params (the same questions for every mode)."""
    texts = []
    for _ in range(queries):
        fill = _fill(rng)
        texts.append(
            rng.choice(
                (
                    f"when does {fill['project']} launch",
                    f"what food does {fill['person'].split()[0]} like",
                    f"{fill['product']} upgrade regression",
                    f"who owns the {fill['company']} contract",
                    f"team meeting in {fill['city']}",
                )
            )
        )
    team = TEAMS[0]
    window = {"start": "2023-01-01T00:00:00Z", "end": "2023-03-01T00:00:00Z"}
    return {
        "semantic": [{"semantic": q} for q in texts],
        "fulltext": [{"fulltext": q} for q in texts],
        "hybrid": [{"semantic": q, "fulltext": q} for q in texts],
        "filter-only (tree)": [{"tree": f"/share/{team}"} for _ in texts],
        "filter-only (meta+temporal)": [
            {"meta": {"type": "decision"}, "temporal": {"overlaps": window}} for _ in texts
        ],
        "hybrid + tree/meta": [
            {"semantic": q, "fulltext": q, "tree": "/share/*", "meta": {"type": "note"}}
            for q in texts
        ],
    }


def wait_for_indexes(
    search: Callable[[], object], status: Callable[[], dict[str, int]]
) -> dict[str, Any]:
    """Search once and wait for the space's index builds (bench.server.wait_for_builds);
    the seconds waited and the indexes' status."""
    return {"wait_s": wait_for_builds([search], status), **status()}


def _measure(call: Callable[[dict[str, Any]], int], params: list[dict[str, Any]]) -> dict[str, Any]:
    for p in params[:3]:
        call(p)
    times, counts = [], []
    for p in params:
        started = time.perf_counter()
        counts.append(call(p))
        times.append((time.perf_counter() - started) * 1000)
    return {
        "p50_ms": float(np.percentile(times, 50)),
        "p95_ms": float(np.percentile(times, 95)),
        "mean_ms": float(np.mean(times)),
        "mean_results": float(np.mean(counts)),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", type=int, default=100_000, help="memories (default 100000)")
    parser.add_argument("--queries", type=int, default=100, help="questions per mode")
    parser.add_argument("--seed", type=int, default=7, help="random seed of the corpus (default 7)")
    parser.add_argument("--out", type=Path, default=Path("bench-out"), help="output directory")
    parser.add_argument("--no-rpc", action="store_true", help="skip the HTTP layer")
    parser.add_argument(
        "--db",
        help="build and search on this PostgreSQL server (postgresql://...; the space in"
        " schema bench_memories_SIZE_SEED, reused by later runs) instead of a SQLite file",
    )


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    db: Path | str = out / f"memories-{args.size}-{args.seed}.db"
    if args.db is not None:
        if not is_postgres(args.db):
            raise ValueError("--db takes a postgresql:// URL (without it: SQLite under --out)")
        db = with_schema(args.db, f"bench_memories_{args.size}_{args.seed}")
    backend = "sqlite" if isinstance(db, Path) else "postgresql"
    log = _log
    built = build(db, args.size, args.seed, log)
    params = cases(random.Random(args.seed + 1), args.queries)
    results: dict[str, dict[str, Any]] = {}

    store = open_store(db)
    ctx = Services(store=store, embedder=runtime.minilm())
    caller = spaces.authenticate(store, API_KEY, SLUG)

    def service(p: dict[str, Any]) -> int:
        q = memory_search.MemoryQuery(
            semantic=p.get("semantic"),
            fulltext=p.get("fulltext"),
            tree=p.get("tree"),
            meta=p.get("meta"),
            temporal=_temporal(p.get("temporal")),
        )
        return len(memory_search.search(ctx, caller, q).hits)

    first = params["hybrid"][0]  # both legs: starts the HNSW and the term index builds
    indexes: dict[str, dict[str, Any]] = {}
    try:
        indexes["service"] = wait_for_indexes(
            lambda: service(first), lambda: store_index_status(store)
        )
        log(f"service indexes: {indexes['service']}")
        for mode, ps in params.items():
            results.setdefault(mode, {})["service"] = _measure(service, ps)
            log(f"service {mode}: {results[mode]['service']['p95_ms']:.1f} ms p95")
    finally:
        store.close()
    if not args.no_rpc:
        with (
            ServerProcess(db, API_KEY, out / "memory-bench-server.log") as server,
            httpx.Client(
                base_url=f"http://127.0.0.1:{server.port}",
                headers={"Authorization": f"Bearer {API_KEY}", "X-Me-Space": SLUG},
                timeout=60,
            ) as http,
        ):

            def rpc(p: dict[str, Any]) -> int:
                body = {"jsonrpc": "2.0", "id": 1, "method": "memory.search", "params": p}
                answer = http.post("/api/v1/memory/rpc", json=body).json()
                if "error" in answer:
                    raise RuntimeError(answer["error"])
                return len(answer["result"]["results"])

            indexes["rpc"] = wait_for_indexes(lambda: rpc(first), server.index_status)
            log(f"rpc indexes: {indexes['rpc']}")
            for mode, ps in params.items():
                results[mode]["rpc"] = _measure(rpc, ps)
                log(f"rpc {mode}: {results[mode]['rpc']['p95_ms']:.1f} ms p95")
    report = {
        "size": args.size,
        "backend": backend,
        "queries": args.queries,
        "build": built,
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
        "target_p95_ms": TARGET_P95_MS,
        "indexes": indexes,
        "results": results,
    }
    suffix = "" if backend == "sqlite" else f"-{backend}"
    path = out / f"memory-bench-{args.size}{suffix}.json"
    path.write_text(json.dumps(report, indent=2))
    print(table(report))
    print(f"\nwrote {path}")
    return 0


def _temporal(raw: dict[str, Any] | None) -> TemporalFilter | None:
    if raw is None:
        return None
    window = raw["overlaps"]
    start = clock.normalize(window["start"], param="start") or ""
    end = clock.normalize(window["end"], param="end") or ""
    return TemporalFilter(overlaps=(start, end))


def table(report: dict[str, Any]) -> str:
    layers = [
        name for name in ("service", "rpc") if any(name in r for r in report["results"].values())
    ]
    header = ["mode", *(f"{name} p50 / p95 ms" for name in layers), "results"]
    rows = []
    for mode, by_layer in report["results"].items():
        cells = [f"{by_layer[n]['p50_ms']:.1f} / {by_layer[n]['p95_ms']:.1f}" for n in layers]
        rows.append([mode, *cells, f"{by_layer['service']['mean_results']:.1f}"])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        f"memory.search latency, {report['size']:,} memories in one space"
        f" ({report.get('backend', 'sqlite')}),"
        f" {report['queries']} questions per mode (target p95 <= {report['target_p95_ms']:.0f} ms)",
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def _shown(db: Path | str) -> str:
    return str(db) if isinstance(db, Path) else shown_url(db)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
