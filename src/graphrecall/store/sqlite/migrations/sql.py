"""The SQL the migrations are built from: full-text index definitions, the triggers that
kept derived columns before migration 16 (kept because old migrations replay them), and
the names of the change logs."""

from __future__ import annotations

# How every full-text index splits and stems text (the query side: term_index.Tokenizer).
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"


def _fts_table(table: str, columns: str) -> str:
    """The external-content FTS5 index of ``table`` over ``columns`` (comma-separated)."""
    return (
        f"CREATE VIRTUAL TABLE {table}_fts USING fts5({columns}, content='{table}',"
        f" content_rowid='rowid', tokenize='{FTS_TOKENIZE}');\n"
    )


def _fts(tables: dict[str, tuple[str, ...]]) -> str:
    """An external-content FTS5 index per table, kept in step by triggers."""
    out = []
    for table, cols in tables.items():
        c = ", ".join(cols)
        new = ", ".join(f"new.{x}" for x in cols)
        old = ", ".join(f"old.{x}" for x in cols)
        fts = f"{table}_fts"
        delete = f"INSERT INTO {fts}({fts}, rowid, {c}) VALUES ('delete', old.rowid, {old});"
        insert = f"INSERT INTO {fts}(rowid, {c}) VALUES (new.rowid, {new});"
        out.append(
            _fts_table(table, c)
            + f"CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} BEGIN\n{insert}\nEND;\n"
            f"CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} BEGIN\n{delete}\nEND;\n"
            f"CREATE TRIGGER {fts}_update AFTER UPDATE OF {c} ON {table} BEGIN\n"
            f"{delete}\n{insert}\nEND;\n"
            f"INSERT INTO {fts}({fts}) VALUES ('rebuild');\n"
        )
    return "".join(out)


# Every row a full-text index adds or drops, in order (migration 14, term_index.py).
CHANGE_LOG = "text_index_changes"
# Every row written to a table with in-memory filter columns (filter_columns.py), by
# rowid, whichever connection wrote it: a copy catches up from here.
ROW_LOG = "row_changes"
# How migrations 7 and 13 filled ``search_context`` and ``search_replies`` of existing
# episodes (the last CONTEXT_MESSAGES messages before it in its thread, CONTEXT_CHARS
# characters of each): graph_model/indexed_text.py's definition, which writers use since 16.
CONTEXT_MESSAGES = 2
CONTEXT_CHARS = 300


def _previous_messages(row: str) -> str:
    """SQL for the start of the messages before ``row`` in its thread, newest first, one a
    line (None for a thread's first message)."""
    return (
        "(SELECT group_concat(said, char(10)) FROM"
        f" (SELECT substr(coalesce(p.role_name || ': ', '') || p.content, 1, {CONTEXT_CHARS})"
        f" AS said FROM episodes p WHERE p.thread_uuid = {row}.thread_uuid"
        f" AND p.created_at < {row}.created_at"
        f" ORDER BY p.created_at DESC LIMIT {CONTEXT_MESSAGES}))"
    )


def _next_message(row: str) -> str:
    """SQL for the start of the message after ``row`` in its thread: the reply (None for
    a thread's last message)."""
    return (
        f"(SELECT substr(coalesce(n.role_name || ': ', '') || n.content, 1, {CONTEXT_CHARS})"
        f" FROM episodes n WHERE n.thread_uuid = {row}.thread_uuid"
        f" AND n.created_at > {row}.created_at ORDER BY n.created_at LIMIT 1)"
    )


def _message_before(row: str) -> str:
    """SQL condition: the episode is the message before ``row`` in its thread."""
    return (
        "rowid = (SELECT p.rowid FROM episodes p WHERE p.thread_uuid = "
        f"{row}.thread_uuid AND p.created_at < {row}.created_at"
        " ORDER BY p.created_at DESC LIMIT 1)"
    )


def _messages_after(row: str) -> str:
    """SQL condition: the episode is one of the messages whose ``search_context`` holds
    ``row`` (the CONTEXT_MESSAGES after it in its thread)."""
    return (
        "rowid IN (SELECT n.rowid FROM episodes n WHERE n.thread_uuid = "
        f"{row}.thread_uuid AND n.created_at > {row}.created_at"
        f" ORDER BY n.created_at LIMIT {CONTEXT_MESSAGES})"
    )


def _reindex_episodes(where: str, assignment: str) -> str:
    """SQL that rewrites derived search columns of the episodes ``where`` selects and
    re-indexes them: the index's 'delete' must get the values it indexed, so the rows
    leave the index before the update and come back after it."""
    return (
        f"INSERT INTO episodes_fts(episodes_fts, rowid, {_EPISODE_FTS_COLUMNS})"
        f" SELECT 'delete', rowid, {_EPISODE_FTS_COLUMNS} FROM episodes WHERE {where};\n"
        f"UPDATE episodes SET {assignment} WHERE {where};\n"
        f"INSERT INTO episodes_fts(rowid, {_EPISODE_FTS_COLUMNS})"
        f" SELECT rowid, {_EPISODE_FTS_COLUMNS} FROM episodes WHERE {where};\n"
    )


