"""``graphrecall bench cold``: latency of the first query to each graph (issue 31).

Builds (or reuses) one database of ``--users`` user graphs of ``--facts`` facts each
(``bench/cold_build.py``), starts a fresh ``graphrecall serve`` on a copy of it, and asks
every user one question, users in random order, through the real ``zep-cloud`` SDK:
``search_edges``, ``search_nodes``, ``search_episodes`` (page 10, RRF) and
``get_context``, the four in a per-user rotated order so each is the first call to some
graphs. That pass is *cold*: nothing of any graph is in memory yet (only the process is
warmed up first, on a user left out of the sample, so the model loads are not counted).
Then the same questions again in a new random order: *warm*. Reported per operation:
p50 / p95 / max, cold and warm, and the first call to each graph apart; the server's
resident memory before and after each pass (what its caches hold), and its cache
counters from ``/healthz``. A table is printed and everything goes to a JSON file.

With ``--db postgresql://...`` the graphs are built in a schema of their own on that
server and the servers run on it in place (no copy: the searches add only cursors).
A restart there restarts graphrecall, not PostgreSQL: its buffer cache stays warm, as
the operating system's page cache does for a SQLite file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from graphrecall.domain.clock import to_iso
from graphrecall_bench.cold_build import ColdDb, ColdUser, ensure_cold_db
from graphrecall_bench.machine import code_version, loadavg, machine
from graphrecall_bench.search_cases import API_KEY, PAGE_SIZE

OPS = ("edges", "nodes", "episodes", "context")
TARGETS = {"search_p95_ms": 25.0, "context_p95_ms": 60.0, "cold_over_warm_p95": 2.0}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--users", type=int, default=200, help="user graphs (200)")
    parser.add_argument("--facts", type=int, default=500, help="facts per user graph (500)")
    parser.add_argument("--seed", type=int, default=7, help="seed of graphs and order (7)")
    parser.add_argument("--out", default="bench-out", help="cache and output directory")
    parser.add_argument("--json", help="where to write the results (default OUT/cold.json)")
    parser.add_argument(
        "--db",
        help="build and serve on this PostgreSQL server (postgresql://...; the graphs in a"
        " schema of their own, reused by later runs); without it: SQLite under --out",
    )
    parser.add_argument(
        "--restart",
        action="store_true",
        help="run a server once first (until its copies are built and saved), stop it and"
        " measure on the restarted one: a restart of a server that ran before",
    )
    parser.add_argument(
        "--wait-copies",
        action="store_true",
        help="before the cold pass, wait until the server's table-wide copies (term"
        " indexes) are built: the cold pass then measures what is per graph only",
    )

    parser.add_argument(
        "--graph-warm",
        action="store_true",
        help="before the cold pass, call graph.warm on every sampled graph (timed): the"
        " cold pass then measures each graph's first queries after a warm hint",
    )


def run(args: argparse.Namespace) -> int:
    out_dir = Path(args.out)
    built = ensure_cold_db(args.users, args.facts, args.seed, out_dir, db=args.db)
    result: dict[str, Any] = {
        "benchmark": "cold",
        "version": 1,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "code": code_version(),
        "params": {
            "users": args.users,
            "facts": args.facts,
            "seed": args.seed,
            "wait_copies": args.wait_copies,
            "restart": args.restart,
            "graph_warm": args.graph_warm,
            "backend": "sqlite" if built.url is None else "postgresql",
        },
        "page_size": PAGE_SIZE,
        "build": built.stats.__dict__,
        "targets": TARGETS,
    }
    # A PostgreSQL build is served in place: its searches add only cursors, which expire.
    db = _copy(built, out_dir) if built.url is None else built.url
    try:
        result |= measure(
            db,
            built,
            args.seed,
            out_dir,
            wait_copies=args.wait_copies,
            restart=args.restart,
            graph_warm=args.graph_warm,
        )
    finally:
        if isinstance(db, Path):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            shutil.rmtree(f"{db}-termindex", ignore_errors=True)  # its saved term indexes
    print(table(result), flush=True)
    json_path = Path(args.json) if args.json else out_dir / "cold.json"
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {json_path}", flush=True)
    return 0


def _copy(built: ColdDb, out_dir: Path) -> Path:
    """A throw-away copy (searches write cursors; the cache stays as built)."""
    target = out_dir / f"{built.path.stem}.run-{os.getpid()}.db"
    source = sqlite3.connect(f"file:{built.path}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy, pages=65536)
    finally:
        copy.close()
        source.close()
    return target


def measure(
    db: Path | str,
    built: ColdDb,
    seed: int,
    out_dir: Path,
    *,
    wait_copies: bool = False,
    restart: bool = False,
    graph_warm: bool = False,
) -> dict[str, Any]:
    from zep_cloud import Zep

    from graphrecall_bench.server import ServerProcess

    probe, sample = built.users[0], built.users[1:]
    rng = random.Random(f"graphrecall-bench-cold:{seed}")
    out: dict[str, Any] = {"loadavg_before": loadavg()}
    if restart:
        started = time.perf_counter()
        with ServerProcess(db, API_KEY, out_dir / "server-cold-first.log") as first:
            client = Zep(api_key=API_KEY, base_url=first.base_url, max_retries=0, timeout=300)
            client.graph.search_edges(probe.graph_uuid, query=probe.query)
            while first.index_status().get("building", 0):
                time.sleep(0.5)
        out["first_server_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    with ServerProcess(db, API_KEY, out_dir / "server-cold.log") as server:
        out["server_start_ms"] = _ms(started)
        client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)

        def call(op: str, user: ColdUser) -> None:
            if op == "context":
                client.graph.get_context(user.graph_uuid, query=user.query, max_characters=2500)
                return
            search = {
                "edges": client.graph.search_edges,
                "nodes": client.graph.search_nodes,
                "episodes": client.graph.search_episodes,
            }[op]
            search(user.graph_uuid, query=user.query, page_size=PAGE_SIZE, reranker="rrf")

        process = server.process
        assert process is not None
        # The process's own first calls (model loads, code paths): on a user left out.
        out["process_first_ms"] = {op: _timed(partial(call, op, probe)) for op in OPS}
        if wait_copies:
            out["waited_for_copies_s"] = server.wait_for_copies()
        if graph_warm:  # a warm hint for every graph, then the same cold pass
            warm_ms = [_timed(partial(client.graph.warm, u.graph_uuid)) for u in sample]
            out["graph_warm_ms"] = _stats(warm_ms)
        out["rss_mb_start"] = _rss_mb(process.pid)
        out["health_start"] = _health(server.port)
        for phase in ("cold", "warm"):
            order = list(sample)
            rng.shuffle(order)
            out[phase] = _pass(order, call)
            out[f"rss_mb_after_{phase}"] = _rss_mb(process.pid)
            out[f"health_after_{phase}"] = _health(server.port)
    out["loadavg_after"] = loadavg()
    return out


def _pass(order: list[ColdUser], call: Callable[[str, ColdUser], None]) -> dict[str, Any]:
    """Every user's four calls (rotated so each op leads for a quarter of the users)."""
    samples: dict[str, list[float]] = {op: [] for op in OPS}
    first: list[float] = []
    started = time.perf_counter()
    for n, user in enumerate(order):
        ops = OPS[n % len(OPS) :] + OPS[: n % len(OPS)]
        for k, op in enumerate(ops):
            ms = _timed(partial(call, op, user))
            samples[op].append(ms)
            if k == 0:
                first.append(ms)
    summary: dict[str, Any] = {op: _stats(values) for op, values in samples.items()}
    summary["first_call"] = _stats(first)
    summary["seconds"] = round(time.perf_counter() - started, 1)
    return summary


