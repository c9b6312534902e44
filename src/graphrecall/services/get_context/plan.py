"""What one ``get_context`` request retrieves, scope by scope (``Plan``): facts, entities,
observations, thread summaries and, for templates, episodes, each through the retrieval
core with the cross-encoder reranker, under the caller's filters and the inferred time
window; the facts of the best-matching messages guide the fact candidates.

``services.get_context.assembly`` runs a plan and describes the whole; the constants are
measured in docs/context.md ("Constants").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, Literal

from graphrecall.domain import clock, scopes
from graphrecall.domain import predicates as p
from graphrecall.domain.models import (
    Edge,
    Graph,
    Node,
    User,
)
from graphrecall.retrieval import engine
from graphrecall.retrieval.engine import Hit, SearchOptions
from graphrecall.retrieval.filters import Filters, to_predicate
from graphrecall.retrieval.rerank import cross_encoder
from graphrecall.services.container import Services
from graphrecall.services.get_context.block import (
    Item,
    Kind,
    line_of,
)
from graphrecall.services.get_context.relative_time import TimeWindow
from graphrecall.services.get_context.templates import Slot

CANDIDATES = 30  # per scope: enough to fill the default budget several times over
_SCOPE_OF: dict[str, str] = {
    "edge": "edges",
    "node": "nodes",
    "observation": "observations",
    "thread_summary": "thread_summaries",
    "episode": "episodes",
}
_KIND_OF_SLOT: dict[str, Kind] = {
    "edges": "edge",
    "entities": "node",
    "observations": "observation",
    "thread_summaries": "thread_summary",
    "episodes": "episode",
    "user_summary": "user_summary",
}
# A prior on the shared scale, per kind. An entity's text is its name plus a summary that
# restates several of its facts, and a thread summary restates a conversation's points, so
# their BM25 part collects the matches of many facts at once and outranks each fact they
# restate, while adding little beyond them. A query about an entity itself still ranks it
# first (its name matches). (docs/context.md, "Constants", has the measurements.)
KIND_PRIOR: dict[str, float] = {"node": 0.85, "thread_summary": 0.7}
# Facts from the best-matching messages. Message search finds a question's evidence far
# better than fact search does (each message is indexed with its context and its facts),
# so the facts extracted from the EPISODE_GUIDES best messages join the fact candidates,
# each ranked at its message's relevance (x EPISODE_GUIDE_WEIGHT) when that beats its own.
# The block still holds facts, never messages.
EPISODE_GUIDES = 40
EPISODE_GUIDE_WEIGHT = 1.0
# The message search runs beside the other scopes' searches (the store runs full-text
# queries on parallel read connections).
_GUIDES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphrecall-guide")
# Entities, observations and thread summaries are searched beside the facts too.
_SCOPES = ThreadPoolExecutor(max_workers=6, thread_name_prefix="graphrecall-scope")
# Filters that only edges can honour: with one of them, entities are the facts' endpoints.
_EDGE_ONLY = frozenset(
    {
        "edge_types",
        "exclude_edge_types",
        "edge_uuids",
        "source_node_uuids",
        "target_node_uuids",
        "connected_node_uuids",
        "date_filters",
        "content_policy_violated",
    }
)
_NODE_FILTERS = (
    "node_labels",
    "exclude_node_labels",
    "episode_uuids",
    "property_filters",
    "metadata_filters",
)


class Plan:
    """What one request retrieves, scope by scope, under the caller's filters and the
    inferred window."""

    def __init__(
        self,
        ctx: Services,
        graph: Graph,
        query: str,
        filters: Filters,
        edge_where: p.Predicate | None,
        window: TimeWindow | None,
        query_episodes: Sequence[str] = (),
    ) -> None:
        self.ctx = ctx
        # Messages the query is made of (thread context): never guides to their own facts.
        self.query_episodes = tuple(query_episodes)
        self.graph = graph
        self.query = query
        self.given = set(filters.given())
        self.filters = filters
        # Every scope's search embeds the same query, the message search on another
        # thread at the same moment as the fact search: once (engine.Shared).
        self.shared = engine.Shared()
        self.window = window
        self.edge_where = edge_where
        self.edge_branches = _edge_window(window)
        node_filters = Filters(**{k: getattr(filters, k) for k in _NODE_FILTERS})
        self.node_where = to_predicate(node_filters, "search:nodes")
        # Entities follow the facts when the facts are constrained in a way nodes are not.
        self.nodes_follow_edges = window is not None or bool(self.given & _EDGE_ONLY)
        self._endpoints: tuple[str, ...] | None = None
        self._guides: Future[list[Hit]] | None = None  # a template's, shared by its slots

    # -- the default block: four scopes --------------------------------------------------
    def default_candidates(self) -> list[Item]:
        guides = self._start_guides()
        # The scopes that do not depend on the facts are searched beside the fact search.
        beside: dict[Kind, Future[list[tuple[Any, Hit]]]] = {}
        if not self.nodes_follow_edges:
            self._start("node", self._nodes_where(), beside)
        self._start("observation", self._observation_where(), beside)
        self._start("thread_summary", self._summary_where(), beside)
        edges = self.search_edges(None, CANDIDATES)
        self._endpoints = _ends(r for r, _ in edges)
        found = {kind: future.result() for kind, future in beside.items()}
        if self.nodes_follow_edges and (nodes := self._nodes_where()) is not False:
            found["node"] = self.search("node", nodes, CANDIDATES)
        items: list[Item] = []
        for kind in ("node", "observation", "thread_summary"):
            if kind in found:
                items += self._items(kind, found[kind])
        facts = self._items("edge", edges)
        return self._guided(facts, guides.result()) + items if guides else facts + items

    def _start(
        self,
        kind: Kind,
        where: p.Predicate | Literal[False] | None,
        into: dict[Kind, Future[list[tuple[Any, Hit]]]],
    ) -> None:
        """Search ``kind`` (unless ``where`` excludes everything) on a scope thread."""
        if where is not False:
            work = partial(self.search, kind, where, CANDIDATES)
            into[kind] = engine.beside(_SCOPES, self.ctx.store, work)

    def _start_guides(self) -> Future[list[Hit]] | None:
        """The best-matching messages (``EPISODE_GUIDES``), searched in the background."""
        if not EPISODE_GUIDES:
            return None
        where = self._episode_where()
        parts = [where] if where else []
        if self.query_episodes:
            parts.append(p.Not(p.Column("uuid", "in", self.query_episodes)))
        work = partial(self.hits, "episode", p.all_of(parts), EPISODE_GUIDES)
        return engine.beside(_GUIDES, self.ctx.store, work)

    def _guided(
        self, facts: list[Item], guides: list[Hit], extra: p.Predicate | None = None
    ) -> list[Item]:
        """``facts`` with the facts of the messages ``guides`` (those ``extra`` allows too):
        each ranks at its message's relevance (x ``EPISODE_GUIDE_WEIGHT``) when that beats
        its own."""
        relevance: dict[str, float] = {}
        linked = self.ctx.store.linked_by_episode(
            Edge, self.graph.uuid, [hit.uuid for hit in guides]
        )
        for hit in guides:
            for uuid in linked.get(hit.uuid, ()):
                relevance.setdefault(uuid, _key(hit) * EPISODE_GUIDE_WEIGHT)
        if not relevance:
            return facts
        by_uuid = {i.uuid: i for i in facts}
        missing = [u for u in relevance if u not in by_uuid]
        # Those the fact search did not return rank by their message alone (they were not
        # among its best, so their own relevance is lower), if the caller's filters and
        # the window allow them.
        for record in self._allowed_edges(missing, extra):
            by_uuid[record.uuid] = Item("edge", record, None, 0.0, line=line_of("edge", record))
        for uuid, score in relevance.items():
            guided = by_uuid.get(uuid)
            if guided is not None and score > guided.score:
                guided.score = score
        return list(by_uuid.values())

    def fact_sources(self, items: Sequence[Item]) -> dict[str, list[str]]:
        """The messages each fact among ``items`` was extracted from."""
        facts = [i.uuid for i in items if i.kind == "edge"]
        return {
            u: eps
            for u, (eps, _) in self.ctx.store.episodes_of(Edge, self.graph.uuid, facts).items()
        }

    def _allowed_edges(self, uuids: list[str], extra: p.Predicate | None = None) -> list[Edge]:
        """Those of ``uuids`` that the caller's filters, ``extra`` and the window allow."""
        if not uuids:
            return []
        parts = [x for x in (self.edge_where, extra, p.Column("uuid", "in", tuple(uuids))) if x]
        if self.edge_branches:
            parts.append(p.Or(tuple(self.edge_branches)))
        return self.ctx.store.find(Edge, {"graph_uuid": self.graph.uuid}, where=p.all_of(parts))

    # -- a template: one search per slot ------------------------------------------------
    def template_candidates(self, slots: list[tuple[int, Slot]]) -> list[Item]:
        seen: set[tuple[str, str]] = set()
        items: list[Item] = []
        for index, slot in slots:
            kind = _KIND_OF_SLOT[slot.name]
            for item in self._slot(kind, slot):
                if (item.kind, item.uuid) in seen:
                    continue
                seen.add((item.kind, item.uuid))
                item.slot = index
                item.line = line_of(
                    item.kind, item.record, include_attributes=slot.include_attributes
                )
                items.append(item)
        return items

    def _slot(self, kind: Kind, slot: Slot) -> list[Item]:
        if kind == "user_summary":
            return self._user_summary()
        where: p.Predicate | Literal[False] | None
        if kind == "edge":
            types = p.Column("name", "in", slot.types) if slot.types else None
            facts = self._items("edge", self.search_edges(types, slot.limit))
            if self._guides is None:
                self._guides = self._start_guides()
            if self._guides is None:
                return facts
            guided = self._guided(facts, self._guides.result(), types)
            return sorted(guided, key=lambda i: (-i.score, i.uuid))[: slot.limit]
        if kind == "node":
            labels = p.HasAnyLabel(slot.types) if slot.types else None
            base = self._nodes_where()
            where = (
                False if base is False else p.all_of([x for x in (base, labels) if x is not None])
            )
        elif kind == "observation":
            where = self._observation_where()
        elif kind == "thread_summary":
            where = self._summary_where()
        else:
            where = self._episode_where()
        if where is False:
            return []
        return self._items(kind, self.search(kind, where, slot.limit))

    def _user_summary(self) -> list[Item]:
        graph = self.graph
        tenant = {"project_uuid": graph.project_uuid}
        user = self.ctx.store.get(User, graph.user_uuid, tenant) if graph.user_uuid else None
        node = (
            self.ctx.store.get(Node, user.node_uuid, {"graph_uuid": graph.uuid}) if user else None
        )
        if node is None or not (node.summary or "").strip():
            return []
        # Always first to be packed: the template placed it deliberately.
        return [Item("user_summary", node, None, math.inf, line=line_of("user_summary", node))]

    # -- per-scope restrictions ------------------------------------------------------------
    def _nodes_where(self) -> p.Predicate | Literal[False] | None:
        if not self.nodes_follow_edges:
            return self.node_where
        if self._endpoints is None:
            self._endpoints = _ends(r for r, _ in self.search_edges(None, CANDIDATES))
        if not self._endpoints:
            return False
        return p.all_of(
            [x for x in (self.node_where, p.Column("uuid", "in", self._endpoints)) if x is not None]
        )

    def _observation_where(self) -> p.Predicate | Literal[False] | None:
        if self.given:  # observation search honours no filter, so none can be promised
            return False
        w = self.window
        if w is None:
            return None
        parts: list[p.Predicate] = []
        if w.end is not None:
            parts.append(p.Column("created_at", "lt", clock.to_iso(w.end)))
        if w.start is not None:
            parts.append(p.Column("updated_at", "gte", clock.to_iso(w.start)))
        return p.all_of(parts)

    def _summary_where(self) -> p.Predicate | Literal[False] | None:
        if self.given - {"metadata_filters"}:
            return False
        parts: list[p.Predicate] = []
        if self.filters.metadata_filters is not None:
            meta = to_predicate(
                Filters(metadata_filters=self.filters.metadata_filters), "search:thread_summaries"
            )
            if meta is not None:
                parts.append(meta)
        w = self.window
        if w is not None and w.start is not None:
            start = clock.to_iso(w.start)
            parts.append(
                p.coalesced(
                    ("last_summarized_episode_valid_at", "last_summarized_at", "created_at"),
                    [("gte", start)],
                )
            )
        return p.all_of(parts)

    def _episode_where(self) -> p.Predicate | Literal[False] | None:
        if self.given - {"metadata_filters"}:
            return False
        parts: list[p.Predicate] = []
        if self.filters.metadata_filters is not None:
            meta = to_predicate(
                Filters(metadata_filters=self.filters.metadata_filters), "search:episodes"
            )
            if meta is not None:
                parts.append(meta)
        parts += _between("reference_time", self.window)
        return p.all_of(parts)

    # -- running the core ------------------------------------------------------------------
    def search_edges(self, extra: p.Predicate | None, limit: int) -> list[tuple[Any, Hit]]:
        """Facts under the caller's filters, ``extra`` and the window. A window is searched
        branch by branch (each a plain range on one indexed column, which SQLite plans
        well without statistics) and the branches merged on the shared relevance scale."""
        base = [x for x in (self.edge_where, extra) if x is not None]
        if not self.edge_branches:
            return self.search("edge", p.all_of(base), limit)
        best: dict[str, tuple[Any, Hit]] = {}
        for branch in self.edge_branches:
            for record, hit in self.search("edge", p.all_of([*base, branch]), limit):
                if record.uuid not in best or _key(hit) > _key(best[record.uuid][1]):
                    best[record.uuid] = (record, hit)
        merged = sorted(best.values(), key=lambda pair: (-_key(pair[1]), pair[0].uuid))
        return merged[:limit]

    def search(self, kind: Kind, where: p.Predicate | None, limit: int) -> list[tuple[Any, Hit]]:
        hits = self.hits(kind, where, limit)
        records = {
            r.uuid: r
            for r in self.ctx.store.find(
                scopes.SCOPES[_SCOPE_OF[kind]].kind,
                {"graph_uuid": self.graph.uuid, "uuid": [h.uuid for h in hits]},
            )
        }
        return [(records[h.uuid], h) for h in hits if h.uuid in records]

    def hits(self, kind: Kind, where: p.Predicate | None, limit: int) -> list[Hit]:
        """The retrieval core's ranking of ``kind`` for the query, on the shared scale."""
        opts = SearchOptions(
            query=self.query,
            reranker=cross_encoder.RERANKER.name,  # relevance on one scale for every kind
            where=where,
            limit=limit,
            candidates=max(limit, CANDIDATES),
        )
        spec = scopes.SCOPES[_SCOPE_OF[kind]]
        run = engine.search(
            self.ctx.store,
            self.ctx.embedder,
            self.ctx.cross_encoder,
            spec,
            self.graph.uuid,
            opts,
            self.shared,
        )
        return list(run.hits)

    def _items(self, kind: Kind, found: list[tuple[Any, Hit]]) -> list[Item]:
        return [
            Item(
                kind,
                record,
                hit.relevance,
                _key(hit) * KIND_PRIOR.get(kind, 1.0),
                line=line_of(kind, record),
            )
            for record, hit in found
        ]


def _ends(edges: Any) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for edge in edges:
        out[edge.source_node_uuid] = None
        out[edge.target_node_uuid] = None
    return tuple(out)


def _between(column: str, w: TimeWindow | None) -> list[p.Predicate]:
    if w is None:
        return []
    parts: list[p.Predicate] = []
    if w.start is not None:
        parts.append(p.Column(column, "gte", clock.to_iso(w.start)))
    if w.end is not None:
        parts.append(p.Column(column, "lt", clock.to_iso(w.end)))
    return parts


def _edge_window(w: TimeWindow | None) -> list[p.Predicate]:
    """A fact lies in the window when it became true there (``valid_at``, or ``created_at``
    for a fact without one) or stopped being true there (``invalid_at``): three branches."""
    if w is None:
        return []
    return [
        p.all_of(_between("valid_at", w)) or p.Column("valid_at", "is_not_null"),
        p.And((p.Column("valid_at", "is_null"), *_between("created_at", w))),
        p.all_of(_between("invalid_at", w)) or p.Column("invalid_at", "is_not_null"),
    ]


def _key(hit: Hit) -> float:
    return hit.relevance if hit.relevance is not None else hit.score
