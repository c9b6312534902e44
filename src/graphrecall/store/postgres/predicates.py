"""Compiles :mod:`graphrecall.domain.predicates` to PostgreSQL WHERE fragments, with the
results SQLite's compiler (``store/sqlite/predicates.py``) gives.

Documented differences (tested in ``tests/store/postgres/test_predicates.py``):

- ``Regex`` classifies characters (``\\w``, ``\\s``) as ASCII, as RE2 (the SQLite
  backend's engine) does, and folds case by Unicode, as RE2 does, where the server has a
  Unicode collation (``pg_c_utf8``, else ``C.utf8``). Under ``ignore_case`` the classes
  are Unicode too (one collation per test).
- ``Regex`` runs PostgreSQL's ARE engine on a translation of the Python pattern
  (:func:`regex.to_are`): ``.`` and ``[^...]`` do not match a newline (as in Python),
  ``\\b``/``\\B`` become ``\\y``/``\\Y``, ``(?P<name>...)`` a plain group. A pattern ARE
  cannot express (``(?P=name)``, conditionals, possessive quantifiers) is a 400 naming the
  filter. ``$`` matches only at the very end (Python also before a final newline).
- ``JsonPath`` on a key containing ``"`` finds the key on PostgreSQL; SQLite's JSON path
  finds nothing.
- ``JsonPathMatch`` is validated by ``domain/jsonpath`` (the same subset, the same 400s)
  and evaluated by PostgreSQL's ``@@``: ``like_regex`` patterns are POSIX there.
"""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from graphrecall.domain import jsonpath
from graphrecall.domain import predicates as p
from graphrecall.store.postgres.regex import to_are
from graphrecall.store.predicates import CMP, Dialect, SqlCompiler

# JSON items as SQLite's json_each lists them: an array's elements, an object's values,
# a scalar itself (a JSON null too); a missing key, none.
_ITEMS = (
    "EXISTS (SELECT 1 FROM (SELECT {col} -> %s AS x) k CROSS JOIN LATERAL"
    " jsonb_array_elements(CASE jsonb_typeof(k.x) WHEN 'array' THEN k.x"
    " WHEN 'object' THEN (SELECT coalesce(jsonb_agg(o.value), '[]') FROM jsonb_each(k.x) o)"
    " ELSE jsonb_build_array(k.x) END) j(v) WHERE k.x IS NOT NULL AND "
)


def _member(column: str, values: Any, params: list[Any]) -> str:
    params.append(values)
    return f"{column} = ANY(%s)"


def _equal(column: str, value: Any, params: list[Any]) -> str:
    params.append(value)
    return f"{column} = %s"


DIALECT = Dialect(
    mark="%s", true="true", false="false", member=_member, equal=_equal, distinct="IS DISTINCT FROM"
)


