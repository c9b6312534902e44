"""The Zep filter language (``SearchFilters`` and the list filters), validated once and
turned into backend-neutral predicates.

Which filters a request may carry depends on the scope and on whether it is a search or a
list; a filter the target does not accept is a 400 ``unsupported_filter`` naming it, never
silently ignored. Rules follow the Zep docs: UUID lists hold at most 256 valid UUIDs (OR
within a list, AND across filters; unknown UUIDs match nothing); metadata filters hold at
most 10 leaves, 3 levels and 5 sub-groups per group; ``in`` takes at most 100 items.
An empty list is treated as "not given".
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphrecall.domain import clock, limits
from graphrecall.domain import predicates as p
from graphrecall.domain.errors import BadRequest, UnsupportedFilter
from graphrecall.domain.ids import check_uuid

Scalar = str | float | int | bool
CompareOp = Literal["eq", "ne", "gt", "lt", "gte", "lte", "in", "is_null", "is_not_null"]
MetaOp = Literal["eq", "ne", "gt", "lt", "gte", "lte", "in", "contains", "is_null", "is_not_null"]
DateField = Literal["created_at", "valid_at", "invalid_at", "expired_at"]
DateOp = Literal["eq", "ne", "gt", "lt", "gte", "lte", "is_null", "is_not_null"]

MAX_METADATA_LEAVES = 10
MAX_METADATA_DEPTH = 3
MAX_METADATA_SUBGROUPS = 5
MAX_IN_ITEMS = 100


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DateFilter(_Model):
    field: DateField
    operator: DateOp
    value: str | None = None


class DateFilterGroup(_Model):
    all_of: list[DateFilter] = Field(default_factory=list, max_length=20)


class DateFilters(_Model):
    any_of: list[DateFilterGroup] = Field(default_factory=list, max_length=20)


class MetadataFilter(_Model):
    property_name: Annotated[str, Field(min_length=1, max_length=200)]
    operator: MetaOp
    value: Scalar | list[Scalar] | None = None


class MetadataFilterGroup(_Model):
    type: Literal["and", "or"] = "and"
    filters: list[MetadataFilter] = Field(default_factory=list)
    groups: list[MetadataFilterGroup] = Field(default_factory=list)


class PropertyFilter(_Model):
    property_name: Annotated[str, Field(min_length=1, max_length=200)]
    operator: CompareOp
    value: Scalar | list[Scalar] | None = None


UuidList = Annotated[list[str] | None, Field(max_length=limits.MAX_UUID_LIST)]
LabelList = Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(max_length=100)]


class Filters(_Model):
    """The union of every filter field of the Zep v4 API (``SearchFilters`` plus the
    episode list's ``mentioned_node_uuids``). Unknown keys are rejected."""

    node_labels: LabelList = None
    exclude_node_labels: LabelList = None
    edge_types: LabelList = None
    exclude_edge_types: LabelList = None
    edge_uuids: UuidList = None
    source_node_uuids: UuidList = None
    target_node_uuids: UuidList = None
    connected_node_uuids: UuidList = None
    episode_uuids: UuidList = None
    mentioned_node_uuids: UuidList = None
    property_filters: Annotated[list[PropertyFilter] | None, Field(max_length=20)] = None
    date_filters: DateFilters | None = None
    metadata_filters: MetadataFilterGroup | None = None
    content_policy_violated: bool | None = None

    def given(self) -> list[str]:
        """Names of the filters actually given (empty lists count as not given)."""
        out = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None or (isinstance(value, list) and not value):
                continue
            if isinstance(value, DateFilters) and not value.any_of:
                continue
            out.append(name)
        return out


Target = Literal[
    "search:edges",
    "search:nodes",
    "search:episodes",
    "search:observations",
    "search:thread_summaries",
    "list:edges",
    "list:nodes",
    "list:episodes",
    "list:observations",
    "list:thread_summaries",
    "list:document_summaries",
    "graph:edges",  # neighbours, subgraph and get_context: filters on the edges traversed
]

_EDGE_ANCHORS = ("source_node_uuids", "target_node_uuids", "connected_node_uuids")
_EDGE_ALL = (
    "node_labels",
    "exclude_node_labels",
    "edge_types",
    "exclude_edge_types",
    "edge_uuids",
    *_EDGE_ANCHORS,
    "episode_uuids",
    "property_filters",
    "date_filters",
    "metadata_filters",
)
ACCEPTED: dict[str, tuple[str, ...]] = {
    "search:edges": _EDGE_ALL,
    "search:nodes": (
        "node_labels",
        "exclude_node_labels",
        "episode_uuids",
        "property_filters",
        "metadata_filters",
    ),
    "search:episodes": ("content_policy_violated", "metadata_filters"),
    "search:observations": (),
    "search:thread_summaries": ("metadata_filters",),
    "list:edges": _EDGE_ALL,
    "list:nodes": (
        "node_labels",
        "exclude_node_labels",
        "episode_uuids",
        "property_filters",
        "metadata_filters",
    ),
    "list:episodes": ("mentioned_node_uuids", "metadata_filters", "content_policy_violated"),
    "list:observations": ("date_filters", "property_filters"),
    # Summaries have no properties to filter (was a 500 on thread summaries: the query
    # named a column they do not have); their metadata is their episodes'.
    "list:thread_summaries": ("date_filters", "metadata_filters"),
    "list:document_summaries": ("date_filters", "metadata_filters"),
    "graph:edges": (*_EDGE_ALL, "content_policy_violated"),
}


def parse(raw: dict[str, Any] | Filters | None) -> Filters:
    if raw is None:
        return Filters()
    if isinstance(raw, Filters):
        return raw
    try:
        return Filters.model_validate(raw)
    except Exception as exc:  # pydantic.ValidationError, re-raised with the field path
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        error = exc.errors()[0]
        path = _path(("filters", *error["loc"]))
        raise BadRequest(f"{path}: {error['msg']}", param=path) from None


def to_predicate(filters: Filters, target: Target) -> p.Predicate | None:
    """Validate ``filters`` for ``target`` and build the predicate (None = no filter)."""
    accepted = ACCEPTED[target]
    for name in filters.given():
        if name not in accepted:
            what = target.replace(":", " ").replace("_", " ")
            raise UnsupportedFilter(
                f"filters.{name} is not supported on {what}", param=f"filters.{name}"
            )
    kind = target.split(":")[1]
    parts: list[p.Predicate] = []
    f = filters
    if f.node_labels:
        labels = tuple(f.node_labels)
        parts.append(p.HasAnyLabel(labels) if kind == "nodes" else p.EndpointLabels(labels, True))
    if f.exclude_node_labels:
        labels = tuple(f.exclude_node_labels)
        excluded = p.HasAnyLabel(labels) if kind == "nodes" else p.EndpointLabels(labels, False)
        parts.append(p.Not(excluded))
    if f.edge_types:
        parts.append(p.Column("name", "in", tuple(f.edge_types)))
    if f.exclude_edge_types:
        parts.append(p.Not(p.Column("name", "in", tuple(f.exclude_edge_types))))
    if f.edge_uuids:
        parts.append(p.Column("uuid", "in", _uuids(f.edge_uuids, "edge_uuids")))
    if f.source_node_uuids:
        parts.append(
            p.Column("source_node_uuid", "in", _uuids(f.source_node_uuids, "source_node_uuids"))
        )
    if f.target_node_uuids:
        parts.append(
            p.Column("target_node_uuid", "in", _uuids(f.target_node_uuids, "target_node_uuids"))
        )
    if f.connected_node_uuids:
        ids = _uuids(f.connected_node_uuids, "connected_node_uuids")
        parts.append(
            p.Or((p.Column("source_node_uuid", "in", ids), p.Column("target_node_uuid", "in", ids)))
        )
    if f.episode_uuids:
        parts.append(p.LinkedToEpisodes(_uuids(f.episode_uuids, "episode_uuids")))
    if f.property_filters:
        for i, pf in enumerate(f.property_filters):
            parts.append(_property(pf, f"filters.property_filters[{i}]"))
    if f.date_filters and f.date_filters.any_of:
        only_created = target in (
            "list:observations",
            "list:thread_summaries",
            "list:document_summaries",
        )
        parts.append(_dates(f.date_filters, only_created))
    if f.metadata_filters is not None:
        _check_metadata_limits(f.metadata_filters)
        tree = _metadata(f.metadata_filters, "filters.metadata_filters")
        if tree is not None:
            parts.append(p.EpisodeMetadata(tree))
    if f.content_policy_violated:
        # No content policy is configured, so no episode has violated one.
        parts.append(p.Nothing())
    return p.all_of(parts)


def mentioned_node_uuids(filters: Filters) -> tuple[str, ...]:
    return _uuids(filters.mentioned_node_uuids or [], "mentioned_node_uuids")


# -- helpers ----------------------------------------------------------------------------


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and (
            part.startswith(("function-", "tagged-union"))
            or part in ("str", "float", "int", "bool", "list[...]")
            or "[" in part
        ):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out


def _uuids(values: list[str], name: str) -> tuple[str, ...]:
    return tuple(check_uuid(v, param=f"filters.{name}[{i}]") for i, v in enumerate(values))


def _check_value(op: str, value: Any, param: str, *, allow_contains: bool) -> Any:
    if op in ("is_null", "is_not_null"):
        if value is not None:
            raise BadRequest(f"{param}.value must be omitted for {op}", param=f"{param}.value")
        return None
    if value is None:
        raise BadRequest(f"{param}.value is required for {op}", param=f"{param}.value")
    if op == "in":
        if not isinstance(value, list) or not value:
            raise BadRequest(
                f"{param}.value must be a non-empty array for in", param=f"{param}.value"
            )
        if len(value) > MAX_IN_ITEMS:
            raise BadRequest(
                f"{param}.value holds at most {MAX_IN_ITEMS} items", param=f"{param}.value"
            )
        return tuple(value)
    if isinstance(value, list):
        raise BadRequest(f"{param}.value must be a scalar for {op}", param=f"{param}.value")
    if op == "contains" and allow_contains and (not isinstance(value, str) or not value):
        raise BadRequest(
            f"{param}.value must be a non-empty string for contains", param=f"{param}.value"
        )
    return value


def _property(pf: PropertyFilter, param: str) -> p.Predicate:
    _check_key(pf.property_name, param)
    value = _check_value(pf.operator, pf.value, param, allow_contains=False)
    if pf.operator == "in":
        for j, item in enumerate(value):
            if isinstance(item, str) and (not item or "," in item or item != item.strip()):
                raise BadRequest(
                    f"{param}.value[{j}]: strings in an in list must be non-empty, without"
                    " commas or surrounding whitespace",
                    param=f"{param}.value[{j}]",
                )
    return p.JsonPath("attributes", pf.property_name, pf.operator, value)


def _dates(filters: DateFilters, only_created: bool) -> p.Predicate:
    groups: list[p.Predicate] = []
    for gi, group in enumerate(filters.any_of):
        leaves: list[p.Predicate] = []
        for li, df in enumerate(group.all_of):
            param = f"filters.date_filters.any_of[{gi}].all_of[{li}]"
            if only_created and df.field != "created_at":
                raise UnsupportedFilter(
                    f"{param}.field: only created_at can be filtered here", param=f"{param}.field"
                )
            value = _check_value(df.operator, df.value, param, allow_contains=False)
            if value is not None:
                value = clock.to_iso(clock.parse_iso(str(value), param=f"{param}.value"))
            leaves.append(p.Column(df.field, df.operator, value))
        if leaves:
            groups.append(p.And(tuple(leaves)) if len(leaves) > 1 else leaves[0])
    if not groups:
        return p.Nothing()
    return p.Or(tuple(groups)) if len(groups) > 1 else groups[0]


def _check_metadata_limits(root: MetadataFilterGroup) -> None:
    leaves = 0

    def walk(group: MetadataFilterGroup, depth: int, param: str) -> None:
        nonlocal leaves
        if depth > MAX_METADATA_DEPTH:
            raise BadRequest(
                f"metadata filter groups nest at most {MAX_METADATA_DEPTH} levels", param=param
            )
        if len(group.groups) > MAX_METADATA_SUBGROUPS:
            raise BadRequest(
                f"a metadata filter group holds at most {MAX_METADATA_SUBGROUPS} sub-groups",
                param=f"{param}.groups",
            )
        leaves += len(group.filters)
        if leaves > MAX_METADATA_LEAVES:
            raise BadRequest(
                f"metadata filters hold at most {MAX_METADATA_LEAVES} predicates in total",
                param="filters.metadata_filters",
            )
        for i, sub in enumerate(group.groups):
            walk(sub, depth + 1, f"{param}.groups[{i}]")

    walk(root, 1, "filters.metadata_filters")


def _metadata(group: MetadataFilterGroup, param: str) -> p.Predicate | None:
    items: list[p.Predicate] = []
    for i, mf in enumerate(group.filters):
        leaf = f"{param}.filters[{i}]"
        _check_key(mf.property_name, leaf)
        value = _check_value(mf.operator, mf.value, leaf, allow_contains=True)
        items.append(p.JsonPath("metadata", mf.property_name, mf.operator, value))
    for i, sub in enumerate(group.groups):
        tree = _metadata(sub, f"{param}.groups[{i}]")
        if tree is not None:
            items.append(tree)
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    return p.And(tuple(items)) if group.type == "and" else p.Or(tuple(items))


def _check_key(key: str, param: str) -> None:
    if '"' in key or "\\" in key:
        raise BadRequest(
            f"{param}.property_name may not contain quotes or backslashes",
            param=f"{param}.property_name",
        )
