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
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrecall.bench.locomo_data import Sample, load
from graphrecall.bench.tables import text_table, write_json
from graphrecall.domain.clock import to_iso
from graphrecall.domain.models import (
    Edge,
    Episode,
    Node,
    Observation,
    ThreadSummary,
)
from graphrecall.ingest.worker import default_threads
from graphrecall.ml.embedder import Embedder, Matrix
from graphrecall.ml.extraction import Extraction, ExtractionInput, Extractor
from graphrecall.store.base import Store

if TYPE_CHECKING:
    from zep_cloud import Zep

API_KEY = "gr_bench_locomo_key"
BATCH = 30  # the API's limit of messages per add_messages call
TARGET_OFFLINE_MSGS_PER_S = 100.0
MODES = ("both", "http", "offline")
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
    client: Zep, samples: Sequence[Sample], *, log: Log = print, timeout_s: float = 7200
) -> IngestRun:
    """Every sample as a user with one thread per session, through the SDK; waits until
    the worker has finished every task."""
    from zep_cloud import AddMessage

    started = time.perf_counter()
    done: list[IngestedSample] = []
    task_uuids: list[str] = []
    messages = sessions = 0
    for sample in samples:
        user = client.user.create(first_name=sample.speaker_a, user_id=f"locomo-{sample.sample_id}")
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
                            role="user", name=t.speaker, content=t.content, reference_time=when
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
    db: Path, samples: Sequence[Sample], *, log: Log = print, worker_threads: int | None = None
) -> IngestRun:
    """The same users, threads and messages through the services in-process; then every
    queued task run by the worker's code (``drain_tasks``), timed alone."""
    from graphrecall.domain.inputs import MessageCreate, MessagesAdd, UserCreate
    from graphrecall.services import projects, threads, users
    from graphrecall.services.context import Context
    from graphrecall.store import open_store

    store = open_store(db)
    try:
        embedder, extractor, model_load_s = timed_models()
        ctx = Context(store=store, embedder=embedder)
        project = projects.get_or_create_project(store)
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
                                role="user", name=t.speaker, content=t.content, reference_time=when
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
    embedder: Embedder,
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


# -- what the graph holds ------------------------------------------------------------------


def graph_stats(store: Store, graph_uuids: Sequence[str]) -> dict[str, Any]:
    """Counts over the given graphs: what ingestion produced."""
    scope = {"graph_uuid": list(graph_uuids)}
    edges: list[Edge] = []
    support: dict[str, tuple[list[str], bool]] = {}
    for g in graph_uuids:
        graph_edges = list(store.iter_all(Edge, {"graph_uuid": g}))
        edges += graph_edges
        support.update(store.episodes_of(Edge, g, [e.uuid for e in graph_edges]))
    relations = Counter(e.name for e in edges)
    labels = Counter(
        label
        for g in graph_uuids
        for n in store.iter_all(Node, {"graph_uuid": g})
        for label in (n.labels or ["(none)"])
    )
    episodes = store.count(Episode, scope)
    return {
        "graphs": len(graph_uuids),
        "episodes": episodes,
        "episodes_processed": store.count(Episode, {**scope, "processed": True}),
        "nodes": store.count(Node, scope),
        "edges": len(edges),
        "edges_invalidated": sum(e.invalid_at is not None for e in edges),
        "edges_expired": sum(e.expired_at is not None for e in edges),
        "edges_restated": sum(len(support.get(e.uuid, ([], False))[0]) > 1 for e in edges),
        "edges_per_message": round(len(edges) / episodes, 3) if episodes else None,
        "observations": store.count(Observation, scope),
        "thread_summaries": store.count(ThreadSummary, scope),
        "top_relations": relations.most_common(15),
        "node_labels": labels.most_common(12),
    }


