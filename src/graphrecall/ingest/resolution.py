"""Entity and fact resolution, and temporal invalidation.

Entities: a mention reuses a node of the same graph whose name matches after
normalisation (case, spacing, a leading "the"); a bare first name reuses the one Person
node whose first name it is; the speaker of a user's message is the user's own node.

Facts: a restatement (same source, relation and target, and no conflicting date) adds the
episode to the existing edge. A new fact in an exclusive relation group (where someone
lives, whom they work for, what their job is) invalidates the live facts of the same group
about the same source entity with another target: ``invalid_at`` = the new fact's
``valid_at``, ``expired_at`` = now. A negated relation ("NOT_LIKES") contradicts its
positive form for the same pair and vice versa. Only facts that share the source entity
are ever candidates, so unrelated facts never retire each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphrecall.domain import clock
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Node
from graphrecall.domain.predicates import HasAnyLabel
from graphrecall.ingest import graph_writes
from graphrecall.store.base import Store

EXCLUSIVE_GROUPS: dict[str, frozenset[str]] = {
    "residence": frozenset(
        {
            "LIVES_IN",
            "MOVES_TO",
            "RELOCATES_TO",
            "MOVES_BACK_TO",
            "RESIDES_IN",
            "LIVES_AT",
            "MOVES_INTO",
            "IS_BASED_IN",
        }
    ),
    "employer": frozenset(
        {
            "WORKS_AT",
            "WORKS_FOR",
            "IS_EMPLOYED_BY",
            "JOINS",
            "STARTS_AT",
            "WORKS_WITH_COMPANY",
            "STARTS_WORKING_AT",
            "STARTS_WORKING_FOR",
            "GETS_JOB_AT",
            "IS_HIRED_BY",
        }
    ),
    "occupation": frozenset({"WORKS_AS", "IS_EMPLOYED_AS"}),
    "partner": frozenset({"IS_MARRIED_TO", "MARRIES", "IS_ENGAGED_TO"}),
}
# A move ends every phrasing of the old home, also those outside the group ("lives
# near the university" says where home is without naming it).
MOVES = frozenset({"MOVES_TO", "RELOCATES_TO", "MOVES_BACK_TO", "MOVES_INTO"})
NEAR_HOME = frozenset({"LIVES_NEAR", "LIVES_CLOSE_TO", "LIVES_NEXT_TO", "LIVES_BY", "LIVES_AROUND"})
# Facts that end one of the group's facts about the same target ("left Acme Corp").
ENDINGS = {
    "LEAVES": "employer",
    "QUITS": "employer",
    "RESIGNS_FROM": "employer",
    "MOVES_FROM": "residence",
    "MOVES_OUT_OF": "residence",
    "DIVORCES": "partner",
}
GROUP_OF = {rel: group for group, rels in EXCLUSIVE_GROUPS.items() for rel in rels}
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


def contradicted_by(store: Store, graph_uuid: str, edge: Edge) -> list[Edge]:
    """Live edges about the same source that ``edge`` contradicts: another target in
    its exclusive group; for a move, also every other phrasing of a home ("lives near
    the university"); for an ending ("left Acme Corp"), the group's facts with the same
    target; the negated form for the same pair."""
    group = GROUP_OF.get(edge.name)
    names = set(EXCLUSIVE_GROUPS[group]) if group else set()
    if edge.name in MOVES:
        names |= NEAR_HOME
    ended = ENDINGS.get(edge.name)
    if ended is not None:
        names |= EXCLUSIVE_GROUPS[ended]
    names.add(negation_pair(edge.name))
    out = []
    for existing in store.find(
        Edge,
        {
            "graph_uuid": graph_uuid,
            "source_node_uuid": edge.source_node_uuid,
            "name": sorted(names),
            "expired_at": None,
        },
    ):
        if existing.uuid == edge.uuid or existing.invalid_at is not None:
            continue
        same_target = existing.target_node_uuid == edge.target_node_uuid
        if existing.name == negation_pair(edge.name) or (
            ended is not None and existing.name in EXCLUSIVE_GROUPS[ended]
        ):
            if same_target:
                out.append(existing)
        elif not same_target:
            out.append(existing)
    return out


def invalidate(store: Store, new: Edge, old: list[Edge]) -> tuple[Edge, list[Edge]]:
    """Apply contradictions. An older fact ends when the new one starts; if the new fact is
    in fact older than what we knew (out-of-order reports), the new fact is the one that
    ended, when the known one started."""
    changed: list[Edge] = []
    now = clock.now()
    for existing in old:
        new_start = new.valid_at or new.created_at
        old_start = existing.valid_at or existing.created_at
        if new.invalid_at is not None and new.invalid_at <= old_start:
            continue  # "I lived in Hamburg until 2020" ended before the known fact began
        if old_start <= new_start:
            updated = existing.model_copy(
                update={"invalid_at": new_start, "expired_at": now, "updated_at": now}
            )
            graph_writes.update_edge(store, updated)
            changed.append(updated)
        elif new.invalid_at is None or new.invalid_at > old_start:
            new = new.model_copy(update={"invalid_at": old_start, "expired_at": now})
    return new, changed
