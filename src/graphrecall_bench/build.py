"""Building (and caching) a benchmark database from a synthetic graph.

Records go straight into the store in large transactions, and every edge, node and
episode is embedded with the real bundled embedder, as ingestion would. Embedding is the
slow part (minutes at 100k facts), so the built database is cached under the output
directory keyed by size, seed and generator version, and so are the vectors (``.npy``),
so a rebuild after a schema change does not embed again. A cached database is used only
if its recorded fingerprint matches the graph generated now.

``embed_cap`` bounds the real embedding work per record kind (1M facts are ~1.9M texts,
hours on a small machine): the first ``embed_cap`` records of a kind get real vectors, the
rest get vectors *derived* from those (a real vector picked by a seeded draw, plus small
seeded noise, renormalised). Derived vectors keep the matrix's size and a realistic spread
of directions, so the cost of an exact vector search is the real one, but they carry no
meaning: recall measured on a graph with derived vectors is not a quality number. The
build stats record how many vectors of each kind are real and derived.

With ``db`` (a ``postgresql://`` URL) the graph is built into a schema of its own on that
server (``bench_search_n<size>_s<seed>_g<generator>``), reused the same way (its
fingerprint is kept in ``OUT/<stem>.postgres.json``); the vectors come from the same
``.npy`` cache, so SQLite and PostgreSQL runs search the same vectors.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphrecall import runtime
from graphrecall.domain.models import Edge, Episode, Node, Record
from graphrecall.graph_model.degree import degrees
from graphrecall.graph_model.embedding import text_of
from graphrecall.graph_model.indexed_text import facts_text, thread_texts
from graphrecall.ml.embedder import Embedder
from graphrecall.store import open_store
from graphrecall.store.base import Store
from graphrecall_bench.synthetic import GENERATOR_VERSION, SyntheticGraph, generate

Log = Callable[[str], None]
INSERT_CHUNK = 20_000
PG_INSERT_CHUNK = 500
EMBED_CHUNK = 2_048
DERIVED_NOISE = 0.02  # per-component std of the noise on a derived vector (cosine ~0.93)
KINDS: tuple[type[Record], ...] = (Edge, Node, Episode)


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
    # per kind ("edge", "node", "episode"): {"real": n, "derived": m}; empty in the stats
    # of databases cached before the cap existed (all real: see ``vector_counts``)
    vectors: dict[str, dict[str, int]] = field(default_factory=dict)
    embed_cap: int | None = None
    derive_s: float = 0.0

    @property
    def derived_vectors(self) -> int:
        return sum(v["derived"] for v in self.vectors.values())


@dataclass
class Built:
    graph: SyntheticGraph
    stats: BuildStats
    path: Path  # the SQLite file, or the PostgreSQL meta file when ``url`` is set
    url: str | None = None  # the PostgreSQL store (with its schema), if built there

    @property
    def location(self) -> str:
        """What ``open_store`` and ``--db`` take for this database."""
        return self.url if self.url is not None else str(self.path)


def stem(size: int, seed: int) -> str:
    return f"search-n{size}-s{seed}-g{GENERATOR_VERSION}"


def vector_counts(graph: SyntheticGraph, embed_cap: int | None) -> dict[str, dict[str, int]]:
    """How many vectors of each kind are real and derived under ``embed_cap``."""
    out = {}
    for kind in KINDS:
        total = len(_records(graph, kind))
        real = total if embed_cap is None else min(total, embed_cap)
        out[kind.__name__.lower()] = {"real": real, "derived": total - real}
    return out


def is_postgres(db: str | None) -> bool:
    return db is not None and db.startswith(("postgres://", "postgresql://"))


def pg_location(db: str, size: int, seed: int) -> str:
    """``db`` with the store's tables in the schema of (size, seed)."""
    return with_schema(db, "bench_" + stem(size, seed).replace("-", "_"))


