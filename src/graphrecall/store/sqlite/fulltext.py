"""How a query's terms become FTS5 MATCH expressions.

FTS5 has no early termination: ``ORDER BY bm25() LIMIT k`` scores every row that matches
any term. A term found in a large share of the rows (in a user's graph, the user's own
name is in a quarter of the facts) makes every query that names it score tens of
thousands of rows, ~50 ms at 100k facts, for the term that says least about relevance
(its IDF is small).

So, like Elasticsearch's ``cutoff_frequency`` ("common terms") query, a term found in at
least :data:`COMMON_SHARE` of the rows and :data:`COMMON_MIN_ROWS` rows, and in
:data:`COMMON_RATIO` times as many rows as the query's rarest term, is *common*. When a
query has both common and rarer terms, the rows ranked are those that match a rarer term,
split into two MATCH expressions so that each row still gets its full BM25 score over
every term of the query (BM25 sums per-term parts; a row with none of the common terms
gets 0 from them):

- ``(rare...) AND (common...)`` and
- ``(rare...) NOT (common...)``.

Rows that match only common terms (``(common...) NOT (rare...)``, the expensive part) are
ranked only when the rarer terms match fewer rows than were asked for; then the result is
exactly the plain query's, except that rows matching only terms found in half the table
or more are not ranked (FTS5 floors such a term's IDF at 1e-6, so they would score ~0).
Otherwise rows matching only common terms are left out, as Elasticsearch does. A query of
common terms only, or one against a small table, is matched as it is. Every score
returned is exactly that of the plain ``OR`` query (tested).

The fill ranks only the newest :data:`FILL_ROWS` rows in scope that match it (found
newest first, without scoring). Rows that share only the user's name with a query differ
in BM25 by their length alone, so ranking all of them ("Does Jordan Ellis have any
allergies?" when nothing mentions allergies: ~25k rows, ~95 ms at 100k facts) bought
nothing; preferring the newest is what a memory wants. At 100k facts the facts' lexical
leg's p95 went 36.2 -> 28.5 ms and its hit@10 stayed 0.30 (docs/search.md).

A big table's rows are ranked from an in-memory copy of its postings instead (term_index.py,
with the same plan and exactly the same scores); FTS5 runs the fill and every query the
copy cannot serve.
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


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def any_of(terms: Sequence[str]) -> str:
    return " OR ".join(quote(t) for t in terms)


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
        """The terms in the order the MATCH expressions of :attr:`first` name them."""
        return (*self.rare, *self.common)

    @property
    def first(self) -> list[str]:
        """MATCH expressions whose (disjoint) union is ranked first."""
        if not self.common:
            return [any_of(self.terms)]
        rare, common = any_of(self.rare), any_of(self.common)
        return [f"({rare}) AND ({common})", f"({rare}) NOT ({common})"]

    @property
    def fill(self) -> str | None:
        """Ranked too, and merged by score, only when :attr:`first` found fewer rows than
        asked."""
        if not self.weighty:
            return None
        return f"({any_of(self.weighty)}) NOT ({any_of(self.rare)})"


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
    # FTS5 floors the IDF of a term found in half the rows or more at 1e-6: rows matching
    # only such terms would score ~0, so they are not worth ranking as a fill.
    return MatchPlan(
        tuple(terms),
        rare=tuple(t for t in terms if t not in common),
        common=common,
        weighty=tuple(t for t in common if rows[t] < total_rows / 2),
    )
