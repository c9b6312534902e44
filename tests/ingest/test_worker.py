"""The worker's runs: one graph's queued tasks taken together and in order, different
graphs in parallel, each episode committed alone, failures kept on their own task."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from graphrecall.domain.inputs import EpisodeCreate, GraphCreate
from graphrecall.domain.models import Edge, Episode, Graph, Node, Project, Task
from graphrecall.graph_model.embedding import texts_to_embed
from graphrecall.ingest.context import IngestContext
from graphrecall.ingest.worker import claim_run, run_tasks
from graphrecall.ml.embedder import Matrix
from graphrecall.ml.extraction import Extraction, ExtractionInput
from graphrecall.ml.offline_extractor import OfflineExtractor
from graphrecall.services import tasks
from graphrecall.services.accounts import projects
from graphrecall.services.container import Services
from graphrecall.services.graph import episodes, graphs
from graphrecall.store import Store


class FakeEmbedder:
    """Deterministic vectors from a text's hash; records every text it is asked for."""

    dim = 8
    model_id = "fake"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = np.random.default_rng(abs(hash(text)) % 2**32).random(self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class FailingExtractor:
    """The offline extractor, except on texts that contain "BOOM"."""

    name = "failing"

    def __init__(self) -> None:
        self.inner = OfflineExtractor()

    def extract(self, items: list[ExtractionInput]) -> list[Extraction]:
        if any("BOOM" in i.text for i in items):
            raise RuntimeError("extraction exploded")
        return self.inner.extract(items)


def add(store: Store, project: Project, graph: Graph, *texts: str) -> Task:
    """One queued task with one episode per text (as one add_messages call makes)."""
    ctx = Services(store=store, embedder=None)
    made = [
        episodes.add_episode(ctx, project, graph.uuid, EpisodeCreate(data=text)) for text in texts
    ]
    for _, single in made:
        store.delete(Task, {"uuid": single.uuid})
    return tasks.enqueue(
        ctx, project.uuid, graph.uuid, "graph.add", {"episodes": [e.uuid for e, _ in made]}
    )


def make_graph(store: Store, name: str) -> tuple[Project, Graph]:
    project = projects.get_or_create_project(store)
    ctx = Services(store=store, embedder=None)
    return project, graphs.create_graph(ctx, project, GraphCreate(name=name))


def test_a_run_is_one_graphs_next_tasks_in_order(store: Store) -> None:
    project, a = make_graph(store, "a")
    _, b = make_graph(store, "b")
    a1 = add(store, project, a, "Tom lives in Boston.")
    b1 = add(store, project, b, "Ann works at Acme.")
    a2 = add(store, project, a, "Tom moved to Paris.")
    first = claim_run(store)
    assert [t.uuid for t in first] == [a1.uuid, a2.uuid]  # a's tasks, skipping b's
    assert all(t.status == "processing" for t in first)
    second = claim_run(store)
    assert [t.uuid for t in second] == [b1.uuid]
    assert claim_run(store) == []  # nothing left that is not in progress


def test_a_busy_graph_is_not_claimed_twice(store: Store) -> None:
    project, a = make_graph(store, "a")
    add(store, project, a, "Tom lives in Boston.")
    assert len(claim_run(store, max_tasks=1)) == 1
    add(store, project, a, "Tom moved to Paris.")
    assert claim_run(store) == []  # a's next task waits until the first is done


def test_a_run_stops_at_a_task_of_another_kind(store: Store) -> None:
    project, a = make_graph(store, "a")
    a1 = add(store, project, a, "Tom lives in Boston.")
    other = Task(
        uuid="01900000-0000-7000-8000-000000000001",
        project_uuid=project.uuid,
        graph_uuid=a.uuid,
        type="graph.add_nodes",
        payload={"nodes": []},
        created_at="9999-01-01T00:00:00Z",
        updated_at="9999-01-01T00:00:00Z",
    )
    store.insert([other])
    a3 = add(store, project, a, "Tom moved to Paris.")
    a3 = a3.model_copy(update={"created_at": "9999-12-31T00:00:00Z"})
    store.update(a3)
    assert [t.uuid for t in claim_run(store)] == [a1.uuid]


def test_a_run_processes_embeds_and_commits_every_episode(store: Store) -> None:
    project, a = make_graph(store, "a")
    queued = [
        add(store, project, a, "Tom lives in Boston.", "Tom works at Acme."),
        add(store, project, a, "Tom moved to Paris.", "Tom loves jazz."),
    ]
    embedder = FakeEmbedder()
    ctx = IngestContext(store, embedder, OfflineExtractor())
    done = run_tasks(ctx, claim_run(store))
    assert [t.status for t in done] == ["succeeded", "succeeded"]
    assert [t.uuid for t in done] == [t.uuid for t in queued]
    assert all(e.processed for e in store.find(Episode, {"graph_uuid": a.uuid}))
    edges = store.find(Edge, {"graph_uuid": a.uuid})
    assert {e.name for e in edges} >= {"LIVES_IN", "WORKS_AT", "MOVES_TO", "LOVES"}
    boston = next(e for e in edges if e.name == "LIVES_IN")
    assert boston.invalid_at is not None  # the move in the second task retired it
    # Every record has the vector of its current text; each text was embedded once.
    for kind in (Episode, Edge, Node):
        records = store.find(kind, {"graph_uuid": a.uuid})
        vectors = store.get_embeddings(kind, a.uuid, [r.uuid for r in records])
        assert set(vectors) == {r.uuid for r in records}
        texts = texts_to_embed(store, records)  # what each record's vector stands for
        for record, text in zip(records, texts, strict=True):
            assert np.allclose(vectors[record.uuid], embedder.embed([text])[0]), text
    assert done[0].result and done[0].result["edges_created"] >= 2


def test_a_failed_run_is_redone_task_by_task(store: Store) -> None:
    project, a = make_graph(store, "a")
    good = add(store, project, a, "Tom lives in Boston.")
    bad = add(store, project, a, "BOOM goes the extractor.")
    after = add(store, project, a, "Tom works at Acme.")
    ctx = IngestContext(store, FakeEmbedder(), FailingExtractor())
    done = run_tasks(ctx, claim_run(store))
    assert [t.uuid for t in done] == [good.uuid, bad.uuid, after.uuid]
    assert [t.status for t in done] == ["succeeded", "failed", "succeeded"]
    processed = {e.content: e.processed for e in store.find(Episode, {"graph_uuid": a.uuid})}
    assert processed == {
        "Tom lives in Boston.": True,
        "BOOM goes the extractor.": False,  # left for a retry
        "Tom works at Acme.": True,
    }


CITIES = ("Boston", "Paris", "Lisbon")


def test_graphs_run_in_parallel_threads_and_in_order(store: Store) -> None:
    project, _ = make_graph(store, "seed")
    names = [f"g{i}" for i in range(4)]
    created = [make_graph(store, n)[1] for n in names]
    for graph in created:
        for city in CITIES:
            add(store, project, graph, f"Tom moved to {city}.")
    ctx = IngestContext(store, FakeEmbedder(), OfflineExtractor())
    seen: list[list[str]] = []
    lock = threading.Lock()

    def loop() -> None:
        while run := claim_run(store, max_tasks=1):
            run_tasks(ctx, run)
            with lock:
                seen.append([t.graph_uuid or "" for t in run])

    workers = [threading.Thread(target=loop) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert store.count(Task, {"status": "succeeded"}) == 12
    for graph in created:
        moves = sorted(
            (e for e in store.find(Edge, {"graph_uuid": graph.uuid}) if e.name == "MOVES_TO"),
            key=lambda e: e.created_at,
        )
        assert [e.fact for e in moves] == [f"Tom moved to {city}" for city in CITIES]
        # In order: each move retired the one before it, the last one is live.
        assert [e.invalid_at is None for e in moves] == [False, False, True]
