"""Entity and fact resolution, and temporal invalidation.

Entities: a mention reuses a node of the same graph whose name matches after
normalisation (case, spacing, a leading "the"); a bare first name reuses the one Person
node whose first name it is; the speaker of a user's message is the user's own node.

Facts: a restatement (same source, relation and target, and no conflicting date) adds the
episode to the existing edge. A new fact of a relation that holds one value at a time
(where someone lives, whom they work for, their job, partner, age, status: the table and
the decisions are in ``ingest/single_valued.py``) retires the older value of the same
source entity, and an ending ("left Acme") the value it names: the retired edge gets
``invalid_at`` (when it stopped being true), ``expired_at`` (now) and, in its
``attributes``, the episode and edge that retired it and why. A negated relation
("NOT_LIKES") contradicts its positive form for the same pair and vice versa. Only facts
that share the source entity are ever candidates, so unrelated facts never retire each
other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Episode, Node
from graphrecall.domain.predicates import HasAnyLabel
from graphrecall.graph_model import graph_writes
from graphrecall.ingest import single_valued
from graphrecall.store.base import Store

_THE = re.compile(r"^the\s+", re.I)


def normalize_name(name: str) -> str:
    return _THE.sub("", " ".join(name.split())).casefold()


@dataclass
class EntityResolver:
    store: Store
    graph_uuid: str
    user_node: Node | None = None

    def __post_init__(self) -> None:
        self._cache: dict[str, Node] = {}
        self.created: list[Node] = []

    def resolve(self, name: str, labels: list[str], *, is_speaker_user: bool = False) -> Node:
        if is_speaker_user and self.user_node is not None:
            return self.user_node
        key = normalize_name(name)
        if key in self._cache:
            return self._cache[key]
        node = self._find(name, labels)
        if node is None:
            stamp = clock.now()
            node = Node(
                uuid=new_id(),
                graph_uuid=self.graph_uuid,
                name=" ".join(name.split()),
                labels=["Entity", *[lb for lb in labels if lb != "Entity"]],
                created_at=stamp,
                updated_at=stamp,
            )
            self.created.append(node)
        elif labels and any(lb not in node.labels for lb in labels) and len(node.labels) <= 1:
            node = node.model_copy(
                update={"labels": [*node.labels, *[lb for lb in labels if lb not in node.labels]]}
            )
            self.store.update(node)
        self._cache[key] = node
        return node

    def forget(self) -> None:
        """Drop what it knows: after a rolled-back episode, its cache may hold nodes that
        were never committed, or copies of nodes changed only in that transaction."""
        self._cache.clear()
        self.created.clear()

    def refresh(self, node: Node) -> None:
        """Replace cached copies of a node that was updated elsewhere (e.g. its summary)."""
        for key, cached in list(self._cache.items()):
            if cached.uuid == node.uuid:
                self._cache[key] = node
        if self.user_node is not None and self.user_node.uuid == node.uuid:
            self.user_node = node

    def _find(self, name: str, labels: list[str]) -> Node | None:
        candidates = self.store.nodes_named(self.graph_uuid, " ".join(name.split()))
        if not candidates and name.lower().startswith("the "):
            candidates = self.store.nodes_named(self.graph_uuid, name[4:].strip())
        if candidates:
            return candidates[0]
        if self.user_node is not None:
            first = self.user_node.name.split()[0].casefold() if self.user_node.name else ""
            if normalize_name(name) == first:
                return self.user_node
        if "Person" in labels and " " not in name.strip():
            return self._unique_first_name(name.strip())
        return None

    def _unique_first_name(self, first: str) -> Node | None:
        """ "Jane" -> the one Person node named "Jane ..." (none if ambiguous)."""
        people = self.store.find(
            Node,
            {"graph_uuid": self.graph_uuid},
            where=HasAnyLabel(("Person", "User")),
            limit=5000,
        )
        matches = [
            n for n in people if " " in n.name and n.name.split()[0].casefold() == first.casefold()
        ]
        return matches[0] if len(matches) == 1 else None


def negation_pair(relation: str) -> str:
    return relation[4:] if relation.startswith("NOT_") else f"NOT_{relation}"


def same_day(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a[:10] == b[:10]


def find_restatement(
    store: Store, graph_uuid: str, edge: Edge, *, explicit_date: bool = True
) -> Edge | None:
    """A live edge saying the same thing: same endpoints and relation, or the same source
    and the same fact text (a restatement read another way: "started a new job at
    Orbital Labs" once as STARTS_AT, once as STARTS); and - when the new fact names its
    own date - the same day. Occurrences on different days stay separate edges (going to
    the gym on Monday and on Friday are two facts, not one)."""
    same_triple = {
        "graph_uuid": graph_uuid,
        "source_node_uuid": edge.source_node_uuid,
        "target_node_uuid": edge.target_node_uuid,
        "name": edge.name,
        "expired_at": None,
    }
    same_text = {
        "graph_uuid": graph_uuid,
        "source_node_uuid": edge.source_node_uuid,
        "fact": edge.fact,
        "expired_at": None,
    }
    for scope in (same_triple, same_text):
        for existing in store.find(Edge, scope):
            if existing.invalid_at is None and (
                not explicit_date or same_day(existing.valid_at, edge.valid_at)
            ):
                return existing
    return None


def _told(store: Store, graph_uuid: str, edges: list[Edge]) -> dict[str, tuple[str, list[str]]]:
    """Each edge's told time (the reference time of the first episode that said it; an
    edge added through the API without one: its ``valid_at`` or creation) and episodes."""
    links = store.episodes_of(Edge, graph_uuid, [e.uuid for e in edges]) if edges else {}
    wanted = sorted({u for uuids, _ in links.values() for u in uuids})
    told = {
        e.uuid: e.reference_time
        for e in (store.find(Episode, {"graph_uuid": graph_uuid, "uuid": wanted}) if wanted else [])
    }
    out = {}
    for edge in edges:
        uuids = links.get(edge.uuid, ([], False))[0]
        times = [told[u] for u in uuids if u in told]
        first = min(times, key=lambda t: clock.parse_iso(t, param="t")) if times else None
        out[edge.uuid] = (first or edge.valid_at or edge.created_at, uuids)
    return out


def _known(edge: Edge, told_at: str, target: str, **more: object) -> single_valued.Known:
    return single_valued.Known(
        uuid=edge.uuid,
        relation=edge.name,
        target_uuid=edge.target_node_uuid,
        target=target,
        fact=edge.fact,
        valid_at=edge.valid_at,
        told_at=told_at,
        arrived_at=edge.created_at,
        explicit=edge.valid_at is not None and edge.valid_at != told_at,
        invalid_at=edge.invalid_at,
        **more,  # type: ignore[arg-type]
    )


@dataclass
class Resolved:
    edge: Edge  # the new edge, ended already if it turned out to be history
    retired: list[tuple[Edge, str]]  # the edges it retired, each with why
    notes: list[str]  # what it did not retire, and why (traces)


def resolve_contradictions(
    store: Store,
    episode: Episode,
    edge: Edge,
    *,
    target: str,
    past: bool = False,
    also: bool = False,
) -> Resolved:
    """Apply the single-valued relations (``ingest/single_valued.py``) and negations to a
    new edge of ``episode`` (not yet written): retire what it contradicts, and end the
    new edge itself when it is history. Only live facts of the same source entity are
    candidates, so unrelated facts never retire each other."""
    now = clock.now()
    # Only readings that can retire or end something: a value of a slot that holds many
    # at a time (HAS, OWNS) retires nothing, so its candidates are not even read.
    readings = [
        r
        for r in single_valued.read(edge.name, target)
        if r.slot.one_at_a_time or r.kind in ("end", "end_all")
    ]
    slots = {r.slot.name: r.slot for r in readings}
    names: set[str] = {negation_pair(edge.name)}
    for slot in slots.values():
        names |= slot.relations() | slot.vague
        if slot.values or slot.ends_all or slot.role_values:
            names |= single_valued.COPULAS
    found = [
        e
        for e in store.find(
            Edge,
            {
                "graph_uuid": edge.graph_uuid,
                "source_node_uuid": edge.source_node_uuid,
                "name": sorted(names),
                "expired_at": None,
            },
        )
        if e.uuid != edge.uuid and e.invalid_at is None
    ]
    retire: dict[str, tuple[str, str]] = {}  # uuid -> (invalid_at, why)
    notes: list[str] = []
    new_end: tuple[str, str] | None = None
    if readings:
        targets = _names(store, edge.graph_uuid, [e.target_node_uuid for e in found])
        # A candidate only when it reads as the same slot: a copula's fact when its target
        # is a value of it, "joined" when its target is named.
        candidates = [
            e
            for e in found
            if any(
                r.slot.name in slots
                for r in single_valued.read(e.name, targets.get(e.target_node_uuid, ""))
            )
        ]
        told = _told(store, edge.graph_uuid, candidates)
        new = _known(edge, episode.reference_time, target, past=past, also=also, same_episode=True)
        new.explicit = edge.valid_at is not None and edge.valid_at != episode.reference_time
        known = [
            _known(
                e,
                told[e.uuid][0],
                targets.get(e.target_node_uuid, ""),
                same_episode=episode.uuid in told[e.uuid][1],
            )
            for e in candidates
        ]
        decision = single_valued.decide(new, known)
        for r in decision.retire:
            retire.setdefault(r.uuid, (r.invalid_at, r.reason))
        if decision.new_invalid_at is not None:
            new_end = (decision.new_invalid_at, decision.new_reason or "history")
        notes = decision.notes
    # A negated relation ("NOT_LIKES") and its positive form contradict each other for
    # the same pair: the later statement holds.
    negated = negation_pair(edge.name)
    for existing in found:
        if (
            existing.name == negated
            and existing.target_node_uuid == edge.target_node_uuid
            and existing.uuid not in retire
        ):
            start = edge.valid_at or edge.created_at
            old_start = existing.valid_at or existing.created_at
            if old_start <= start:
                retire[existing.uuid] = (start, f"negated by {edge.fact!r}")
            elif new_end is None:
                new_end = (old_start, f"{existing.fact!r} is newer and says the opposite")
    by_uuid = {e.uuid: e for e in found}
    changed: list[tuple[Edge, str]] = []
    for uuid, (invalid_at, why) in retire.items():
        old = by_uuid[uuid]
        attributes = {
            **(old.attributes or {}),
            "invalidated_by_episode": episode.uuid,
            "invalidated_by_edge": edge.uuid,
            "invalidation_reason": why,
        }
        updated = old.model_copy(
            update={
                "invalid_at": invalid_at,
                "expired_at": now,
                "updated_at": now,
                "attributes": attributes,
            }
        )
        graph_writes.update_edge(store, updated)
        changed.append((updated, why))
    if new_end is not None and edge.invalid_at is None:
        edge = edge.model_copy(
            update={
                "invalid_at": new_end[0],
                "expired_at": now,
                "attributes": {**(edge.attributes or {}), "invalidation_reason": new_end[1]},
            }
        )
        notes.append(f"this fact is history: {new_end[1]}")
    return Resolved(edge, changed, notes)


def _names(store: Store, graph_uuid: str, uuids: list[str]) -> dict[str, str]:
    if not uuids:
        return {}
    return {n.uuid: n.name for n in store.find(Node, {"graph_uuid": graph_uuid, "uuid": uuids})}
