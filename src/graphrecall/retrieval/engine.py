"""Hybrid search, written once for every scope: lexical + vector + graph legs, reciprocal
rank fusion, then one reranker. A scope is a declaration (``domain/scopes.py``); nothing
here is scope-specific beyond what it declares."""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TypeVar, cast

from graphrecall.domain import clock
from graphrecall.domain import predicates as p
from graphrecall.domain.models import Edge, Episode, Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import SearchScope
from graphrecall.ml.cross_encoder import CrossEncoder
from graphrecall.ml.embedder import Embedder, EmbedderUnavailable
from graphrecall.retrieval import answer_kind, graph, rerank
from graphrecall.retrieval.fusion import rrf
from graphrecall.retrieval.request import Hit, InvalidRequest, Reranker, SearchOptions
from graphrecall.retrieval.text import query_terms
from graphrecall.store import read_point
from graphrecall.store.base import Store, Vector

T = TypeVar("T")

log = logging.getLogger(__name__)

# RRF leg weights when neither the request nor the scope gives any. The bundled MiniLM
# vector leg is weaker than BM25 on conversational memory, so it counts half; the facts leg
# (episodes only) is a weak but independent signal (docs/search.md has the measurements).
DEFAULT_LEG_WEIGHTS = {
    "bm25": 1.0,
    "vector": 0.5,
    "bfs": 1.0,
    "time": 1.0,
    "facts": 0.15,
    "role": 0.5,
    "exchange": 0.3,
    "answer": 0.7,
}
# The facts leg: the messages that stated the facts nearest the query vector, in the order
# of their nearest fact. A fact names who and what a message left to its context
# ("Melanie SIGNS_UP_FOR pottery class" of "I just signed up for a class"), so its vector
# matches questions the message's own does not. It reuses the query vector.
FACTS_LEG_DEPTH = 30
# The time leg: when the query names a period ("on 19 August, 2023", "in May 2023"), the
# candidates of the other legs whose time lies in it, widened by TIME_LEG_SLACK on each
# side, form one more ranked list (in their fused order). It only reorders: nothing
# outside the period is dropped. People date an event a few days off ("on May 23" for a
# conversation of May 27).
TIME_LEG_SLACK = timedelta(days=3)
# The role leg (scopes that declare ``demoted_role``: episodes, "assistant"): when some
# candidates have that role, the others (the user's messages, and episodes of no role:
# text, JSON) form one more ranked list, in their fused order. What people ask a memory is
# mostly what the user said, and an assistant's long answer repeats the question's words.
# Like the time leg it only reorders; a graph without assistant messages (LoCoMo's) ranks
# exactly as without it.
# The exchange leg (scopes that declare ``exchange_leg``: episodes): the first
# EXCHANGE_LEG_TOP of the fused order each give the other half of their exchange, and
# those messages, in that order, form one more ranked list:
# - a message that asks something (a "?") gives its reply, the next message of its
#   thread. A question's answer often shares no word with what is asked ("What are the
#   names of James's dogs?": "This pup is so adorable! What's their name?" ranks first,
#   its reply "Max and Daisy." 22nd);
# - an assistant's message (the demoted role) gives the message before it, the user's
#   that it answers. The answer repeats the question's words; the user's own facts are in
#   what prompted it ("Can you recommend a show for me to watch tonight?": the
#   assistant's list of stand-up specials matches; the user's "As an aspiring stand-up
#   comedian, ... can you recommend some stand-up comedy specials?" holds the taste).
# Neither given message may be the assistant's: in a user-assistant chat a user's question
# gives nothing (its reply is the assistant's), and the user's next request after an
# assistant's closing "Anything else?" answers nothing.
EXCHANGE_LEG_TOP = 5
# The answer leg (scopes that declare ``answer_field``: episodes): when the query asks for
# a time, a sum of money, a length of time or a place ("When did...", "How much did I
# spend...", "Where..."), those of the first ANSWER_LEG_TOP of the fused order whose text
# mentions one form one more ranked list, in their fused order. The answer to "When did
# Dave find the car?" is "I found it last week", which shares one word with the
# question. Like the time leg it only reorders, and a question of another form ranks as
# without it.
ANSWER_LEG_TOP = 30
_LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphrecall-leg")


