"""At a size where the common-terms plan applies (a term in 5,000+ rows and 5 % of the
table, ``store/lexical/plan.py``), PostgreSQL ranks the same rows as SQLite: the rows of
the rarer terms first, and the newest rows of the common terms only as a fill."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from graphrecall.domain import predicates as p
from graphrecall.domain.ids import new_id
from graphrecall.domain.models import Edge
from graphrecall.domain.scopes import SCOPE_OF
from graphrecall.store import Store, open_store
from graphrecall.store.lexical.plan import COMMON_MIN_ROWS
from tests.store.conformance.records import at

FILLER = [
    "beach",
    "pottery",
    "camping",
    "painting",
    "sunrise",
    "hiking",
    "museum",
    "garden",
    "violin",
    "chess",
]


def test_common_terms_are_planned_as_on_sqlite(
    tmp_path: Path,
    pg_url: str,
    open_pg: Callable[[str], Store],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(9)
    graph, node_a, node_b = new_id(), new_id(), new_id()
    edges = []
    for i in range(2 * COMMON_MIN_ROWS + 1_500):
        words = rng.sample(FILLER, 3)
        if i % 2 == 0 or i % 7 == 0:
            words.append("Alice")  # common, in over half the rows (~57 %): no fill
        if i % 9 < 4:
            words.append("Melanie")  # common and weighty: in 4/9 of the rows (5,112)
        if i % 1_500 == 7:
            words.append("zebra")  # rare: 8 rows
        if i % 400 == 9:
            words.append("quokka")  # rare: 29 rows
        rng.shuffle(words)
        edges.append(
            Edge(
                uuid=new_id(),
                graph_uuid=graph,
                name="SAID",
                fact=" ".join(words),
                source_node_uuid=node_a,
                target_node_uuid=node_b,
                created_at=at(i),
                updated_at=at(i),
            )
        )
    sqlite = open_store(tmp_path / "common.db")
    pg = open_pg(pg_url)
    for store in (sqlite, pg):
        store.insert(edges)
    scope = {"graph_uuid": graph}
    queries = [
        ["Melanie", "zebra"],  # rare matches too few: the fill ranks Melanie's newest
        ["Melanie", "quokka"],  # enough rare matches: no fill
        ["Alice", "zebra"],  # Alice in over half the rows: no fill
        ["Alice", "Melanie", "zebra", "quokka"],
        ["Melanie", "beach"],
        ["zebra"],
    ]
    # A filter the copy's best rows are checked against in SQL (and the fill found in SQL).
    recent = p.Column("created_at", "gte", at(4_000))
    pg_text = getattr(pg, "_lexical")  # noqa: B009 (the store's lexical leg)
    try:
        # First from SQL (the table is too big for a search to read it), then from the
        # in-memory copy read in the background (store/postgres/term_index.py).
        for from_copy in (False, True):
            if from_copy:
                monkeypatch.undo()
                assert pg.maintenance.wait_until_warm(120)
            else:
                monkeypatch.setattr(pg_text.indexes, "refresh", lambda *args: None)
            for terms, where in [(q, None) for q in queries] + [(q, recent) for q in queries]:
                for bm25 in (SCOPE_OF[Edge].bm25, SCOPE_OF[Edge].bm25.__class__(k1=0.5, b=0.3)):
                    want = sqlite.text_search(Edge, scope, terms, where=where, limit=20, bm25=bm25)
                    got = pg.text_search(Edge, scope, terms, where=where, limit=20, bm25=bm25)
                    if terms[0] == "Melanie":
                        assert len(want) == 20  # filled, or enough rare matches
                    assert [u for u, _ in got] == [u for u, _ in want], terms
                    np.testing.assert_allclose(
                        [s for _, s in got], [s for _, s in want], rtol=1e-9, err_msg=str(terms)
                    )
            assert pg_text.indexes.has("edges") == from_copy
    finally:
        sqlite.close()