def _facts_of_episode(row: str) -> str:
    """SQL for the facts extracted from episode ``row`` (oldest first, one a line; None
    when it has none): every edge linked to it, created or restated by it."""
    return (
        "(SELECT group_concat(fact, char(10)) FROM"
        " (SELECT e.fact AS fact FROM links l JOIN edges e ON e.uuid = l.uuid"
        f" WHERE l.kind = 'edges' AND l.episode_uuid = {row}.uuid"
        " ORDER BY e.created_at, e.uuid))"
    )


def _degree_of(row: str) -> str:
    """SQL for the degree of node ``row``: the live (unexpired) edges of its graph with it
    at either end, each end counted (a self-loop counts 2)."""
    ends = (
        f"(SELECT COUNT(*) FROM edges e WHERE e.graph_uuid = {row}.graph_uuid"
        f" AND e.{end} = {row}.uuid AND e.expired_at IS NULL)"
        for end in ("source_node_uuid", "target_node_uuid")
    )
    return f"({' + '.join(ends)})"


def _add_degree(row: str, sign: str) -> str:
    """SQL moving the degree of both ends of edge ``row`` (``new`` or ``old``) by ``sign``
    1, when the edge is live."""
    return "".join(
        f"UPDATE nodes SET degree = degree {sign} 1 WHERE {row}.expired_at IS NULL"
        f" AND uuid = {row}.{end} AND graph_uuid = {row}.graph_uuid;\n"
        for end in ("source_node_uuid", "target_node_uuid")
    )


_EPISODE_FTS_COLUMNS_V10 = "role_name, content, search_context, search_facts"
_EPISODE_FTS_COLUMNS = "role_name, content, search_context, search_facts, search_replies"
# Dropping the episode index and its triggers (before a migration recreates them).
_DROP_EPISODE_FTS = """
    DROP TRIGGER episodes_fts_insert;
    DROP TRIGGER episodes_fts_delete;
    DROP TRIGGER episodes_fts_update;
    DROP TABLE episodes_fts;
"""

# The triggers that computed search columns (migrations 10, 11, 13), and the episode
# index's, which re-indexed the neighbours of a message (dropped by migration 16).
_DROP_EPISODE_TRIGGERS = "".join(
    f"DROP TRIGGER {name};\n"
    for name in (
        "episodes_fts_insert",
        "episodes_fts_delete",
        "episodes_fts_update",
        "episodes_neighbours_update",
        "episode_facts_link",
        "episode_facts_unlink",
        "episode_facts_edge_insert",
        "episode_facts_edge_update",
        "nodes_degree_edge_insert",
        "nodes_degree_edge_delete",
        "nodes_degree_edge_update",
        "nodes_degree_node_insert",
        "nodes_degree_node_move",
    )
)


def _episode_index_row(action: str, row: str, columns: str) -> str:
    """SQL that takes trigger row ``row`` (``old``/``new``) out of the episode index
    (``action`` 'delete', with the values it was indexed with) or puts it in ('insert')."""
    values = ", ".join(f"{row}.{c.strip()}" for c in columns.split(","))
    if action == "delete":
        return (
            f"INSERT INTO episodes_fts(episodes_fts, rowid, {columns})"
            f" VALUES ('delete', {row}.rowid, {values});"
        )
    return f"INSERT INTO episodes_fts(rowid, {columns}) VALUES ({row}.rowid, {values});"


# Assignments that recompute an episode's reply and context (in an UPDATE of episodes).
_REPLY = f"search_replies = {_next_message('episodes')}"
_CONTEXT = f"search_context = {_previous_messages('episodes')}"


def _row_log_triggers(table: str, columns: str) -> str:
    """Triggers that log into ROW_LOG each row of ``table`` inserted, deleted, or updated
    in its uuid, its owner or ``columns``."""
    log = f"INSERT INTO {ROW_LOG}(tbl, row) VALUES ('{table}', {{}}.rowid);"
    watched = f"uuid, graph_uuid, {columns}"
    return (
        f"CREATE TRIGGER {table}_rows_insert AFTER INSERT ON {table} BEGIN"
        f" {log.format('new')} END;\n"
        f"CREATE TRIGGER {table}_rows_delete AFTER DELETE ON {table} BEGIN"
        f" {log.format('old')} END;\n"
        f"CREATE TRIGGER {table}_rows_update AFTER UPDATE OF {watched} ON {table} BEGIN"
        f" {log.format('new')} END;"
    )