def _stats(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values)
    p50, p95 = np.percentile(arr, [50, 95])
    return {
        "n": len(values),
        "p50_ms": round(float(p50), 2),
        "p95_ms": round(float(p95), 2),
        "max_ms": round(float(arr.max()), 2),
    }


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return _ms(started)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _rss_mb(pid: int) -> float | None:
    """The process's resident memory (Linux ``/proc``; None elsewhere)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def _health(port: int) -> dict[str, Any]:
    health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=30).json()
    return {k: v for k, v in health.items() if isinstance(v, dict)}


def table(result: dict[str, Any]) -> str:
    p = result["params"]
    lines = [
        f"bench cold ({p.get('backend', 'sqlite')}): {p['users']} users x {p['facts']} facts,"
        " one question per user"
        f" (page {result['page_size']}, RRF), through the SDK"
        + (" (table-wide copies built first)" if p.get("wait_copies") else "")
        + (", after a restart" if p.get("restart") else "")
        + (", every graph warmed first (graph.warm)" if p.get("graph_warm") else ""),
        f"{'operation':<12}{'cold p50':>10}{'cold p95':>10}{'cold max':>10}"
        f"{'warm p50':>10}{'warm p95':>10}{'warm max':>10}{'cold/warm':>11}",
    ]
    for op in (*OPS, "first_call"):
        c, w = result["cold"][op], result["warm"][op]
        ratio = c["p95_ms"] / w["p95_ms"] if w["p95_ms"] else float("inf")
        lines.append(
            f"{op:<12}{c['p50_ms']:>10.1f}{c['p95_ms']:>10.1f}{c['max_ms']:>10.1f}"
            f"{w['p50_ms']:>10.1f}{w['p95_ms']:>10.1f}{w['max_ms']:>10.1f}{ratio:>10.2f}x"
        )
    lines.append(
        f"server RSS MB: start {result['rss_mb_start']}, after cold"
        f" {result['rss_mb_after_cold']}, after warm {result['rss_mb_after_warm']}"
    )
    caches = result["health_after_warm"].get("caches")
    if caches:
        lines.append(f"caches after warm: {json.dumps(caches)}")
    lines.append(f"process first calls (ms): {result['process_first_ms']}")
    if "graph_warm_ms" in result:
        lines.append(f"graph.warm calls (ms): {result['graph_warm_ms']}")
    return "\n".join(lines)
