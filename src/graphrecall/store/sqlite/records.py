"""Records: written, read, filtered, counted and listed a page at a time."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from graphrecall.domain.models import ApiKey, Episode, Page, PageRequest, Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TENANT_KEYED
from graphrecall.store import keyset as keysets
from graphrecall.store.base import R, RecordRows, Scope
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.graph import Graphs


class Records(RecordRows):
    def __init__(
        self, db: Database, graphs: Graphs, vectors_removed: Callable[[str], None]
    ) -> None:
        self.db = db
        # Told of every edge write (their adjacency is cached) and of removed vectors.
        self._graphs = graphs
        self._vectors_removed = vectors_removed

    def insert(self, records: Sequence[Record]) -> None:
        with self.db.transaction():
            self._graphs.edges_changed(records)
            for record in records:
                row = rowmap.to_row(record)
                cols = ",".join(row)
                marks = ",".join("?" * len(row))
                self.db.conn.execute(
                    f"INSERT INTO {rowmap.table(type(record))} ({cols}) VALUES ({marks})",
                    list(row.values()),
                )

    def update(self, record: Record, fields: Collection[str] | None = None) -> None:
        row = rowmap.to_row(record)
        uuid = row.pop("uuid")
        if fields is None:
            fields = [f for f in row if f not in record.derived_fields]
        elif unknown := set(fields) - set(row):
            raise ValueError(f"{type(record).__name__} has no field {sorted(unknown)[0]!r}")
        row = {f: row[f] for f in fields}
        if not row:
            return
        assignments = ",".join(f"{col} = ?" for col in row)
        where, params = "uuid = ?", [uuid]
        if (tenant := tenant_field(type(record))) is not None:
            # A memory's id is unique in its space only (migration 18).
            where, params = f"uuid = ? AND {tenant} = ?", [uuid, getattr(record, tenant)]
        with self.db.transaction():
            self._graphs.edges_changed([record])
            self.db.conn.execute(
                f"UPDATE {rowmap.table(type(record))} SET {assignments} WHERE {where}",
                [*row.values(), *params],
            )

    def get(self, kind: type[R], uuid: str, scope: Scope | None = None) -> R | None:
        where, params = rowmap.where(kind, {**(scope or {}), "uuid": uuid})
        rows = self.db.query(f"SELECT * FROM {rowmap.table(kind)} t WHERE {where}", params)
        return rowmap.from_row(kind, rows[0]) if rows else None

    def find(
        self,
        kind: type[R],
        scope: Scope,
        *,
        where: Predicate | None = None,
        order_by: str = "uuid",
        limit: int | None = None,
        descending: bool = False,
    ) -> list[R]:
        if order_by not in kind.model_fields:
            raise ValueError(f"cannot order {kind.__name__} by {order_by!r}")
        sql_where, params = rowmap.where(kind, scope, where)
        if rowmap.matches_nothing(scope):
            return []
        sql = f"SELECT * FROM {rowmap.table(kind)} t WHERE {sql_where}"
        if limit is None:
            # Every match is returned, so sort here: an ORDER BY lets the planner walk the
            # (graph_uuid, uuid) index to skip the sort, scanning a whole graph's edges
            # when an equality index would find the few matches (25 ms at 100k facts).
            rows = self.db.query(sql, params)
            rows.sort(key=lambda r: (r[order_by] is not None, r[order_by], r["uuid"]))
            if descending:
                rows.reverse()
            return [rowmap.from_row(kind, row) for row in rows]
        d = " DESC" if descending else ""
        sql += f" ORDER BY t.{order_by}{d}, t.uuid{d} LIMIT {int(limit)}"
        return [rowmap.from_row(kind, row) for row in self.db.query(sql, params)]

    def count(self, kind: type[R], scope: Scope, where: Predicate | None = None) -> int:
        sql_where, params = rowmap.where(kind, scope, where)
        rows = self.db.query(
            f"SELECT COUNT(*) FROM {rowmap.table(kind)} t WHERE {sql_where}", params
        )
        return int(rows[0][0])

    def matching(
        self, kind: type[Record], scope: Scope, uuids: Sequence[str], where: Predicate
    ) -> set[str]:
        sql_where, params = rowmap.where(kind, scope, where)
        return rowmap.passing(self.db, kind, sql_where, params, uuids)

    def count_by(
        self, kind: type[R], field: str, scope: Scope, where: Predicate | None = None
    ) -> dict[Any, int]:
        if field not in kind.model_fields:
            raise ValueError(f"{kind.__name__} has no field {field!r}")
        sql_where, params = rowmap.where(kind, scope, where)
        rows = self.db.query(
            f"SELECT t.{field}, COUNT(*) FROM {rowmap.table(kind)} t WHERE {sql_where}"
            f" GROUP BY t.{field}",
            params,
        )
        return {r[0]: int(r[1]) for r in rows}

    def delete(self, kind: type[R], scope: Scope) -> int:
        where, params = rowmap.where(kind, scope)
        table = rowmap.table(kind)
        with self.db.transaction():
            self._graphs.all_changed()  # deleting any record may cascade to edges
            # By rowid, and a memory's vectors by its space too: its id is unique in its
            # space only (migration 18), so another space's memory may share it.
            tenant = tenant_field(kind)
            owner = f"t.{tenant}" if tenant is not None else "NULL"
            found = self.db.conn.execute(
                f"SELECT t.rowid, t.uuid, {owner} FROM {table} t WHERE {where}", params
            ).fetchall()
            uuids = [r[1] for r in found]
            for start in range(0, len(found), 500):
                chunk = found[start : start + 500]
                marks = ",".join("?" * len(chunk))
                self.db.conn.execute(
                    f"DELETE FROM {table} WHERE rowid IN ({marks})", [r[0] for r in chunk]
                )
                for owner_uuid, ids in _by_owner(chunk).items():
                    marks = ",".join("?" * len(ids))
                    also = "" if owner_uuid is None else " AND owner_uuid = ?"
                    self.db.conn.execute(
                        f"DELETE FROM embeddings WHERE kind = ? AND uuid IN ({marks}){also}",
                        [table, *ids, *([] if owner_uuid is None else [owner_uuid])],
                    )
                    also = "" if owner_uuid is None else " AND graph_uuid = ?"
                    self.db.conn.execute(
                        f"DELETE FROM links WHERE kind = ? AND uuid IN ({marks}){also}",
                        [table, *ids, *([] if owner_uuid is None else [owner_uuid])],
                    )
                if kind is Episode:
                    ids = [r[1] for r in chunk]
                    marks = ",".join("?" * len(ids))
                    self.db.conn.execute(f"DELETE FROM links WHERE episode_uuid IN ({marks})", ids)
            if uuids:
                self._vectors_removed(table)
        return len(uuids)

    def list_page(
        self,
        kind: type[R],
        scope: Scope,
        page: PageRequest,
        *,
        search: str | None = None,
        search_fields: Sequence[str] = (),
        where: Predicate | None = None,
    ) -> Page[R]:
        sort = keysets.sort_expression(kind, page.order_by)
        sql_where, params = rowmap.where(kind, scope, where)
        if search:
            ors = " OR ".join(f"t.{f} LIKE ? ESCAPE '\\'" for f in search_fields)
            sql_where += f" AND ({ors})"
            params += [keysets.like_pattern(search)] * len(search_fields)
        return keysets.read_page(
            kind,
            page,
            sort=sort,
            sql_where=sql_where,
            params=params,
            query=self.db.query,
            from_row=rowmap.from_row,
            mark="?",
            order_key=sort,
        )

    def setting(self, key: str, default: str) -> str:
        with self.db.transaction():
            self.db.conn.execute(
                "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", [key, default]
            )
            row = self.db.conn.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchone()
        return str(row[0])

    def put_setting(self, key: str, value: str) -> None:
        with self.db.transaction():
            self.db.conn.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    def find_api_key(self, key_hash: str) -> ApiKey | None:
        rows = self.db.query(
            "SELECT * FROM api_keys t WHERE key_hash = ? AND revoked_at IS NULL", [key_hash]
        )
        return rowmap.from_row(ApiKey, rows[0]) if rows else None


def tenant_field(kind: type[Record]) -> str | None:
    """The column a kind's ids are unique within, when they are not global."""
    return TENANT_KEYED.get(kind)


def _by_owner(rows: Sequence[Any]) -> dict[str | None, list[str]]:
    """(rowid, uuid, owner) rows -> the uuids of each owner."""
    out: dict[str | None, list[str]] = {}
    for _, uuid, owner in rows:
        out.setdefault(owner, []).append(uuid)
    return out
