"""Debug logs and ingestion traces through the SDK: off until ``debug_log.enable``, then
each ingested episode has a log in words and a trace per step that says why a message
gave a fact, merged into one, ended one, or gave none; the error contract."""

from __future__ import annotations

from pathlib import Path

import pytest
from zep_cloud import AddMessage, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.conftest import API_KEY, wait_for_task
from tests.inprocess import InProcess


def project_client(server: InProcess, name: str) -> Zep:
    """A client of a new project (enabling debug logging is project-wide)."""
    command = ["keys", "create", "--project", name]
    key = server.cli(*command)
    return server.client(api_key=key)


def _say(zep: Zep, thread_uuid: str, text: str) -> str:
    result = zep.thread.add_messages(
        thread_uuid,
        messages=[
            AddMessage(
                role="user", name="Rita", content=text, reference_time="2024-06-10T09:00:00Z"
            )
        ],
    )
    assert result.task is not None and result.task.uuid_ is not None
    assert wait_for_task(zep, result.task.uuid_) == "succeeded"
    assert result.messages is not None
    return str(result.messages[0].uuid_)


def _messages(log_entries: list[object]) -> list[str]:
    return [str(getattr(e, "message", "")) for e in log_entries]


def test_debug_logs_and_traces_say_what_ingestion_did(server: InProcess, zep: Zep) -> None:
    dz = project_client(server, "debug-logs")
    user = dz.user.create(first_name="Rita")
    thread = dz.thread.create(user_uuid=user.uuid_)
    graph_uuid = str(user.graph_uuid)

    # Off by default: no log (404 saying why), no traces (an empty page).
    before = _say(dz, thread.uuid_, "I work at Initech.")
    with pytest.raises(NotFoundError) as info:
        dz.graph.episode.get_debug_logs(graph_uuid, before)
    assert "debug logging was off" in str(info.value.body.error.message)
    assert list(dz.graph.episode.list_ingestion_traces(graph_uuid, before)) == []

    enabled = dz.debug_log.enable()
    assert enabled.duration_seconds == 3600 and enabled.ingestion_trace_enabled is True

    # A message with no statement: the log says there is no fact, and why.
    hello = _say(dz, thread.uuid_, "Hi there!")
    log = dz.graph.episode.get_debug_logs(graph_uuid, hello)
    assert log.status == "completed" and log.started_at and log.completed_at
    assert log.error is None
    said = _messages(list(log.entries or []))
    assert said[0].startswith("extraction (")
    assert any(e.level == "warning" and "no fact" in str(e.message) for e in log.entries or [])

    # A fact with a time phrase: extracted by a named rule, a new edge, the phrase read.
    porto = _say(dz, thread.uuid_, "I moved to Porto last spring.")
    log = dz.graph.episode.get_debug_logs(graph_uuid, porto)
    said = _messages(list(log.entries or []))
    assert any("by rule clause" in m and "'last spring'" in m for m in said)
    assert any("new fact" in m and "valid_at 'last spring' read as 20" in m for m in said)
    assert not any("no fact" in m for m in said)
    traces = list(dz.graph.episode.list_ingestion_traces(graph_uuid, porto))
    assert [t.step for t in traces] == ["combined_extraction", "resolve_nodes", "resolve_edges"]
    assert all(t.status == "recorded" and t.uuid_ and t.created_at for t in traces)
    extraction, nodes, edges = traces
    assert extraction.input is not None and extraction.output is not None
    assert extraction.input.episode_content == "I moved to Porto last spring."
    assert [e.uuid_ for e in extraction.input.episodes or []] == [porto]
    assert {n.name for n in extraction.output.extracted_nodes or []} >= {"Rita", "Porto"}
    extracted = extraction.output.extracted_edges or []
    assert any("Porto" in str(e.fact) for e in extracted)
    assert nodes.output is not None
    resolutions = nodes.output.node_resolutions or []
    assert resolutions and all(r.explanation and r.resolved_node_uuid for r in resolutions)
    user_node = dz.user.get_node(user.uuid_)
    assert any(
        r.resolved_node_uuid == user_node.uuid_ and "user" in str(r.explanation)
        for r in resolutions
    )
    assert edges.output is not None and edges.output.new_edges
    porto_edge = next(e for e in edges.output.new_edges if "Porto" in str(e.fact))
    assert porto_edge.uuid_ and porto_edge.valid_at is not None
    assert dz.graph.edge.get(graph_uuid, str(porto_edge.uuid_)).fact == porto_edge.fact
    assert all(e.explanation for e in edges.output.edges or [])

    # A move ends the fact it contradicts: the trace names the invalidated edge.
    lisbon = _say(dz, thread.uuid_, "I moved to Lisbon in May 2024.")
    traces = list(dz.graph.episode.list_ingestion_traces(graph_uuid, lisbon, page_size=2))
    assert len(traces) == 3  # read over two pages
    resolve_edges = traces[2].output
    assert resolve_edges is not None
    ended = resolve_edges.edge_invalidations or []
    assert [i.invalidated_edge_uuid for i in ended] == [porto_edge.uuid_]
    assert ended[0].invalidating_edges and "contradicted by" in str(
        ended[0].invalidating_edges[0].explanation
    )
    said = _messages(list(dz.graph.episode.get_debug_logs(graph_uuid, lisbon).entries or []))
    assert any(f"fact {porto_edge.uuid_}" in m and "invalidated" in m for m in said)

    # Saying it again merges into the known fact: no new edge, the reason given.
    again = _say(dz, thread.uuid_, "I moved to Lisbon in May 2024.")
    traces = list(dz.graph.episode.list_ingestion_traces(graph_uuid, again))
    out = traces[2].output
    assert out is not None and not out.new_edges
    assert any("restates the existing fact" in str(e.explanation) for e in out.edges or [])

    # Deleting the episode deletes what was recorded about it.
    dz.graph.episode.delete(graph_uuid, hello)
    with pytest.raises(NotFoundError):
        dz.graph.episode.get_debug_logs(graph_uuid, hello)


