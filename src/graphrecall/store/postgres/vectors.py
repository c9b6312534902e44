"""Embeddings per owner in a pgvector ``vector`` column, and the vector leg: exact
cosine (inner product of normalised vectors) over the owner's rows that pass the scope
and filter, chosen in one query so a filter never empties a page another match could
fill. The chosen rows are scored again in numpy float32, so scores (and the order among
them) are the SQLite backend's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import TENANT_KEYED, owner_field
from graphrecall.store import base
from graphrecall.store.base import Scope, Vector
from graphrecall.store.postgres import rows as rowmap
from graphrecall.store.postgres.connection import Database


def to_text(vector: Vector) -> str:
    # repr of a float32 widened to float64 is exact, and pgvector reads it back exactly.
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def from_text(text: str) -> Vector:
    return np.array([float(x) for x in text[1:-1].split(",")], dtype=np.float32)


class Vectors(base.Vectors):
    def __init__(self, db: Database) -> None:
        self.db = db

    def set_embeddings(
        self, kind: type[Record], owner_uuid: str, items: Sequence[tuple[str, Vector]]
    ) -> None:
        table = rowmap.table(kind)
        with self.db.transaction():
            # One vector per record, whichever owner it was stored under before; a
            # memory's id is unique in its space only, so another space's keeps its own.
            uuids = [uuid for uuid, _ in items]
            if kind in TENANT_KEYED:
                self.db.execute(
                    "DELETE FROM embeddings WHERE owner_uuid = %s AND kind = %s AND uuid = ANY(%s)",
                    [owner_uuid, table, uuids],
                )
            else:
                self.db.execute(
                    "DELETE FROM embeddings WHERE kind = %s AND uuid = ANY(%s)", [table, uuids]
                )
            self.db.executemany(
                "INSERT INTO embeddings (kind, owner_uuid, uuid, embedding)"
                " VALUES (%s, %s, %s, %s::vector)",
                [(table, owner_uuid, uuid, to_text(v)) for uuid, v in items],
            )

    def get_embeddings(
        self, kind: type[Record], owner_uuid: str, uuids: Sequence[str]
    ) -> dict[str, Vector]:
        if not uuids:
            return {}
        rows = self.db.query(
            "SELECT uuid, embedding::text AS v FROM embeddings"
            " WHERE owner_uuid = %s AND kind = %s AND uuid = ANY(%s)",
            [owner_uuid, rowmap.table(kind), list(uuids)],
        )
        return {r["uuid"]: from_text(r["v"]) for r in rows}

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
        rows = self.db.query(
            f"SELECT t.uuid, e.embedding::text AS v FROM embeddings e JOIN {table} t"
            f" ON t.{owner} = e.owner_uuid AND t.uuid = e.uuid"
            f" WHERE e.owner_uuid = %s AND e.kind = %s AND {sql_where}"
            f" ORDER BY e.embedding <#> %s::vector, t.uuid LIMIT {int(limit)}",
            [owner_uuid, table, *params, to_text(query)],
        )
        if not rows:
            return []
        matrix = np.stack([from_text(r["v"]) for r in rows])
        scores = matrix @ query
        found = [(r["uuid"], float(s)) for r, s in zip(rows, scores.tolist(), strict=True)]
        return sorted(found, key=lambda x: (-x[1], x[0]))
