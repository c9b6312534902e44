"""Every filter a list endpoint accepts compiles against its records' table (the SQL
compiler, shared by the backends, checks every field): an accepted filter is never a
500."""

from __future__ import annotations

from typing import Any

import pytest

from graphrecall.domain.errors import UnsupportedFilter
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import (
    DocumentSummary,
    Edge,
    Episode,
    Node,
    Observation,
    Record,
    ThreadSummary,
)
from graphrecall.retrieval import filters
from graphrecall.store import Store

UUID = "0190e3c2-0000-7000-8000-000000000000"
ONE_OF_EACH: dict[str, Any] = {
    "node_labels": ["Person"],
    "exclude_node_labels": ["Place"],
    "edge_types": ["KNOWS"],
    "exclude_edge_types": ["LIKES"],
    "edge_uuids": [UUID],
    "source_node_uuids": [UUID],
    "target_node_uuids": [UUID],
    "connected_node_uuids": [UUID],
    "episode_uuids": [UUID],
    "property_filters": [{"property_name": "age", "operator": "gt", "value": 3}],
    "date_filters": {
        "any_of": [
            {"all_of": [{"field": "created_at", "operator": "gt", "value": "2020-01-01T00:00:00Z"}]}
        ]
    },
    "metadata_filters": {
        "type": "and",
        "filters": [{"property_name": "page", "operator": "eq", "value": 1}],
    },
    "content_policy_violated": True,
}
LISTS: dict[str, type[Record]] = {
    "list:edges": Edge,
    "list:nodes": Node,
    "list:episodes": Episode,
    "list:observations": Observation,
    "list:thread_summaries": ThreadSummary,
    "list:document_summaries": DocumentSummary,
}


@pytest.mark.parametrize("target", sorted(LISTS))
def test_every_accepted_filter_runs(store: Store, target: filters.Target) -> None:
    for name in filters.ACCEPTED[target]:
        if name == "mentioned_node_uuids":
            continue  # not a predicate: the service narrows the episodes by it
        where = filters.to_predicate(filters.parse({name: ONE_OF_EACH[name]}), target)
        assert store.find(LISTS[target], {"graph_uuid": new_id()}, where=where) == [], name


def test_summaries_have_no_properties_to_filter() -> None:
    for target in ("list:thread_summaries", "list:document_summaries"):
        given = filters.parse({"property_filters": ONE_OF_EACH["property_filters"]})
        with pytest.raises(UnsupportedFilter) as info:
            filters.to_predicate(given, target)  # type: ignore[arg-type]
        assert info.value.param == "filters.property_filters"
