"""v3 ``search_filters`` in the v4 filter language (``retrieval/filters.py``), which then
validates them: the filtering itself exists once.

v3 spells operators as SQL (``=``, ``<>``, ``IS NULL``), names a property's value
``property_value``, gives each date field its own OR-of-AND lists
(``valid_at: [[{comparison_operator, date}]]``) and calls the metadata filters
``episode_metadata_filters``; v4 has one ``date_filters`` OR-of-AND over all fields."""

from __future__ import annotations

from itertools import product
from typing import Any

from graphrecall.domain.errors import BadRequest
from graphrecall.retrieval import filters as filter_language
from graphrecall.retrieval.filters import Filters

OPERATORS = {
    "=": "eq",
    "<>": "ne",
    "!=": "ne",
    ">": "gt",
    "<": "lt",
    ">=": "gte",
    "<=": "lte",
    "IS NULL": "is_null",
    "is_null": "is_null",
    "IS NOT NULL": "is_not_null",
    "is_not_null": "is_not_null",
    "CONTAINS": "contains",
    "contains": "contains",
}
SAME = (
    "node_labels",
    "exclude_node_labels",
    "edge_types",
    "exclude_edge_types",
    "edge_uuids",
    "source_node_uuids",
    "target_node_uuids",
    "connected_node_uuids",
    "episode_uuids",
)
DATE_FIELDS = ("created_at", "valid_at", "invalid_at", "expired_at")
MAX_DATE_GROUPS = 20  # v4's bound on date_filters.any_of


def _operator(value: Any, path: str) -> str:
    found = OPERATORS.get(value) if isinstance(value, str) else None
    if found is None:
        raise BadRequest(
            f"{path}: unknown comparison_operator {value!r}; one of {', '.join(OPERATORS)}",
            param=path,
        )
    return found


def _dict(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{path} must be an object", param=path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise BadRequest(f"{path} must be an array", param=path)
    return value


def _property(raw: Any, path: str) -> dict[str, Any]:
    item = _dict(raw, path)
    return {
        "property_name": item.get("property_name"),
        "operator": _operator(item.get("comparison_operator"), f"{path}.comparison_operator"),
        "value": item.get("property_value"),
    }


def _metadata_group(raw: Any, path: str) -> dict[str, Any]:
    group = _dict(raw, path)
    return {
        "type": group.get("type") or "and",
        "filters": [
            _property(f, f"{path}.filters[{i}]")
            for i, f in enumerate(_list(group.get("filters") or [], f"{path}.filters"))
        ],
        "groups": [
            _metadata_group(g, f"{path}.groups[{i}]")
            for i, g in enumerate(_list(group.get("groups") or [], f"{path}.groups"))
        ],
    }


def _date_groups(field: str, raw: Any) -> list[list[dict[str, Any]]]:
    path = f"search_filters.{field}"
    groups = []
    for i, group in enumerate(_list(raw, path)):
        conditions = []
        for j, condition in enumerate(_list(group, f"{path}[{i}]")):
            at = f"{path}[{i}][{j}]"
            item = _dict(condition, at)
            conditions.append(
                {
                    "field": field,
                    "operator": _operator(
                        item.get("comparison_operator"), f"{at}.comparison_operator"
                    ),
                    "value": item.get("date"),
                }
            )
        groups.append(conditions)
    return groups


def to_v4(raw: dict[str, Any] | None) -> Filters:
    """The v4 filters a v3 ``search_filters`` object means (``None``: none). A v3 key
    with no v4 meaning is a 400 naming it, never dropped."""
    if not raw:
        return Filters()
    out: dict[str, Any] = {}
    per_field: list[list[list[dict[str, Any]]]] = []
    for key, value in raw.items():
        if value is None:  # old clients send unset fields as null
            continue
        if key in SAME:
            out[key] = value
        elif key == "property_filters":
            out[key] = [
                _property(f, f"search_filters.property_filters[{i}]")
                for i, f in enumerate(_list(value, "search_filters.property_filters"))
            ]
        elif key == "episode_metadata_filters":
            out["metadata_filters"] = _metadata_group(value, "search_filters." + key)
        elif key in DATE_FIELDS:
            groups = _date_groups(key, value)
            if groups:
                per_field.append(groups)
        else:
            raise BadRequest(
                f"search_filters.{key} is not a filter graphrecall knows",
                param=f"search_filters.{key}",
            )
    if per_field:
        # Fields are ANDed, each an OR of ANDs: their product is one OR of ANDs.
        combined = [[c for group in choice for c in group] for choice in product(*per_field)]
        if len(combined) > MAX_DATE_GROUPS:
            raise BadRequest(
                f"the date filters make {len(combined)} alternatives; at most {MAX_DATE_GROUPS}",
                param="search_filters",
            )
        out["date_filters"] = {"any_of": [{"all_of": group} for group in combined]}
    return filter_language.parse(out)
