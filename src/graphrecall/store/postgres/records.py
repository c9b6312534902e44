"""Records: written, read, filtered, counted and listed a page at a time."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from psycopg.types.json import Jsonb

from graphrecall.domain.models import ApiKey, Episode, Page, PageRequest, Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import SCOPE_OF, TENANT_KEYED
from graphrecall.store import keyset as keysets
from graphrecall.store.base import R, RecordRows, Scope
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.tokens import Tokenizer


class Records(RecordRows):
    def __init__(self, db: Database, tokenizer: Tokenizer) -> None:
        self.db = db
        self._tokenizer = tokenizer

    def _rows(self, records: Sequence[Record]) -> list[dict[str, Any]]:
        """Rows with their lexical columns (kinds with a lexical index)."""
        rows = [rowmap.to_row(r) for r in records]
        by_kind: dict[type[Record], list[int]] = {}
        for at, record in enumerate(records):
            if type(record) in SCOPE_OF:
                by_kind.setdefault(type(record), []).append(at)
        for kind, ats in by_kind.items():
            fields = [f.name for f in SCOPE_OF[kind].text_fields]
            texts = [[rows[at].get(name) for name in fields] for at in ats]
            for at, (length, tf) in zip(ats, self._tokenizer.counts(texts), strict=True):
                rows[at]["lex_len"] = length
                rows[at]["lex_tf"] = Jsonb(tf)
                rows[at]["lex_tsv"] = sorted(tf)
        return rows

    def insert(self, records: Sequence[Record]) -> None:
        with self.db.transaction():
            # Rows of one table and columns go in one pipelined batch.
            batches: dict[str, list[dict[str, Any]]] = {}
            for record, row in zip(records, self._rows(records), strict=True):
                sql = _insert_sql(rowmap.table(type(record)), row)
                batches.setdefault(sql, []).append(row)
            for sql, rows in batches.items():
                self.db.executemany(sql, [list(row.values()) for row in rows])

    def update(self, record: Record, fields: Collection[str] | None = None) -> None:
        """Write the record's fields but its derived ones (or just ``fields``); the
        lexical columns are tokenised from the row as it will stand."""
        kind = type(record)
        table = rowmap.table(kind)
        names = (
            [f for f in fields if f != "uuid"]
            if fields is not None
            else [f for f in kind.model_fields if f != "uuid" and f not in kind.derived_fields]
        )
        for name in names:
            rowmap.field(kind, name)
        # A memory's id is unique within its space only (TENANT_KEYED).
        key, key_params = "uuid = %s", [record.uuid]
        if (tenant := TENANT_KEYED.get(kind)) is not None:
            key, key_params = f"uuid = %s AND {tenant} = %s", [record.uuid, getattr(record, tenant)]
        with self.db.transaction():
            if _indexed(kind, names):
                stored = self.db.query(f"SELECT * FROM {table} t WHERE {key}", key_params)
                if not stored:
                    return
                merged = rowmap.from_row(kind, stored[0]).model_copy(
                    update={n: getattr(record, n) for n in names}
                )
                row = self._rows([merged])[0]
                keep = {*names, "lex_len", "lex_tf", "lex_tsv"}
            else:
                row = rowmap.to_row(record)
                keep = set(names)
            row = {k: v for k, v in row.items() if k in keep}
            if not row:
                return
            assignments = ",".join(
                f"{col} = array_to_tsvector(%s::text[])" if col == "lex_tsv" else f"{col} = %s"
                for col in row
            )
            self.db.execute(
                f"UPDATE {table} SET {assignments} WHERE {key}", [*row.values(), *key_params]
            )

    def update_many(self, records: Sequence[Record], fields: Collection[str]) -> None:
        """One pipelined batch of updates per kind; when a field is in the lexical index,
        the rows are first read in one query (to tokenise each as it will stand)."""
        names = [f for f in fields if f != "uuid"]
        with self.db.transaction():
            batches: dict[type[Record], list[Record]] = {}
            for record in records:
                batches.setdefault(type(record), []).append(record)
            for kind, batch in batches.items():
                if kind in TENANT_KEYED:
                    # Keyed by (uuid, tenant): one keyed update each (no batched kind is).
                    for record in batch:
                        self.update(record, names)
                    continue
                for name in names:
                    rowmap.field(kind, name)
                if not names:
                    continue
                columns = list(names)
                if _indexed(kind, names):
                    # The rows as they will stand, read in one query and tokenised together.
                    table = rowmap.table(kind)
                    stored = {
                        r["uuid"]: rowmap.from_row(kind, r)
                        for r in self.db.query(
                            f"SELECT * FROM {table} t WHERE t.uuid = ANY(%s)",
                            [[r.uuid for r in batch]],
                        )
                    }
                    batch = [
                        stored[r.uuid].model_copy(update={n: getattr(r, n) for n in names})
                        for r in batch
                        if r.uuid in stored
                    ]
                    rows = self._rows(batch)
                    columns += ["lex_len", "lex_tf", "lex_tsv"]
                else:
                    rows = [rowmap.to_row(record) for record in batch]
                assignments = ",".join(
                    f"{c} = array_to_tsvector(%s::text[])" if c == "lex_tsv" else f"{c} = %s"
                    for c in columns
                )
                self.db.executemany(
                    f"UPDATE {rowmap.table(kind)} SET {assignments} WHERE uuid = %s",
                    [[row[c] for c in columns] + [row["uuid"]] for row in rows],
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
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        if rowmap.matches_nothing(scope):
            return []
        d = " DESC NULLS LAST" if descending else " NULLS FIRST"
        sql = (
            f"SELECT * FROM {rowmap.table(kind)} t WHERE {sql_where}"
            f" ORDER BY t.{order_by}{d}, t.uuid{' DESC' if descending else ''}"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [rowmap.from_row(kind, row) for row in self.db.query(sql, params)]

    def count(self, kind: type[R], scope: Scope, where: Predicate | None = None) -> int:
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        rows = self.db.query(
            f"SELECT count(*) AS n FROM {rowmap.table(kind)} t WHERE {sql_where}", params
        )
        return int(rows[0]["n"])

    def matching(
        self, kind: type[Record], scope: Scope, uuids: Sequence[str], where: Predicate
    ) -> set[str]:
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        return rowmap.passing(self.db, kind, sql_where, params, uuids)

    def count_by(
        self, kind: type[R], field: str, scope: Scope, where: Predicate | None = None
    ) -> dict[Any, int]:
        if field not in kind.model_fields:
            raise ValueError(f"{kind.__name__} has no field {field!r}")
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        rows = self.db.query(
            f"SELECT t.{field} AS k, count(*) AS n FROM {rowmap.table(kind)} t"
            f" WHERE {sql_where} GROUP BY t.{field}",
            params,
        )
        return {r["k"]: int(r["n"]) for r in rows}

    def delete(self, kind: type[R], scope: Scope) -> int:
        where, params = rowmap.where(kind, scope)
        table = rowmap.table(kind)
        with self.db.transaction():
            # A memory's vectors by its space too: its id is unique in its space only, so
            # another space's memory may share it.
            tenant = TENANT_KEYED.get(kind)
            owner = f"t.{tenant}" if tenant is not None else "NULL::text"
            gone = self.db.query(
                f"DELETE FROM {table} t WHERE {where} RETURNING t.uuid, {owner} AS owner", params
            )
            uuids = [r["uuid"] for r in gone]
            owners = [r["owner"] for r in gone]
            if uuids:
                self.db.execute(
                    "DELETE FROM embeddings e USING unnest(%s::text[], %s::text[]) AS g(u, o)"
                    " WHERE e.kind = %s AND e.uuid = g.u AND (g.o IS NULL OR e.owner_uuid = g.o)",
                    [uuids, owners, table],
                )
                self.db.execute(
                    "DELETE FROM links l USING unnest(%s::text[], %s::text[]) AS g(u, o)"
                    " WHERE l.kind = %s AND l.uuid = g.u AND (g.o IS NULL OR l.graph_uuid = g.o)",
                    [uuids, owners, table],
                )
                if kind is Episode:
                    self.db.execute("DELETE FROM links WHERE episode_uuid = ANY(%s)", [uuids])
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
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        if search:
            ors = " OR ".join(f"t.{rowmap.field(kind, f)} ILIKE %s" for f in search_fields)
            sql_where += f" AND ({ors or 'false'})"
            params += [keysets.like_pattern(search)] * len(search_fields)
        return keysets.read_page(
            kind,
            page,
            sort=sort,
            sql_where=sql_where,
            params=params,
            query=self.db.query,
            from_row=rowmap.from_row,
            mark="%s",
            order_key="_sort",
        )

    def setting(self, key: str, default: str) -> str:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO settings (key, value) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                [key, default],
            )
            row = self.db.query("SELECT value FROM settings WHERE key = %s", [key])
        return str(row[0]["value"])

    def put_setting(self, key: str, value: str) -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO settings (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    def find_api_key(self, key_hash: str) -> ApiKey | None:
        rows = self.db.query(
            "SELECT * FROM api_keys t WHERE key_hash = %s AND revoked_at IS NULL", [key_hash]
        )
        return rowmap.from_row(ApiKey, rows[0]) if rows else None


def _indexed(kind: type[Record], names: Collection[str]) -> bool:
    """Whether writing ``names`` of a ``kind`` record changes its lexical columns."""
    scope = SCOPE_OF.get(kind)
    return scope is not None and any(f.name in names for f in scope.text_fields)


def _insert_sql(table: str, row: dict[str, Any]) -> str:
    marks = ",".join("array_to_tsvector(%s::text[])" if col == "lex_tsv" else "%s" for col in row)
    return f"INSERT INTO {table} ({','.join(row)}) VALUES ({marks})"
