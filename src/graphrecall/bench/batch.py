"""``graphrecall bench batch``: live ``add_messages`` latency while a batch is processed,
against the same with the worker idle.

Through the real ``zep-cloud`` SDK and a ``graphrecall serve`` subprocess: a user posts
one message at a time to a live thread and waits until it is processed; each call is
timed twice, the HTTP call (the message stored, its task queued) and until its task has
succeeded (what a user waits for before the fact is searchable). First with nothing else
to do (``idle``), then while a batch of ``--items`` messages over ``--threads`` threads
of other users is processed (``batch``). The batch's throughput over the live phase is
recorded too. The server is stopped once the live phase ends; the batch need not finish.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from zep_cloud import AddMessage, BatchItemInput, Zep

from graphrecall.bench.server import ServerProcess
from graphrecall.bench.tables import latency, ms, text_table, write_json
from graphrecall.domain.clock import to_iso

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
    return {"http": latency(http_ms), "processed": latency(done_ms)}


def _succeeded(zep: Zep, batch_uuid: str) -> int:
    progress = zep.batch.get(batch_uuid).progress
    return int(progress.succeeded_items or 0) if progress else 0


def run(args: argparse.Namespace) -> int:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="graphrecall-bench-batch-"))
    workdir.mkdir(parents=True, exist_ok=True)
    json_path = Path(args.json) if args.json else Path("bench-out") / "batch.json"
    from graphrecall.bench.machine import machine

    result: dict[str, Any] = {
        "benchmark": "batch",
        "version": 1,
        "started_at": to_iso(datetime.now().astimezone()),
        "machine": machine(),
        "params": {"items": args.items, "threads": args.threads, "live": args.live},
    }
    with ServerProcess(workdir / "batch.db", API_KEY, workdir / "server.log") as server:
        zep = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=120)
        live_user = zep.user.create(first_name="Live")
        live = zep.thread.create(user_uuid=live_user.uuid_)
        _live_phase(zep, live.uuid_, 2, 10_000)  # warm-up: models loaded, caches filled
        result["idle"] = _live_phase(zep, live.uuid_, args.live, 20_000)

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
        while _succeeded(zep, batch.uuid_) == 0:  # the batch is under way
            time.sleep(0.1)
        before, started = _succeeded(zep, batch.uuid_), time.perf_counter()
        result["batch"] = _live_phase(zep, live.uuid_, args.live, 30_000)
        seconds = time.perf_counter() - started
        after = _succeeded(zep, batch.uuid_)
        result["batch"]["items_done_during"] = after - before
        result["batch"]["items_per_s"] = round((after - before) / seconds, 2)
        result["batch"]["batch_status_after"] = str(zep.batch.get(batch.uuid_).status)

    rows = []
    for phase in ("idle", "batch"):
        r = result[phase]
        rows.append(
            [
                phase,
                str(r["http"]["n"]),
                ms(r["http"]["p50_ms"]),
                ms(r["http"]["p95_ms"]),
                ms(r["processed"]["p50_ms"]),
                ms(r["processed"]["p95_ms"]),
            ]
        )
    header = ["phase", "n", "http p50", "http p95", "processed p50", "processed p95"]
    print(text_table(header, rows))
    b = result["batch"]
    print(
        f"batch of {args.items} items over {args.threads} threads: {b['items_done_during']}"
        f" items done during the live phase ({b['items_per_s']}/s)"
    )
    write_json(json_path, result)
    print(f"wrote {json_path}")
    return 0
