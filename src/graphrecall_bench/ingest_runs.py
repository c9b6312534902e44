"""The two ingestion runs of ``bench ingest``, timed: through the ``zep-cloud`` SDK against
a server (``ingest_sdk``), and in-process with the worker's own code and timed models
(``ingest_offline``), with the time split into embedding, extraction and the rest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrecall.domain.clock import to_iso
from graphrecall.ingest.worker import default_threads
from graphrecall.library.locomo import Sample
from graphrecall.ml.embedder import Embedder, Matrix
from graphrecall.ml.extraction import Extraction, ExtractionInput, Extractor
from graphrecall.store.base import Store

if TYPE_CHECKING:
    from zep_cloud import Zep

API_KEY = "gr_bench_locomo_key"
BATCH = 30  # the API's limit of messages per add_messages call
Log = Callable[[str], None]


@dataclass
class IngestedSample:
    sample: Sample
    user_uuid: str
    graph_uuid: str
    episodes: dict[str, str]  # dialogue id -> episode (message) uuid


@dataclass
class IngestRun:
    samples: list[IngestedSample]
    messages: int
    sessions: int
    seconds: float  # first add to last finished task (http); the task run alone (offline)
    add_s: float  # sending/enqueueing every message
    tasks: int
    failed_tasks: list[dict[str, Any]] = field(default_factory=list)
    breakdown: dict[str, Any] = field(default_factory=dict)

    @property
    def messages_per_s(self) -> float:
        return self.messages / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "sessions": self.sessions,
            "seconds": round(self.seconds, 3),
            "messages_per_s": round(self.messages_per_s, 2),
            "add_s": round(self.add_s, 3),
            "tasks": self.tasks,
            "failed_tasks": len(self.failed_tasks),
            "failures": self.failed_tasks[:20],
            **({"breakdown": self.breakdown} if self.breakdown else {}),
        }


# -- through the SDK ---------------------------------------------------------------------


def ingest_sdk(
    client: Zep,
    samples: Sequence[Sample],
    *,
    log: Log = print,
    timeout_s: float = 7200,
    user_prefix: str = "locomo",
) -> IngestRun:
    """Every sample as a user (id ``<user_prefix>-<sample id>``) with one thread per
    session, through the SDK; waits until the worker has finished every task."""
    from zep_cloud import AddMessage

    started = time.perf_counter()
    done: list[IngestedSample] = []
    task_uuids: list[str] = []
    messages = sessions = 0
    for sample in samples:
        user = client.user.create(
            first_name=sample.speaker_a, user_id=f"{user_prefix}-{sample.sample_id}"
        )
        assert user.uuid_ and user.graph_uuid
        episodes: dict[str, str] = {}
        for session in sample.sessions:
            thread = client.thread.create(user_uuid=user.uuid_)
            assert thread.uuid_
            when = to_iso(session.reference_time)
            turns = session.turns
            for start in range(0, len(turns), BATCH):
                batch = turns[start : start + BATCH]
                result = client.thread.add_messages(
                    thread.uuid_,
                    messages=[
                        AddMessage(
                            role=t.role,
                            name=t.speaker or None,
                            content=t.content,
                            reference_time=when,
                        )
                        for t in batch
                    ],
                )
                added = result.messages or []
                if len(added) != len(batch):
                    raise RuntimeError(f"{len(batch)} messages sent, {len(added)} came back")
                for turn, message in zip(batch, added, strict=True):
                    assert message.uuid_
                    episodes[turn.dia_id] = message.uuid_
                if result.task and result.task.uuid_:
                    task_uuids.append(result.task.uuid_)
                messages += len(batch)
            sessions += 1
        done.append(IngestedSample(sample, user.uuid_, user.graph_uuid, episodes))
        log(f"  sent {sample.sample_id}: {len(episodes)} messages ({messages} so far)")
    add_s = time.perf_counter() - started
    failed = wait_for_tasks(client, task_uuids, log=log, timeout_s=timeout_s)
    seconds = time.perf_counter() - started
    return IngestRun(done, messages, sessions, seconds, add_s, len(task_uuids), failed)


def wait_for_tasks(
    client: Zep, task_uuids: Sequence[str], *, log: Log = print, timeout_s: float = 7200
) -> list[dict[str, Any]]:
    """Poll the tasks (oldest first, the worker's order) until each ends; the failed ones."""
    failed: list[dict[str, Any]] = []
    pending = list(task_uuids)
    deadline = time.monotonic() + timeout_s
    next_note = time.monotonic() + 15
    while pending:
        task = client.task.get(pending[0])
        status = str(task.status)
        if status in ("succeeded", "failed", "partial"):
            if status != "succeeded":
                error = task.error.message if task.error else None
                failed.append({"task": pending[0], "status": status, "error": error})
            pending.pop(0)
            continue
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(pending)} ingestion tasks unfinished after {timeout_s} s")
        if time.monotonic() >= next_note:
            finished = len(task_uuids) - len(pending)
            log(f"  processing: {finished}/{len(task_uuids)} tasks done")
            next_note = time.monotonic() + 15
        time.sleep(0.2)
    return failed


