"""``graphrecall bench batch``: live ``add_messages`` latency while a batch is processed,
against the same with the worker idle.

Through the real ``zep-cloud`` SDK and a ``graphrecall serve`` subprocess: a user posts
one message at a time to a live thread and waits until it is processed; each call is
timed twice, the HTTP call (the message stored, its task queued) and until its task has
succeeded (what a user waits for before the fact is searchable). First with nothing else
to do (``idle``), then while a batch of ``--items`` messages over ``--threads`` threads
of other users is processed (``batch``). The batch's throughput over the live phase is
recorded too. ``--rounds`` splits the batch phase into rounds ``--gap`` seconds apart,
so the live messages sample the batch's whole life, not its first minute; ``--after``
waits for the batch to finish and measures idle again, so the machine's load (shared,
changing) is sampled before and after as well as during. Each phase records the load
average. Without ``--after`` the server is stopped once the live phases end.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from zep_cloud import AddMessage, BatchItemInput, Zep

from graphrecall.domain.clock import to_iso
from graphrecall_bench.server import ServerProcess
from graphrecall_bench.tables import latency, ms, text_table, write_json

API_KEY = "gr_bench_batch_key_0123"
NAMES = ["Ana", "Ben", "Chloe", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun"]
CITIES = ["Lisbon", "Oslo", "Kyoto", "Lima", "Cairo", "Quito", "Perth", "Riga", "Sofia", "Turin"]
THINGS = ["pottery", "chess", "climbing", "jazz", "baking", "sailing", "poetry", "judo"]


def _sentence(n: int) -> str:
    name, city = NAMES[n % len(NAMES)], CITIES[(n // 3) % len(CITIES)]
    thing = THINGS[(n // 7) % len(THINGS)]
    return f"{name} went to {city} in week {n} and started learning {thing} with a friend."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--items", type=int, default=2000, help="batch items (2000)")
    parser.add_argument("--threads", type=int, default=20, help="threads the batch covers (20)")
    parser.add_argument("--live", type=int, default=20, help="live messages per phase (20)")
    parser.add_argument("--rounds", type=int, default=1, help="live rounds during the batch (1)")
    parser.add_argument("--gap", type=float, default=0.0, help="seconds between rounds (0)")
    parser.add_argument(
        "--after",
        type=float,
        default=0.0,
        help="wait up to this many seconds for the batch to finish, then measure idle again",
    )
    parser.add_argument("--json", help="where to write the results (default bench-out/batch.json)")
    parser.add_argument("--workdir", help="keep the database and server log here")


def _wait(zep: Zep, task_uuid: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if zep.task.get(task_uuid).status in ("succeeded", "failed", "partial"):
            return
        time.sleep(0.02)
    raise RuntimeError(f"task {task_uuid} did not finish in {timeout} s")


def _live_phase(zep: Zep, thread_uuid: str, count: int, offset: int) -> dict[str, Any]:
    http_ms: list[float] = []
    done_ms: list[float] = []
    for n in range(count):
        started = time.perf_counter()
        result = zep.thread.add_messages(
            thread_uuid,
            messages=[AddMessage(role="user", name="Live", content=_sentence(offset + n))],
        )
        http_ms.append((time.perf_counter() - started) * 1000)
        _wait(zep, result.task.uuid_)
        done_ms.append((time.perf_counter() - started) * 1000)
    return {
        "http": latency(http_ms),
        "processed": latency(done_ms),
        "samples": {"http": http_ms, "processed": done_ms},
    }


def _succeeded(zep: Zep, batch_uuid: str) -> int:
    progress = zep.batch.get(batch_uuid).progress
    return int(progress.succeeded_items or 0) if progress else 0


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _pooled(phases: list[dict[str, Any]]) -> dict[str, Any]:
    """The samples of several phases as one distribution."""
    return {
        key: latency([v for p in phases for v in p["samples"][key]])
        for key in ("http", "processed")
    }


def _phase(
    zep: Zep, thread_uuid: str, name: str, count: int, offset: int, batch_uuid: str | None
) -> dict[str, Any]:
    load_before, before = _load(), _succeeded(zep, batch_uuid) if batch_uuid else 0
    started = time.perf_counter()
    measured = _live_phase(zep, thread_uuid, count, offset)
    seconds = time.perf_counter() - started
    phase: dict[str, Any] = {
        "phase": name,
        **measured,
        "seconds": round(seconds, 2),
        "load": [load_before, _load()],
    }
    if batch_uuid:
        done = _succeeded(zep, batch_uuid) - before
        phase["items_done_during"] = done
        phase["items_per_s"] = round(done / seconds, 2)
        phase["batch_status_after"] = str(zep.batch.get(batch_uuid).status)
    return phase


def run(args: argparse.Namespace) -> int:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="graphrecall-bench-batch-"))
    workdir.mkdir(parents=True, exist_ok=True)
    json_path = Path(args.json) if args.json else Path("bench-out") / "batch.json"
    from graphrecall_bench.machine import machine

    result: dict[str, Any] = {
        "benchmark": "batch",
        "version": 2,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "params": {
            "items": args.items,
            "threads": args.threads,
            "live": args.live,
            "rounds": args.rounds,
            "gap_s": args.gap,
            "after_s": args.after,
        },
    }
    phases: list[dict[str, Any]] = []
    with ServerProcess(workdir / "batch.db", API_KEY, workdir / "server.log") as server:
        zep = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=120)
        live_user = zep.user.create(first_name="Live")
        live = zep.thread.create(user_uuid=live_user.uuid_)
        _live_phase(zep, live.uuid_, 2, 100_000)  # warm-up: models loaded, caches filled
        phases.append(_phase(zep, live.uuid_, "idle", args.live, 200_000, None))

        threads = []
        for _ in range(args.threads):
            user = zep.user.create(first_name="Backfill")
            threads.append(zep.thread.create(user_uuid=user.uuid_).uuid_)
        batch = zep.batch.create(metadata={"bench": "batch"})
        items = [
            BatchItemInput(
                type="thread_message",
                thread_uuid=threads[n % len(threads)],
                role="user",
                name="Backfill",
                content=_sentence(n),
            )
            for n in range(args.items)
        ]
        for start in range(0, len(items), 1000):
            zep.batch.add_items(batch.uuid_, items=items[start : start + 1000])
        zep.batch.process(batch.uuid_)
        batch_started = time.perf_counter()
        while _succeeded(zep, batch.uuid_) == 0:  # the batch is under way
            time.sleep(0.1)
        for n in range(args.rounds):
            if n:
                time.sleep(args.gap)
            name = "batch" if args.rounds == 1 else f"batch {n + 1}"
            phases.append(_phase(zep, live.uuid_, name, args.live, 300_000 + n * 1000, batch.uuid_))
        if args.after > 0:
            deadline = time.monotonic() + args.after
            while time.monotonic() < deadline and zep.batch.get(batch.uuid_).status in (
                "queued",
                "processing",
            ):
                time.sleep(1)
            status = str(zep.batch.get(batch.uuid_).status)
            result["batch_status"] = status
            result["batch_seconds"] = round(time.perf_counter() - batch_started, 1)
            if status not in ("queued", "processing"):  # idle again: measure it again
                phases.append(_phase(zep, live.uuid_, "idle after", args.live, 400_000, None))

    idle = [p for p in phases if p["phase"].startswith("idle")]
    during = [p for p in phases if p["phase"].startswith("batch")]
    result["phases"] = phases
    result["idle"] = _pooled(idle)
    result["batch"] = _pooled(during)
    result["batch"]["items_done_during"] = sum(p["items_done_during"] for p in during)
    seconds_live = sum(p["seconds"] for p in during)
    result["batch"]["items_per_s"] = (
        round(result["batch"]["items_done_during"] / seconds_live, 2) if seconds_live else 0.0
    )

    def row(name: str, r: dict[str, Any], load: str) -> list[str]:
        return [
            name,
            str(r["http"]["n"]),
            ms(r["http"]["p50_ms"]),
            ms(r["http"]["p95_ms"]),
            ms(r["processed"]["p50_ms"]),
            ms(r["processed"]["p95_ms"]),
            load,
            str(r.get("items_done_during", "")),
        ]

    rows = [row(p["phase"], p, f"{p['load'][0]}-{p['load'][1]}") for p in phases]
    if len(phases) > 2:
        rows += [row("all idle", result["idle"], ""), row("all batch", result["batch"], "")]
    header = ["phase", "n", "http p50", "http p95", "processed p50", "processed p95", "load"]
    print(text_table([*header, "batch items"], rows))
    b = result["batch"]
    print(
        f"batch of {args.items} items over {args.threads} threads: {b['items_done_during']}"
        f" items done during the live phases ({b['items_per_s']}/s)"
        + (
            f"; batch {result['batch_status']} after {result['batch_seconds']} s"
            if "batch_status" in result
            else ""
        )
    )
    write_json(json_path, result)
    print(f"wrote {json_path}")
    return 0
