"""Compiles :mod:`graphrecall.domain.predicates` to SQLite WHERE fragments."""

from __future__ import annotations

from typing import Any

from graphrecall.domain import predicates as p

_CMP = {"eq": "=", "gt": ">", "lt": "<", "gte": ">=", "lte": "<="}


class Compiler:
    """Compiles predicates for rows of ``table`` aliased as ``alias``."""

    def __init__(self, table: str, columns: frozenset[str], alias: str = "t") -> None:
        self.table = table
        self.columns = columns
        self.alias = alias

    def compile(self, pred: p.Predicate) -> tuple[str, list[Any]]:
        params: list[Any] = []
        sql = self._node(pred, params)
        return sql, params

    # -- nodes -------------------------------------------------------------------------
    def _node(self, pred: p.Predicate, params: list[Any]) -> str:
        a = self.alias
        match pred:
            case p.And(items):
                return "(" + " AND ".join(self._node(i, params) for i in items) + ")"
            case p.Or(items):
                return "(" + " OR ".join(self._node(i, params) for i in items) + ")"
            case p.Not(item):
                return f"(NOT {self._node(item, params)})"
            case p.Nothing():
                return "0"
            case p.Column(field, op, value):
                return self._column(f"{a}.{self._field(field)}", op, value, params)
            case p.JsonPath(field, key, op, value):
                return self._json(f"{a}.{self._field(field)}", key, op, value, params)
            case p.HasAnyLabel(labels):
                params.extend(labels)
                return (
                    f"EXISTS (SELECT 1 FROM json_each({a}.labels) j"
                    f" WHERE j.value IN ({_marks(labels)}))"
                )
            case p.EndpointLabels(labels, all_endpoints):
                parts = []
                for end in ("source_node_uuid", "target_node_uuid"):
                    params.extend(labels)
                    parts.append(
                        f"EXISTS (SELECT 1 FROM nodes n, json_each(n.labels) j"
                        f" WHERE n.uuid = {a}.{end} AND j.value IN ({_marks(labels)}))"
                    )
                return "(" + (" AND " if all_endpoints else " OR ").join(parts) + ")"
            case p.LinkedToEpisodes(episode_uuids):
                params.extend(episode_uuids)
                if self.table == "episodes":
                    return f"{a}.uuid IN ({_marks(episode_uuids)})"
                params.insert(len(params) - len(episode_uuids), self.table)
                return (
                    f"{a}.uuid IN (SELECT l.uuid FROM links l WHERE l.kind = ?"
                    f" AND l.episode_uuid IN ({_marks(episode_uuids)}))"
                )
            case p.EpisodeMetadata(inner):
                episode = Compiler("episodes", frozenset({"metadata"}), alias="e")
                if self.table == "episodes":
                    return Compiler("episodes", self.columns, alias=a)._node(inner, params)
                if self.table == "thread_summaries":
                    inner_sql = episode._node(inner, params)
                    return (
                        f"EXISTS (SELECT 1 FROM episodes e WHERE e.thread_uuid = {a}.thread_uuid"
                        f" AND {inner_sql})"
                    )
                params.append(self.table)
                inner_sql = episode._node(inner, params)
                return (
                    "EXISTS (SELECT 1 FROM links l JOIN episodes e ON e.uuid = l.episode_uuid"
                    f" WHERE l.kind = ? AND l.uuid = {a}.uuid AND {inner_sql})"
                )
        raise TypeError(f"unknown predicate {pred!r}")  # pragma: no cover

    def _field(self, field: str) -> str:
        if field not in self.columns:
            raise ValueError(f"{self.table} has no field {field!r}")
        return field

    @staticmethod
    def _column(col: str, op: str, value: Any, params: list[Any]) -> str:
        if op == "is_null":
            return f"{col} IS NULL"
        if op == "is_not_null":
            return f"{col} IS NOT NULL"
        if op == "in":
            values = list(value)
            if not values:
                return "0"
            params.extend(values)
            return f"{col} IN ({_marks(values)})"
        params.append(value)
        if op == "ne":
            return f"{col} IS NOT ?"
        return f"{col} {_CMP[op]} ?"

    @staticmethod
    def _json(col: str, key: str, op: str, value: Any, params: list[Any]) -> str:
        path = '$."' + key.replace('"', '\\"') + '"'
        if op in ("is_null", "is_not_null"):
            params.extend([path, path])
            null = f"(json_type({col}, ?) IS NULL OR json_type({col}, ?) = 'null')"
            return null if op == "is_null" else f"(NOT {null})"
        params.append(path)
        each = f"EXISTS (SELECT 1 FROM json_each({col}, ?) j WHERE "
        if op == "contains":
            params.append(value)
            return each + "j.type = 'text' AND instr(j.value, ?) > 0)"
        if op == "in":
            values = [_json_value(v) for v in value]
            params.extend(values)
            return each + f"j.value IN ({_marks(values)}))"
        params.append(_json_value(value))
        typed = _type_guard(value)
        if op == "ne":
            return f"(NOT {each}{typed}j.value = ?))"
        return each + f"{typed}j.value {_CMP[op]} ?)"


def _json_value(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


def _type_guard(value: Any) -> str:
    """Order comparisons only between values of one kind (numbers vs text)."""
    if isinstance(value, bool):
        return "j.type IN ('true', 'false', 'integer') AND "
    if isinstance(value, int | float):
        return "j.type IN ('integer', 'real') AND "
    return "j.type = 'text' AND "


def _marks(values: Any) -> str:
    return ",".join("?" * len(values))
