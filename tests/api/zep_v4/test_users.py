"""Users through the real SDK: create, read, list, update, lookup, node, delete."""

from __future__ import annotations

import uuid

import pytest
from zep_cloud import Zep
from zep_cloud.errors import BadRequestError, NotFoundError


def test_user_lifecycle(zep: Zep) -> None:
    external = f"alice-{uuid.uuid4().hex[:8]}"
    user = zep.user.create(
        user_id=external,
        first_name="Alice",
        last_name="Smith",
        email="alice@example.com",
        metadata={"plan": "pro"},
    )
    assert user.uuid_ and user.graph_uuid and user.user_id == external

    got = zep.user.get(user.uuid_)
    assert (got.first_name, got.email, got.metadata) == (
        "Alice",
        "alice@example.com",
        {"plan": "pro"},
    )

    graph = zep.graph.get(user.graph_uuid)
    assert graph.type == "user" and graph.user_uuid == user.uuid_
    # A user's UUID is accepted wherever a graph UUID is.
    assert zep.graph.get(user.uuid_).uuid_ == user.graph_uuid

    node = zep.user.get_node(user.uuid_)
    assert node.name == "Alice Smith" and "User" in (node.labels or [])
    assert node.episode_uuids == [] and node.episode_uuids_truncated is False

    updated = zep.user.update(user.uuid_, first_name="Alicia", time_zone="Europe/Berlin")
    assert updated.first_name == "Alicia" and updated.time_zone == "Europe/Berlin"
    assert updated.last_name == "Smith"  # untouched fields stay
    assert zep.user.get_node(user.uuid_).name == "Alicia Smith"

    assert zep.user.lookup(user_id=external).uuid_ == user.uuid_
    listed = [u.uuid_ for u in zep.user.list(search=external)]
    assert listed == [user.uuid_]

    result = zep.user.delete(user.uuid_)
    assert result.task is not None and result.task.status == "succeeded"
    with pytest.raises(NotFoundError):
        zep.user.get(user.uuid_)
    with pytest.raises(NotFoundError):
        zep.graph.get(user.graph_uuid)


def test_duplicate_user_id_is_a_400_naming_the_field(zep: Zep) -> None:
    external = f"dup-{uuid.uuid4().hex[:8]}"
    zep.user.create(user_id=external)
    with pytest.raises(BadRequestError) as info:
        zep.user.create(user_id=external)
    assert info.value.body.error.param == "user_id"


def test_bad_time_zone_is_rejected(zep: Zep) -> None:
    with pytest.raises(BadRequestError) as info:
        zep.user.create(time_zone="Mars/Olympus")
    assert info.value.body.error.param == "time_zone"
