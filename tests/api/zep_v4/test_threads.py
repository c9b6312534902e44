"""Threads and messages through the SDK; messages become processed episodes."""

from __future__ import annotations

import pytest
from zep_cloud import AddMessage, Zep
from zep_cloud.errors import BadRequestError, NotFoundError

from tests.conftest import wait_for_task


def test_thread_messages_flow(zep: Zep) -> None:
    user = zep.user.create(first_name="Bob")
    thread = zep.thread.create(user_uuid=user.uuid_)
    assert thread.user_uuid == user.uuid_ and thread.graph_uuid == user.graph_uuid

    result = zep.thread.add_messages(
        thread.uuid_,
        messages=[
            AddMessage(role="user", name="Bob", content="I just moved to Lisbon."),
            AddMessage(
                role="assistant", name="Agent", content="Welcome to Portugal!", metadata={"turn": 2}
            ),
            AddMessage(
                role="user",
                name="Bob",
                content="I work at a bakery now.",
                reference_time="2024-05-01T10:00:00+02:00",
            ),
        ],
    )
    assert [m.content for m in result.messages] == [
        "I just moved to Lisbon.",
        "Welcome to Portugal!",
        "I work at a bakery now.",
    ]
    assert all(m.processed is False for m in result.messages)
    assert result.messages[2].reference_time == "2024-05-01T08:00:00.000000Z"
    assert result.task.status in ("pending", "processing", "succeeded")
    assert wait_for_task(zep, result.task.uuid_) == "succeeded"

    messages = list(zep.thread.list_messages(thread.uuid_))
    assert [m.content for m in messages] == [m.content for m in result.messages]
    assert all(m.processed for m in messages)
    assert messages[1].role == "assistant" and messages[1].name == "Agent"
    assert messages[1].metadata == {"turn": 2}

    newest_first = list(zep.thread.list_messages(thread.uuid_, order="desc"))
    assert [m.uuid_ for m in newest_first] == [m.uuid_ for m in reversed(messages)]

    episodes = list(zep.thread.list_episodes(thread.uuid_))
    assert [e.uuid_ for e in episodes] == [m.uuid_ for m in messages]
    assert all(e.source == "message" and e.thread_uuid == thread.uuid_ for e in episodes)
    # They are episodes of the user's graph too.
    graph_episodes = {e.uuid_ for e in zep.graph.episode.list(user.graph_uuid)}
    assert {m.uuid_ for m in messages} <= graph_episodes

    one = zep.thread.message.get(thread.uuid_, messages[0].uuid_)
    assert one.content == "I just moved to Lisbon."
    patched = zep.thread.message.update(thread.uuid_, messages[0].uuid_, metadata={"k": "v"})
    assert patched.metadata == {"k": "v"}

    assert zep.thread.get(thread.uuid_).uuid_ == thread.uuid_
    assert thread.uuid_ in [t.uuid_ for t in zep.thread.list(user_uuid=user.uuid_)]

    zep.thread.delete(thread.uuid_)
    with pytest.raises(NotFoundError):
        zep.thread.get(thread.uuid_)


def test_add_messages_validation(zep: Zep) -> None:
    user = zep.user.create(first_name="Val")
    thread = zep.thread.create(user_uuid=user.uuid_)
    with pytest.raises(BadRequestError) as info:
        zep.thread.add_messages(thread.uuid_, messages=[])
    assert info.value.body.error.param == "messages"
    too_many = [AddMessage(role="user", content=f"m{i}") for i in range(31)]
    with pytest.raises(BadRequestError) as info:
        zep.thread.add_messages(thread.uuid_, messages=too_many)
    assert info.value.body.error.param == "messages"
    with pytest.raises(BadRequestError) as info:
        zep.thread.add_messages(
            thread.uuid_, messages=[AddMessage(role="user", content="x" * 10_001)]
        )
    assert info.value.body.error.param == "messages[0].content"
    # Nothing was half-written by the rejected calls.
    assert list(zep.thread.list_messages(thread.uuid_)) == []


def test_thread_for_unknown_user_is_404(zep: Zep) -> None:
    with pytest.raises(NotFoundError):
        zep.thread.create(user_uuid="0190f0f0-0000-7000-8000-000000000000")