def with_schema(db: str, schema: str) -> str:
    """The PostgreSQL URL ``db`` with the store's tables in ``schema``."""
    parts = urllib.parse.urlsplit(db)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    query = [(k, v) for k, v in query if k != "schema"] + [("schema", schema)]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def ensure_db(
    size: int,
    seed: int,
    out_dir: Path,
    log: Log = print,
    *,
    embed_cap: int | None = None,
    db: str | None = None,
) -> Built:
    """The database for (size, seed): reused from ``out_dir`` (or, with ``db`` a
    PostgreSQL URL, from its schema on that server) when it is there (and has the
    real/derived vector split ``embed_cap`` asks for), else built."""
    if embed_cap is not None and embed_cap < 1:
        raise ValueError("the embedding cap must be at least 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    graph = generate(size, seed)
    generate_s = time.perf_counter() - started
    fingerprint = graph.fingerprint()
    wanted = vector_counts(graph, embed_cap)
    url = pg_location(db, size, seed) if db is not None and is_postgres(db) else None
    if db is not None and url is None:
        raise ValueError("--db takes a postgresql:// URL (without it: SQLite under --out)")
    path = out_dir / f"{stem(size, seed)}.db"
    meta_path = path.with_suffix(".json")
    if url is not None:
        path = meta_path = out_dir / f"{stem(size, seed)}.postgres.json"
    if meta_path.exists() and (url is not None or path.exists()):
        meta = json.loads(meta_path.read_text())
        stats = BuildStats(**{**meta["stats"], "cached": True})
        # Stats written before the cap existed: every vector was embedded.
        stats.vectors = stats.vectors or vector_counts(graph, None)
        if url is not None and (meta.get("url") != shown_url(url) or not pg_built(url)):
            log(f"[{size:,}] {shown_url(url)} holds no build of this graph; building")
        elif meta.get("fingerprint") != fingerprint:
            log(f"[{size:,}] {path} does not match the generated graph; rebuilding")
        elif stats.vectors != wanted:
            log(f"[{size:,}] {path} has another real/derived vector split; rebuilding")
        else:
            log(f"[{size:,}] reusing {shown_url(url) if url else path} (built earlier)")
            return Built(graph, stats, path, url)
    stats = _build(graph, url or path, out_dir, generate_s, log, embed_cap)
    meta = {"fingerprint": fingerprint, "stats": asdict(stats)}
    if url is not None:
        meta["url"] = shown_url(url)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return Built(graph, stats, path, url)


def shown_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _pg_schema(url: str) -> tuple[str, str]:
    from graphrecall.store.postgres.connection import split_schema

    return split_schema(url)


def pg_built(url: str) -> bool:
    """Whether the schema of ``url`` holds a finished build (its completion mark)."""
    import psycopg

    server, schema = _pg_schema(url)
    with psycopg.connect(server, autocommit=True) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'settings'", [schema]
        ).fetchone()
        if found is None:
            return False
        done = conn.execute(
            f"SELECT 1 FROM {schema}.settings WHERE key = %s", [BUILT_MARK]
        ).fetchone()
        return done is not None


def reset_schema(url: str) -> None:
    import psycopg

    server, schema = _pg_schema(url)
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def pg_bytes(url: str) -> int:
    import psycopg

    server, schema = _pg_schema(url)
    with psycopg.connect(server, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
            [schema],
        ).fetchone()
        if row is None:
            return 0
        return int(row[0])


BUILT_MARK = "bench.built"


def _records(graph: SyntheticGraph, kind: type[Record]) -> Sequence[Record]:
    if kind is Edge:
        return graph.edges
    if kind is Node:
        return graph.nodes
    return graph.episodes


