"""A message whose extraction failed shows why on itself (services/episode_errors.py):
``processed`` stays false and the message, and its episode, carry ``processing_error``
``{code, message, task_uuid}`` naming the failed task; read through the zep-cloud SDK,
whose models keep the extra field. The extractor here is an LLM endpoint nobody answers,
so every extraction fails for real; on each backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from zep_cloud import AddMessage, Zep

from tests import pg_server
from tests.conftest import API_KEY, Server, _free_port, wait_for_task


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def zep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zep]:
    db: Path | str = tmp_path_factory.mktemp("failing") / "graphrecall.db"
    if request.param == "postgresql":
        db = pg_server.with_schema(pg_server.server_url(), f"f{uuid.uuid4().hex}")
    env = {
        "GRAPHRECALL_EXTRACTOR": "llm",
        "GRAPHRECALL_LLM_BASE_URL": f"http://127.0.0.1:{_free_port()}/v1",  # nobody there
        "GRAPHRECALL_LLM_MAX_RETRIES": "0",
    }
    srv = Server(db, _free_port(), API_KEY, env).start()
    yield srv.client()
    srv.stop()


def _error(item: Any) -> dict[str, Any] | None:
    """The extra field as the SDK's model keeps it."""
    extra = item.model_extra or {}
    found = extra.get("processing_error")
    return dict(found) if found is not None else None


def test_a_failed_message_carries_its_error(zep: Zep) -> None:
    user = zep.user.create(user_id=f"u{uuid.uuid4().hex[:8]}", first_name="Ada")
    thread = zep.thread.create(user_uuid=user.uuid_)
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[
            AddMessage(role="user", name="Ada", content="Ada moved to Lisbon."),
            AddMessage(role="assistant", content="Noted: Lisbon."),
        ],
    )
    assert added.task is not None
    assert wait_for_task(zep, added.task.uuid_) == "failed"
    task = zep.task.get(added.task.uuid_)
    assert task.error is not None
    messages = list(zep.thread.list_messages(thread.uuid_))
    assert {m.uuid_ for m in messages} == {m.uuid_ for m in added.messages or []}
    for message in messages:
        assert message.processed is False
        error = _error(message)
        assert error is not None, message
        assert error["task_uuid"] == added.task.uuid_
        assert error["code"] and error["message"]
    # The same on the message read alone, and on its episode.
    first = messages[0]
    alone = zep.thread.message.get(thread.uuid_, first.uuid_)
    assert alone.processed is False and _error(alone) == _error(first)
    episode = zep.graph.episode.get(str(user.graph_uuid), first.uuid_)
    assert episode.processed is False and _error(episode) == _error(first)
    listed = list(zep.graph.episode.list(str(user.graph_uuid)))
    assert {e.uuid_: _error(e) for e in listed} == {m.uuid_: _error(m) for m in messages}


def test_a_message_not_extracted_carries_no_error(zep: Zep) -> None:
    # ignore_roles: stored, never extracted, so never failed.
    user = zep.user.create(user_id=f"u{uuid.uuid4().hex[:8]}", first_name="Bo")
    thread = zep.thread.create(user_uuid=user.uuid_)
    added = zep.thread.add_messages(
        thread.uuid_,
        messages=[AddMessage(role="assistant", content="Hello there.")],
        ignore_roles=["assistant"],
    )
    if added.task is not None:
        wait_for_task(zep, added.task.uuid_)
    messages = list(zep.thread.list_messages(thread.uuid_))
    assert messages and all(_error(m) is None for m in messages)