# -- in-process ----------------------------------------------------------------------------


_COUNTING = threading.Lock()


def search_trigger(client: Zep, graph_uuid: str) -> Callable[[], None]:
    """An episode, a fact and a node search on ``graph_uuid``: after an ingestion, what
    makes the server bring its index copies up to date (``ServerProcess.wait_for_copies``)
    before a benchmark times its searches."""

    def search() -> None:
        client.graph.search_episodes(graph_uuid, query="warm up", page_size=1)
        client.graph.search_edges(graph_uuid, query="warm up", page_size=1)
        client.graph.search_nodes(graph_uuid, query="warm up", page_size=1)

    return search


class TimedEmbedder:
    """Counts and times what the pipeline embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.texts = 0
        self.calls = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def computed(self) -> int | None:
        """Texts the model actually ran on (the rest came from its cache), if it says."""
        value = getattr(self.inner, "computed", None)
        return value if isinstance(value, int) else None

    def embed(self, texts: Sequence[str]) -> Matrix:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            with _COUNTING:
                self.seconds += time.perf_counter() - started
                self.texts += len(texts)
                self.calls += 1


class TimedExtractor:
    """Counts and times what the pipeline extracts."""

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.items = 0

    def extract(self, items: list[ExtractionInput]) -> list[Extraction]:
        started = time.perf_counter()
        try:
            return self.inner.extract(items)
        finally:
            with _COUNTING:
                self.seconds += time.perf_counter() - started
                self.items += len(items)


def ingest_offline(
    db: Path | str,
    samples: Sequence[Sample],
    *,
    log: Log = print,
    worker_threads: int | None = None,
    debug_log: bool = False,
) -> IngestRun:
    """The same users, threads and messages through the services in-process; then every
    queued task run by the worker's code (``drain_tasks``), timed alone. ``debug_log``:
    with the project's debug logging on (ingest/trace.py records every episode)."""
    from graphrecall.domain.inputs import MessageCreate, MessagesAdd, UserCreate
    from graphrecall.services.accounts import projects
    from graphrecall.services.container import Services
    from graphrecall.services.graph import debug_logs, threads, users
    from graphrecall.store import open_store

    store = open_store(db)
    try:
        embedder, extractor, model_load_s = timed_models()
        ctx = Services(store=store, embedder=embedder)
        project = projects.get_or_create_project(store)
        if debug_log:
            debug_logs.enable(ctx, project)
        done: list[IngestedSample] = []
        messages = sessions = 0
        started = time.perf_counter()
        for sample in samples:
            user = users.create_user(
                ctx,
                project,
                UserCreate(first_name=sample.speaker_a, user_id=f"locomo-{sample.sample_id}"),
            )
            episodes: dict[str, str] = {}
            for session in sample.sessions:
                thread = threads.create_thread(ctx, project, user.uuid)
                when = to_iso(session.reference_time)
                for start in range(0, len(session.turns), BATCH):
                    batch = session.turns[start : start + BATCH]
                    body = MessagesAdd(
                        messages=[
                            MessageCreate(
                                role=t.role,  # type: ignore[arg-type]
                                name=t.speaker or None,
                                content=t.content,
                                reference_time=when,
                            )
                            for t in batch
                        ]
                    )
                    rows, _ = threads.add_messages(ctx, project, thread.uuid, body)
                    for turn, row in zip(batch, rows, strict=True):
                        episodes[turn.dia_id] = row.uuid
                    messages += len(batch)
                sessions += 1
            done.append(IngestedSample(sample, user.uuid, user.graph_uuid, episodes))
        add_s = time.perf_counter() - started
        cpu_started = time.process_time()
        tasks, failed, seconds = drain_tasks(
            store, embedder, extractor, log=log, threads=worker_threads
        )
        cpu_s = time.process_time() - cpu_started
    finally:
        store.close()
    n_threads = worker_threads or default_threads()
    breakdown = time_breakdown(seconds, model_load_s, embedder, extractor, n_threads)
    breakdown["threads"] = n_threads
    # CPU time of the whole process while the tasks ran: on a shared machine it moves
    # much less than wall time, so it is the fairer number to compare runs with.
    breakdown["cpu_s"] = round(cpu_s, 3)
    breakdown["messages_per_cpu_s"] = round(messages / cpu_s, 2) if cpu_s else None
    return IngestRun(done, messages, sessions, seconds, add_s, tasks, failed, breakdown)


