"""Auto search: ``get_context`` for a graph or a thread.

One request runs the retrieval core (``retrieval.engine.search``) once per scope (facts,
entities, observations, thread summaries; never episodes unless a template asks for them),
each with the ``cross_encoder`` reranker, so every candidate gets a relevance in [0, 1]
from the same scorer: the configured cross-encoder, else the offline bi-encoder + lexical
scorer. That relevance, times a prior per kind (``KIND_PRIOR``: summaries, of entities and
of threads, count 0.85), is the one global scale the scopes are ranked on; recency bias
then scales it, and the best candidates are packed into the character budget
(``services.get_context.block``), each distinct line once. The retrieval is
``services.get_context.plan``, the ranking ``services.get_context.ranking``.

Time: a calendar phrase in the query that really constrains it ("what happened
yesterday?") restricts the evidence to its window (``services.get_context.relative_time``), resolved
in the user's or graph's time zone, else the project's default, else UTC; a caller's
``date_filters`` take precedence and suppress the inference. Within a window:

- a fact is in when its ``valid_at`` (or, when the fact has none, its ``created_at``) lies
  in the window, or when its ``invalid_at`` does (a fact that stopped being true then);
- entities are those at either end of the in-window facts;
- an observation is in when it was created before the window ended and last updated after
  it began; a thread summary when the conversation it covers reaches into the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from graphrecall.domain import clock
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.models import (
    Episode,
    Graph,
    PageRequest,
    Project,
)
from graphrecall.retrieval.filters import Filters, to_predicate
from graphrecall.services.admission import admitted
from graphrecall.services.container import Services
from graphrecall.services.get_context import templates as context_templates
from graphrecall.services.get_context.block import (
    Item,
    Layout,
    SectionLayout,
    TemplateLayout,
    pack,
)
from graphrecall.services.get_context.plan import Plan
from graphrecall.services.get_context.ranking import diversify, rank
from graphrecall.services.get_context.relative_time import TimeWindow, interpret, names_a_time
from graphrecall.services.graph import graphs, threads
from graphrecall.store import read_point

DEFAULT_MAX_CHARACTERS = 2500
MAX_CHARACTERS = 50_000
THREAD_QUERY_MESSAGES = 4
RecencyBias = Literal["off", "mild", "strong"]
# weight of recency, and its half-life in days counted back from the newest candidate
RECENCY: dict[str, tuple[float, float]] = {"mild": (0.25, 30.0), "strong": (0.6, 7.0)}


@dataclass(frozen=True)
class ContextRequest:
    query: str
    filters: Filters = field(default_factory=Filters)
    max_characters: int | None = None
    recency_bias: str | None = None
    template_uuid: str | None = None


@dataclass
class ContextResult:
    graph: Graph
    text: str
    truncated: bool
    items: list[Item]  # in block order: selection_rank = position + 1
    window: TimeWindow | None = None


@admitted
def graph_context(
    ctx: Services,
    project: Project,
    graph_uuid: str,
    request: ContextRequest,
    *,
    now: datetime | None = None,
) -> ContextResult:
    """The context block for ``request.query`` over one graph."""
    budget = _budget(request.max_characters)
    bias = _bias(request.recency_bias)
    if not request.query.strip():
        raise BadRequest("query must not be empty", param="query")
    template = (
        context_templates.get_template(ctx, project, request.template_uuid)
        if request.template_uuid
        else None
    )
    graph = graphs.resolve(ctx, project, graph_uuid)
    filters = request.filters
    edge_where = to_predicate(filters, "graph:edges")  # validates every filter
    window: TimeWindow | None = None
    query = request.query
    if "date_filters" not in filters.given() and names_a_time(request.query):
        zone = graphs.time_zone_of(ctx, project, graph)
        reading = interpret(request.query, now=now or clock.now_dt(), time_zone=zone)
        window = reading.window
        if window is not None and reading.query.strip():
            query = reading.query
    plan = Plan(ctx, graph, query, filters, edge_where, window)
    with read_point.scope():  # every scope's copies checked against one read point
        if template is None:
            candidates = plan.default_candidates()
            layout: Layout = SectionLayout(window.describe() if window else None)
        else:
            parts = context_templates.parse(template.template)
            layout = TemplateLayout(parts, window.describe() if window else None)
            candidates = plan.template_candidates(layout.slots())
        ranked = diversify(rank(candidates, bias), plan.fact_sources(candidates))
    packed = pack(ranked, layout, budget)
    return ContextResult(graph, packed.text, packed.truncated, packed.items, window)


@admitted
def thread_context(
    ctx: Services, project: Project, thread_uuid: str, template_uuid: str | None = None
) -> ContextResult:
    """Context for a thread's latest messages (newest first make the query) over the
    user's graph. No time window is inferred here, as in Zep: the messages are not a
    question about a calendar period. Budget: the default, or the maximum with a template
    (whose limits then set the size)."""
    thread = threads.get_thread(ctx, project, thread_uuid)
    template = (
        context_templates.get_template(ctx, project, template_uuid) if template_uuid else None
    )
    graph = graphs.resolve(ctx, project, thread.graph_uuid)
    latest = ctx.store.list_page(
        Episode,
        {"graph_uuid": graph.uuid, "thread_uuid": thread.uuid},
        PageRequest(page_size=THREAD_QUERY_MESSAGES, order_by="created_at", order="desc"),
    ).items
    query = "\n".join(m.content for m in latest)
    plan = Plan(ctx, graph, query, Filters(), None, None, [m.uuid for m in latest])
    with read_point.scope():  # every scope's copies checked against one read point
        if template is None:
            layout: Layout = SectionLayout()
            candidates = plan.default_candidates() if query.strip() else []
            budget = DEFAULT_MAX_CHARACTERS
        else:
            layout = TemplateLayout(context_templates.parse(template.template))
            candidates = plan.template_candidates(layout.slots()) if query.strip() else []
            budget = MAX_CHARACTERS
        ranked = diversify(rank(candidates, None), plan.fact_sources(candidates))
    packed = pack(ranked, layout, budget)
    return ContextResult(graph, packed.text, packed.truncated, packed.items)


def _budget(value: int | None) -> int:
    if value is None:
        return DEFAULT_MAX_CHARACTERS
    if isinstance(value, bool) or not 1 <= value <= MAX_CHARACTERS:
        raise BadRequest(
            f"max_characters must be from 1 to {MAX_CHARACTERS}; got {value}",
            param="max_characters",
        )
    return value


def _bias(value: str | None) -> tuple[float, float] | None:
    if value is None or value == "off":
        return None
    if value not in RECENCY:
        raise BadRequest(
            f"recency_bias must be off, mild or strong; got {value!r}", param="recency_bias"
        )
    return RECENCY[value]
