"""The database of ``bench cold``: many user graphs in one project, built straight into
the store (as ``bench/build.py`` builds one) and cached under the output directory.

Each user's graph is the synthetic generator's graph for its own seed, moved into one
shared project. Embedding every record of a thousand users would take hours here, so only
the first user's records are embedded with the real embedder; every other user's vectors
are *derived* from those (``build.derive_vectors``): a realistic number and spread of
vectors per owner, so the cost of loading and scoring them is the real one, but no
meaning. The benchmark measures latency, not recall.

With ``db`` (a ``postgresql://`` URL) the same graphs go straight into a schema of their
own on that server (``bench_cold_u<users>_f<facts>_s<seed>_g<generator>``), loaded in bulk
as ``build.py`` loads one (the store's ``maintenance.bulk_load``), marked built at the end
and reused while the mark is there (the users and stats are kept in ``OUT/<stem>.postgres.json``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphrecall import runtime
from graphrecall.domain.models import Edge, Node
from graphrecall.graph_model.embedding import text_of
from graphrecall.store import open_store
from graphrecall_bench.build import (
    BUILT_MARK,
    KINDS,
    Log,
    _records,
    _searchable,
    derive_vectors,
    is_postgres,
    pg_built,
    pg_bytes,
    reset_schema,
    shown_url,
    with_schema,
)
from graphrecall_bench.synthetic import GENERATOR_VERSION, generate, make_queries

USERS_PER_TRANSACTION = 20


@dataclass(frozen=True)
class ColdUser:
    user_id: str
    graph_uuid: str
    query: str


@dataclass
class ColdBuild:
    users: int
    facts: int
    seed: int
    cached: bool
    build_s: float
    db_bytes: int
    edges: int
    nodes: int
    episodes: int


@dataclass
class ColdDb:
    path: Path  # the SQLite file, or the PostgreSQL meta file when ``url`` is set
    stats: ColdBuild
    users: list[ColdUser]
    url: str | None = None  # the PostgreSQL store (with its schema), if built there


def stem(users: int, facts: int, seed: int) -> str:
    return f"cold-u{users}-f{facts}-s{seed}-g{GENERATOR_VERSION}"


def user_seed(seed: int, i: int) -> int:
    return seed * 1_000_003 + i


def ensure_cold_db(
    users: int,
    facts: int,
    seed: int,
    out_dir: Path,
    log: Log = print,
    *,
    db: str | None = None,
) -> ColdDb:
    """The database of ``users`` graphs of ``facts`` facts each: reused when cached (with
    ``db`` a PostgreSQL URL: built in its own schema there)."""
    if users < 2 or facts < 1:
        raise ValueError("--users must be at least 2 and --facts at least 1")
    if db is not None and not is_postgres(db):
        raise ValueError("--db takes a postgresql:// URL (without it: SQLite under --out)")
    out_dir.mkdir(parents=True, exist_ok=True)
    name = stem(users, facts, seed)
    url = None if db is None else with_schema(db, "bench_" + name.replace("-", "_"))
    path = out_dir / (f"{name}.db" if url is None else f"{name}.postgres.json")
    meta_path = path.with_suffix(".json")
    if meta_path.exists() and (path.exists() if url is None else pg_built(url)):
        meta = json.loads(meta_path.read_text())
        if url is None or meta.get("url") == shown_url(url):
            log(f"reusing {path if url is None else shown_url(url)} (built earlier)")
            return ColdDb(
                path,
                ColdBuild(**{**meta["stats"], "cached": True}),
                [ColdUser(**u) for u in meta["users"]],
                url,
            )
    stats, made = _build(users, facts, seed, path, log, url)
    written: dict[str, Any] = {"stats": asdict(stats), "users": [asdict(u) for u in made]}
    if url is not None:
        written["url"] = shown_url(url)
    meta_path.write_text(json.dumps(written) + "\n")
    return ColdDb(path, stats, made, url)


def _build(
    users: int, facts: int, seed: int, path: Path, log: Log, url: str | None
) -> tuple[ColdBuild, list[ColdUser]]:
    """Build into ``path`` (written beside it, then moved into place) or, with ``url``,
    into that PostgreSQL schema (emptied first, loaded in bulk, marked built at the end)."""
    tmp = path.with_name(path.name + ".building")
    if url is None:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
    else:
        reset_schema(url)
    started = time.perf_counter()
    first = generate(facts, user_seed(seed, 0))
    project = first.project
    embedder = runtime.minilm()
    # The first user's records, embedded for real: the pool the others' vectors derive from.
    real = {kind: embedder.embed([text_of(r) for r in _records(first, kind)]) for kind in KINDS}
    made: list[ColdUser] = []
    counts = {"edges": 0, "nodes": 0, "episodes": 0}
    store = open_store(tmp if url is None else url)
    try:
        with store.maintenance.bulk_load():
            with store.transaction():
                store.insert([project])
            for start in range(0, users, USERS_PER_TRANSACTION):
                with store.transaction():
                    for i in range(start, min(users, start + USERS_PER_TRANSACTION)):
                        graph = first if i == 0 else generate(facts, user_seed(seed, i))
                        user_id = f"user-{i:05d}"
                        user = graph.user.model_copy(
                            update={
                                "project_uuid": project.uuid,
                                "user_id": user_id,
                                "email": f"{user_id}@example.com",
                            }
                        )
                        moved: dict[str, Any] = {"project_uuid": project.uuid}
                        store.insert(
                            [
                                user,
                                graph.graph.model_copy(update=moved),
                                *(t.model_copy(update=moved) for t in graph.threads),
                            ]
                        )
                        nodes, messages = _searchable(graph)
                        store.insert([*nodes, *messages, *graph.edges])
                        owner = graph.graph.uuid
                        for node_uuid, episodes in graph.node_links.items():
                            store.link_episodes(Node, owner, node_uuid, episodes)
                        for edge_uuid, episodes in graph.edge_links.items():
                            store.link_episodes(Edge, owner, edge_uuid, episodes)
                        for kind in KINDS:
                            records = _records(graph, kind)
                            pool = np.asarray(real[kind], dtype=np.float32)
                            matrix = (
                                pool
                                if i == 0
                                else derive_vectors(pool, len(records), user_seed(seed, i), kind)
                            )
                            store.set_embeddings(
                                kind, owner, [(r.uuid, matrix[j]) for j, r in enumerate(records)]
                            )
                        counts["edges"] += len(graph.edges)
                        counts["nodes"] += len(graph.nodes)
                        counts["episodes"] += len(graph.episodes)
                        query = make_queries(graph, 1, seed)[0].text
                        made.append(ColdUser(user_id, owner, query))
                log(f"built {min(users, start + USERS_PER_TRANSACTION):,}/{users:,} users")
        if url is not None:
            store.setting(BUILT_MARK, "1")  # first read stores it: the build is whole
        while store.maintenance.compact_text_indexes():
            pass
    finally:
        store.close()
    if url is None:
        for suffix in ("-wal", "-shm"):
            Path(f"{tmp}{suffix}").unlink(missing_ok=True)
        os.replace(tmp, path)
    stats = ColdBuild(
        users=users,
        facts=facts,
        seed=seed,
        cached=False,
        build_s=round(time.perf_counter() - started, 1),
        db_bytes=path.stat().st_size if url is None else pg_bytes(url),
        **counts,
    )
    name = path.name if url is None else shown_url(url)
    log(f"built {name}: {stats.db_bytes / 1e6:.1f} MB in {stats.build_s:.0f} s")
    return stats, made
