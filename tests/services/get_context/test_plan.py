"""One get_context request embeds its query once, though its message search asks for the
query's vector on another thread at the same moment as its fact search."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from graphrecall.domain.models import Edge, Episode, Graph, Node, Project
from graphrecall.ml.embedder import Matrix, MiniLMEmbedder
from graphrecall.services.container import Services
from graphrecall.services.get_context import assembly as ca
from graphrecall.store import Store, open_store

STAMP = "2026-01-01T00:00:00.000000Z"
GRAPH = "0193a5f0-0000-7000-8000-000000000002"
QUESTION = "Which dog did Caroline adopt from the shelter?"


class SlowCounting:
    """The real embedder, counting its calls and taking 50 ms longer for each, so that
    two threads that both ask for the query's vector overlap."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.calls: list[tuple[str, ...]] = []
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def embed(self, texts: Sequence[str]) -> Matrix:
        with self._lock:
            self.calls.append(tuple(texts))
        time.sleep(0.05)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture()
def store(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[Store]:
    s = open_store(tmp_path / "db.sqlite")
    s.insert([Project(uuid="p", name="p", created_at=STAMP)])
    s.insert(
        [Graph(uuid=GRAPH, project_uuid="p", type="standard", created_at=STAMP, updated_at=STAMP)]
    )
    node = Node(
        uuid="caroline", graph_uuid=GRAPH, name="Caroline", created_at=STAMP, updated_at=STAMP
    )
    said = Episode(
        uuid="said",
        graph_uuid=GRAPH,
        content="We adopted a greyhound called Rex from the shelter.",
        source="message",
        role="user",
        role_name="Caroline",
        reference_time=STAMP,
        created_at=STAMP,
    )
    fact = Edge(
        uuid="fact",
        graph_uuid=GRAPH,
        name="ADOPTS",
        fact="Caroline adopted Rex, a greyhound, from the shelter",
        source_node_uuid="caroline",
        target_node_uuid="caroline",
        created_at=STAMP,
        updated_at=STAMP,
    )
    s.insert([node, said, fact])
    s.link_episodes(Edge, GRAPH, "fact", ["said"])
    for kind, uuid, text in (
        (Node, "caroline", "Caroline"),
        (Episode, "said", said.content),
        (Edge, "fact", fact.fact),
    ):
        s.set_embeddings(kind, GRAPH, [(uuid, minilm.embed([text])[0])])
    yield s
    s.close()


def test_the_query_is_embedded_once_per_request(store: Store, minilm: MiniLMEmbedder) -> None:
    counting = SlowCounting(minilm)
    project = store.get(Project, "p")
    assert project is not None
    result = ca.graph_context(
        Services(store, counting), project, GRAPH, ca.ContextRequest(QUESTION)
    )
    assert counting.calls == [(QUESTION,)]  # facts, entities, messages... one vector
    assert "fact" in [i.uuid for i in result.items]
    # The same block as with an embedder that is never shared across threads.
    again = ca.graph_context(Services(store, minilm), project, GRAPH, ca.ContextRequest(QUESTION))
    assert again.text == result.text