class Compiler(SqlCompiler):
    """Compiles predicates for rows of ``table`` aliased as ``alias``."""

    dialect = DIALECT

    def __init__(
        self, table: str, columns: frozenset[str], text_collation: str = "C", alias: str = "t"
    ) -> None:
        super().__init__(table, columns, alias)
        # Where a regex's \w, \s, [[:alpha:]] and case folding look characters up.
        self.text_collation = text_collation

    def _leaf(self, pred: p.Predicate, params: list[Any]) -> str:
        a = self.alias
        match pred:
            case p.JsonPath(field, key, op, value):
                return _json(f"{a}.{self._field(field)}", key, op, value, params)
            case p.HasAnyLabel(labels):
                params.append(list(labels))
                return f"({a}.labels ?| %s::text[])"
            case p.EndpointLabels(labels, all_endpoints):
                parts = []
                for end in ("source_node_uuid", "target_node_uuid"):
                    params.append(list(labels))
                    parts.append(
                        f"EXISTS (SELECT 1 FROM nodes n WHERE n.graph_uuid = {a}.graph_uuid"
                        f" AND n.uuid = {a}.{end} AND n.labels ?| %s::text[])"
                    )
                return "(" + (" AND " if all_endpoints else " OR ").join(parts) + ")"
            case p.LinkedToEpisodes(episode_uuids):
                if self.table == "episodes":
                    params.append(list(episode_uuids))
                    return f"{a}.uuid = ANY(%s)"
                params.extend([self.table, list(episode_uuids)])
                return (
                    f"{a}.uuid IN (SELECT l.uuid FROM links l WHERE l.graph_uuid ="
                    f" {a}.graph_uuid AND l.kind = %s AND l.episode_uuid = ANY(%s))"
                )
            case p.EpisodeMetadata(inner):
                episode = Compiler("episodes", frozenset({"metadata"}), self.text_collation, "e")
                if self.table == "episodes":
                    return Compiler("episodes", self.columns, self.text_collation, a)._node(
                        inner, params
                    )
                if self.table == "thread_summaries":
                    inner_sql = episode._node(inner, params)
                    return (
                        f"EXISTS (SELECT 1 FROM episodes e WHERE e.graph_uuid = {a}.graph_uuid"
                        f" AND e.thread_uuid = {a}.thread_uuid AND {inner_sql})"
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
                    "EXISTS (SELECT 1 FROM links l JOIN episodes e ON e.graph_uuid ="
                    f" l.graph_uuid AND e.uuid = l.episode_uuid WHERE l.graph_uuid ="
                    f" {a}.graph_uuid AND l.kind = %s AND l.uuid = {a}.uuid AND {inner_sql})"
                )
            case p.PathUnder(field, path):
                col = f"{a}.{self._field(field)}"
                if not path:
                    return "true"
                # Descendants are "path." + more: between "path" and "path/" in byte order.
                params.extend([path, path + "/", path, path + "."])
                return f"({col} >= %s AND {col} < %s AND ({col} = %s OR starts_with({col}, %s)))"
            case p.Regex(field, pattern, ignore_case):
                params.append(to_are(pattern))
                regex_op = "~*" if ignore_case else "~"
                # Character classes are ASCII, as RE2's on SQLite ("C"); case folding is
                # Unicode, as RE2's (the server's Unicode collation, where it has one).
                collation = self.text_collation if ignore_case else "C"
                column = f'{a}.{self._field(field)} COLLATE "{collation}"'
                return f"coalesce({column} {regex_op} %s, false)"
            case p.TreePattern(field, items):
                encoded = [
                    [None if i.label is None else to_are(i.label), i.negated, i.lo, i.hi]
                    for i in items
                ]
                params.append(Jsonb(encoded))
                return f"gr_tree_match(%s, {a}.{self._field(field)})"
            case p.JsonContains(field, value):
                col = f"{a}.{self._field(field)}"
                params.append(Jsonb(value))
                if isinstance(value, dict | list):
                    return f"coalesce({col} @> %s, false)"
                # PostgreSQL lets a top-level array contain a bare scalar; the rule the
                # SQLite backend implements does not.
                return f"coalesce(jsonb_typeof({col}) <> 'array' AND {col} @> %s, false)"
            case p.JsonPathMatch(field, expression):
                jsonpath.compiled(expression)  # the supported subset, or a 400
                params.append(expression)
                return f"coalesce({a}.{self._field(field)} @@ %s::jsonpath, false)"
        raise TypeError(f"unknown predicate {pred!r}")  # pragma: no cover


def _json(col: str, key: str, op: str, value: Any, params: list[Any]) -> str:
    item = f"{col} -> %s"
    if op in ("is_null", "is_not_null"):
        params.extend([key, key])
        null = f"(({item}) IS NULL OR jsonb_typeof({item}) = 'null')"
        return null if op == "is_null" else f"(NOT {null})"
    params.append(key)
    each = _ITEMS.format(col=col)
    if op == "contains":
        params.append(value)
        return each + "jsonb_typeof(v) = 'string' AND strpos(v #>> '{}', %s) > 0)"
    if op == "in":
        tests = [_typed("eq", v, params) for v in value]
        return each + "(" + (" OR ".join(tests) or "false") + "))"
    if op == "ne":
        return f"(NOT {each}{_typed('eq', value, params)}))"
    return each + _typed(op, value, params) + ")"


def _typed(op: str, value: Any, params: list[Any]) -> str:
    """``v op value`` between values of one kind, as SQLite compares json_each's values
    (a boolean is the integer 0 or 1 there; text compares byte by byte)."""
    cmp = CMP[op]
    if isinstance(value, bool):
        params.extend([int(value), int(value)])
        # CASE, not AND: PostgreSQL may evaluate a cast before the type test beside it.
        return (
            f"coalesce(CASE jsonb_typeof(v) WHEN 'boolean' THEN (v = 'true'::jsonb)::int {cmp} %s"
            f" WHEN 'number' THEN scale(v::numeric) = 0 AND v::numeric {cmp} %s END, false)"
        )
    if isinstance(value, int | float):
        params.append(value)
        return (
            f"coalesce(CASE WHEN jsonb_typeof(v) = 'number'"
            f" THEN v::numeric {cmp} %s::numeric END, false)"
        )
    if value is None:
        return "false"  # SQLite's comparison with NULL is never true
    params.append(value)
    return f"(jsonb_typeof(v) = 'string' AND (v #>> '{{}}') COLLATE \"C\" {cmp} %s)"
