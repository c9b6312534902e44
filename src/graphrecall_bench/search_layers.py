"""The layers ``bench search`` times a case at: ``engine`` and ``service`` in-process
(``in_process``), and ``sdk``, the real ``zep-cloud`` SDK against a ``graphrecall serve``
subprocess on loopback (``through_sdk``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from graphrecall.domain import scopes
from graphrecall.domain.clock import to_iso
from graphrecall_bench.build import Built
from graphrecall_bench.search_cases import (
    API_KEY,
    CASES,
    FILTER_SINCE,
    FILTERED,
    INDEXED_SCOPES,
    PAGE_SIZE,
    Case,
    Measurement,
    Plan,
    expected_for,
    measure,
    progress,
)
from graphrecall_bench.server import store_index_status, wait_for_builds
from graphrecall_bench.synthetic import Query

# -- the in-process layers -------------------------------------------------------------


def in_process(
    db: Path | str, built: Built, queries: Sequence[Query], plan: Plan, extra: dict[str, Any]
) -> list[Measurement]:
    from graphrecall import runtime
    from graphrecall.config import load_settings
    from graphrecall.domain.models import Project
    from graphrecall.retrieval import engine
    from graphrecall.services.graph import search

    settings = load_settings(db=str(db))
    embedder = runtime.minilm(settings)
    models = runtime.Models(embedder, None, runtime.make_cross_encoder(settings))
    rt = runtime.build(settings, models=models)
    store, ctx = rt.store, rt.context
    project = store.get(Project, built.graph.project.uuid)
    assert project is not None
    graph_uuid = built.graph.graph.uuid
    hub = built.graph.hub_uuid
    size = built.graph.size
    out: list[Measurement] = []
    try:
        extra["first_search_ms"] = _timed(
            lambda: engine.search(
                store,
                embedder,
                ctx.cross_encoder,
                scopes.SCOPES["edges"],
                graph_uuid,
                search.options(params_for(CASES[0], queries[0], hub), "edges"),
            )
        )
        both_legs = engine.SearchOptions(query=queries[0].text, legs=("bm25", "vector"))
        filtered = search.options(params_for(FILTERED, queries[0], hub), "edges")
        run = partial(engine.search, store, embedder, None)
        extra["index_build_s"] = wait_for_builds(
            [
                *(partial(run, scopes.SCOPES[s], graph_uuid, both_legs) for s in INDEXED_SCOPES),
                # The filter columns the filtered case reads (filter_columns.py).
                partial(run, scopes.SCOPES["edges"], graph_uuid, filtered),
            ],
            lambda: store_index_status(store),
        )
        embed_case = Case("query embedding", "-", "-")
        embedded = measure(
            embed_case,
            "engine",
            lambda q: [str(embedder.embed([q.text]).shape)],
            queries,
            lambda q: "",
            warmup=plan.warmup,
            budget_s=plan.case_budget,
        )
        extra["query_embedding_ms"] = {"p50": embedded.p50_ms, "p95": embedded.p95_ms}
        for case in plan.cases:
            if case.scope not in scopes.SCOPES:
                continue  # get_context is measured through the SDK only
            spec = scopes.SCOPES[case.scope]
            if "engine" in plan.layers:

                def call_engine(q: Query, case: Case = case, spec: Any = spec) -> list[str]:
                    opts = search.options(params_for(case, q, hub), case.scope)
                    run = engine.search(store, embedder, ctx.cross_encoder, spec, graph_uuid, opts)
                    return [h.uuid for h in run.hits[:PAGE_SIZE]]

                out.append(_timed_case(case, "engine", call_engine, queries, plan, size))
            if "service" in plan.layers:

                def call_service(q: Query, case: Case = case) -> list[str]:
                    _, found, _ = search.search(
                        ctx,
                        project,
                        graph_uuid,
                        case.scope,
                        params_for(case, q, hub),
                        page_size=PAGE_SIZE,
                        cursor=None,
                    )
                    return [record.uuid for record, _ in found]

                out.append(_timed_case(case, "service", call_service, queries, plan, size))
        extra["indexes_after_engine"] = store_index_status(store)
    finally:
        rt.close()
    return out


def _timed_case(
    case: Case,
    layer: str,
    call: Callable[[Query], list[str]],
    queries: Sequence[Query],
    plan: Plan,
    size: int,
) -> Measurement:
    """Measure one case on one layer and print its progress line."""
    m = measure(
        case,
        layer,
        call,
        queries,
        expected_for(case.scope),
        warmup=plan.warmup,
        budget_s=plan.case_budget,
    )
    progress(size, m)
    return m


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return round((time.perf_counter() - started) * 1000, 3)


def params_for(case: Case, q: Query, hub: str) -> Any:
    """The service-layer request for one question."""
    from graphrecall.retrieval.filters import (
        DateFilter,
        DateFilterGroup,
        DateFilters,
        Filters,
    )
    from graphrecall.services.graph.search import SearchParams

    filters = Filters()
    if case.mentions:
        filters = Filters(episode_uuids=list(q.mention_episodes))
    elif case.filtered:
        since = DateFilter(field="created_at", operator="gte", value=to_iso(FILTER_SINCE))
        current = DateFilter(field="expired_at", operator="is_null")
        filters = Filters(
            edge_types=list(q.edge_types),
            date_filters=DateFilters(any_of=[DateFilterGroup(all_of=[since, current])]),
        )
    return SearchParams(
        query=q.text,
        reranker=case.reranker,
        mmr_lambda=case.mmr_lambda,
        center_node_uuid=hub if case.center else None,
        filters=filters,
    )


# -- through the SDK ---------------------------------------------------------------------


def through_sdk(
    db: Path | str, built: Built, queries: Sequence[Query], plan: Plan, extra: dict[str, Any]
) -> list[Measurement]:
    try:
        from zep_cloud import Zep
        from zep_cloud.types import (
            DateFilter,
            DateFilterGroup,
            DateFilters,
            EdgeSearchFilters,
        )
    except ImportError as exc:
        raise RuntimeError(
            "the sdk layer needs the zep-cloud package (pip install 'graphrecall[dev]');"
            " or pass --layers engine,service"
        ) from exc
    from graphrecall_bench.server import ServerProcess

    graph_uuid = built.graph.graph.uuid
    hub = built.graph.hub_uuid
    size = built.graph.size
    out: list[Measurement] = []
    log_path = plan.out_dir / f"server-n{size}.log"
    started = time.perf_counter()
    with ServerProcess(db, API_KEY, log_path) as server:
        extra["server_start_ms"] = round((time.perf_counter() - started) * 1000, 3)
        client = Zep(api_key=API_KEY, base_url=server.base_url, max_retries=0, timeout=300)
        methods = {
            "edges": client.graph.search_edges,
            "nodes": client.graph.search_nodes,
            "episodes": client.graph.search_episodes,
        }
        since = DateFilter(field="created_at", operator="gte", value=FILTER_SINCE)
        current = DateFilter(field="expired_at", operator="is_null")
        dates = DateFilters(any_of=[DateFilterGroup(all_of=[since, current])])
        filters = EdgeSearchFilters(edge_types=list(queries[0].edge_types), date_filters=dates)
        extra["index_build_s"] = wait_for_builds(
            [
                *(
                    partial(methods[s], graph_uuid, query=queries[0].text, page_size=PAGE_SIZE)
                    for s in INDEXED_SCOPES
                ),
                partial(
                    client.graph.search_edges, graph_uuid, query=queries[0].text, filters=filters
                ),
            ],
            server.index_status,
        )
        for case in plan.cases:

            def call(q: Query, case: Case = case) -> list[str]:
                kwargs: dict[str, Any] = {"query": q.text, "page_size": PAGE_SIZE}
                kwargs["reranker"] = case.reranker
                if case.mmr_lambda is not None:
                    kwargs["mmr_lambda"] = case.mmr_lambda
                if case.center:
                    kwargs["center_node_uuid"] = hub
                if case.mentions:
                    kwargs["filters"] = EdgeSearchFilters(episode_uuids=list(q.mention_episodes))
                elif case.filtered:
                    kwargs["filters"] = EdgeSearchFilters(
                        edge_types=list(q.edge_types), date_filters=dates
                    )
                if case.scope == "context":
                    response = client.graph.get_context(
                        graph_uuid, query=q.text, max_characters=2500, include_results=True
                    )
                    edges = response.results.edges if response.results else None
                    return [str(e.uuid_) for e in edges or ()]
                pager: Any = methods[case.scope](graph_uuid, **kwargs)
                return [str(item.uuid_) for item in pager.items or ()]

            out.append(_timed_case(case, "sdk", call, queries, plan, size))
        extra["indexes_after_sdk"] = server.index_status()
    return out