def timed_models() -> tuple[TimedEmbedder, TimedExtractor, float]:
    """The offline embedder and extractor, loaded (their one-off load is reported, not
    counted as throughput) and wrapped to time what the pipeline asks of them."""
    from graphrecall import runtime
    from graphrecall.config import load_settings

    settings = load_settings(extractor="offline")
    model = runtime.minilm(settings)
    embedder = TimedEmbedder(model)
    offline = runtime.make_extractor(settings)
    assert offline is not None
    extractor = TimedExtractor(offline)
    started = time.perf_counter()
    embedder.embed(["warm up"])
    extractor.extract([ExtractionInput(text="I moved to Paris.", reference_time="2023")])
    model_load_s = time.perf_counter() - started
    embedder.seconds = embedder.texts = embedder.calls = model.computed = 0
    extractor.seconds = extractor.items = 0
    return embedder, extractor, model_load_s


def drain_tasks(
    store: Store,
    embedder: Embedder | None,
    extractor: Extractor,
    *,
    log: Log = print,
    threads: int | None = None,
) -> tuple[int, list[dict[str, Any]], float]:
    """Run every queued task as the server's worker does (``claim_run``/``run_tasks``:
    runs of one graph's tasks, ``threads`` threads, default the worker's): (tasks run,
    the failed ones, seconds)."""
    from graphrecall.domain.models import Task
    from graphrecall.ingest.context import IngestContext
    from graphrecall.ingest.worker import claim_run, run_tasks

    ictx = IngestContext(store, embedder, extractor)
    failed: list[dict[str, Any]] = []
    done = [0]
    lock = threading.Lock()
    started = time.perf_counter()
    next_note = [started + 15]

    def loop() -> None:
        while True:
            run = claim_run(store)
            if not run:
                if store.count(Task, {"status": ["pending", "processing"]}) == 0:
                    return
                time.sleep(0.005)  # another thread holds the only graph with work
                continue
            results = run_tasks(ictx, run)
            with lock:
                done[0] += len(run)
                for task, result in zip(run, results, strict=True):
                    if result.status != "succeeded":
                        failed.append(
                            {"task": task.uuid, "status": result.status, "error": result.error}
                        )
                if time.perf_counter() >= next_note[0]:
                    log(
                        f"  processing: {done[0]} tasks done, {time.perf_counter() - started:.0f} s"
                    )
                    next_note[0] = time.perf_counter() + 15

    workers = [threading.Thread(target=loop) for _ in range(threads or default_threads())]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    return done[0], failed, time.perf_counter() - started


def time_breakdown(
    seconds: float,
    model_load_s: float,
    embedder: TimedEmbedder,
    extractor: TimedExtractor,
    threads: int = 1,
) -> dict[str, Any]:
    """Where ``seconds`` of task processing on ``threads`` worker threads went: embedding,
    extraction (including waits for the extractor, which runs one call at a time), the
    rest. Times and shares are in thread-seconds: ``seconds`` x ``threads``."""
    spent = seconds * threads
    rest = spent - embedder.seconds - extractor.seconds
    return {
        "model_load_s": round(model_load_s, 3),
        "embed_s": round(embedder.seconds, 3),
        "embed_calls": embedder.calls,
        "embed_texts": embedder.texts,
        "embed_computed": embedder.computed,
        "embed_texts_per_s": round(embedder.texts / embedder.seconds, 1)
        if embedder.seconds
        else None,
        "extract_s": round(extractor.seconds, 3),
        "extract_items": extractor.items,
        "extract_items_per_s": round(extractor.items / extractor.seconds, 1)
        if extractor.seconds
        else None,
        "rest_s": round(rest, 3),
        "share": {
            "embed": round(embedder.seconds / spent, 3) if spent else None,
            "extract": round(extractor.seconds / spent, 3) if spent else None,
            "rest": round(rest / spent, 3) if spent else None,
        },
    }
