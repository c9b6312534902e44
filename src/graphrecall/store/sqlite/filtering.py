"""A search's filter as a mask over an owner's rows, from the in-memory filter columns
(``filter_columns.py``), shared by the lexical and the vector leg."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from graphrecall.domain.models import Record
from graphrecall.domain.predicates import Predicate
from graphrecall.domain.scopes import owner_field
from graphrecall.store.base import Scope
from graphrecall.store.predicates import restricted
from graphrecall.store.sqlite import rows as rowmap
from graphrecall.store.sqlite.column_copies import FilterColumns
from graphrecall.store.sqlite.connection import Database
from graphrecall.store.sqlite.filter_columns import Columns, covers

__all__ = ["FilterCopies", "restricted"]


class FilterCopies:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.columns = FilterColumns(db.read)

    def close(self) -> None:
        self.columns.close()

    def copy(
        self, kind: type[Record], scope: Scope, where: Predicate | None
    ) -> tuple[Columns, npt.NDArray[np.bool_]] | None:
        """The in-memory filter columns of the owner in ``scope`` and the rows ``scope``
        and ``where`` allow, or None when SQL must filter (inside a transaction, no
        current copy, or a filter the columns do not cover)."""
        table, field = rowmap.table(kind), owner_field(kind)
        owner = scope.get(field)
        if self.db.in_transaction() or not isinstance(owner, str):
            return None
        # No copy is started for a filter it could not serve (a held one says so itself).
        copy = self.columns.current(
            table, field, owner, lambda: covers(table, field, owner, scope, where)
        )
        if copy is None:
            return None
        allowed = copy.allowed(scope, where)
        return None if allowed is None else (copy, allowed)
