"""One corpus written to a SQLite and a PostgreSQL store alike (the same records, uuids
and vectors), for tests that compare the two backends' answers."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Memory, Node, Observation, Record
from graphrecall.store import Store
from tests.store.conformance.records import at

# Words chosen to exercise the tokenizer: stems, diacritics, case, digits, apostrophes,
# hyphens, non-Latin letters.
WORDS = (
    "run",
    "running",
    "runs",
    "ran",
    "runner",
    "caress",
    "caresses",
    "pony",
    "ponies",
    "relational",
    "generalization",
    "café",
    "cafe",
    "naïve",
    "Zoë",
    "Zoe",
    "résumé",
    "resume",
    "ÉCOLE",
    "ecole",
    "Straße",
    "strasse",
    "hiking",
    "hiked",
    "hikes",
    "rock'n'roll",
    "well-known",
    "e-mail",
    "2023",
    "3rd",
    "10k",
    "COVID-19",
    "pottery",
    "potter",
    "Caroline",
    "Melanie",
    "LGBTQ",
    "support",
    "group",
    "adoption",
    "agency",
    "painting",
    "painted",
    "sunrise",
    "beach",
    "camping",
    "Москва",
    "Tōkyō",
    "東京",
    "naïveté",
    "coöperate",
    "fiancée",
    "über",
    "Über",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
)
ROLES = ("Caroline", "Melanie", None)


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    text = " ".join(words)
    return (text[:1].upper() + text[1:] + rng.choice([".", "!", "?", "..."])) if words else ""


@dataclass
class Corpus:
    graph: str
    other_graph: str
    space: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)  # (edge uuid, episode uuid)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def records(self) -> list[Record]:
        return [*self.nodes, *self.edges, *self.episodes, *self.observations, *self.memories]


def build(seed: int = 7, episodes: int = 120, edges: int = 160) -> Corpus:
    rng = random.Random(seed)
    corpus = Corpus(new_id(), new_id(), new_id())
    threads = [new_id() for _ in range(3)]
    for i in range(episodes):
        graph = corpus.graph if i % 7 else corpus.other_graph
        thread = rng.choice(threads) if i % 5 else None
        corpus.episodes.append(
            Episode(
                uuid=new_id(),
                graph_uuid=graph,
                content=sentence(rng, rng.randint(3, 25)),
                role="user" if thread else None,
                role_name=rng.choice(ROLES) if thread else None,
                reference_time=at(i),
                created_at=at(i),
                thread_uuid=thread,
                metadata={"n": i % 4, "tag": rng.choice(["a", "b", "café"])},
            )
        )
    for i in range(40):
        corpus.nodes.append(
            Node(
                uuid=new_id(),
                graph_uuid=corpus.graph,
                name=sentence(rng, 2)[:-1],
                labels=rng.sample(["Entity", "Person", "Place", "Event"], 2),
                summary=sentence(rng, rng.randint(0, 12)) if i % 3 else None,
                attributes={"age": rng.randint(1, 90), "city": rng.choice(["Paris", "Oslo"])},
                created_at=at(i),
                updated_at=at(i),
            )
        )
    graph_episodes = [e for e in corpus.episodes if e.graph_uuid == corpus.graph]
    for i in range(edges):
        a, b = rng.choice(corpus.nodes), rng.choice(corpus.nodes)
        edge = Edge(
            uuid=new_id(),
            graph_uuid=corpus.graph,
            name=rng.choice(["LIKES", "VISITED", "KNOWS"]),
            fact=sentence(rng, rng.randint(4, 14)),
            source_node_uuid=a.uuid,
            target_node_uuid=b.uuid,
            attributes={"score": rng.random(), "tags": rng.sample(["x", "y", "z"], 2)},
            created_at=at(i),
            updated_at=at(i),
            valid_at=at(i) if i % 2 else None,
            expired_at=at(i + 1) if i % 11 == 0 else None,
        )
        corpus.edges.append(edge)
        for ep in rng.sample(graph_episodes, rng.randint(0, 2)):
            corpus.links.append((edge.uuid, ep.uuid))
    for i in range(30):
        corpus.observations.append(
            Observation(
                uuid=new_id(),
                graph_uuid=corpus.graph,
                name=sentence(rng, 2)[:-1],
                summary=sentence(rng, rng.randint(3, 15)),
                created_at=at(i),
                updated_at=at(i),
            )
        )
    for i in range(60):
        start = at(i * 10) if i % 3 else None
        corpus.memories.append(
            Memory(
                uuid=new_id(),
                space_uuid=corpus.space,
                content=sentence(rng, rng.randint(3, 20)),
                meta={"kind": rng.choice(["note", "fact"]), "n": i, "tags": ["a", str(i % 3)]},
                tree=rng.choice(["", "work", "work.projects", "work-x", "home.family"]),
                temporal_start=start,
                temporal_end=(at(i * 10 + rng.choice([0, 5])) if start else None),
                version_hash=f"h{i}",
                created_at=at(i),
            )
        )
    vec_rng = np.random.default_rng(seed)
    for record in corpus.records():
        v = vec_rng.standard_normal(16).astype(np.float32)
        corpus.vectors[record.uuid] = (v / np.linalg.norm(v)).astype(np.float32)
    return corpus


def write(store: Store, corpus: Corpus) -> None:
    """The corpus, written as ingestion writes it (records, then links, then vectors)."""
    with store.transaction():
        store.insert(corpus.nodes)
        store.insert(corpus.episodes)
        store.insert(corpus.edges)
        store.insert(corpus.observations)
        store.insert(corpus.memories)
    by_edge: dict[str, list[str]] = {}
    for edge_uuid, episode_uuid in corpus.links:
        by_edge.setdefault(edge_uuid, []).append(episode_uuid)
    for edge_uuid, episode_uuids in by_edge.items():
        store.link_episodes(Edge, corpus.graph, edge_uuid, episode_uuids)
    for kind, records, owner in (
        (Node, corpus.nodes, corpus.graph),
        (Edge, corpus.edges, corpus.graph),
        (Memory, corpus.memories, corpus.space),
    ):
        store.set_embeddings(kind, owner, [(r.uuid, corpus.vectors[r.uuid]) for r in records])
