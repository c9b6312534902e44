"""``lookup.batch`` through the SDK: developer-assigned ids of graphs, threads and users
resolved at once, one item per id given, in request order within each type; ids of
another project are not found; the limits."""

from __future__ import annotations

import pytest
from zep_cloud import Zep
from zep_cloud.errors import BadRequestError

from tests.api.zep_v4.test_debug_logs import project_client
from tests.inprocess import InProcess


def test_ids_are_resolved_in_request_order(zep: Zep) -> None:
    ana = zep.user.create(user_id="lookup-ana", first_name="Ana")
    ben = zep.user.create(user_id="lookup-ben", first_name="Ben")
    thread = zep.thread.create(user_uuid=ana.uuid_)
    graph = zep.graph.create(name="lookup")
    got = zep.lookup.batch(
        users=["lookup-ben", "lookup-nobody", "lookup-ana", "lookup-ben"],
        threads=[str(zep.thread.get(thread.uuid_).thread_id)],
        graphs=["no-such-graph", str(zep.graph.get(graph.uuid_).graph_id)],
    )
    rows = [(i.resource_type, i.legacy_id, i.found, i.uuid_) for i in got.items or []]
    assert rows == [
        ("graph", "no-such-graph", False, None),
        ("graph", graph.graph_id, True, graph.uuid_),
        ("thread", thread.thread_id, True, thread.uuid_),
        ("user", "lookup-ben", True, ben.uuid_),
        ("user", "lookup-nobody", False, None),
        ("user", "lookup-ana", True, ana.uuid_),
        ("user", "lookup-ben", True, ben.uuid_),
    ]
    # The single lookups agree.
    assert zep.user.lookup(user_id="lookup-ana").uuid_ == ana.uuid_
    assert zep.lookup.batch().items == []


def test_other_projects_ids_are_not_found_and_lists_are_bounded(
    server: InProcess, zep: Zep
) -> None:
    zep.user.create(user_id="lookup-private")
    other = project_client(server, "lookup-other").lookup.batch(users=["lookup-private"])
    assert [(i.found, i.uuid_) for i in other.items or []] == [(False, None)]
    with pytest.raises(BadRequestError) as info:
        zep.lookup.batch(threads=[f"t{i}" for i in range(1001)])
    assert info.value.body.error.param == "threads"
    with pytest.raises(BadRequestError) as info:
        zep.lookup.batch(users="lookup-private")
    assert str(info.value.body.error.param).startswith("users")
