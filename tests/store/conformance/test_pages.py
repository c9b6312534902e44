"""Keyset pages (list_page) and iter_all."""

from __future__ import annotations

from typing import Literal

import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge, Node, PageRequest
from graphrecall.store import Store
from tests.store.conformance.records import at, edge, node, uuids, walk

Order = Literal["asc", "desc"]


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pages_return_every_record_once_in_order(store: Store, order: Order) -> None:
    g = new_id()
    # Three created_at values shared by several nodes each: ties broken by uuid.
    nodes = [node(g, f"n{i}", t=i % 3) for i in range(23)]
    store.insert([*nodes, node(new_id(), "elsewhere")])
    expected = sorted(nodes, key=lambda n: (n.created_at, n.uuid), reverse=order == "desc")
    for size in (1, 5, 23, 50):
        page = PageRequest(page_size=size, order=order, order_by="created_at")
        first = store.list_page(Node, {"graph_uuid": g}, page)
        assert first.total_size == 23
        assert first.items == expected[:size]
        assert (first.next_cursor is None) == (size >= 23)
        assert walk(store, Node, {"graph_uuid": g}, page) == expected


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pages_stay_stable_while_rows_are_added(store: Store, order: Order) -> None:
    g = new_id()
    nodes = [node(g, f"n{i}", t=10 + i) for i in range(10)]
    store.insert(nodes)
    page = PageRequest(page_size=3, order=order, order_by="created_at")
    result = store.list_page(Node, {"graph_uuid": g}, page)
    seen = list(result.items)
    # One row sorts before the walk's position, one after it, one ties with the last
    # row returned (on either side of it by uuid).
    behind = node(g, "behind", t=0 if order == "asc" else 99)
    ahead = node(g, "ahead", t=99 if order == "asc" else 0)
    tie = node(g, "tie", t=10 + (2 if order == "asc" else 7))
    store.insert([behind, ahead, tie])
    while result.next_cursor is not None:
        page = page.model_copy(update={"cursor": result.next_cursor})
        result = store.list_page(Node, {"graph_uuid": g}, page)
        assert result.total_size == 13
        seen += result.items
    assert len(set(uuids(seen))) == len(seen)  # none twice
    assert set(uuids(nodes)) <= set(uuids(seen))  # none lost
    assert ahead in seen and behind not in seen
    key = sorted([*nodes, tie], key=lambda n: (n.created_at, n.uuid), reverse=order == "desc")
    last = seen[2]
    assert (tie in seen) == (key.index(tie) > key.index(last))
    assert seen == sorted(seen, key=lambda n: (n.created_at, n.uuid), reverse=order == "desc")


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_pages_over_a_nullable_key_put_nulls_lowest(store: Store, order: Order) -> None:
    g = new_id()
    a, b = node(g, "a"), node(g, "b")
    edges = [edge(g, a, b, valid_at=v) for v in (at(2), None, at(1), None, at(2), "")]
    store.insert([a, b, *edges])
    page = PageRequest(page_size=2, order=order, order_by="valid_at")
    found = walk(store, Edge, {"graph_uuid": g}, page)
    # A NULL key sorts as "": it ties with the empty string, broken by uuid.
    expected = sorted(edges, key=lambda e: (e.valid_at or "", e.uuid), reverse=order == "desc")
    assert found == expected


def test_search_is_a_literal_case_insensitive_substring(store: Store) -> None:
    g = new_id()
    names = ["Alice", "alicia", "Bob", "MALICE", "50% off", "50 off", "a_b", "axb", "back\\slash"]
    nodes = [node(g, n, summary=f"summary of {n}") for n in names]
    store.insert(nodes)

    def names_found(search: str, fields: tuple[str, ...] = ("name",)) -> list[str]:
        page = store.list_page(
            Node, {"graph_uuid": g}, PageRequest(), search=search, search_fields=fields
        )
        assert page.total_size == len(page.items)
        return sorted(n.name for n in page.items)

    assert names_found("ALI") == ["Alice", "MALICE", "alicia"]
    assert names_found("0%") == ["50% off"]
    assert names_found("a_") == ["a_b"]
    assert names_found("k\\s") == ["back\\slash"]
    assert names_found("zzz") == []
    assert names_found("OF BOB", ("name", "summary")) == ["Bob"]


def test_pages_take_scope_and_where(store: Store) -> None:
    g = new_id()
    nodes = [node(g, f"n{i}", summary="even" if i % 2 == 0 else "odd") for i in range(9)]
    store.insert(nodes)
    page = PageRequest(page_size=2, order="asc")
    evens = sorted([n for n in nodes if n.summary == "even"], key=lambda n: n.uuid)
    where = p.Column("summary", "eq", "even")
    result = store.list_page(Node, {"graph_uuid": g}, page, where=where)
    assert result.total_size == 5 and result.items == evens[:2]
    picked = [nodes[0].uuid, nodes[1].uuid, nodes[2].uuid]
    result = store.list_page(Node, {"graph_uuid": g, "uuid": picked}, page, where=where)
    assert result.total_size == 2 and result.items == sorted(
        [nodes[0], nodes[2]], key=lambda n: n.uuid
    )


def test_bad_cursors_and_orderings_name_the_field(store: Store) -> None:
    g = new_id()
    store.insert([node(g, f"n{i}") for i in range(3)])
    with pytest.raises(BadRequest) as bad:
        store.list_page(Node, {"graph_uuid": g}, PageRequest(cursor="garbage!"))
    assert bad.value.param == "cursor"
    issued = store.list_page(Node, {"graph_uuid": g}, PageRequest(page_size=1, order="asc"))
    assert issued.next_cursor is not None
    other = PageRequest(page_size=1, order="desc", cursor=issued.next_cursor)
    with pytest.raises(BadRequest) as bad:
        store.list_page(Node, {"graph_uuid": g}, other)
    assert bad.value.param == "cursor"
    with pytest.raises(BadRequest) as bad:
        store.list_page(Node, {"graph_uuid": g}, PageRequest(order_by="no_such_field"))
    assert bad.value.param == "order_by"


def test_iter_all_yields_every_record_once_by_uuid(store: Store) -> None:
    g = new_id()
    nodes = [node(g, f"n{i}") for i in range(12)]
    store.insert([*nodes, node(new_id(), "elsewhere")])
    assert list(store.iter_all(Node, {"graph_uuid": g}, batch=5)) == sorted(
        nodes, key=lambda n: n.uuid
    )
    assert list(store.iter_all(Node, {"graph_uuid": new_id()})) == []
