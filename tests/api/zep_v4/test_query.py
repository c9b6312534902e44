"""``graph.query`` through the SDK, fast mode without a model: the question's fact, the
facts around its entities and the episodes they came from, each record once; the parts
that need a model are 400 ``not_implemented`` naming the field; the error contract."""

from __future__ import annotations

import pytest
from zep_cloud import Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.api.zep_v4.test_debug_logs import project_client
from tests.conftest import wait_for_task
from tests.inprocess import InProcess

UNKNOWN = "0190e3c2-0000-7000-8000-000000000000"
TEXTS = [
    "Ada works at Initech.",
    "Initech is based in Porto.",
    "Ada plays chess with her brother Tom.",
]


def _graph(zep: Zep, name: str) -> str:
    graph = str(zep.graph.create(name=name).uuid_)
    for text in TEXTS:
        added = zep.graph.episode.add(graph, data=text)
        assert added.task is not None
        assert wait_for_task(zep, added.task.uuid_) == "succeeded"
    return graph


def test_the_question_its_neighbourhood_and_its_episodes(zep: Zep) -> None:
    graph = _graph(zep, "query")
    answer = zep.graph.query(query="Where does Ada work?", graph_uuids=[graph])
    assert answer.answer is None and answer.truncated is False
    assert answer.citations is not None and not answer.citations.edge_uuids
    results = answer.results
    assert results is not None
    facts = [e.fact for e in results.edges or []]
    assert facts and "Initech" in str(facts[0])  # the question's fact first
    assert len(set(facts)) == len(facts)
    assert any("Porto" in str(f) for f in facts)  # a fact around Initech
    # The episode the first fact came from is among the records.
    first = zep.graph.edge.get(graph, str((results.edges or [])[0].uuid_))
    assert set(first.episode_uuids or []) <= {e.uuid_ for e in results.episodes or []}
    assert {n.name for n in results.nodes or []} >= {"Ada", "Initech"}
    every = [
        *(e.uuid_ for e in results.edges or []),
        *(n.uuid_ for n in results.nodes or []),
        *(e.uuid_ for e in results.episodes or []),
    ]
    assert len(every) == len(set(every)) <= 300
    assert all(e.graph_uuid == graph for e in results.edges or [])


def test_several_graphs_are_asked_and_a_user_names_its_graph(zep: Zep) -> None:
    first = _graph(zep, "query-a")
    user = zep.user.create(first_name="Tom")
    added = zep.graph.episode.add(user.uuid_, data="Tom works at Globex.")
    assert added.task is not None
    wait_for_task(zep, added.task.uuid_)
    found = zep.graph.query(query="Who works where?", graph_uuids=[first, user.uuid_, first])
    graphs = {e.graph_uuid for e in (found.results.edges if found.results else None) or []}
    assert graphs == {first, user.graph_uuid}


def test_what_needs_a_model_is_refused_and_errors_name_the_field(
    server: InProcess, zep: Zep
) -> None:
    graph = zep.graph.create(name="query-errors").uuid_
    refused = {
        "generate_answer": {"generate_answer": True},
        "mode": {"mode": "deep"},
        "guidance": {"guidance": "prefer recent facts"},
    }
    for param, options in refused.items():
        with pytest.raises(BadRequestError) as info:
            zep.graph.query(query="x", graph_uuids=[graph], **options)  # type: ignore[arg-type]
        assert info.value.body.error.param == param
        assert info.value.body.error.code == "not_implemented"
    with pytest.raises(BadRequestError) as info:
        list(zep.graph.query_stream(query="x", graph_uuids=[graph]))
    assert info.value.body.error.param == "stream"
    with pytest.raises(BadRequestError) as info:
        zep.graph.query(query="x", graph_uuids=[graph], mode="slow")
    assert info.value.body.error.param == "mode"
    with pytest.raises(BadRequestError) as info:
        zep.graph.query(query="x", graph_uuids=[])
    assert info.value.body.error.param == "graph_uuids"
    with pytest.raises(BadRequestError) as info:
        zep.graph.query(query=" ", graph_uuids=[graph])
    assert info.value.body.error.param == "query"
    with pytest.raises(NotFoundError) as missing:
        zep.graph.query(query="x", graph_uuids=[graph, UNKNOWN])
    assert missing.value.body.error.param == "graph_uuids[1]"
    with pytest.raises(NotFoundError):
        project_client(server, "query-other").graph.query(query="x", graph_uuids=[graph])
    assert zep.graph.query(query="x", graph_uuids=[graph], mode="fast").results is not None