def _build(
    graph: SyntheticGraph,
    target: Path | str,
    out_dir: Path,
    generate_s: float,
    log: Log,
    embed_cap: int | None,
) -> BuildStats:
    """Build into ``target``: a SQLite path (written beside it, then moved into place)
    or a PostgreSQL URL (its schema emptied first; marked built at the end)."""
    size = graph.size
    url = target if isinstance(target, str) else None
    path = Path(target) if url is None else Path(out_dir / "postgres")
    tmp = path.with_name(path.name + ".building")
    if url is None:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
    else:
        reset_schema(url)
    name = shown_url(url) if url is not None else path.name
    log(
        f"[{size:,}] building {name}: {len(graph.nodes):,} nodes, {len(graph.edges):,}"
        f" edges, {len(graph.episodes):,} episodes (generated in {generate_s:.1f} s)"
    )
    store = open_store(url if url is not None else tmp)
    try:
        with store.maintenance.bulk_load():
            started = time.perf_counter()
            with store.transaction():
                store.insert([graph.project, graph.user, graph.graph, *graph.threads])
            nodes, messages = _searchable(graph)
            for kind, records in ((Node, nodes), (Episode, messages), (Edge, graph.edges)):
                label = f"[{size:,}] inserting {kind.__name__.lower()}s"
                _insert(
                    store, records, label, log, INSERT_CHUNK if url is None else PG_INSERT_CHUNK
                )
            with store.transaction():
                for node_uuid, episodes in graph.node_links.items():
                    store.link_episodes(Node, graph.graph.uuid, node_uuid, episodes)
                for edge_uuid, episodes in graph.edge_links.items():
                    store.link_episodes(Edge, graph.graph.uuid, edge_uuid, episodes)
            insert_s = time.perf_counter() - started
            log(f"[{size:,}] inserted records and provenance links in {insert_s:.1f} s")

            embedder = runtime.minilm()
            embed_s, embedded, derive_s = 0.0, 0, 0.0
            vectors = vector_counts(graph, embed_cap)
            for embedded_kind in KINDS:
                real = vectors[embedded_kind.__name__.lower()]["real"]
                of_kind = _records(graph, embedded_kind)
                seconds, count, derived_s = _embed(
                    store, embedder, embedded_kind, of_kind, real, graph, out_dir, log
                )
                embed_s += seconds
                embedded += count
                derive_s += derived_s
        if url is not None:
            store.setting(BUILT_MARK, "1")  # first read stores it: the build is whole
    finally:
        store.close()
    if url is None:
        for suffix in ("-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, path)
    db_bytes = path.stat().st_size if url is None else pg_bytes(url)
    rate = embedded / embed_s if embedded and embed_s > 0 else None
    log(
        f"[{size:,}] built {name}: {db_bytes / 1e6:.1f} MB"
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
        vectors=vectors,
        embed_cap=embed_cap,
        derive_s=round(derive_s, 3),
    )


def _searchable(graph: SyntheticGraph) -> tuple[list[Node], list[Episode]]:
    """The graph's nodes with their degrees and its episodes with their search texts,
    as the writers of a live graph keep them (graph_model/graph_writes.py), computed at once
    from the whole graph."""
    counted = degrees(graph.edges)
    nodes = [n.model_copy(update={"degree": counted[(n.graph_uuid, n.uuid)]}) for n in graph.nodes]
    edges = {e.uuid: e for e in graph.edges}
    linked: dict[str, list[Edge]] = {}
    for edge_uuid, episode_uuids in graph.edge_links.items():
        for episode_uuid in episode_uuids:
            linked.setdefault(episode_uuid, []).append(edges[edge_uuid])
    threads: dict[str, list[Episode]] = {}
    for episode in graph.episodes:
        if episode.thread_uuid is not None:
            threads.setdefault(episode.thread_uuid, []).append(episode)
    texts: dict[str, dict[str, str | None]] = {}
    for messages in threads.values():
        texts |= thread_texts(messages, from_start=True, to_end=True)
    episodes = [
        e.model_copy(
            update={**texts.get(e.uuid, {}), "search_facts": facts_text(linked.get(e.uuid, []))}
        )
        for e in graph.episodes
    ]
    return nodes, episodes


def _insert(store: Store, records: Sequence[Record], label: str, log: Log, chunk: int) -> None:
    # PostgreSQL's lexical statistics are counted per row by triggers: a common term's
    # count row is updated by every row of the transaction, and each update walks the
    # versions the transaction already made of it, so big transactions cost quadratically.
    # Ingestion writes one episode's rows per transaction; the build commits often too.
    last = 0.0
    for start in range(0, len(records), chunk):
        with store.transaction():
            store.insert(records[start : start + chunk])
        done = min(start + chunk, len(records))
        if time.perf_counter() - last > 5 or done == len(records):
            last = time.perf_counter()
            log(f"{label}: {done:,}/{len(records):,}")


def _embed(
    store: Store,
    embedder: Embedder,
    kind: type[Record],
    records: Sequence[Record],
    real: int,
    graph: SyntheticGraph,
    out_dir: Path,
    log: Log,
) -> tuple[float, int, float]:
    """Store vectors for ``records``: real ones for the first ``real`` records (from the
    ``.npy`` cache as far as it goes, the rest embedded now with progress lines and added
    to the cache), derived ones for the others. Returns (seconds spent embedding, texts
    embedded, seconds spent deriving)."""
    label = f"[{graph.size:,}] embedding {kind.__name__.lower()}s"
    cache = out_dir / f"{stem(graph.size, graph.seed)}-{kind.__name__.lower()}.npy"
    have = np.zeros((0, embedder.dim), dtype=np.float32)
    if cache.exists():
        loaded = np.load(cache, mmap_mode="r")
        if loaded.ndim == 2 and loaded.shape[1] == embedder.dim and loaded.shape[0] <= len(records):
            have = np.asarray(loaded[:real], dtype=np.float32)
            log(f"{label}: {len(have):,} vectors from {cache.name}")
    matrix = np.zeros((len(records), embedder.dim), dtype=np.float32)
    matrix[: len(have)] = have
    seconds = 0.0
    count = 0
    if len(have) < real:
        texts = [text_of(r) for r in records[len(have) : real]]
        started = last = time.perf_counter()
        for start in range(0, len(texts), EMBED_CHUNK):
            end = min(start + EMBED_CHUNK, len(texts))
            matrix[len(have) + start : len(have) + end] = embedder.embed(texts[start:end])
            now = time.perf_counter()
            if now - last > 5 or end == len(texts):
                last = now
                rate = end / (now - started)
                eta = (len(texts) - end) / rate if rate else 0.0
                log(f"{label}: {end:,}/{len(texts):,} ({rate:,.0f}/s, {eta:,.0f} s left)")
        seconds = time.perf_counter() - started
        count = len(texts)
        tmp = cache.with_name(cache.name + ".tmp.npy")
        np.save(tmp, matrix[:real])
        os.replace(tmp, cache)
    started = time.perf_counter()
    if real < len(records):
        matrix[real:] = derive_vectors(matrix[:real], len(records) - real, graph.seed, kind)
        log(f"{label}: {len(records) - real:,} derived from the {real:,} real vectors")
    derive_s = time.perf_counter() - started
    owner = graph.graph.uuid
    for start in range(0, len(records), INSERT_CHUNK):
        chunk = records[start : start + INSERT_CHUNK]
        store.set_embeddings(
            kind, owner, [(r.uuid, matrix[start + i]) for i, r in enumerate(chunk)]
        )
    return seconds, count, derive_s


def derive_vectors(
    real: np.ndarray[Any, np.dtype[np.float32]], count: int, seed: int, kind: type[Record]
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """``count`` unit vectors, each a seeded pick of ``real`` plus small seeded noise."""
    if len(real) == 0:
        raise ValueError("derived vectors need at least one real vector")
    rng = np.random.default_rng([seed, KINDS.index(kind), len(real), count])
    out = np.empty((count, real.shape[1]), dtype=np.float32)
    step = 100_000
    for start in range(0, count, step):
        n = min(step, count - start)
        picks = rng.integers(0, len(real), size=n)
        block = real[picks] + rng.normal(0, DERIVED_NOISE, (n, real.shape[1])).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + n] = block
    return out


def working_copy(built: Built, out_dir: Path) -> Path | str:
    """A copy of the cached database for one run, so searches (which write cursors) never
    change the cache. A PostgreSQL build is used in place: its searches add only cursors,
    which expire, and nothing else in it needs compacting."""
    if built.url is not None:
        return built.url
    # Named per process: two benchmarks running at once must not share (and delete) a copy.
    target = out_dir / f"{stem(built.graph.size, built.graph.seed)}.run-{os.getpid()}.db"
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
    # A server merges its full-text indexes while idle (``Store.compact_text_indexes``);
    # do it before timing, so the server does not do it during the measurement.
    store = open_store(target)
    try:
        while store.maintenance.compact_text_indexes():
            pass
    finally:
        store.close()
    return target
