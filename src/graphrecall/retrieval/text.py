"""Query text -> the terms the lexical leg matches (stop words removed).

The index stems with Porter (FTS5 ``porter`` tokenizer) and the same tokenizer stems the
query terms, so "moving" matches "moves". Stop words are dropped from the query so that a
record is a lexical candidate only through a genuine content-word match.
"""

from __future__ import annotations

import re

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves i'm i've i'd i'll you're you've he's she's it's we're they're don't doesn't
    didn't isn't aren't wasn't weren't won't can't couldn't shouldn't let's tell say said know
    """.split()  # noqa: SIM905
)
_TOKEN = re.compile(r"[\w']+", re.UNICODE)


def query_terms(query: str, *, max_terms: int = 32) -> list[str]:
    """Distinct lower-cased content words of ``query`` in order of first appearance."""
    seen: dict[str, None] = {}
    for raw in _TOKEN.findall(query.lower()):
        token = raw.strip("'")
        if token.endswith("'s"):
            token = token[:-2]
        if len(token) < 2 and not token.isdigit():
            continue
        if token in STOP_WORDS or token in seen:
            continue
        seen[token] = None
        if len(seen) >= max_terms:
            break
    return list(seen)
