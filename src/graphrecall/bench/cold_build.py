"""The database of ``bench cold``: many user graphs in one project, built straight into
the store (as ``bench/build.py`` builds one) and cached under the output directory.

Each user's graph is the synthetic generator's graph for its own seed, moved into one
shared project. Embedding every record of a thousand users would take hours here, so only
the first user's records are embedded with the real embedder; every other user's vectors
are *derived* from those (``build.derive_vectors``): a realistic number and spread of
vectors per owner, so the cost of loading and scoring them is the real one, but no
meaning. The benchmark measures latency, not recall.
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
from graphrecall.bench.build import KINDS, Log, _records, _searchable, derive_vectors
from graphrecall.bench.synthetic import GENERATOR_VERSION, generate, make_queries
from graphrecall.domain.models import Edge, Node
from graphrecall.ingest.embedding import text_of
from graphrecall.store import open_store

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
    path: Path
    stats: ColdBuild
    users: list[ColdUser]


def stem(users: int, facts: int, seed: int) -> str:
    return f"cold-u{users}-f{facts}-s{seed}-g{GENERATOR_VERSION}"


def user_seed(seed: int, i: int) -> int:
    return seed * 1_000_003 + i


def ensure_cold_db(users: int, facts: int, seed: int, out_dir: Path, log: Log = print) -> ColdDb:
    """The database of ``users`` graphs of ``facts`` facts each: reused when cached."""
    if users < 2 or facts < 1:
        raise ValueError("--users must be at least 2 and --facts at least 1")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{stem(users, facts, seed)}.db"
    meta_path = path.with_suffix(".json")
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        log(f"reusing {path} (built earlier)")
        return ColdDb(
            path,
            ColdBuild(**{**meta["stats"], "cached": True}),
            [ColdUser(**u) for u in meta["users"]],
        )
    stats, made = _build(users, facts, seed, path, log)
    meta_path.write_text(
        json.dumps({"stats": asdict(stats), "users": [asdict(u) for u in made]}) + "\n"
    )
    return ColdDb(path, stats, made)


def _build(
    users: int, facts: int, seed: int, path: Path, log: Log
) -> tuple[ColdBuild, list[ColdUser]]:
    tmp = path.with_name(path.name + ".building")
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    started = time.perf_counter()
    first = generate(facts, user_seed(seed, 0))
    project = first.project
    embedder = runtime.minilm()
    # The first user's records, embedded for real: the pool the others' vectors derive from.
    real = {kind: embedder.embed([text_of(r) for r in _records(first, kind)]) for kind in KINDS}
    made: list[ColdUser] = []
    counts = {"edges": 0, "nodes": 0, "episodes": 0}
    store = open_store(tmp)
    try:
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
        while store.maintenance.compact_text_indexes():
            pass
    finally:
        store.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, path)
    stats = ColdBuild(
        users=users,
        facts=facts,
        seed=seed,
        cached=False,
        build_s=round(time.perf_counter() - started, 1),
        db_bytes=path.stat().st_size,
        **counts,
    )
    log(f"built {path.name}: {stats.db_bytes / 1e6:.1f} MB in {stats.build_s:.0f} s")
    return stats, made
