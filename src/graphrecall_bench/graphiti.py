"""``graphrecall bench graphiti``: the same synthetic graph in graphrecall and in Graphiti.

Graphiti (graphiti-core 0.31.x, the optional ``graphiti`` extra) runs in-process on its
embedded Kuzu driver. Both sides get the same facts, entities and MiniLM vectors: the
graph comes from ``bench.synthetic`` and the vectors from the ``bench.build`` cache, and
Graphiti's embedder is a small adapter around our bundled MiniLM, so its query vectors
are ours too. Nodes and edges go in pre-embedded through Graphiti's bulk-save helper
(row by row on Kuzu, which is slow); we create its full-text indexes ourselves. Its LLM
client and cross-encoder are local stubs that raise if called (bulk saving and the
hybrid RRF edge search never call them), so nothing is downloaded or sent anywhere.

Then the same questions go to Graphiti's default edge search (``Graphiti.search``:
BM25 + cosine similarity, RRF) and to our engine's edges/rrf, both in-process, timed
per call after a warm-up; hit@10 is against the fact each question was made from.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from graphrecall import runtime
from graphrecall.config import load_settings
from graphrecall.domain import scopes
from graphrecall.domain.clock import to_iso
from graphrecall.ml.embedder import MiniLMEmbedder
from graphrecall_bench import search_cases, search_layers
from graphrecall_bench.build import Built, ensure_db, stem, working_copy
from graphrecall_bench.machine import machine
from graphrecall_bench.synthetic import Query, make_queries
from graphrecall_bench.tables import ms, text_table, write_json

GRAPHITI_VERSION = "0.31"
CASE = search_cases.CASES_BY_NAME["edges/rrf"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--size", type=int, default=1000, help="facts in the graph (1000; Kuzu loads slowly)"
    )
    parser.add_argument("--queries", type=int, default=50, help="questions (50)")
    parser.add_argument("--seed", type=int, default=7, help="seed of graph and questions (7)")
    parser.add_argument(
        "--out", default="bench-out", help="cache and output directory (bench-out/)"
    )
    parser.add_argument("--json", help="where to write the results (default OUT/graphiti.json)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls per side (5)")
    parser.add_argument(
        "--budget", type=float, default=600.0, help="seconds each side may take (600)"
    )


def _require_graphiti() -> str:
    os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")  # no network calls
    try:
        from importlib.metadata import version

        import graphiti_core  # noqa: F401
        import kuzu  # noqa: F401
    except ImportError as exc:
        raise RuntimeError(
            "bench graphiti needs graphiti-core with Kuzu:"
            " pip install 'graphrecall[graphiti]' (graphiti-core[kuzu]==0.31.*)"
        ) from exc
    found = version("graphiti-core")
    if not found.startswith(GRAPHITI_VERSION + "."):
        print(f"warning: measured against graphiti-core {found}, expected {GRAPHITI_VERSION}.x")
    return found


def run(args: argparse.Namespace) -> int:
    graphiti_version = _require_graphiti()
    if args.size < 1 or args.queries < 1:
        raise ValueError("--size and --queries must be positive")
    out_dir = Path(args.out)
    json_path = Path(args.json) if args.json else out_dir / "graphiti.json"
    built = ensure_db(args.size, args.seed, out_dir)
    queries = make_queries(built.graph, args.queries, args.seed)
    embedder = runtime.minilm()

    ours = _ours(built, queries, embedder, args, out_dir)
    print(_line("graphrecall", ours), flush=True)
    loop = asyncio.new_event_loop()
    try:
        theirs, load = loop.run_until_complete(_load_graphiti(built, embedder, out_dir))
        graphiti = _graphiti_client(theirs, embedder)
        gid = built.graph.graph.uuid

        def call(q: Query) -> list[str]:
            edges = loop.run_until_complete(graphiti.search(q.text, group_ids=[gid]))
            return [str(e.uuid) for e in edges]

        measured = search_cases.measure(
            CASE,
            "graphiti",
            call,
            queries,
            lambda q: q.edge_uuid,
            warmup=args.warmup,
            budget_s=args.budget,
        )
    finally:
        loop.close()
    print(_line("graphiti", measured), flush=True)

    result: dict[str, Any] = {
        "benchmark": "graphiti",
        "version": 1,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "params": {
            "size": args.size,
            "queries": args.queries,
            "seed": args.seed,
            "warmup": args.warmup,
            "budget_s": args.budget,
            "page_size": search_cases.PAGE_SIZE,
        },
        "graphiti_core": graphiti_version,
        "graphiti_load": load,
        "build": asdict(built.stats),
        "graphrecall": asdict(ours),
        "graphiti": asdict(measured),
    }
    result["ratios"] = _ratios(result)
    print(table(result), flush=True)
    write_json(json_path, result)
    print(f"wrote {json_path}", flush=True)
    return 0


def _line(side: str, m: search_cases.Measurement) -> str:
    note = f" (stopped early after {m.n})" if m.stopped_early else ""
    return (
        f"{side:<12} p50 {m.p50_ms:8.1f} ms  p95 {m.p95_ms:8.1f} ms  hit@10 {m.hit_at_10:.2f}{note}"
    )


def _ratios(result: dict[str, Any]) -> dict[str, float | None]:
    ours, theirs = result["graphrecall"], result["graphiti"]

    def div(a: float, b: float) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "p50": div(ours["p50_ms"], theirs["p50_ms"]),
        "p95": div(ours["p95_ms"], theirs["p95_ms"]),
        "hit_at_10": div(ours["hit_at_10"], theirs["hit_at_10"]),
    }


def table(result: dict[str, Any]) -> str:
    """graphrecall vs Graphiti: p50, p95, hit@10 and the ratio (ours / Graphiti)."""
    ours, theirs, ratios = result["graphrecall"], result["graphiti"], result["ratios"]

    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}x"

    rows = [
        ["p50 ms", ms(ours["p50_ms"]), ms(theirs["p50_ms"]), ratio(ratios["p50"])],
        ["p95 ms", ms(ours["p95_ms"]), ms(theirs["p95_ms"]), ratio(ratios["p95"])],
        [
            "hit@10",
            f"{ours['hit_at_10']:.2f}",
            f"{theirs['hit_at_10']:.2f}",
            ratio(ratios["hit_at_10"]),
        ],
    ]
    load = result["graphiti_load"]
    p = result["params"]
    head = (
        f"\nhybrid edge search, {p['size']:,} facts, {theirs['n']} questions, in-process:"
        f" graphrecall edges/rrf vs Graphiti {result['graphiti_core']} on Kuzu"
        f" (BM25 + cosine, RRF)\nGraphiti load: {load['load_s']:.1f} s"
        f" ({load['nodes']:,} nodes, {load['edges']:,} edges"
        + (", cached" if load["cached"] else "")
        + ")\n"
    )
    return head + text_table(["", "graphrecall", "graphiti", "ours/graphiti"], rows)


# -- graphrecall -------------------------------------------------------------------------


def _ours(
    built: Built,
    queries: list[Query],
    embedder: MiniLMEmbedder,
    args: argparse.Namespace,
    out_dir: Path,
) -> search_cases.Measurement:
    from graphrecall.retrieval import engine
    from graphrecall.services.graph import search
    from graphrecall.store import open_store

    db = working_copy(built, out_dir)
    store = open_store(db)
    try:
        cross = runtime.make_cross_encoder(load_settings())
        spec = scopes.SCOPES["edges"]
        graph_uuid, hub = built.graph.graph.uuid, built.graph.hub_uuid

        def call(q: Query) -> list[str]:
            opts = search.options(search_layers.params_for(CASE, q, hub), "edges")
            found = engine.search(store, embedder, cross, spec, graph_uuid, opts)
            return [h.uuid for h in found.hits[: search_cases.PAGE_SIZE]]

        return search_cases.measure(
            CASE,
            "engine",
            call,
            queries,
            lambda q: q.edge_uuid,
            warmup=args.warmup,
            budget_s=args.budget,
        )
    finally:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)


# -- Graphiti ----------------------------------------------------------------------------


def _vectors(out_dir: Path, built: Built, kind: str, rows: int) -> np.ndarray[Any, Any]:
    path = out_dir / f"{stem(built.graph.size, built.graph.seed)}-{kind}.npy"
    matrix: np.ndarray[Any, Any] = np.load(path)
    if matrix.shape[0] != rows:
        raise RuntimeError(f"{path} has {matrix.shape[0]} rows, expected {rows}")
    return matrix.astype(np.float32, copy=False)


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _graphiti_client(driver: Any, embedder: MiniLMEmbedder) -> Any:
    from graphiti_core import Graphiti
    from graphiti_core.cross_encoder.client import CrossEncoderClient
    from graphiti_core.embedder.client import EmbedderClient
    from graphiti_core.llm_client.client import LLMClient

    class MiniLM(EmbedderClient):  # our bundled model, so both sides share the vectors
        async def create(self, input_data: str | Iterable[Any]) -> list[float]:
            texts = [input_data] if isinstance(input_data, str) else list(input_data)
            vector: list[float] = embedder.embed([str(texts[0])])[0].tolist()
            return vector

        async def create_batch(self, input_data_list: list[str]) -> list[list[float]]:
            rows: list[list[float]] = embedder.embed(input_data_list).tolist()
            return rows

    class NoLLM(LLMClient):  # bulk saving and hybrid RRF search never call an LLM
        async def _generate_response(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            raise RuntimeError("the Graphiti benchmark must not call an LLM")

    class NoReranker(CrossEncoderClient):
        async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
            raise RuntimeError("the Graphiti benchmark must not call a cross-encoder")

    return Graphiti(
        graph_driver=driver, llm_client=NoLLM(None), embedder=MiniLM(), cross_encoder=NoReranker()
    )


async def _load_graphiti(
    built: Built, embedder: MiniLMEmbedder, out_dir: Path
) -> tuple[Any, dict[str, Any]]:
    """Graphiti's Kuzu database for this graph: reused when a finished one matches, else
    bulk-saved from our records and cached vectors, then full-text indexed."""
    import warnings

    from graphiti_core.driver.driver import GraphProvider
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.edges import EntityEdge
    from graphiti_core.graph_queries import get_fulltext_indices
    from graphiti_core.nodes import EntityNode
    from graphiti_core.utils.bulk_utils import add_nodes_and_edges_bulk

    graph = built.graph
    path = out_dir / f"graphiti-{stem(graph.size, graph.seed)}.kuzu"
    meta_path = out_dir / f"graphiti-{stem(graph.size, graph.seed)}.json"
    fingerprint = graph.fingerprint()
    if meta_path.exists() and path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("fingerprint") == fingerprint:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                driver = KuzuDriver(db=str(path))
            print(f"[{graph.size:,}] reusing Graphiti database {path}", flush=True)
            return driver, {**meta["load"], "cached": True}
    meta_path.unlink(missing_ok=True)
    for leftover in (path, Path(f"{path}.wal")):
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink(missing_ok=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        driver = KuzuDriver(db=str(path))
    gid = graph.graph.uuid
    node_vectors = _vectors(out_dir, built, "node", len(graph.nodes))
    edge_vectors = _vectors(out_dir, built, "edge", len(graph.edges))
    nodes = [
        EntityNode(
            uuid=n.uuid,
            name=n.name,
            group_id=gid,
            labels=list(n.labels),
            created_at=_when(n.created_at),
            name_embedding=node_vectors[i].tolist(),
            summary=n.summary or "",
            attributes=dict(n.attributes or {}),
        )
        for i, n in enumerate(graph.nodes)
    ]
    edges = [
        EntityEdge(
            uuid=e.uuid,
            group_id=gid,
            source_node_uuid=e.source_node_uuid,
            target_node_uuid=e.target_node_uuid,
            created_at=_when(e.created_at),
            name=e.name,
            fact=e.fact,
            fact_embedding=edge_vectors[i].tolist(),
            episodes=list(graph.edge_links.get(e.uuid, ())),
            valid_at=_when(e.valid_at),
            invalid_at=_when(e.invalid_at),
            expired_at=_when(e.expired_at),
            attributes=dict(e.attributes or {}),
        )
        for i, e in enumerate(graph.edges)
    ]
    print(
        f"[{graph.size:,}] loading Graphiti on Kuzu: {len(nodes):,} nodes, {len(edges):,}"
        " edges (row by row, slow)",
        flush=True,
    )
    started = time.perf_counter()
    await add_nodes_and_edges_bulk(driver, [], [], nodes, edges, _unused_embedder())
    saved_s = time.perf_counter() - started
    for query in get_fulltext_indices(GraphProvider.KUZU):
        await driver.execute_query(query)
    load = {
        "save_s": round(saved_s, 3),
        "load_s": round(time.perf_counter() - started, 3),
        "nodes": len(nodes),
        "edges": len(edges),
        "cached": False,
    }
    meta_path.write_text(json.dumps({"fingerprint": fingerprint, "load": load}, indent=2) + "\n")
    return driver, load


def _unused_embedder() -> Any:
    """Bulk saving embeds only what has no vector yet; everything here has one."""
    from graphiti_core.embedder.client import EmbedderClient

    class Unused(EmbedderClient):
        async def create(self, input_data: str | Iterable[Any]) -> list[float]:
            raise RuntimeError("every node and edge is pre-embedded")

    return Unused()