def test_ignored_roles_are_logged_and_logs_stay_in_their_project(
    server: InProcess, zep: Zep
) -> None:
    dz = project_client(server, "debug-logs-2")
    dz.debug_log.enable()
    user = dz.user.create(first_name="Omar")
    thread = dz.thread.create(user_uuid=user.uuid_)
    result = dz.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="assistant", content="You moved to Oslo in 2020.")],
        ignore_roles=["assistant"],
    )
    assert result.task is not None and result.task.uuid_ is not None
    wait_for_task(dz, result.task.uuid_)
    assert result.messages is not None
    message = str(result.messages[0].uuid_)
    graph_uuid = str(user.graph_uuid)
    log = dz.graph.episode.get_debug_logs(graph_uuid, message)
    assert any("role is ignored" in str(e.message) for e in log.entries or [])
    assert list(dz.graph.episode.list_ingestion_traces(graph_uuid, message)) == []

    # Another project (the suite's) sees neither the episode nor its log.
    with pytest.raises(NotFoundError):
        zep.graph.episode.get_debug_logs(graph_uuid, message)
    with pytest.raises(NotFoundError):
        list(zep.graph.episode.list_ingestion_traces(graph_uuid, message))
    with pytest.raises(BadRequestError) as info:
        dz.graph.episode.get_debug_logs(graph_uuid, "not-a-uuid")
    assert info.value.body.error.param == "episode_uuid"


def test_a_queued_episode_is_running_until_processed(tmp_path: Path) -> None:
    """With logging on, an episode not processed yet reports ``running`` (no entries):
    its log is written when the worker applies it."""
    server = InProcess(tmp_path / "queued.db", API_KEY, worker=False)
    try:
        zep = server.client()
        zep.debug_log.enable()
        graph = zep.graph.create(name="queued")
        added = zep.graph.episode.add(graph.uuid_, data="Ada works at Initech.")
        assert added.episode is not None and added.episode.processed is False
        log = zep.graph.episode.get_debug_logs(graph.uuid_, str(added.episode.uuid_))
        assert log.status == "running" and log.started_at and not log.entries
        assert log.completed_at is None
    finally:
        server.stop()
