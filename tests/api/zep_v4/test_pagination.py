"""Cursor pagination: every item exactly once, stable order, bad parameters rejected."""

from __future__ import annotations

import pytest
from zep_cloud import NodeInput, Zep
from zep_cloud.errors import BadRequestError


@pytest.fixture(scope="module")
def big_graph(zep: Zep) -> tuple[str, set[str]]:
    graph = zep.graph.create(name="paged")
    uuids: set[str] = set()
    for batch in range(3):
        added = zep.graph.node.add(
            graph.uuid_, nodes=[NodeInput(name=f"n{batch}-{i}") for i in range(45)]
        )
        uuids |= {n.uuid_ for n in added.nodes}
    return graph.uuid_, uuids


@pytest.mark.parametrize("order_by", [None, "created_at", "uuid", "degree"])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_every_node_exactly_once(
    zep: Zep, big_graph: tuple[str, set[str]], order_by: str | None, order: str
) -> None:
    graph_uuid, expected = big_graph
    pager = zep.graph.node.list(graph_uuid, page_size=50, order_by=order_by, order=order)
    pages = list(pager.iter_pages())
    assert [len(p.items or []) for p in pages] == [50, 50, 35]
    seen = [n.uuid_ for p in pages for n in (p.items or [])]
    assert len(seen) == len(set(seen)) == 135 and set(seen) == expected
    assert pages[0].response.total_size == 135


def test_order_is_honoured(zep: Zep, big_graph: tuple[str, set[str]]) -> None:
    graph_uuid, _ = big_graph
    asc = [
        n.created_at for n in zep.graph.node.list(graph_uuid, order_by="created_at", order="asc")
    ]
    assert asc == sorted(asc)


@pytest.mark.parametrize("page_size", [0, -1, 101])
def test_page_size_limits(zep: Zep, big_graph: tuple[str, set[str]], page_size: int) -> None:
    graph_uuid, _ = big_graph
    with pytest.raises(BadRequestError) as info:
        zep.graph.node.list(graph_uuid, page_size=page_size)
    assert info.value.body.error.param == "page_size"


def test_bad_cursor_and_order_by(zep: Zep, big_graph: tuple[str, set[str]]) -> None:
    graph_uuid, _ = big_graph
    with pytest.raises(BadRequestError) as info:
        zep.graph.node.list(graph_uuid, cursor="not-a-cursor")
    assert info.value.body.error.param == "cursor"
    with pytest.raises(BadRequestError) as info:
        zep.graph.node.list(graph_uuid, order_by="name")
    assert info.value.body.error.param == "order_by"
    with pytest.raises(BadRequestError) as info:
        zep.graph.node.list(graph_uuid, order="sideways")
    assert info.value.body.error.param == "order"
    first = zep.graph.node.list(graph_uuid, page_size=10, order_by="uuid")
    cursor = first.response.next_cursor
    assert cursor
    with pytest.raises(BadRequestError) as info:  # a cursor is tied to its ordering
        zep.graph.node.list(graph_uuid, page_size=10, order_by="created_at", cursor=cursor)
    assert info.value.body.error.param == "cursor"
