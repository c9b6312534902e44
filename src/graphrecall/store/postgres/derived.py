"""What an episode is searched by beyond its own words, kept as the SQLite backend's
triggers keep it (``store/sqlite/migrations.py``, migrations 7, 10 and 13):

- ``search_context``: the start of the two messages before it in its thread;
- ``search_replies``: the start of the message after it (its reply);
- ``search_facts``: the facts linked to it, oldest first.

Their tokens must come from FTS5's tokenizer (``tokens.py``), which runs here, not in
PostgreSQL; so instead of triggers the store calls :meth:`Derived.refresh` in the
writing transaction with every episode a write touches (a message inserted, rewritten
or deleted touches its neighbours; a fact linked, unlinked or rewritten, its episodes),
recomputing the three columns and the row's lexical columns together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from psycopg.types.json import Jsonb

from graphrecall.domain.models import Episode
from graphrecall.domain.scopes import SCOPE_OF
from graphrecall.store.postgres.connection import Database
from graphrecall.store.postgres.tokens import Tokenizer

CONTEXT_MESSAGES = 2
CONTEXT_CHARS = 300
_SAID = f"substr(coalesce(p.role_name || ': ', '') || p.content, 1, {CONTEXT_CHARS})"
_RECOMPUTE = f"""
UPDATE episodes t SET
    search_context = CASE WHEN t.thread_uuid IS NULL THEN t.search_context ELSE
        (SELECT string_agg(said, E'\\n' ORDER BY at DESC) FROM
            (SELECT {_SAID} AS said, p.created_at AS at FROM episodes p
             WHERE p.thread_uuid = t.thread_uuid AND p.created_at < t.created_at
             ORDER BY p.created_at DESC LIMIT {CONTEXT_MESSAGES}) x) END,
    search_replies = CASE WHEN t.thread_uuid IS NULL THEN t.search_replies ELSE
        (SELECT {_SAID} FROM episodes p
         WHERE p.thread_uuid = t.thread_uuid AND p.created_at > t.created_at
         ORDER BY p.created_at LIMIT 1) END,
    search_facts = (SELECT string_agg(e.fact, E'\\n' ORDER BY e.created_at, e.uuid)
        FROM links l JOIN edges e ON e.graph_uuid = l.graph_uuid AND e.uuid = l.uuid
        WHERE l.graph_uuid = t.graph_uuid AND l.kind = 'edges' AND l.episode_uuid = t.uuid)
WHERE t.uuid = ANY(%s)
RETURNING t.uuid, {", ".join(f"t.{f.name}" for f in SCOPE_OF[Episode].text_fields)}
"""
# The messages whose derived columns hold a given one: the one before it (its reply)
# and the CONTEXT_MESSAGES after it (their context), in the same thread.
NEIGHBOURS = f"""
SELECT n.uuid FROM unnest(%s::text[], %s::text[]) AS m(thread, at)
CROSS JOIN LATERAL (
    (SELECT p.uuid FROM episodes p WHERE p.thread_uuid = m.thread AND p.created_at < m.at
     ORDER BY p.created_at DESC LIMIT 1)
    UNION ALL
    (SELECT p.uuid FROM episodes p WHERE p.thread_uuid = m.thread AND p.created_at > m.at
     ORDER BY p.created_at LIMIT {CONTEXT_MESSAGES})
) n
"""


class Derived:
    def __init__(self, db: Database, tokenizer: Tokenizer) -> None:
        self.db = db
        self._tokenizer = tokenizer
        self._fields = [f.name for f in SCOPE_OF[Episode].text_fields]

    def neighbours(self, messages: Iterable[tuple[str | None, str]]) -> set[str]:
        """Episodes whose context or reply holds a message at (thread, created_at)."""
        pairs = [(thread, at) for thread, at in messages if thread is not None]
        if not pairs:
            return set()
        rows = self.db.query(NEIGHBOURS, [[t for t, _ in pairs], [a for _, a in pairs]])
        return {r["uuid"] for r in rows}

    def of_edges(self, edge_uuids: Sequence[str]) -> set[str]:
        """Episodes linked to these edges (their facts)."""
        if not edge_uuids:
            return set()
        rows = self.db.query(
            "SELECT DISTINCT episode_uuid FROM links WHERE kind = 'edges' AND uuid = ANY(%s)",
            [list(edge_uuids)],
        )
        return {r["episode_uuid"] for r in rows}

    def refresh(self, uuids: Iterable[str]) -> None:
        """Recompute the derived columns, and the lexical columns, of these episodes."""
        wanted = sorted(set(uuids))
        if not wanted:
            return
        rows = self.db.query(_RECOMPUTE, [wanted])
        if not rows:
            return
        counts = self._tokenizer.counts([[r[f] for f in self._fields] for r in rows])
        self.db.executemany(
            "UPDATE episodes SET lex_len = %s, lex_tf = %s,"
            " lex_tsv = array_to_tsvector(%s::text[]) WHERE uuid = %s",
            [
                (length, Jsonb(tf), sorted(tf), r["uuid"])
                for r, (length, tf) in zip(rows, counts, strict=True)
            ],
        )
