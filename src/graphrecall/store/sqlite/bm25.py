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
current (``TermIndex.scores``, ~0.3 ms a LoCoMo question), or else (while the copy is read
or caught up with, or inside a transaction) the index and the rows themselves
(:func:`sql_scores`): the table's row count and token total (FTS5's averages record), the
rows' lengths (``_docsize``), each term's row count (the store's count, kept up to 30 s,
which the lexical leg's plan has usually just asked for) and the terms' frequencies in the rows,
from the rows' own text tokenised as FTS5 does (``Tokenizer``, ~7 ms for 100 messages),
never from the terms' posting lists: a user's name is in every message of theirs, and
walking its list took 150-270 ms at 72k messages. Both give the scores FTS5's ``bm25()``
returns at its own constants (tested).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from graphrecall.domain.scopes import Bm25
from graphrecall.store.sqlite.term_index import Ints, Tokenizer, bm25_idf, term_scores, varints

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


def sql_scores(
    read: Read,
    tokenizer: Tokenizer,
    table: str,
    weights: Mapping[str, float],
    phrases: Sequence[str],
    hits: Sequence[int],
    bm25: Bm25,
    rowids: Ints,
) -> dict[int, float]:
    """The score of each of ``rowids`` that holds any of ``phrases`` (tokens, in the
    order a MATCH expression names them; ``hits``: how many rows of the table hold each),
    from ``table``'s full-text index and rows: FTS5's ``bm25()`` with ``bm25``'s
    constants and ``weights`` (each column of the index by name, in order, and its
    weight)."""
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
    names = list(weights)
    texts = read(f"SELECT rowid, {', '.join(names)} FROM {table} WHERE rowid IN ({marks})", [])
    freqs = np.zeros((len(phrases), len(sized)), dtype=np.float64)
    position = {p: i for i, p in reversed(list(enumerate(phrases)))}
    distinct = list(position)
    for term, doc, column in tokenizer.postings(names, [tuple(r) for r in texts], distinct):
        at = numbers.get(int(doc))
        if at is not None:
            freqs[position[term], at] += weights[column]
    for i, phrase in enumerate(phrases):  # a term named twice counts twice, as in bm25()
        freqs[i] = freqs[position[phrase]]
    totals = np.zeros(len(sized), dtype=np.float64)
    holding = np.zeros(len(sized), dtype=bool)
    for i, count in enumerate(hits):
        if not count:
            continue
        held = freqs[i] > 0
        holding |= held
        parts = term_scores(bm25_idf(rows, count), freqs[i], lengths, average, bm25)
        totals[held] += parts[held]
    return {rowid: float(totals[at]) for rowid, at in numbers.items() if holding[at]}
