"""Which of a query's rows are ranked: the common-terms plan.

Full-text indexes without early termination (FTS5, a tsvector GIN index) score every row
that matches any term. A term found in a large share of the rows (in a user's graph, the
user's own name is in a quarter of the facts) makes every query that names it score tens
of thousands of rows, for the term that says least about relevance (its IDF is small).

So, like Elasticsearch's ``cutoff_frequency`` ("common terms") query, a term found in at
least :data:`COMMON_SHARE` of the rows and :data:`COMMON_MIN_ROWS` rows, and in
:data:`COMMON_RATIO` times as many rows as the query's rarest term, is *common*. When a
query has both common and rarer terms, the rows ranked are those that match a rarer term
(with every row's full BM25 score over every term of the query: BM25 sums per-term parts;
a row with none of the common terms gets 0 from them):

- ``(rare...) AND (common...)`` and
- ``(rare...) NOT (common...)``.

Rows that match only common terms (``(common...) NOT (rare...)``, the expensive part: the
*fill*) are ranked only when the rarer terms match fewer rows than were asked for; then
the result is exactly the plain query's, except that rows matching only terms found in
half the table or more are not ranked (their IDF is floored at 1e-6, so they would score
~0). Otherwise rows matching only common terms are left out, as Elasticsearch does. A
query of common terms only, or one against a small table, is matched as it is.

The fill ranks only the newest :data:`FILL_ROWS` rows in scope that match it (found
newest first, without scoring): rows that share only the user's name with a query differ
in BM25 by their length alone, and preferring the newest is what a memory wants.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

# A term is common when it is in at least this share of the rows and this many rows.
COMMON_SHARE = 0.05
COMMON_MIN_ROWS = 5_000
# ... and in at least this many times as many rows as the query's rarest term.
COMMON_RATIO = 2.0
# The fill ranks at most this many rows: the newest that match it.
FILL_ROWS = 2_000


@dataclass(frozen=True)
class MatchPlan:
    """Which rows of a query's are ranked: those matching ``rare`` (all of ``terms`` when
    no term is common) first, and those matching only ``weighty`` common terms as a fill."""

    terms: tuple[str, ...]
    rare: tuple[str, ...]
    common: tuple[str, ...] = ()
    weighty: tuple[str, ...] = ()  # common terms found in under half the rows

    @property
    def phrases(self) -> tuple[str, ...]:
        """The terms in the order the first expressions name them (BM25 adds its parts
        in this order)."""
        return (*self.rare, *self.common)

    @property
    def has_fill(self) -> bool:
        """Whether rows matching only (weighty) common terms are ranked when the first
        rows are too few."""
        return bool(self.weighty)


def match_plan(terms: Sequence[str], total_rows: int, row_count: Callable[[str], int]) -> MatchPlan:
    """How to match ``terms``: ``total_rows`` is the table's row count, ``row_count(term)``
    how many rows match a term (only asked when the table is big enough)."""
    cutoff = max(COMMON_MIN_ROWS, COMMON_SHARE * total_rows)
    everything = MatchPlan(tuple(terms), tuple(terms))
    if len(terms) < 2 or total_rows < cutoff:
        return everything
    rows = {t: row_count(t) for t in terms}
    fewest = min(rows.values())
    # Common: frequent, and much more frequent than the query's rarest term.
    common = tuple(t for t in terms if rows[t] >= cutoff and rows[t] >= COMMON_RATIO * fewest)
    if not common:
        return everything
    # The IDF of a term found in half the rows or more is floored at 1e-6: rows matching
    # only such terms would score ~0, so they are not worth ranking as a fill.
    return MatchPlan(
        tuple(terms),
        rare=tuple(t for t in terms if t not in common),
        common=common,
        weighty=tuple(t for t in common if rows[t] < total_rows / 2),
    )
