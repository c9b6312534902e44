"""ingest/trace.py: the switch's expiry, and an episode that fails gets a debug log with
its error while its own writes roll back."""

from __future__ import annotations

import pytest

from graphrecall.domain.ids import new_id
from graphrecall.domain.models import DebugLogging, EpisodeDebugLog, IngestionTrace, Node
from graphrecall.ingest import trace
from graphrecall.store import Store
from tests.store.conformance.records import at, episode, node


def test_recording_is_on_only_until_the_switch_expires(store: Store) -> None:
    project = new_id()
    assert not trace.enabled(store, project)
    store.insert(
        [DebugLogging(uuid=project, project_uuid=project, enabled_until=at(1), updated_at=at(0))]
    )
    assert not trace.enabled(store, project)  # at(1) is long past
    store.update(
        DebugLogging(
            uuid=project,
            project_uuid=project,
            enabled_until="9999-01-01T00:00:00.000000Z",
            updated_at=at(0),
        )
    )
    assert trace.enabled(store, project)
    assert not trace.enabled(store, new_id())  # another project's switch is its own


def test_a_failed_episode_logs_its_error_and_leaves_nothing_else(store: Store) -> None:
    g = new_id()
    ep = episode(g, "I moved to Porto.")
    store.insert([ep])
    rec = trace.Recorder(ep)
    rec.log("info", "extraction (test): 1 entities (Porto), 0 facts")
    with pytest.raises(RuntimeError), trace.failure_logged(store, g, rec), store.transaction():
        store.insert([node(g, "Porto")])
        raise RuntimeError("embedder fell over")
    assert store.find(Node, {"graph_uuid": g}) == []  # the episode's writes rolled back
    log = store.get(EpisodeDebugLog, ep.uuid, {"graph_uuid": g})
    assert log is not None and log.status == "error" and log.completed_at is None
    assert log.error_message == "RuntimeError: embedder fell over"
    assert [e["level"] for e in log.entries] == ["info", "error"]
    assert store.find(IngestionTrace, {"graph_uuid": g}) == []  # no trace of a failed run

    # Retried and done: the log is replaced, never doubled.
    again = trace.Recorder(ep)
    with trace.failure_logged(store, g, again), store.transaction():
        again.write(store, g)
    logs = store.find(EpisodeDebugLog, {"graph_uuid": g})
    assert [(x.uuid, x.status) for x in logs] == [(ep.uuid, "completed")]


def test_without_a_recorder_a_failure_passes_through(store: Store) -> None:
    with pytest.raises(ValueError), trace.failure_logged(store, new_id(), None):
        raise ValueError("x")
    assert store.count(EpisodeDebugLog, {}) == 0
