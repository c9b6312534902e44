"""A lexical leg's rows scored with a scope's own BM25 constants.

FTS5's ``bm25()`` has k1 = 1.2 and b = 0.75 built in, and no other constants can be asked
of it. A scope may want others: a message is indexed with its speaker, the messages before
it, its facts and its reply, so one word of a conversation counts in several columns of
several rows, and with k1 = 1.2 a row that repeats a common word outranks one that holds
the question's rarer words once. On LoCoMo (10 samples, in-process) k1 0.5 and b 0.3 took
episode search recall@5 / @10 from 72.3 / 80.7 to 73.5 / 81.6 %, in both halves of the
samples alike (docs/benchmarks.md).

The rows stay the ones standard BM25 ranks best, whichever path found them (FTS5, the
in-memory copy, a filter's own rows): only their scores and order change, so a query ranks
the same whatever answered it. Scoring only those rows with the new constants ranked as
well as scoring every match (73.5 / 81.5 vs 73.5 / 81.6).

The statistics are exact from either source: the table's in-memory copy when one is
current (``TermIndex.scores``), or else the index itself, read in SQL through its
vocabulary tables (migration 16): a term's row count (``fts5vocab`` row), its occurrences
in the rows (``fts5vocab`` instance, one query per term, bounded to the rows), the rows'
lengths (``_docsize``) and the table's row count and token total (the averages record).
Both give the scores FTS5's ``bm25()`` returns at its own constants (tested).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from graphrecall.store.base import Bm25
from graphrecall.store.sqlite.migrations import postings_table, terms_table
from graphrecall.store.sqlite.term_index import Ints, bm25_idf, term_scores, varints

Read = Callable[[str, Sequence[Any]], list[Any]]
# Scores of rows by rowid (those holding any term), given the rowids.
Scorer = Callable[[Ints], dict[int, float]]
# The averages record's id in ``{table}_fts_data`` (fts5_index.c, FTS5_AVERAGES_ROWID).
AVERAGES_ID = 1


def rescored(
    found: Sequence[tuple[str, float]], rowids: Mapping[str, int], scores: Scorer
) -> list[tuple[str, float]]:
    """``found`` (uuid, score) with each row's score from ``scores``, best first, ties by
    uuid; rows gone from the table since they were found (no rowid) are dropped."""
    present = [(uuid, rowids[uuid]) for uuid, _ in found if uuid in rowids]
    if not present:
        return []
    scored = scores(np.array(sorted(r for _, r in present), dtype=np.int64))
    out = [(uuid, scored.get(rowid, 0.0)) for uuid, rowid in present]
    return sorted(out, key=lambda row: (-row[1], row[0]))


def index_scores(
    read: Read,
    table: str,
    weights: Mapping[str, float],
    phrases: Sequence[str],
    bm25: Bm25,
    rowids: Ints,
) -> dict[int, float]:
    """The score of each of ``rowids`` that holds any of ``phrases`` (tokens, in the
    order a MATCH expression names them), by the statistics of ``table``'s full-text
    index read in SQL: FTS5's ``bm25()`` with ``bm25``'s constants and ``weights`` (each
    column's weight, by name; 1 when not named)."""
    averages = read(f"SELECT block FROM {table}_fts_data WHERE id = ?", [AVERAGES_ID])
    if not averages or not len(rowids):
        return {}
    rows, *columns = varints(bytes(averages[0][0]))
    if not rows:
        return {}
    average = sum(columns) / rows
    marks = ", ".join(str(int(r)) for r in rowids)
    sized = read(f"SELECT id, sz FROM {table}_fts_docsize WHERE id IN ({marks})", [])
    numbers = {int(r[0]): i for i, r in enumerate(sized)}
    lengths = np.array([sum(varints(bytes(r[1]))) for r in sized], dtype=np.float64)
    totals = np.zeros(len(sized), dtype=np.float64)
    holding = np.zeros(len(sized), dtype=bool)
    for term in phrases:
        counted = read(f"SELECT doc FROM {terms_table(table)} WHERE term = ?", [term])
        if not counted or not counted[0][0]:
            continue
        freqs = np.zeros(len(sized), dtype=np.float64)
        for doc, column, count in read(
            f"SELECT doc, col, count(*) FROM {postings_table(table)}"
            f" WHERE term = ? AND doc IN ({marks}) GROUP BY doc, col",
            [term],
        ):
            at = numbers.get(int(doc))
            if at is not None:
                freqs[at] += weights.get(column, 1.0) * count
        held = freqs > 0
        holding |= held
        parts = term_scores(bm25_idf(rows, int(counted[0][0])), freqs, lengths, average, bm25)
        totals[held] += parts[held]
    return {rowid: float(totals[at]) for rowid, at in numbers.items() if holding[at]}