def sample_facts(
    store: Store, ingested: Sequence[IngestedSample], n: int, seed: int
) -> list[dict[str, Any]]:
    """``n`` facts drawn at random (seeded) with the messages they were extracted from."""
    dia_of = {uuid: dia for s in ingested for dia, uuid in s.episodes.items()}
    sample_of = {uuid: s.sample.sample_id for s in ingested for uuid in s.episodes.values()}
    edges = sorted(
        (e for s in ingested for e in store.iter_all(Edge, {"graph_uuid": s.graph_uuid})),
        key=lambda e: e.uuid,
    )
    picked = random.Random(seed).sample(edges, min(n, len(edges)))
    support: dict[str, tuple[list[str], bool]] = {}
    for graph_uuid in dict.fromkeys(e.graph_uuid for e in picked):
        uuids = [e.uuid for e in picked if e.graph_uuid == graph_uuid]
        support.update(store.episodes_of(Edge, graph_uuid, uuids, limit=3))
    out = []
    for edge in picked:
        src = store.get(Node, edge.source_node_uuid, {"graph_uuid": edge.graph_uuid})
        dst = store.get(Node, edge.target_node_uuid, {"graph_uuid": edge.graph_uuid})
        sources = []
        for uuid in support.get(edge.uuid, ([], False))[0]:
            ep = store.get(Episode, uuid, {"graph_uuid": edge.graph_uuid})
            if ep is not None:
                sources.append(
                    {
                        "dia_id": dia_of.get(uuid),
                        "sample_id": sample_of.get(uuid),
                        "speaker": ep.role_name,
                        "reference_time": ep.reference_time,
                        "text": ep.content,
                    }
                )
        out.append(
            {
                "uuid": edge.uuid,
                "relation": edge.name,
                "fact": edge.fact,
                "source": src.name if src else None,
                "target": dst.name if dst else None,
                "valid_at": edge.valid_at,
                "invalid_at": edge.invalid_at,
                "messages": sources,
            }
        )
    return out


def facts_markdown(facts: Sequence[dict[str, Any]], seed: int) -> str:
    lines = [
        f"# {len(facts)} extracted facts, sampled at random (seed {seed})",
        "",
        "For each: is the fact stated (or clearly implied) by its message, with the right",
        "entities and relation? Mark correct / partly / wrong.",
        "",
    ]
    for i, f in enumerate(facts, 1):
        lines.append(f"## {i}. {f['fact']}")
        lines.append("")
        lines.append(f"- relation: `{f['source']}` -[{f['relation']}]-> `{f['target']}`")
        when = f"valid_at {f['valid_at']}" + (
            f", invalid_at {f['invalid_at']}" if f["invalid_at"] else ""
        )
        lines.append(f"- {when}")
        for m in f["messages"]:
            lines.append(f"- {m['sample_id']} {m['dia_id']} {m['speaker']}: {m['text']}")
        lines.append("- verdict: ")
        lines.append("")
    return "\n".join(lines)


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


def run(args: argparse.Namespace) -> int:
    samples = load(Path(args.data), args.samples)
    json_path = Path(args.json) if args.json else Path("bench-out") / "ingest.json"
    from graphrecall.bench.search import machine

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
        facts_from: tuple[Path, IngestRun] | None = None
        if args.mode in ("both", "http"):
            db = _fresh(work / "ingest-http.db")
            run_http = _http_run(db, samples, work / "ingest-http-server.log")
            result["runs"]["http"] = _describe(db, run_http)
            facts_from = (db, run_http)
        if args.mode in ("both", "offline"):
            db = _fresh(work / "ingest-offline.db")
            print("offline: services + worker tasks in-process", flush=True)
            run_offline = ingest_offline(db, samples, log=_log, worker_threads=args.threads)
            result["runs"]["offline"] = _describe(db, run_offline)
            facts_from = (db, run_offline)
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


def _fresh(db: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def _http_run(db: Path, samples: Sequence[Sample], log_path: Path) -> IngestRun:
    try:
        from zep_cloud import Zep
    except ImportError as exc:
        raise RuntimeError(
            "the http run needs the zep-cloud package (pip install 'graphrecall[dev]');"
            " or pass --mode offline"
        ) from exc
    from graphrecall.bench.server import ServerProcess

    print("http: zep-cloud SDK -> graphrecall serve (loopback)", flush=True)
    with ServerProcess(db, API_KEY, log_path) as server:
        client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)
        return ingest_sdk(client, samples, log=_log)


def _describe(db: Path, run: IngestRun) -> dict[str, Any]:
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
