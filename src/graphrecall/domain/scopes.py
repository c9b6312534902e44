"""Every record kind's storage name and tenant, and every searchable kind (a *scope*)
declared once.

A scope says what the search core, the store and the API need to know about a searchable
record kind: its table and tenant field, the text its lexical index holds (columns and
their BM25 weights), the columns filters may be served from in memory, the fields its time
leg reads and its ranking constants (which rerankers accept it: retrieval/rerank). Every
layer reads this declaration, so adding a scope is adding one entry here (and its wire
conversion). Why each constant has its value, with the measurements, is in docs/search.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graphrecall.domain.models import (
    ApiKey,
    Batch,
    BatchItem,
    ContextTemplate,
    DebugLogging,
    DocumentSummary,
    Edge,
    Episode,
    EpisodeDebugLog,
    Graph,
    Hyperedge,
    IngestionTrace,
    Memory,
    MemoryEvent,
    Node,
    Observation,
    Ontology,
    Project,
    Record,
    Space,
    SummaryInstructions,
    Task,
    Thread,
    ThreadSummary,
    User,
    UserGroup,
    UserGroupMember,
    WebhookDelivery,
    WebhookEndpoint,
)


@dataclass(frozen=True)
class Bm25:
    """BM25's two constants: ``k1``, how soon more repeats of a term stop adding to a
    record's score, and ``b``, how much a long record is discounted for its length."""

    k1: float = 1.2
    b: float = 0.75


# The literature's constants, and every full-text index's own (FTS5's ``bm25()``).
STANDARD_BM25 = Bm25()

# The table (or collection) of every record kind, shared by every backend.
TABLES: dict[type[Record], str] = {
    Project: "projects",
    ApiKey: "api_keys",
    User: "users",
    Graph: "graphs",
    Thread: "threads",
    Episode: "episodes",
    Node: "nodes",
    Edge: "edges",
    Hyperedge: "hyperedges",
    Observation: "observations",
    ThreadSummary: "thread_summaries",
    Task: "tasks",
    Space: "spaces",
    Memory: "memories",
    MemoryEvent: "memory_events",
    Ontology: "ontologies",
    ContextTemplate: "context_templates",
    Batch: "batches",
    BatchItem: "batch_items",
    SummaryInstructions: "summary_instructions",
    DebugLogging: "debug_logging",
    EpisodeDebugLog: "episode_debug_logs",
    IngestionTrace: "ingestion_traces",
    DocumentSummary: "document_summaries",
    UserGroup: "user_groups",
    UserGroupMember: "user_group_members",
    WebhookEndpoint: "webhook_endpoints",
    WebhookDelivery: "webhook_deliveries",
}


@dataclass(frozen=True)
class TextField:
    """One column of a scope's lexical index and how much a match in it counts."""

    name: str
    weight: float = 1.0


@dataclass(frozen=True)
class SearchScope:
    """A searchable record kind."""

    name: str
    kind: type[Record]
    # The tenant column every query of the scope is filtered by (vectors are kept per owner).
    owner_field: str
    # The lexical index's columns, in index order, with their BM25 weights.
    text_fields: tuple[TextField, ...]
    # Columns a filter may be evaluated on from an in-memory copy: text columns (compared
    # by dictionary code) and timestamp columns. Empty: filters are always run by the store.
    filter_text: tuple[str, ...] = ()
    filter_times: tuple[str, ...] = ()
    # When a record happened, for the time leg: the first of these fields that is set
    # (none: the scope has no time leg).
    time_fields: tuple[str, ...] = ()
    # RRF leg weights when the request gives none (None: the search core's defaults).
    leg_weights: Mapping[str, float] | None = None
    # RRF's k.
    rrf_k: int = 10
    # Whether the vector leg also ranks records by the facts they stated (the facts leg).
    facts_leg: bool = False
    # The lexical leg's BM25 constants (the best rows by standard BM25, scored with these).
    bm25: Bm25 = STANDARD_BM25
    # The role leg: when some of a search's candidates have this ``role``, the others form
    # one more ranked list (None: no role leg).
    demoted_role: str | None = None
    # The exchange leg: the other half of the first candidates' exchanges (a question's
    # reply, an assistant's prompt) form one more ranked list (messages: episodes).
    exchange_leg: bool = False
    # The answer leg: the column whose text may hold the kind of answer a question asks for
    # (a time, a sum, a length of time, a place); those first candidates whose text does
    # form one more ranked list (retrieval/answer_kind.py). None: no answer leg.
    answer_field: str | None = None

    @property
    def table(self) -> str:
        return TABLES[self.kind]

    @property
    def text_weights(self) -> tuple[float, ...]:
        return tuple(f.weight for f in self.text_fields)

    @property
    def filter_columns(self) -> tuple[str, ...]:
        return (*self.filter_text, *self.filter_times)


