"""``graphrecall bench ingest``: ingestion throughput and graph yield on LoCoMo.

Two runs of the same data, each into a fresh database:

- ``http``: the real ``zep-cloud`` SDK against a ``graphrecall serve`` subprocess on
  loopback, as a user would ingest (messages in batches of at most 30, then wait for every
  task): messages/s from the first add to the last finished task;
- ``offline``: the same service calls in-process, then the queued tasks run by the
  worker's own code (runs of tasks per graph, ``--threads`` worker threads, default the
  server's), timed alone (the pipeline's cost without HTTP), with the time split into
  embedding, extraction and the rest (resolution, temporal logic, summaries, SQL); with
  more than one thread these are thread-seconds and overlap.

Both print and record nodes, edges, invalidations (edges with ``invalid_at``),
observations and thread summaries. A seeded sample of extracted facts with the messages
they came from is written as JSON and Markdown, for a human to judge precision.

The runs are ``bench.ingest_runs``, the counts and the fact sample ``bench.graph_yield``;
this module is the command.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from graphrecall.domain.clock import to_iso
from graphrecall.ingest.worker import default_threads
from graphrecall.library.locomo import Sample, load
from graphrecall_bench.build import is_postgres, reset_schema, with_schema
from graphrecall_bench.graph_yield import facts_markdown, graph_stats, sample_facts
from graphrecall_bench.ingest_runs import (
    API_KEY,
    BATCH,
    IngestRun,
    ingest_offline,
    ingest_sdk,
)
from graphrecall_bench.tables import text_table, write_json

TARGET_OFFLINE_MSGS_PER_S = 100.0
MODES = ("both", "http", "offline")


# -- the command ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--json", help="where to write the results (default bench-out/ingest.json)")
    parser.add_argument("--samples", type=int, help="only the first N samples")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="both",
        help="http (SDK + server), offline (in-process pipeline) or both (default)",
    )
    parser.add_argument("--facts", type=int, default=50, help="facts to sample for review (50)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the fact sample (7)")
    parser.add_argument(
        "--threads",
        type=int,
        help="worker threads of the offline run (default: the server's, GRAPHRECALL_WORKER_THREADS"
        " or 2)",
    )
    parser.add_argument(
        "--workdir", help="keep the databases and the server log here (default: a temp dir)"
    )
    parser.add_argument(
        "--db",
        help="ingest into this PostgreSQL server (postgresql://...; a schema per run, emptied"
        " first) instead of SQLite files in the work directory",
    )
    parser.add_argument(
        "--workers",
        help="with --db: after the other runs, the http run again for each of these counts of"
        " 'graphrecall worker' processes (one thread each) beside 'serve --no-worker',"
        " e.g. 1,2,4",
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        help="only the first N messages of each sample (a small, fixed message count)",
    )
    parser.add_argument(
        "--debug-log",
        action="store_true",
        help="offline run with debug logging on (every episode's log and traces recorded),"
        " to measure what recording costs",
    )


def run(args: argparse.Namespace) -> int:
    samples = load(Path(args.data), args.samples)
    if args.max_turns is not None:
        if args.max_turns < 1:
            raise ValueError("--max-turns must be at least 1")
        samples = [_first_turns(s, args.max_turns) for s in samples]
    if args.db is not None and not is_postgres(args.db):
        raise ValueError("--db takes a postgresql:// URL (without it: SQLite)")
    workers = [int(n) for n in str(args.workers).split(",") if n.strip()] if args.workers else []
    if workers and args.db is None:
        raise ValueError("--workers needs --db (processes sharing a PostgreSQL database)")
    if any(n < 1 for n in workers):
        raise ValueError("--workers counts must be at least 1")
    json_path = Path(args.json) if args.json else Path("bench-out") / "ingest.json"
    from graphrecall_bench.machine import machine

    result: dict[str, Any] = {
        "benchmark": "ingest",
        "version": 1,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "params": {
            "data": str(args.data),
            "samples": len(samples),
            "mode": args.mode,
            "facts": args.facts,
            "seed": args.seed,
            "batch": BATCH,
            "threads": args.threads or default_threads(),
            "backend": "postgresql" if args.db else "sqlite",
            "max_turns": args.max_turns,
            "workers": workers,
            "debug_log": args.debug_log,
        },
        "messages": sum(len(s.turns) for s in samples),
        "sessions": sum(len(s.sessions) for s in samples),
        "runs": {},
    }
    print(
        f"ingest benchmark: {len(samples)} samples, {result['sessions']} sessions,"
        f" {result['messages']} messages",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="graphrecall-bench-ingest-") as tmp:
        work = Path(args.workdir) if args.workdir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        facts_from: tuple[Path | str, IngestRun] | None = None
        if args.mode in ("both", "http"):
            db = _fresh(work / "ingest-http.db", args.db)
            run_http = _http_run(db, samples, work / "ingest-http-server.log")
            result["runs"]["http"] = _describe(db, run_http)
            facts_from = (db, run_http)
        if args.mode in ("both", "offline"):
            db = _fresh(work / "ingest-offline.db", args.db)
            print("offline: services + worker tasks in-process", flush=True)
            run_offline = ingest_offline(
                db, samples, log=_log, worker_threads=args.threads, debug_log=args.debug_log
            )
            result["runs"]["offline"] = _describe(db, run_offline)
            facts_from = (db, run_offline)
        for count in workers:
            db = _fresh(work / f"ingest-workers-{count}.db", args.db)
            run_workers = _http_run(db, samples, work / f"ingest-w{count}", workers=count)
            result["runs"][f"{count} worker(s)"] = _describe(db, run_workers)
        assert facts_from is not None
        offline = result["runs"].get("offline")
        result["target"] = {
            "offline_messages_per_s_min": TARGET_OFFLINE_MSGS_PER_S,
            "measured": offline["messages_per_s"] if offline else None,
            "met": (offline["messages_per_s"] >= TARGET_OFFLINE_MSGS_PER_S) if offline else None,
        }
        if "http" in result["runs"] and offline:
            http_rate = result["runs"]["http"]["messages_per_s"]
            result["http_vs_offline"] = round(http_rate / offline["messages_per_s"], 3)
        db, source_run = facts_from
        facts_json = json_path.with_name(json_path.stem + "-facts.json")
        facts_md = json_path.with_name(json_path.stem + "-facts.md")
        if args.facts > 0:
            from graphrecall.store import open_store

            store = open_store(db)
            try:
                facts = sample_facts(store, source_run.samples, args.facts, args.seed)
            finally:
                store.close()
            write_json(facts_json, {"seed": args.seed, "n": len(facts), "facts": facts})
            facts_md.write_text(facts_markdown(facts, args.seed) + "\n", encoding="utf-8")
            result["facts_sample"] = {
                "n": len(facts),
                "seed": args.seed,
                "json": str(facts_json),
                "markdown": str(facts_md),
            }
    print(table(result), flush=True)
    write_json(json_path, result)
    print(f"wrote {json_path}", flush=True)
    if "facts_sample" in result:
        print(f"wrote {facts_md} (facts to review for precision)", flush=True)
    return 0


def _log(text: str) -> None:
    print(text, flush=True)


def _first_turns(sample: Sample, limit: int) -> Sample:
    """``sample`` with only its first ``limit`` turns (later sessions dropped)."""
    sessions = []
    left = limit
    for session in sample.sessions:
        if left <= 0:
            break
        sessions.append(dataclasses.replace(session, turns=session.turns[:left]))
        left -= len(sessions[-1].turns)
    return dataclasses.replace(sample, sessions=tuple(sessions))


def _fresh(db: Path, url: str | None = None) -> Path | str:
    """A fresh SQLite file, or with ``url`` an emptied PostgreSQL schema named after it."""
    if url is not None:
        location = with_schema(url, "bench_" + db.stem.replace("-", "_"))
        reset_schema(location)
        return location
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def _http_run(
    db: Path | str, samples: Sequence[Sample], log_path: Path, *, workers: int = 0
) -> IngestRun:
    """The SDK run; with ``workers``, the server runs ``--no-worker`` beside that many
    ``graphrecall worker`` processes (their logs in the directory ``log_path``)."""
    try:
        from zep_cloud import Zep
    except ImportError as exc:
        raise RuntimeError(
            "the http run needs the zep-cloud package (pip install 'graphrecall[dev]');"
            " or pass --mode offline"
        ) from exc
    from graphrecall_bench.server import ServerProcess, WorkerProcesses

    if workers:
        print(f"http: SDK -> serve --no-worker + {workers} worker process(es)", flush=True)
        log_path.mkdir(parents=True, exist_ok=True)
        with (
            WorkerProcesses(db, workers, log_path),
            ServerProcess(db, API_KEY, log_path / "server.log", worker=False) as server,
        ):
            client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)
            return ingest_sdk(client, samples, log=_log)
    print("http: zep-cloud SDK -> graphrecall serve (loopback)", flush=True)
    with ServerProcess(db, API_KEY, log_path) as server:
        client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)
        return ingest_sdk(client, samples, log=_log)


def _describe(db: Path | str, run: IngestRun) -> dict[str, Any]:
    from graphrecall.store import open_store

    store = open_store(db)
    try:
        stats = graph_stats(store, [s.graph_uuid for s in run.samples])
    finally:
        store.close()
    return {**run.summary(), "graph": stats}


def table(result: dict[str, Any]) -> str:
    runs: dict[str, dict[str, Any]] = result["runs"]
    header = ["run", "msgs", "seconds", "msgs/s", "nodes", "edges", "invalidated"]
    header += ["restated", "observations", "thread summ.", "failed tasks"]
    rows = []
    for name, r in runs.items():
        g = r["graph"]
        rows.append(
            [
                name,
                str(r["messages"]),
                f"{r['seconds']:.1f}",
                f"{r['messages_per_s']:.1f}",
                str(g["nodes"]),
                str(g["edges"]),
                str(g["edges_invalidated"]),
                str(g["edges_restated"]),
                str(g["observations"]),
                str(g["thread_summaries"]),
                str(r["failed_tasks"]),
            ]
        )
    lines = ["", "ingestion of LoCoMo (offline extractor, MiniLM embeddings)", ""]
    lines.append(text_table(header, rows))
    offline = runs.get("offline")
    if offline and offline.get("breakdown"):
        b = offline["breakdown"]
        lines.append("")
        lines.append(
            f"offline pipeline thread-seconds ({b.get('threads', 1)} thread(s)):"
            f" embed {b['embed_s']:.1f} s"
            f" ({b['embed_texts']} texts, {b.get('embed_computed')} through the model,"
            f" {b['embed_texts_per_s']}/s), extract {b['extract_s']:.1f} s"
            f" ({b['extract_items_per_s']}/s), rest {b['rest_s']:.1f} s;"
            f" model load {b['model_load_s']:.1f} s (not counted); CPU {b.get('cpu_s')} s ="
            f" {b.get('messages_per_cpu_s')} messages per CPU-second"
        )
    target = result.get("target") or {}
    if target.get("measured") is not None:
        verdict = "MET" if target["met"] else "NOT MET"
        lines.append(
            f"target: offline >= {target['offline_messages_per_s_min']:.0f} messages/s:"
            f" {target['measured']:.1f} -> {verdict}"
        )
    if "http_vs_offline" in result:
        lines.append(f"http throughput / offline throughput: {result['http_vs_offline']:.2f}")
    return "\n".join(lines)