@dataclass
class SearchRun:
    hits: list[Hit]
    legs_used: list[str] = field(default_factory=list)
    # Each leg's own score of its candidates (BM25; cosine similarity), before fusion.
    leg_scores: dict[str, dict[str, float]] = field(default_factory=dict)


class Shared:
    """What the searches of one request for one query compute once: the query's vector,
    and the vector leg's answer for an owner's records of a kind without a filter (the
    facts leg of a message search asks for the same nearest facts as the fact search of
    the same request). Thread-safe: a search that asks for a value another thread is
    computing waits for it instead of computing it beside it. ``get_context`` runs its
    scopes' searches with one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[Hashable, Future[object]] = {}

    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            value = self._values.get(key)
            first = value is None
            if value is None:
                value = self._values[key] = Future()
        if not first:
            return cast(T, value.result())
        try:
            result = compute()
        except BaseException as exc:
            value.set_exception(exc)  # the threads waiting for it see it too
            raise
        value.set_result(result)
        return result


def _once(shared: Shared | None, key: Hashable, compute: Callable[[], T]) -> T:
    return compute() if shared is None else shared.once(key, compute)


def validate(spec: SearchScope, opts: SearchOptions) -> rerank.Reranker:
    """The reranker the request asks for, if the scope accepts it and the request gives
    what it needs; each error names the field to fix."""
    reranker = rerank.get(opts.reranker, spec.name)
    missing = reranker.requires(opts)
    if missing is not None:
        asked, param = missing
        raise InvalidRequest(f"reranker {reranker.name} requires {asked}", param=param)
    if opts.filter_low_quality and not reranker.scores_relevance:
        names = [n for n, r in rerank.REGISTRY.items() if r.scores_relevance]
        raise InvalidRequest(
            f"filter_low_quality_results is only valid with reranker {' or '.join(names)}",
            param="filter_low_quality_results",
        )
    if opts.filter_low_quality and spec.kind is Episode:
        raise InvalidRequest(
            "filter_low_quality_results is not supported on episode search",
            param="filter_low_quality_results",
        )
    return reranker


@read_point.within
def search(
    store: Store,
    embedder: Embedder | None,
    cross_encoder: CrossEncoder | None,
    spec: SearchScope,
    owner_uuid: str,
    opts: SearchOptions,
    shared: Shared | None = None,
) -> SearchRun:
    """Rank records of ``spec`` owned by ``owner_uuid`` (a graph, or a memory space);
    ``shared``: what this search may share with the request's other searches for the same
    query. Its legs check the store's copies against one read point (store/read_point.py)."""
    reranker = validate(spec, opts)
    kind = spec.kind
    graph_uuid = owner_uuid
    scope = {spec.owner_field: owner_uuid}
    legs: dict[str, list[str]] = {}
    leg_scores: dict[str, dict[str, float]] = {}
    query_vector: Vector | None = None
    lexical_leg: Future[list[tuple[str, float]]] | None = None
    vector_text = opts.query if opts.vector_query is None else opts.vector_query
    if "vector" in opts.legs and embedder is not None and vector_text.strip():
        # An owner's vectors not in memory are read while the query is embedded.
        store.prefetch_vectors(kind, owner_uuid)
        if spec.facts_leg:
            store.prefetch_vectors(Edge, owner_uuid)
    if "bm25" in opts.legs:
        # The lexical leg runs beside query embedding and the vector leg (FTS5, ONNX and
        # numpy all release the GIL); its results are placed first, as if run first.
        terms = query_terms(opts.query)
        lexical_leg = beside(
            _LEGS,
            store,
            partial(
                store.text_search,
                kind,
                scope,
                terms,
                where=opts.where,
                limit=opts.candidates,
                bm25=spec.bm25,
            ),
        )
        legs["bm25"] = []
    if (
        vector_text.strip()
        and embedder is not None
        and ("vector" in opts.legs or reranker.needs_query_vector)
    ):
        try:
            query_vector = _once(
                shared, ("embed", vector_text), partial(_embed, embedder, vector_text)
            )
        except EmbedderUnavailable as exc:
            log.warning("embedder unavailable; searching lexically only: %s", exc)
    facts_leg: Future[list[str]] | None = None
    if spec.facts_leg and "vector" in opts.legs and query_vector is not None:
        # Beside the vector leg (faiss and SQLite release the GIL).
        work = partial(_facts_leg, store, spec, scope, query_vector, opts, shared, vector_text)
        facts_leg = beside(_LEGS, store, work)
    if "vector" in opts.legs and query_vector is not None:
        similar = _vector_search(
            store,
            shared,
            vector_text,
            kind,
            graph_uuid,
            scope,
            query_vector,
            opts.where,
            opts.candidates,
        )
        if opts.min_similarity is not None:
            similar = [(u, s) for u, s in similar if s >= opts.min_similarity]
        legs["vector"] = [u for u, _ in similar]
        leg_scores["vector"] = dict(similar)
    if facts_leg is not None:
        legs["facts"] = facts_leg.result()
    if lexical_leg is not None:
        lexical = lexical_leg.result()
        legs["bm25"] = [u for u, _ in lexical]
        leg_scores["bm25"] = dict(lexical)
    if "bfs" in opts.legs and opts.bfs_origins:
        legs["bfs"] = graph.bfs_leg(
            store, kind, graph_uuid, opts.bfs_origins, where=opts.where, limit=opts.candidates
        )
    weights = opts.weights or spec.leg_weights or DEFAULT_LEG_WEIGHTS
    fused = rrf(legs, weights=weights, k=spec.rrf_k)
    # The legs that reorder the fused list run one after the other, each on the order the
    # ones before it left. A reranker that orders by its own relevance (cross_encoder)
    # ignores the fused order, so it gets none of them (that saves their look-ups on its
    # path); a leg weighted 0 is not computed.
    if not reranker.scores_relevance:
        for name, leg in _reordering_legs(store, spec, scope, opts):
            if not fused or weights.get(name, 1.0) <= 0:
                continue
            reordered = leg([u for u, _ in fused])
            if reordered:
                legs[name] = reordered
                fused = rrf(legs, weights=weights, k=spec.rrf_k)
    fused = fused[: opts.limit]
    given = rerank.RerankInput(
        store, cross_encoder, spec, graph_uuid, opts, fused, query_vector, leg_scores
    )
    ranked = reranker.rank(given) if fused else []
    return SearchRun(hits=ranked, legs_used=list(legs), leg_scores=leg_scores)


