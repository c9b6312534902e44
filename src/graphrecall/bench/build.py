"""Building (and caching) a benchmark database from a synthetic graph.

Records go straight into the store in large transactions, and every edge, node and
episode is embedded with the real bundled embedder, as ingestion would. Embedding is the
slow part (minutes at 100k facts), so the built database is cached under the output
directory keyed by size, seed and generator version, and so are the vectors (``.npy``),
so a rebuild after a schema change does not embed again. A cached database is used only
if its recorded fingerprint matches the graph generated now.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphrecall.bench.synthetic import GENERATOR_VERSION, SyntheticGraph, generate
from graphrecall.domain.models import Edge, Episode, Node, Record
from graphrecall.ingest.embedding import text_of
from graphrecall.ml.embedder import Embedder, MiniLMEmbedder
from graphrecall.store import open_store
from graphrecall.store.base import Store

Log = Callable[[str], None]
INSERT_CHUNK = 20_000
EMBED_CHUNK = 2_048


@dataclass
class BuildStats:
    size: int
    seed: int
    cached: bool  # True when this run reused a database built earlier
    generate_s: float
    insert_s: float
    embed_s: float
    embed_texts: int  # texts embedded when it was built (0 if the vectors were cached)
    embed_texts_per_s: float | None
    db_bytes: int
    db_bytes_per_fact: float
    nodes: int
    edges: int
    episodes: int
    node_links: int
    edge_links: int
    embedder: str


@dataclass
class Built:
    graph: SyntheticGraph
    stats: BuildStats
    path: Path


def stem(size: int, seed: int) -> str:
    return f"search-n{size}-s{seed}-g{GENERATOR_VERSION}"


def ensure_db(size: int, seed: int, out_dir: Path, log: Log = print) -> Built:
    """The database for (size, seed): reused from ``out_dir`` when it is there, else built."""
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    graph = generate(size, seed)
    generate_s = time.perf_counter() - started
    fingerprint = graph.fingerprint()
    path = out_dir / f"{stem(size, seed)}.db"
    meta_path = path.with_suffix(".json")
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("fingerprint") == fingerprint:
            stats = BuildStats(**{**meta["stats"], "cached": True})
            log(f"[{size:,}] reusing {path} (built earlier)")
            return Built(graph, stats, path)
        log(f"[{size:,}] {path} does not match the generated graph; rebuilding")
    stats = _build(graph, path, out_dir, generate_s, log)
    meta_path.write_text(
        json.dumps({"fingerprint": fingerprint, "stats": asdict(stats)}, indent=2) + "\n"
    )
    return Built(graph, stats, path)


def _build(
    graph: SyntheticGraph, path: Path, out_dir: Path, generate_s: float, log: Log
) -> BuildStats:
    size = graph.size
    tmp = path.with_name(path.name + ".building")
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    log(
        f"[{size:,}] building {path.name}: {len(graph.nodes):,} nodes, {len(graph.edges):,}"
        f" edges, {len(graph.episodes):,} episodes (generated in {generate_s:.1f} s)"
    )
    store = open_store(tmp)
    try:
        started = time.perf_counter()
        with store.transaction():
            store.insert([graph.project, graph.user, graph.graph, *graph.threads])
        for kind, records in ((Node, graph.nodes), (Episode, graph.episodes), (Edge, graph.edges)):
            _insert(store, records, f"[{size:,}] inserting {kind.__name__.lower()}s", log)
        with store.transaction():
            for node_uuid, episodes in graph.node_links.items():
                store.link_episodes(Node, graph.graph.uuid, node_uuid, episodes)
            for edge_uuid, episodes in graph.edge_links.items():
                store.link_episodes(Edge, graph.graph.uuid, edge_uuid, episodes)
        insert_s = time.perf_counter() - started
        log(f"[{size:,}] inserted records and provenance links in {insert_s:.1f} s")

        embedder = MiniLMEmbedder()
        embed_s, embedded = 0.0, 0
        for kind, records in ((Edge, graph.edges), (Node, graph.nodes), (Episode, graph.episodes)):
            seconds, count = _embed(store, embedder, kind, records, graph, out_dir, log)
            embed_s += seconds
            embedded += count
    finally:
        store.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
    db_bytes = path.stat().st_size
    rate = embedded / embed_s if embedded and embed_s > 0 else None
    log(
        f"[{size:,}] built {path.name}: {db_bytes / 1e6:.1f} MB"
        f" ({db_bytes / size:,.0f} bytes per fact)"
        + (f", embedded {embedded:,} texts at {rate:,.0f}/s" if rate else "")
    )
    return BuildStats(
        size=size,
        seed=graph.seed,
        cached=False,
        generate_s=round(generate_s, 3),
        insert_s=round(insert_s, 3),
        embed_s=round(embed_s, 3),
        embed_texts=embedded,
        embed_texts_per_s=round(rate, 1) if rate else None,
        db_bytes=db_bytes,
        db_bytes_per_fact=round(db_bytes / size, 1),
        nodes=len(graph.nodes),
        edges=len(graph.edges),
        episodes=len(graph.episodes),
        node_links=sum(len(v) for v in graph.node_links.values()),
        edge_links=sum(len(v) for v in graph.edge_links.values()),
        embedder=embedder.model_id,
    )


def _insert(store: Store, records: Sequence[Record], label: str, log: Log) -> None:
    for start in range(0, len(records), INSERT_CHUNK):
        with store.transaction():
            store.insert(records[start : start + INSERT_CHUNK])
        log(f"{label}: {min(start + INSERT_CHUNK, len(records)):,}/{len(records):,}")


def _embed(
    store: Store,
    embedder: Embedder,
    kind: type[Record],
    records: Sequence[Record],
    graph: SyntheticGraph,
    out_dir: Path,
    log: Log,
) -> tuple[float, int]:
    """Store vectors for ``records``: from the ``.npy`` cache when it matches, else embedded
    now (with progress lines) and cached. Returns (seconds spent embedding, texts)."""
    label = f"[{graph.size:,}] embedding {kind.__name__.lower()}s"
    cache = out_dir / f"{stem(graph.size, graph.seed)}-{kind.__name__.lower()}.npy"
    matrix: np.ndarray[Any, np.dtype[np.float32]] | None = None
    if cache.exists():
        loaded = np.load(cache)
        if loaded.shape == (len(records), embedder.dim):
            matrix = loaded.astype(np.float32, copy=False)
            log(f"{label}: {len(records):,} vectors from {cache.name}")
    seconds = 0.0
    count = 0
    if matrix is None:
        texts = [text_of(r) for r in records]
        matrix = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        started = last = time.perf_counter()
        for start in range(0, len(texts), EMBED_CHUNK):
            end = min(start + EMBED_CHUNK, len(texts))
            matrix[start:end] = embedder.embed(texts[start:end])
            now = time.perf_counter()
            if now - last > 5 or end == len(texts):
                last = now
                rate = end / (now - started)
                eta = (len(texts) - end) / rate if rate else 0.0
                log(f"{label}: {end:,}/{len(texts):,} ({rate:,.0f}/s, {eta:,.0f} s left)")
        seconds = time.perf_counter() - started
        count = len(texts)
        tmp = cache.with_name(cache.name + ".tmp.npy")
        np.save(tmp, matrix)
        os.replace(tmp, cache)
    owner = graph.graph.uuid
    for start in range(0, len(records), INSERT_CHUNK):
        chunk = records[start : start + INSERT_CHUNK]
        store.set_embeddings(
            kind, owner, [(r.uuid, matrix[start + i]) for i, r in enumerate(chunk)]
        )
    return seconds, count


def working_copy(built: Built, out_dir: Path) -> Path:
    """A copy of the cached database for one run, so searches (which write cursors) never
    change the cache."""
    target = out_dir / f"{stem(built.graph.size, built.graph.seed)}.run.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    # The backup API copies a consistent snapshot even if something else has the cache open.
    source = sqlite3.connect(f"file:{built.path}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy, pages=65536)
    finally:
        copy.close()
        source.close()
    return target
