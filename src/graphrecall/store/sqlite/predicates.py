"""Compiles :mod:`graphrecall.domain.predicates` to SQLite WHERE fragments."""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from graphrecall.domain import jsonpath, safe_regex, tree_match
from graphrecall.domain import predicates as p
from graphrecall.store.predicates import CMP, Dialect, SqlCompiler


def _member(column: str, values: Any, params: list[Any]) -> str:
    params.extend(values)
    return f"{column} IN ({','.join('?' * len(values))})"


def _equal(column: str, value: Any, params: list[Any]) -> str:
    params.append(int(value) if isinstance(value, bool) else value)
    return f"{column} = ?"


DIALECT = Dialect(mark="?", true="1", false="0", member=_member, equal=_equal, distinct="IS NOT")


class Compiler(SqlCompiler):
    """Compiles predicates for rows of ``table`` aliased as ``alias``."""

    dialect = DIALECT

    def _leaf(self, pred: p.Predicate, params: list[Any]) -> str:
        a = self.alias
        match pred:
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
                if self.table == "document_summaries":
                    inner_sql = episode._node(inner, params)
                    return (
                        f"EXISTS (SELECT 1 FROM episodes e WHERE e.graph_uuid = {a}.graph_uuid"
                        f" AND e.document_id = {a}.document_id AND {inner_sql})"
                    )
                params.append(self.table)
                inner_sql = episode._node(inner, params)
                return (
                    "EXISTS (SELECT 1 FROM links l JOIN episodes e ON e.uuid = l.episode_uuid"
                    f" WHERE l.kind = ? AND l.uuid = {a}.uuid AND {inner_sql})"
                )
            case p.PathUnder(field, path):
                col = f"{a}.{self._field(field)}"
                if not path:
                    return "1"
                # The range (every descendant sorts between "path" and "path/") lets an
                # index on the column narrow the scan; the exact test keeps "path-x" out.
                params.extend([path, path + "/", path, _glob_escape(path) + ".*"])
                return f"({col} >= ? AND {col} < ? AND ({col} = ? OR {col} GLOB ?))"
            case p.Regex(field, pattern, ignore_case):
                params.extend([pattern, int(ignore_case)])
                return f"gr_regexp(?, ?, {a}.{self._field(field)})"
            case p.TreePattern(field, items):
                params.append(tree_match.encode(items))
                return f"gr_lquery(?, {a}.{self._field(field)})"
            case p.JsonContains(field, value):
                return _contains_sql(f"{a}.{self._field(field)}", value, params)
            case p.JsonPathMatch(field, expression):
                params.append(expression)
                return f"gr_jsonpath(?, {a}.{self._field(field)})"
        raise TypeError(f"unknown predicate {pred!r}")  # pragma: no cover

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
        return each + f"{typed}j.value {CMP[op]} ?)"


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


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _contains_sql(col: str, value: Any, params: list[Any]) -> str:
    """Top-level scalars are compared in SQL (cheap); nested values go to the Python
    ``gr_json_contains``, which implements the whole rule."""
    if not isinstance(value, dict):
        params.append(json.dumps(value))
        return f"gr_json_contains({col}, ?)"
    parts: list[str] = []
    rest: dict[str, Any] = {}
    for key, item in value.items():
        if '"' in key or "\\" in key or isinstance(item, dict | list):
            rest[key] = item
            continue
        path = '$."' + key + '"'
        if item is None or isinstance(item, bool):
            kind = "null" if item is None else ("true" if item else "false")
            params.append(path)
            parts.append(f"json_type({col}, ?) = '{kind}'")
            continue
        kinds = "'integer', 'real'" if isinstance(item, int | float) else "'text'"
        params.extend([path, item, path])  # the equality first: the type is checked on hits
        parts.append(f"(json_extract({col}, ?) = ? AND json_type({col}, ?) IN ({kinds}))")
    if rest:
        params.append(json.dumps(rest))
        parts.append(f"gr_json_contains({col}, ?)")
    # {} is contained in every object, and only in objects (not NULL, not an array).
    return "(" + " AND ".join(parts) + ")" if parts else f"json_type({col}) = 'object'"


def _regexp(pattern: str, ignore_case: int, value: str | None) -> int:
    if value is None:
        return 0
    return int(safe_regex.compiled(pattern, bool(ignore_case)).search(value) is not None)


def _lquery(items: str, value: str | None) -> int:
    return int(tree_match.matches_encoded(items, value))


def json_contains(doc: Any, needle: Any) -> bool:
    """PostgreSQL ``jsonb @>`` on parsed JSON values."""
    if isinstance(needle, dict):
        return isinstance(doc, dict) and all(
            k in doc and json_contains(doc[k], v) for k, v in needle.items()
        )
    if isinstance(needle, list):
        return isinstance(doc, list) and all(any(json_contains(d, n) for d in doc) for n in needle)
    if isinstance(needle, bool) or isinstance(doc, bool):
        return isinstance(needle, bool) and isinstance(doc, bool) and needle == doc
    if isinstance(needle, int | float) and isinstance(doc, int | float):
        return needle == doc
    return type(needle) is type(doc) and needle == doc


def _json_contains(doc: str | None, needle: str) -> int:
    if doc is None:
        return 0
    return int(json_contains(json.loads(doc), json.loads(needle)))


def _jsonpath(expression: str, doc: str | None) -> int:
    if doc is None:
        return 0
    return int(jsonpath.matches(expression, json.loads(doc)))


def register_functions(conn: sqlite3.Connection) -> None:
    """SQL functions the compiled predicates call: ``gr_regexp``, ``gr_json_contains``
    and ``gr_jsonpath``."""
    conn.create_function("gr_regexp", 3, _regexp, deterministic=True)
    conn.create_function("gr_lquery", 2, _lquery, deterministic=True)
    conn.create_function("gr_json_contains", 2, _json_contains, deterministic=True)
    conn.create_function("gr_jsonpath", 2, _jsonpath, deterministic=True)
