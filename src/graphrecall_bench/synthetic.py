"""Deterministic synthetic chat-memory graphs, and questions about them.

One user graph of N facts (edges), shaped like the graphs a chat assistant accumulates:
the user is the biggest hub, a few close friends and family are smaller hubs, and most
entities are leaves mentioned once or twice (subjects and objects are drawn from Zipf-like
rank distributions). Facts are natural sentences with UPPER_SNAKE names, bi-temporal
fields (dated events, past jobs with an end, moves and job changes that invalidate and
expire the older fact), attributes, and the chat messages (episodes) that stated them,
linked as provenance to the edges and the nodes they mention.

Everything derives from ``random.Random`` seeded with the seed, and uuids are UUIDv7s
made from the synthetic timestamps and that generator, so a (size, seed) pair always
yields the same graph, byte for byte.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from graphrecall.domain.clock import to_iso
from graphrecall.domain.models import Edge, Episode, Graph, Node, Project, Thread, User
from graphrecall_bench import vocab
from graphrecall_bench.relations import CATEGORIES, RELATIONS, Relation

GENERATOR_VERSION = 1
USER_FIRST, USER_LAST = "Jordan", "Ellis"
START = datetime(2022, 1, 3, 9, 0, tzinfo=UTC)
SPAN = timedelta(days=3 * 365)
USER_SHARE = 0.25  # share of person-subject facts that are about the user
ZIPF_S = 1.05
THREAD_LENGTH = 40  # episodes per thread
QUESTION_SLOTS = ("category", "species", "sibling", "parent", "subject")
RELATIONS_BY_NAME = {r.name: r for r in RELATIONS}
OPENERS = ("", "", "", "By the way, ", "Quick update: ", "Oh, and ", "Just so you know, ", "FYI: ")
ASSISTANT_REPLIES = (
    "Thanks for telling me about {n}! I'll keep that in mind.",
    "Noted. I've saved that detail about {n}.",
    "Got it. {n} sounds important to you. Anything else I should remember?",
    "That's good to know about {n}. How are things going otherwise?",
)
PET_PREFIXES = ("", "Little ", "Captain ", "Sir ", "Mr ", "Miss ", "Lady ", "Professor ", "Baron ")


@dataclass
class Entity:
    category: str
    name: str
    attributes: dict[str, Any] = field(default_factory=dict)
    uuid: str = ""
    first_seen: str = ""
    last_seen: str = ""
    facts: list[str] = field(default_factory=list)  # the first few, for the summary


@dataclass(frozen=True)
class FactInfo:
    """What a question about one edge needs to know."""

    edge_uuid: str
    relation: str
    source_name: str
    source_category: str
    source_uuid: str
    target_name: str
    target_category: str
    target_uuid: str
    episode_uuid: str
    slots: tuple[tuple[str, str], ...]


@dataclass
class SyntheticGraph:
    size: int
    seed: int
    project: Project
    user: User
    graph: Graph
    threads: list[Thread]
    nodes: list[Node]
    edges: list[Edge]
    episodes: list[Episode]
    node_links: dict[str, list[str]]  # node uuid -> episodes that mention it
    edge_links: dict[str, list[str]]  # edge uuid -> episodes that support it
    facts: list[FactInfo]
    user_episode_uuids: list[str]

    @property
    def hub_uuid(self) -> str:
        return self.user.node_uuid

    def fingerprint(self) -> str:
        """A digest of the records, to check that a cached database matches this graph."""
        h = hashlib.sha256(f"v{GENERATOR_VERSION}".encode())
        for edge in self.edges:
            h.update(f"{edge.uuid}|{edge.fact}|{edge.expired_at}\n".encode())
        for node in self.nodes:
            h.update(f"{node.uuid}|{node.name}\n".encode())
        for episode in self.episodes:
            h.update(f"{episode.uuid}\n".encode())
        return h.hexdigest()


@dataclass(frozen=True)
class Query:
    """A question about one fact, and what a good search returns for it."""

    text: str
    paraphrase: bool
    relation: str
    edge_uuid: str  # the fact asked about (edge search)
    answer_node_uuid: str  # the entity that answers it (node search)
    episode_uuid: str  # the message that stated it (episode search)
    mention_episodes: tuple[str, ...]  # for the episode_mentions reranker
    edge_types: tuple[str, ...]  # for the filtered search


def uuid7(rng: random.Random, when: datetime) -> str:
    """A UUIDv7 for ``when`` whose random bits come from ``rng`` (deterministic)."""
    ms = int(when.timestamp() * 1000)
    rand = rng.getrandbits(74)
    value = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & (2**62 - 1))
    return str(uuidlib.UUID(int=value))


class _Pools:
    """Entities per category, in rank order; drawing one follows a Zipf-like law."""

    def __init__(self, size: int, rng: random.Random) -> None:
        self.rng = rng
        self.user = Entity("person", f"{USER_FIRST} {USER_LAST}")
        self.pools: dict[str, list[Entity]] = {}
        self.cumulative: dict[str, list[float]] = {}
        persons = [
            f"{a} {b}"
            for a, b in itertools.product(vocab.FIRST_NAMES, vocab.LAST_NAMES)
            if (a, b) != (USER_FIRST, USER_LAST)
        ]
        rng.shuffle(persons)
        self._add("person", [(n, {}) for n in persons[: max(30, size // 8)]])
        self._add("org", self._orgs(max(15, size // 25)))
        self._add("city", [(c, {"country": k}) for c, k in vocab.CITIES])
        self._add("food", [(f, {"cuisine": c}) for f, c in vocab.FOODS])
        self._add("allergen", [(a, {}) for a in vocab.ALLERGENS])
        self._add("hobby", [(h, {}) for h in vocab.HOBBIES])
        self._add("instrument", [(i, {}) for i in vocab.INSTRUMENTS])
        self._add("product", [(p, {"category": c, "brand": b}) for p, c, b in vocab.PRODUCTS])
        pets = [p + n for p in PET_PREFIXES for n in vocab.PET_NAMES]
        rng.shuffle(pets)
        self._add(
            "pet",
            [(n, {"species": rng.choice(vocab.SPECIES)}) for n in pets[: max(10, size // 100)]],
        )
        schools = [
            (p.format(city=c), {"city": c}) for p in vocab.SCHOOL_PATTERNS for c, _ in vocab.CITIES
        ]
        rng.shuffle(schools)
        self._add("school", schools[: max(10, size // 200)])
        self._add("event", self._events(max(10, size // 40)))
        books = [f"The {a} {n}" for a in vocab.BOOK_ADJECTIVES for n in vocab.BOOK_NOUNS]
        rng.shuffle(books)
        self._add("book", [(b, {}) for b in books])
        self._add("team", [(t, {}) for t in vocab.TEAMS])
        self._add("language", [(lang, {}) for lang in vocab.LANGUAGES])
        self._add("artist", [(a, {}) for a in vocab.ARTISTS])
        projects = [
            (f"the {c} {k}", {"kind": k})
            for c in vocab.PROJECT_CODENAMES
            for k in vocab.PROJECT_KINDS
        ]
        rng.shuffle(projects)
        self._add("project", projects)
        self._add("preference", [(p, {}) for p in vocab.PREFERENCES])

    def _add(self, category: str, items: list[tuple[str, dict[str, Any]]]) -> None:
        self.pools[category] = [Entity(category, name, dict(attrs)) for name, attrs in items]
        self.cumulative[category] = list(
            itertools.accumulate(1.0 / (r + 1) ** ZIPF_S for r in range(len(items)))
        )

    def _orgs(self, n: int) -> list[tuple[str, dict[str, Any]]]:
        seen: set[str] = set()
        out: list[tuple[str, dict[str, Any]]] = []
        while len(out) < n:
            word = self.rng.choice(vocab.COMPANY_WORDS)
            prefix = self.rng.choice(vocab.COMPANY_PREFIXES)
            if len(seen) > len(vocab.COMPANY_PREFIXES) * len(vocab.COMPANY_WORDS) // 2:
                prefix += self.rng.choice(vocab.COMPANY_PREFIXES).lower()
            name = f"{prefix} {word}"
            if name not in seen:
                seen.add(name)
                out.append((name, {"industry": vocab.INDUSTRIES[word]}))
        return out

    def _events(self, n: int) -> list[tuple[str, dict[str, Any]]]:
        seen: set[str] = set()
        out: list[tuple[str, dict[str, Any]]] = []
        orgs = [e.name for e in self.pools["org"]]
        while len(out) < n:
            city = self.rng.choice(vocab.CITIES)[0]
            name = self.rng.choice(vocab.EVENT_PATTERNS).format(
                city=city,
                year=self.rng.randint(2019, 2024),
                company=self.rng.choice(orgs),
                first=self.rng.choice(vocab.FIRST_NAMES),
            )
            if name not in seen:
                seen.add(name)
                out.append((name, {"city": city}))
        return out

    def pick(self, category: str, *, subject: bool, exclude: Entity | None = None) -> Entity:
        if category == "person":
            share = USER_SHARE if subject else 0.05
            if exclude is not self.user and self.rng.random() < share:
                return self.user
        pool, cumulative = self.pools[category], self.cumulative[category]
        while True:
            entity = self.rng.choices(pool, cum_weights=cumulative)[0]
            if entity is not exclude:
                return entity


class _Generator:
    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self.seed = seed
        self.rng = random.Random(f"graphrecall-bench:{seed}")
        rng = self.rng
        self.pools = _Pools(size, rng)
        self.cum_weights = list(itertools.accumulate(r.weight for r in RELATIONS))
        stamp = to_iso(START - timedelta(days=1))
        self.project = Project(uuid=uuid7(rng, START), name="default", created_at=stamp)
        user_uuid, graph_uuid = uuid7(rng, START), uuid7(rng, START)
        user = self.pools.user
        user.uuid, user.first_seen = uuid7(rng, START), stamp
        user.attributes = {"user_uuid": user_uuid}
        self.user = User(
            uuid=user_uuid,
            project_uuid=self.project.uuid,
            graph_uuid=graph_uuid,
            node_uuid=user.uuid,
            user_id="jordan.ellis",
            email="jordan.ellis@example.com",
            first_name=USER_FIRST,
            last_name=USER_LAST,
            metadata={"plan": "pro", "signup_source": "bench"},
            created_at=stamp,
            updated_at=stamp,
        )
        self.graph = Graph(
            uuid=graph_uuid,
            project_uuid=self.project.uuid,
            type="user",
            user_uuid=user_uuid,
            created_at=stamp,
            updated_at=stamp,
        )
        self.threads: list[Thread] = []
        self.edges: list[Edge] = []
        self.episodes: list[Episode] = []
        self.facts: list[FactInfo] = []
        self.used: dict[int, Entity] = {id(user): user}
        self.node_links: dict[str, list[str]] = {}
        self.edge_links: dict[str, list[str]] = {}
        self.current: dict[tuple[str, str], Edge] = {}  # exclusive facts still valid
        self.user_episodes: list[str] = []

    # -- the timeline -------------------------------------------------------------------
    def run(self) -> SyntheticGraph:
        rng = self.rng
        step = SPAN / self.size
        made = 0
        while made < self.size:
            k = min(self.size - made, rng.choice((1, 1, 2, 2, 3)))
            when = START + step * made + step * rng.uniform(0, 0.5)
            episode_uuid = uuid7(rng, when)
            sentences, mentioned = [], []
            for j in range(k):
                text, source, target = self._fact(when + timedelta(microseconds=j), episode_uuid)
                sentences.append(text)
                mentioned += [source, target]
            content = rng.choice(OPENERS) + " ".join(sentences)
            self._episode(episode_uuid, when, content, "user", mentioned)
            self.user_episodes.append(episode_uuid)
            if rng.random() < 0.3:
                later = when + step * 0.75
                entity = mentioned[-1]
                reply = rng.choice(ASSISTANT_REPLIES).format(n=entity.name)
                self._episode(uuid7(rng, later), later, reply, "assistant", [entity])
            made += k
        return SyntheticGraph(
            size=self.size,
            seed=self.seed,
            project=self.project,
            user=self.user,
            graph=self.graph,
            threads=self.threads,
            nodes=self._nodes(),
            edges=self.edges,
            episodes=self.episodes,
            node_links=self.node_links,
            edge_links=self.edge_links,
            facts=self.facts,
            user_episode_uuids=self.user_episodes,
        )

    def _episode(
        self, uuid: str, when: datetime, content: str, role: str, mentioned: list[Entity]
    ) -> None:
        if len(self.episodes) % THREAD_LENGTH == 0:
            stamp = to_iso(when)
            self.threads.append(
                Thread(
                    uuid=uuid7(self.rng, when),
                    project_uuid=self.project.uuid,
                    graph_uuid=self.graph.uuid,
                    user_uuid=self.user.uuid,
                    thread_id=f"bench-thread-{len(self.threads):05d}",
                    created_at=stamp,
                    updated_at=stamp,
                )
            )
        stamp = to_iso(when)
        self.episodes.append(
            Episode(
                uuid=uuid,
                graph_uuid=self.graph.uuid,
                content=content,
                source="message",
                role="user" if role == "user" else "assistant",
                role_name=f"{USER_FIRST} {USER_LAST}" if role == "user" else "Assistant",
                metadata={"app": self.rng.choice(vocab.APPS), "thread_turn": len(self.episodes)},
                reference_time=stamp,
                created_at=stamp,
                thread_uuid=self.threads[-1].uuid,
                processed=True,
            )
        )
        for entity in mentioned:
            links = self.node_links.setdefault(entity.uuid, [])
            if not links or links[-1] != uuid:
                links.append(uuid)
            entity.last_seen = stamp

    # -- one fact ---------------------------------------------------------------------
    def _fact(self, when: datetime, episode_uuid: str) -> tuple[str, Entity, Entity]:
        rng = self.rng
        relation: Relation = rng.choices(RELATIONS, cum_weights=self.cum_weights)[0]
        source = self.pools.pick(relation.source, subject=True)
        target = self.pools.pick(relation.target, subject=False, exclude=source)
        stamp = to_iso(when)
        for entity in (source, target):
            if not entity.uuid:
                entity.uuid, entity.first_seen = uuid7(rng, when), stamp
                self.used[id(entity)] = entity
        template = rng.choice(relation.facts)
        slots, valid_at, invalid_at = self._slots(relation, template, when, target)
        fact = template.format(s=source.name, t=target.name, **slots)
        fact = fact[0].upper() + fact[1:]
        edge_uuid = uuid7(rng, when)
        attributes = {k: slots[k] for k in relation.attributes} or None
        edge = Edge(
            uuid=edge_uuid,
            graph_uuid=self.graph.uuid,
            name=relation.name,
            fact=fact,
            source_node_uuid=source.uuid,
            target_node_uuid=target.uuid,
            attributes=attributes,
            created_at=stamp,
            updated_at=stamp,
            valid_at=valid_at,
            invalid_at=invalid_at,
        )
        if relation.exclusive:
            key = (relation.name, source.uuid)
            previous = self.current.get(key)
            if previous is not None:  # a move, a new job: the old fact stops being true
                ended = valid_at if valid_at and valid_at > (previous.valid_at or "") else stamp
                previous.invalid_at = ended
                previous.expired_at = stamp
                previous.updated_at = stamp
            self.current[key] = edge
        self.edges.append(edge)
        self.edge_links[edge_uuid] = [episode_uuid]
        for entity in (source, target):
            if len(entity.facts) < 2:
                entity.facts.append(fact)
        self.facts.append(
            FactInfo(
                edge_uuid=edge_uuid,
                relation=relation.name,
                source_name=source.name,
                source_category=source.category,
                source_uuid=source.uuid,
                target_name=target.name,
                target_category=target.category,
                target_uuid=target.uuid,
                episode_uuid=episode_uuid,
                slots=tuple((k, slots[k]) for k in QUESTION_SLOTS if k in slots),
            )
        )
        return fact, source, target

    def _slots(
        self, relation: Relation, template: str, when: datetime, target: Entity
    ) -> tuple[dict[str, str], str | None, str | None]:
        rng = self.rng
        if relation.temporal == "future":
            date = when + timedelta(days=rng.randint(7, 240))
        else:
            date = when - timedelta(days=rng.randint(1, 900))
        date = date.replace(hour=0, minute=0, second=0, microsecond=0)
        slots = {
            "role": rng.choice(vocab.ROLES),
            "year": str(date.year),
            "end_year": str(date.year),
            "month": vocab.MONTHS[date.month - 1],
            "date": f"{vocab.MONTHS[date.month - 1]} {date.day}, {date.year}",
            "season": vocab.SEASONS[((date.month - 3) % 12) // 3],
            "place": rng.choice(vocab.MEETING_PLACES),
            "sibling": rng.choice(vocab.SIBLINGS),
            "parent": rng.choice(vocab.PARENTS),
            "subject": rng.choice(vocab.SUBJECTS),
            **{k: str(v) for k, v in target.attributes.items()},
        }
        dated = any(f"{{{k}}}" in template for k in ("year", "end_year", "month", "date"))
        reference = to_iso(when)
        valid_at: str | None = None
        invalid_at: str | None = None
        if relation.temporal == "none":
            valid_at = reference if rng.random() < 0.5 else None
        elif relation.temporal == "past":
            valid_at = to_iso(date - timedelta(days=365 * rng.randint(1, 6)))
            invalid_at = to_iso(date)
        else:
            valid_at = to_iso(date) if dated else reference
        return slots, valid_at, invalid_at

    # -- nodes ------------------------------------------------------------------------
    def _nodes(self) -> list[Node]:
        nodes = []
        for entity in self.used.values():
            if entity is self.pools.user:
                labels, summary = ["User"], f"{entity.name} is the user."
            else:
                label, description = CATEGORIES[entity.category]
                labels = ["Entity", label]
                summary = f"{entity.name} is {description}"
                details = ", ".join(f"{k} {v}" for k, v in entity.attributes.items())
                summary += f" ({details})." if details else "."
            summary = " ".join([summary, *entity.facts])
            nodes.append(
                Node(
                    uuid=entity.uuid,
                    graph_uuid=self.graph.uuid,
                    name=entity.name,
                    labels=labels,
                    summary=summary,
                    attributes=dict(entity.attributes) or None,
                    created_at=entity.first_seen,
                    updated_at=entity.last_seen or entity.first_seen,
                )
            )
        nodes.sort(key=lambda n: n.uuid)
        return nodes


def generate(size: int, seed: int) -> SyntheticGraph:
    """The graph of ``size`` facts for ``seed`` (same inputs, same graph)."""
    if size < 1:
        raise ValueError("a synthetic graph needs at least one fact")
    return _Generator(size, seed).run()


def make_queries(graph: SyntheticGraph, count: int, seed: int) -> list[Query]:
    """``count`` questions about random facts of ``graph``; about 40% are paraphrases
    and about 30% call a person by first name only, as people do in chat."""
    rng = random.Random(f"graphrecall-bench-queries:{seed}")
    if count <= len(graph.facts):
        picks = rng.sample(range(len(graph.facts)), count)
    else:
        picks = rng.choices(range(len(graph.facts)), k=count)
    names = [r.name for r in RELATIONS]
    out = []
    for i in picks:
        fact = graph.facts[i]
        relation = RELATIONS_BY_NAME[fact.relation]
        paraphrase = len(relation.questions) > 1 and rng.random() < 0.4
        template = rng.choice(relation.questions[1:]) if paraphrase else relation.questions[0]
        source, target = fact.source_name, fact.target_name
        if rng.random() < 0.3:
            if fact.source_category == "person":
                source = source.split()[0]
            if fact.target_category == "person":
                target = target.split()[0]
        text = template.format(s=source, t=target, **dict(fact.slots))
        answer = fact.target_uuid if relation.asks == "source" else fact.source_uuid
        others = rng.sample(graph.user_episode_uuids, min(3, len(graph.user_episode_uuids)))
        types = rng.sample([n for n in names if n != fact.relation], 2)
        out.append(
            Query(
                text=text[0].upper() + text[1:],
                paraphrase=paraphrase,
                relation=fact.relation,
                edge_uuid=fact.edge_uuid,
                answer_node_uuid=answer,
                episode_uuid=fact.episode_uuid,
                mention_episodes=(fact.episode_uuid, *others),
                edge_types=(fact.relation, *types),
            )
        )
    return out