def beside(pool: ThreadPoolExecutor, store: Store, work: Callable[[], T]) -> Future[T]:
    """``work`` started on ``pool``, to run beside the caller's own, in a copy of its
    context (its read point); run at once instead when the caller holds a transaction,
    which another thread's reads would wait for."""
    if store.in_transaction():
        done: Future[T] = Future()
        done.set_result(work())
        return done
    return pool.submit(contextvars.copy_context().run, work)


def _embed(embedder: Embedder, text: str) -> Vector:
    vector: Vector = embedder.embed([text])[0]
    return vector


def _vector_search(
    store: Store,
    shared: Shared | None,
    vector_text: str,
    kind: type[Record],
    owner: str,
    scope: Mapping[str, str],
    query_vector: Vector,
    where: Predicate | None,
    limit: int,
) -> list[tuple[str, float]]:
    """The vector leg's ``limit`` nearest records of ``kind`` of ``owner``; without a
    filter, shared by the request's searches for the same query."""
    work = partial(
        store.vector_search, kind, owner, query_vector, scope=scope, where=where, limit=limit
    )
    if where is not None:
        return work()
    key = ("vector", vector_text, kind.__name__, owner, tuple(sorted(scope.items())), limit)
    return list(_once(shared, key, work))


def _facts_leg(
    store: Store,
    spec: SearchScope,
    scope: Mapping[str, str],
    query_vector: Vector,
    opts: SearchOptions,
    shared: Shared | None = None,
    vector_text: str = "",
) -> list[str]:
    """The records (episodes) that stated the facts nearest ``query_vector``, each at the
    rank of its nearest fact; those the search's filters allow."""
    owner = scope[spec.owner_field]
    facts = _vector_search(
        store,
        shared,
        vector_text,
        Edge,
        owner,
        {"graph_uuid": owner},
        query_vector,
        None,
        min(FACTS_LEG_DEPTH, opts.candidates),
    )
    provenance = store.episodes_of(Edge, owner, [u for u, _ in facts])
    order = list(dict.fromkeys(e for u, _ in facts for e in provenance.get(u, ((), False))[0]))
    if opts.where is not None and order:
        allowed = store.matching(spec.kind, scope, order, opts.where)
        order = [u for u in order if u in allowed]
    return order[: opts.candidates]


