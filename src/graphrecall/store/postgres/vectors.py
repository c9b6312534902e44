"""Embeddings per owner in a pgvector ``vector`` column, and the vector leg.

The leg is answered from the owner's in-memory matrix when this process holds a current
copy (``vector_copies.py``: the shared matrix search of ``store/matrix_search.py``, the
same exact scan and HNSW index as SQLite's). Otherwise pgvector answers: a copy being
read in the background, an owner too big to copy, a search inside a write transaction,
or an owner of :data:`ANN_MIN_ROWS` vectors or more under a filter no index bounds
(pgvector's iterative scan tests it inside the index walk).

On pgvector's path, an owner with fewer than :data:`ANN_MIN_ROWS` vectors of a kind (the
SQLite backend's threshold) is searched exactly: cosine (inner product of normalised
vectors) over its rows that pass the scope and filter, chosen in one query so a filter
never empties a page another match could fill. A bigger one goes through the kind's
HNSW index (migration 6), with pgvector >= 0.8's iterative scan so the owner and filter
conditions, tested as the index yields rows, still fill the page; when the index yields
fewer rows than asked (pgvector < 0.8, or a filter that passes few rows near the query),
the exact scan answers instead. Either way the chosen rows are scored again in numpy
float32, so scores (and the order among them, ties by uuid) are the SQLite backend's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TENANT_KEYED, owner_field
from graphrecall.store import base, matrix_search
from graphrecall.store.base import Scope, Vector
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.migrations import HNSW_DIMS, VECTOR_TABLES
from graphrecall.store.postgres.vector_copies import VectorCopies
from graphrecall.store.predicates import bounded, restricted
from graphrecall.store.vector_math import cosines

# Below this many vectors of a kind an owner is scanned exactly (as SQLite does): exact
# is then both fast and what the conformance suite's order rules need.
ANN_MIN_ROWS = 20_000
# The HNSW candidate list per query (pgvector's default is 40): at 100k facts 200 keeps
# the top 10 close to the exact one (docs/benchmarks.md). pgvector caps it at 1,000.
EF_SEARCH = 200
EF_SEARCH_MAX = 1_000


def to_text(vector: Vector) -> str:
    # repr of a float32 widened to float64 is exact, and pgvector reads it back exactly.
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def from_binary(data: bytes) -> Vector:
    """pgvector's binary form: dimensions (int16), unused (int16), then float32s, all
    big-endian: the stored floats exactly, with no text to render or parse."""
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


class Vectors(base.Vectors):
    def __init__(self, db: Database) -> None:
        self.db = db
        self._iterative: bool | None = None  # pgvector >= 0.8, found on first use
        self.copies = VectorCopies(db)

    def close(self) -> None:
        self.copies.close()

    def iterative_scans(self) -> bool:
        """Whether the server's pgvector has iterative index scans (0.8 and later)."""
        if self._iterative is None:
            rows = self.db.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            version = tuple(int(p) for p in str(rows[0]["extversion"]).split(".")[:2])
            self._iterative = version >= (0, 8)
        return self._iterative

    def count(self, kind: type[Record], owner_uuid: str) -> int:
        rows = self.db.query(
            "SELECT n FROM embedding_counts WHERE owner_uuid = %s AND kind = %s",
            [owner_uuid, rowmap.table(kind)],
        )
        return int(rows[0]["n"]) if rows else 0

    def set_embeddings(
        self, kind: type[Record], owner_uuid: str, items: Sequence[tuple[str, Vector]]
    ) -> None:
        table = rowmap.table(kind)
        uuids = [uuid for uuid, _ in items]
        # One vector per record, whichever owner it was stored under before; a memory's
        # id is unique in its space only, so another space's keeps its own.
        if kind in TENANT_KEYED:
            gone = "DELETE FROM embeddings WHERE owner_uuid = %s AND kind = %s AND uuid = ANY(%s)"
            gone_params: list[Any] = [owner_uuid, table, uuids]
        else:
            gone = "DELETE FROM embeddings WHERE kind = %s AND uuid = ANY(%s)"
            gone_params = [table, uuids]
        # DELETE and INSERT in one statement (one round trip). The INSERT reads the
        # DELETE's count first, so the old rows are gone before any new one is checked
        # against the primary key (an unread data-modifying CTE would run last). Each
        # sub-statement fires its own statement triggers once, with its own transition
        # table, as the two statements did: the count (migration 6) and the vector
        # change log (migration 14) see the same rows. The INSERT stays one statement:
        # the count trigger fires once, not once a row.
        with self.db.transaction():
            self.db.execute(
                f"WITH gone AS ({gone} RETURNING 1)"
                " INSERT INTO embeddings (kind, owner_uuid, uuid, embedding)"
                " SELECT %s, %s, u, v::vector FROM unnest(%s::text[], %s::text[]) AS x(u, v)"
                " WHERE (SELECT count(*) FROM gone) >= 0",
                [*gone_params, table, owner_uuid, uuids, [to_text(v) for _, v in items]],
            )

    def get_embeddings(
        self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]
    ) -> dict[str, Vector]:
        if not uuids:
            return {}
        rows = self._binary(
            "SELECT uuid, embedding AS v FROM embeddings"
            " WHERE owner_uuid = %s AND kind = %s AND uuid = ANY(%s)",
            [owner_uuid, rowmap.table(kind), list(uuids)],
        )
        return {r["uuid"]: from_binary(r["v"]) for r in rows}

    def delete_embeddings(self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]) -> None:
        with self.db.transaction():
            self.db.execute(
                "DELETE FROM embeddings WHERE owner_uuid = %s AND kind = %s AND uuid = ANY(%s)",
                [owner_uuid, rowmap.table(kind), list(uuids)],
            )

    def missing_embeddings(self, kind: type[Record], owner_uuid: str) -> list[str]:
        table = rowmap.table(kind)
        owner = owner_field(kind)
        rows = self.db.query(
            f"SELECT t.uuid FROM {table} t WHERE t.{owner} = %s AND NOT EXISTS"
            " (SELECT 1 FROM embeddings e WHERE e.owner_uuid = %s AND e.kind = %s"
            " AND e.uuid = t.uuid) ORDER BY t.uuid",
            [owner_uuid, owner_uuid, table],
        )
        return [r["uuid"] for r in rows]

    def prefetch_vectors(self, kind: type[Record], owner_uuid: str) -> None:
        self.copies.prefetch((rowmap.table(kind), owner_uuid))

    def vector_search(
        self,
        kind: type[Record],
        owner_uuid: str,
        vector: Vector,
        *,
        scope: Scope,
        where: Predicate | None = None,
        limit: int = 100,
    ) -> list[tuple[str, float]]:
        table = rowmap.table(kind)
        owner = owner_field(kind)
        sql_where, params = rowmap.where(kind, scope, where, self.db.text_collation)
        query = np.asarray(vector, dtype=np.float32)
        copy, rows_of_owner = self.copies.current((table, owner_uuid))
        narrowed = restricted(kind, scope, where)
        if narrowed and not bounded(where) and rows_of_owner >= ANN_MIN_ROWS:
            # A big owner under a filter no index bounds: pgvector's iterative scan tests
            # the filter as the index yields rows, in one statement; the copy would check
            # its nearest rows in SQL batch after batch (no in-memory filter columns here).
            copy = None
        if copy is not None:
            flt = None
            if narrowed:

                def allowed() -> list[str]:
                    found = self.db.query(f"SELECT t.uuid FROM {table} t WHERE {sql_where}", params)
                    return [r["uuid"] for r in found]

                def passing(some: list[str]) -> set[str]:
                    return rowmap.passing(self.db, kind, sql_where, params, some)

                flt = matrix_search.Filter(bounded(where), allowed, passing)
            uuids, index, matrix = copy
            return matrix_search.search(
                self.copies.ann, (table, owner_uuid), uuids, index, matrix, query, limit, flt
            )
        if where is None and dict(scope) == {owner: owner_uuid}:
            # The scope is the owner itself: its vectors are its rows' (they are deleted
            # with them), so the record table need not be joined.
            join = "SELECT e.uuid, e.embedding AS v FROM embeddings e WHERE e.owner_uuid = %s"
            join += " AND e.kind = %s"
            params = []
        else:
            join = (
                f"SELECT t.uuid, e.embedding AS v FROM embeddings e JOIN {table} t"
                f" ON t.{owner} = e.owner_uuid AND t.uuid = e.uuid"
                f" WHERE e.owner_uuid = %s AND e.kind = %s AND {sql_where}"
            )
        rows = None
        if table in VECTOR_TABLES and len(query) == HNSW_DIMS and rows_of_owner >= ANN_MIN_ROWS:
            rows = self._approximate(join, table, [owner_uuid, table, *params], query, limit)
        if rows is None:
            # The vectors go to text only for the rows kept: in one query level PostgreSQL
            # renders every candidate's before the sort (~0.5 ms per 10 rows here).
            rows = self._binary(
                f"{join} ORDER BY e.embedding <#> %s::vector, e.uuid LIMIT {int(limit)}",
                [owner_uuid, table, *params, to_text(query)],
            )
        if not rows:
            return []
        matrix = np.stack([from_binary(r["v"]) for r in rows])
        scores = cosines(matrix, query)  # as the copies and SQLite sum, to the last bit
        found = [(r["uuid"], float(s)) for r, s in zip(rows, scores.tolist(), strict=True)]
        return sorted(found, key=lambda x: (-x[1], x[0]))

    def _approximate(
        self, join: str, table: str, params: list[Any], query: Vector, limit: int
    ) -> list[dict[str, Any]] | None:
        """The nearest ``limit`` rows through the kind's HNSW index, or None when it
        yields fewer (then the exact scan answers). The kind and dimension conditions are
        spelled as the partial index's, literally, so the planner can use it."""
        ef = min(EF_SEARCH_MAX, max(EF_SEARCH, 2 * limit))
        sql = (
            f"{join} AND e.kind = '{table}' AND vector_dims(e.embedding) = {HNSW_DIMS}"
            f" ORDER BY e.embedding::vector({HNSW_DIMS}) <=> %s::vector({HNSW_DIMS})"
            f" LIMIT {int(limit)}"
        )
        iterative = self.iterative_scans()
        with self.db.connection() as conn, conn.transaction():
            # SET LOCAL: the settings end with this (or the enclosing) transaction.
            conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
            if iterative:
                # Order among the rows found is restored by the exact rescoring.
                conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            rows = conn.execute(sql, [*params, to_text(query)], binary=True).fetchall()
        return rows if len(rows) >= limit else None

    def _binary(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        """Rows in binary form (vectors as pgvector's bytes, read by ``from_binary``)."""
        with self.db.connection() as conn:
            return conn.execute(sql, params, binary=True).fetchall()
