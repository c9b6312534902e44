"""What the retrieval benchmarks (``bench locomo``, ``bench longmemeval``) share: the
baselines they compare with, timed SDK calls (``get_context`` may be missing or fail, and
is counted, not fatal) and the in-process single-leg rankings on the server's database."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrecall.domain import scopes

if TYPE_CHECKING:
    from zep_cloud import Zep

    from graphrecall.store.base import Store


@dataclass(frozen=True)
class Baseline:
    name: str
    layer: str  # "engine" (in-process) or "sdk"
    legs: tuple[str, ...] = ("bm25", "vector", "bfs")
    reranker: str = "rrf"
    mmr_lambda: float | None = None


BASELINES: tuple[Baseline, ...] = (
    Baseline("bm25", "engine", legs=("bm25",)),
    Baseline("vector", "engine", legs=("vector",)),
    Baseline("hybrid_rrf", "sdk"),
    Baseline("hybrid_cross_encoder", "sdk", reranker="cross_encoder"),
    Baseline("hybrid_mmr", "sdk", reranker="mmr", mmr_lambda=0.5),
)


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """(milliseconds, value) of one call."""
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return (time.perf_counter() - started) * 1000, value


class ContextCalls:
    """get_context calls; the endpoint may not be built yet (501) or may fail."""

    def __init__(self, client: Zep, max_characters: int) -> None:
        self.client = client
        self.max_characters = max_characters
        self.unavailable: str | None = None
        self.errors = 0
        self.calls_ok = 0
        self.first_error: str | None = None

    def ask(self, graph_uuid: str, query: str) -> tuple[float, Any] | None:
        if self.unavailable:
            return None
        from zep_cloud.core.api_error import ApiError

        try:
            return timed(
                self.client.graph.get_context,
                graph_uuid,
                query=query,
                max_characters=self.max_characters,
                include_results=True,
            )
        except ApiError as exc:
            reason = f"HTTP {exc.status_code}: {message(exc.body)}"
            if exc.status_code in (404, 405, 501):
                self.unavailable = reason
                return None
            self._failed(reason)
        except Exception as exc:  # a parse error, a dropped connection: count, go on
            self._failed(f"{type(exc).__name__}: {exc}")
        return None

    def _failed(self, reason: str) -> None:
        self.errors += 1
        self.first_error = self.first_error or reason[:500]
        if self.errors >= 20 and self.errors > 0.5 * max(self.calls_ok, 1):
            self.unavailable = f"too many errors; first: {self.first_error}"


def message(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if body.get("message"):
            return str(body["message"])
    return str(body)[:300]


def context_provenance(response: Any) -> tuple[set[str], set[str], dict[str, Any]] | None:
    """(episodes cited by facts/observations/episodes, plus nodes' episodes, extras)."""
    results = getattr(response, "results", None)
    if results is None:
        return None
    facts: set[str] = set()
    for edge in results.edges or ():
        facts.update(edge.episode_uuids or ())
    for obs in results.observations or ():
        facts.update(obs.episode_uuids or ())
    for ep in results.episodes or ():
        if ep.uuid_:
            facts.add(ep.uuid_)
    with_nodes = set(facts)
    for node in results.nodes or ():
        with_nodes.update(node.episode_uuids or ())
    extra = {
        "chars": len(response.context or ""),
        "truncated": bool(response.truncated),
        "edges": len(results.edges or ()),
        "nodes": len(results.nodes or ()),
        "observations": len(results.observations or ()),
        "thread_summaries": len(results.thread_summaries or ()),
    }
    return facts, with_nodes, extra


def sdk_episodes(
    client: Zep, graph_uuid: str, query: str, page: int, b: Baseline | None = None
) -> list[str]:
    """The episode uuids ``search_episodes`` returns, with ``b``'s reranker (else the
    default)."""
    kwargs: dict[str, Any] = {"query": query, "page_size": page}
    if b is not None:
        kwargs["reranker"] = b.reranker
        if b.mmr_lambda is not None:
            kwargs["mmr_lambda"] = b.mmr_lambda
    return [str(e.uuid_) for e in client.graph.search_episodes(graph_uuid, **kwargs).items or ()]


def sdk_edge_episodes(client: Zep, graph_uuid: str, query: str, page: int) -> list[list[str]]:
    """Per fact ``search_edges`` returns, in rank order: the episodes it cites."""
    found = client.graph.search_edges(graph_uuid, query=query, page_size=page).items or ()
    return [list(e.episode_uuids or ()) for e in found]


def engine_rankings(
    db: Path | str, queries: Sequence[tuple[str, str]], page: int, warmup: int
) -> dict[str, list[tuple[float, list[str]]]]:
    """Per engine baseline, per (graph uuid, query): (ms, episode uuids) of the BM25-only
    and vector-only rankings, with ``retrieval.engine.search`` on the server's database
    (read while the server runs: SQLite WAL lets readers in; PostgreSQL readers never
    wait) and the options the episode search service would use, minus the other legs
    (the API cannot ask for one leg)."""
    from graphrecall import runtime
    from graphrecall.config import load_settings
    from graphrecall.retrieval import engine
    from graphrecall.services.graph.search import SearchParams, options
    from graphrecall.store import open_store

    store: Store = open_store(db)
    embedder = runtime.store_embedder(store, runtime.minilm(), load_settings())
    spec = scopes.SCOPES["episodes"]
    out: dict[str, list[tuple[float, list[str]]]] = {}
    try:
        for b in (b for b in BASELINES if b.layer == "engine"):

            def rank(graph_uuid: str, query: str, b: Baseline = b) -> list[str]:
                base = options(SearchParams(query=query), "episodes")
                # The legs that reorder the fused list (role, exchange, answer, facts)
                # would run too: only the baseline's own legs count.
                weights = {leg: float(leg in b.legs) for leg in engine.DEFAULT_LEG_WEIGHTS}
                opts = dataclasses.replace(base, legs=b.legs, reranker=b.reranker, weights=weights)
                found = engine.search(store, embedder, None, spec, graph_uuid, opts)
                return [h.uuid for h in found.hits[:page]]

            for g, q in queries[:warmup]:
                rank(g, q)
            out[b.name] = [timed(rank, g, q) for g, q in queries]
            print(f"  in-process baseline {b.name}: done", flush=True)
    finally:
        store.close()
    return out