# The graph scopes fuse with RRF k = 10, not the literature's 60: a leg's first few
# results count for more than agreement deep in the lists.
GRAPH_RRF_K = 10
# Memory Engine's own k, so hybrid memory scores keep its scale.
MEMORY_RRF_K = 60
# Episode search's BM25 constants: a message is indexed with its speaker, the messages
# before it, its facts and its reply, so one word counts in several columns; at the
# standard k1 and b repeats of a common word outweighed a question's rarer words.
EPISODE_BM25 = Bm25(k1=0.5, b=0.3)
# Fact search: a fact is one short sentence, so its vector carries its meaning as well as
# its words do, while a question names a person whose name is in hundreds of facts, so
# BM25's order below its first few results is mostly that name. Both legs count alike,
# and only their first few results count much (k = 3): a paraphrase the vector leg ranks
# first is no longer outranked by facts that merely share the person's name.
EDGE_LEG_WEIGHTS = {"bm25": 1.0, "vector": 1.0, "bfs": 1.0, "time": 1.0}
EDGE_RRF_K = 3

SCOPES: dict[str, SearchScope] = {
    "edges": SearchScope(
        "edges",
        Edge,
        "graph_uuid",
        (TextField("fact"),),
        filter_text=("name", "source_node_uuid", "target_node_uuid"),
        filter_times=("created_at", "valid_at", "invalid_at", "expired_at"),
        time_fields=("valid_at", "created_at"),
        leg_weights=EDGE_LEG_WEIGHTS,
        rrf_k=EDGE_RRF_K,
    ),
    "nodes": SearchScope(
        "nodes",
        Node,
        "graph_uuid",
        (TextField("name"), TextField("summary")),
        filter_text=("name",),
        filter_times=("created_at",),
        rrf_k=GRAPH_RRF_K,
    ),
    "episodes": SearchScope(
        "episodes",
        Episode,
        "graph_uuid",
        # A message is indexed with its speaker, the start of the two messages before it,
        # the facts it stated and the start of its reply (ingest computes the last three).
        (
            TextField("role_name"),
            TextField("content"),
            TextField("search_context", 0.5),
            TextField("search_facts"),
            TextField("search_replies", 0.5),
        ),
        filter_text=("thread_uuid", "role", "source"),
        filter_times=("created_at",),
        time_fields=("reference_time",),
        rrf_k=GRAPH_RRF_K,
        facts_leg=True,
        bm25=EPISODE_BM25,
        # A user's own messages over the assistant's replies (docs/search.md, "Role leg").
        demoted_role="assistant",
        # A question's answer is in its reply, the user's facts in what prompted an
        # assistant's answer (docs/search.md, "Exchange leg").
        exchange_leg=True,
        # "When did Dave find the car?": "I found it last week" (docs/search.md, "Answer
        # leg").
        answer_field="content",
    ),
    "observations": SearchScope(
        "observations",
        Observation,
        "graph_uuid",
        (TextField("name"), TextField("summary")),
        rrf_k=GRAPH_RRF_K,
    ),
    "thread_summaries": SearchScope(
        "thread_summaries",
        ThreadSummary,
        "graph_uuid",
        (TextField("summary"),),
        rrf_k=GRAPH_RRF_K,
    ),
    # The Memory Engine face: a space's memories, fused by plain (weighted) RRF.
    "memories": SearchScope(
        "memories",
        Memory,
        "space_uuid",
        (TextField("content"),),
        rrf_k=MEMORY_RRF_K,
    ),
}

# The scope of each searchable kind.
SCOPE_OF: dict[type[Record], SearchScope] = {s.kind: s for s in SCOPES.values()}
# Kinds whose ids are unique within their tenant only, by that tenant field: a memory's
# id is chosen by the client and another space may hold the same one (issue 25). A
# backend keys their rows and vectors by (tenant, id); other records' ids are global.
TENANT_KEYED: dict[type[Record], str] = {Memory: "space_uuid"}
# The searchable tables (each has a lexical index).
TEXT_TABLES: tuple[str, ...] = tuple(s.table for s in SCOPES.values())


def owner_field(kind: type[Record]) -> str:
    """The tenant column of a searchable kind (graph records: ``graph_uuid``)."""
    scope = SCOPE_OF.get(kind)
    return scope.owner_field if scope is not None else "graph_uuid"


def scope_of_table(table: str) -> SearchScope:
    for scope in SCOPES.values():
        if scope.table == table:
            return scope
    raise KeyError(table)