def _reordering_legs(
    store: Store, spec: SearchScope, scope: Mapping[str, str], opts: SearchOptions
) -> list[tuple[str, Callable[[list[str]], list[str]]]]:
    """The legs that reorder the fused list (a name, and the ranked list it makes of the
    fused order), in the order they run: time, role, answer, exchange, those the scope
    declares and the query calls for."""
    out: list[tuple[str, Callable[[list[str]], list[str]]]] = []
    window = opts.time_window
    if window is not None and spec.time_fields:
        out.append(("time", lambda order: _time_leg(store, spec, scope, order, window)))
    role = spec.demoted_role
    if role is not None:
        out.append(("role", lambda order: _role_leg(store, spec, scope, order, role)))
    asked = answer_kind.kind_of(opts.query) if spec.answer_field is not None else None
    if asked is not None:
        top = ANSWER_LEG_TOP
        out.append(("answer", lambda order: _answer_leg(store, spec, scope, order[:top], asked)))
    if spec.exchange_leg:
        top_x = EXCHANGE_LEG_TOP
        out.append(
            ("exchange", lambda order: _exchange_leg(store, spec, scope, order[:top_x], opts))
        )
    return out


def _time_leg(
    store: Store,
    spec: SearchScope,
    scope: Mapping[str, str],
    order: Sequence[str],
    window: tuple[datetime | None, datetime | None],
) -> list[str]:
    """Those of ``order`` whose time lies in ``window`` widened by ``TIME_LEG_SLACK``."""
    start, end = window
    bounds: list[tuple[p.CompareOp, str]] = []
    if start is not None:
        bounds.append(("gte", clock.to_iso(start - TIME_LEG_SLACK)))
    if end is not None:
        bounds.append(("lt", clock.to_iso(end + TIME_LEG_SLACK)))
    if not bounds:
        return []
    inside = store.matching(spec.kind, scope, order, p.coalesced(spec.time_fields, bounds))
    return [u for u in order if u in inside]


def _role_leg(
    store: Store, spec: SearchScope, scope: Mapping[str, str], order: Sequence[str], role: str
) -> list[str]:
    """Those of ``order`` whose ``role`` is not ``role`` (none included), in that order;
    none when no candidate has that role (then the list would only repeat the order)."""
    others = store.matching(spec.kind, scope, order, p.Column("role", "ne", role))
    ranked = [u for u in order if u in others]
    return ranked if len(ranked) < len(order) else []


def _exchange_leg(
    store: Store,
    spec: SearchScope,
    scope: Mapping[str, str],
    top: Sequence[str],
    opts: SearchOptions,
) -> list[str]:
    """The other half of the exchange of each of ``top``, in ``top``'s order: a question's
    reply, an assistant's prompt; never a message of the demoted role; those the search's
    filters allow."""
    demoted = spec.demoted_role
    order: list[str] = []
    for message, before, after in store.exchanges(scope[spec.owner_field], top):
        if demoted is not None and message.role == demoted:
            other = before
        else:
            other = after if "?" in message.content else None
        if other is not None and (demoted is None or other.role != demoted):
            order.append(other.uuid)
    order = list(dict.fromkeys(order))
    if opts.where is not None and order:
        allowed = store.matching(spec.kind, scope, order, opts.where)
        order = [u for u in order if u in allowed]
    return order


def _answer_leg(
    store: Store,
    spec: SearchScope,
    scope: Mapping[str, str],
    top: Sequence[str],
    asked: answer_kind.AnswerKind,
) -> list[str]:
    """Those of ``top`` whose ``spec.answer_field`` mentions an answer of the ``asked``
    kind, in ``top``'s order."""
    field_name = spec.answer_field
    assert field_name is not None
    found = store.find(spec.kind, {**scope, "uuid": list(top)})
    holding = {
        r.uuid for r in found if answer_kind.holds(asked, getattr(r, field_name, None) or "")
    }
    return [u for u in top if u in holding]


__all__ = [
    "DEFAULT_LEG_WEIGHTS",
    "Hit",
    "InvalidRequest",
    "Reranker",
    "SearchOptions",
    "SearchRun",
    "Shared",
    "search",
    "validate",
]
