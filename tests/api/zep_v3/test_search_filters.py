"""v3 ``search_filters`` read into the v4 filter language (api/zep_v3/search_filters.py)."""

from __future__ import annotations

import pytest

from graphrecall.api.zep_v3.search_filters import to_v4
from graphrecall.domain.errors import BadRequest


def test_each_v3_filter_has_its_v4_meaning() -> None:
    filters = to_v4(
        {
            "node_labels": ["Person"],
            "edge_types": ["LIVES_IN"],
            "property_filters": [
                {"comparison_operator": ">=", "property_name": "age", "property_value": 30}
            ],
            "episode_metadata_filters": {
                "type": "or",
                "filters": [
                    {"comparison_operator": "=", "property_name": "src", "property_value": "a"}
                ],
                "groups": [
                    {
                        "type": "and",
                        "filters": [{"comparison_operator": "IS NULL", "property_name": "x"}],
                    }
                ],
            },
            "exclude_edge_types": None,
        }
    )
    assert filters.node_labels == ["Person"] and filters.edge_types == ["LIVES_IN"]
    assert filters.exclude_edge_types is None
    prop = filters.property_filters[0] if filters.property_filters else None
    assert prop is not None and (prop.property_name, prop.operator, prop.value) == (
        "age",
        "gte",
        30,
    )
    meta = filters.metadata_filters
    assert meta is not None and meta.type == "or" and meta.filters[0].operator == "eq"
    assert meta.groups[0].filters[0].operator == "is_null"


def test_date_fields_are_anded_and_their_groups_ored() -> None:
    """(created_at < A or created_at > B) and valid_at >= C: two v4 alternatives."""
    filters = to_v4(
        {
            "created_at": [
                [{"comparison_operator": "<", "date": "2020-01-01T00:00:00Z"}],
                [{"comparison_operator": ">", "date": "2024-01-01T00:00:00Z"}],
            ],
            "valid_at": [[{"comparison_operator": ">=", "date": "2019-01-01T00:00:00Z"}]],
        }
    )
    assert filters.date_filters is not None
    groups = [
        [(f.field, f.operator) for f in group.all_of] for group in filters.date_filters.any_of
    ]
    assert groups == [
        [("created_at", "lt"), ("valid_at", "gte")],
        [("created_at", "gt"), ("valid_at", "gte")],
    ]


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        ({"colour": ["red"]}, "search_filters.colour"),
        (
            {"valid_at": [[{"comparison_operator": "LIKE", "date": "x"}]]},
            "search_filters.valid_at[0][0].comparison_operator",
        ),
        ({"valid_at": "2024"}, "search_filters.valid_at"),
        (
            {"property_filters": [{"property_name": "a", "comparison_operator": "~"}]},
            "search_filters.property_filters[0].comparison_operator",
        ),
    ],
)
def test_what_v3_does_not_say_is_a_400_naming_it(raw: dict[str, object], param: str) -> None:
    with pytest.raises(BadRequest) as caught:
        to_v4(raw)
    assert caught.value.param == param
