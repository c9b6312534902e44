"""The schema's history: every migration, in order. Append new ones; never edit one that
has shipped (a database records how far it got in PRAGMA user_version)."""

from __future__ import annotations

from graphrecall.store.sqlite.migrations.sql import (
    _CONTEXT,
    _DROP_EPISODE_FTS,
    _DROP_EPISODE_TRIGGERS,
    _EPISODE_FTS_COLUMNS,
    _EPISODE_FTS_COLUMNS_V10,
    _REPLY,
    CHANGE_LOG,
    ROW_LOG,
    _add_degree,
    _degree_of,
    _episode_index_row,
    _facts_of_episode,
    _fts,
    _fts_table,
    _message_before,
    _messages_after,
    _next_message,
    _previous_messages,
    _reindex_episodes,
    _row_log_triggers,
)

MIGRATIONS: list[str] = [
    # 1: the foundation schema
    """
    CREATE TABLE projects (
        uuid TEXT PRIMARY KEY, name TEXT NOT NULL, default_time_zone TEXT,
        created_at TEXT NOT NULL
    );
    CREATE TABLE api_keys (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL REFERENCES projects(uuid),
        name TEXT, prefix TEXT NOT NULL, key_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL, revoked_at TEXT
    );
    CREATE TABLE users (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, graph_uuid TEXT NOT NULL,
        node_uuid TEXT NOT NULL, user_id TEXT, email TEXT, first_name TEXT, last_name TEXT,
        metadata TEXT,
        time_zone TEXT, disable_default_ontology INTEGER,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX users_user_id ON users(project_uuid, user_id) WHERE user_id IS NOT NULL;
    CREATE TABLE graphs (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, type TEXT NOT NULL,
        graph_id TEXT, name TEXT, description TEXT, time_zone TEXT, user_uuid TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE INDEX graphs_project ON graphs(project_uuid, uuid);
    CREATE TABLE threads (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, graph_uuid TEXT NOT NULL,
        user_uuid TEXT NOT NULL, thread_id TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE INDEX threads_project ON threads(project_uuid, user_uuid);
    CREATE TABLE episodes (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, content TEXT NOT NULL,
        source TEXT NOT NULL, source_description TEXT, role TEXT, role_name TEXT,
        metadata TEXT, reference_time TEXT NOT NULL, created_at TEXT NOT NULL,
        document_id TEXT, thread_uuid TEXT, processed INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX episodes_graph ON episodes(graph_uuid, uuid);
    CREATE INDEX episodes_thread ON episodes(thread_uuid, created_at);
    CREATE TABLE nodes (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, name TEXT NOT NULL,
        labels TEXT NOT NULL, summary TEXT, attributes TEXT, metadata TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE INDEX nodes_graph ON nodes(graph_uuid, uuid);
    CREATE INDEX nodes_name ON nodes(graph_uuid, name COLLATE NOCASE);
    CREATE TABLE edges (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, name TEXT NOT NULL,
        fact TEXT NOT NULL, source_node_uuid TEXT NOT NULL, target_node_uuid TEXT NOT NULL,
        attributes TEXT, metadata TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        valid_at TEXT, invalid_at TEXT, expired_at TEXT
    );
    CREATE INDEX edges_graph ON edges(graph_uuid, uuid);
    CREATE INDEX edges_source ON edges(graph_uuid, source_node_uuid);
    CREATE INDEX edges_target ON edges(graph_uuid, target_node_uuid);
    CREATE TABLE observations (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, name TEXT NOT NULL,
        labels TEXT NOT NULL, summary TEXT NOT NULL, attributes TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE INDEX observations_graph ON observations(graph_uuid, uuid);
    CREATE TABLE thread_summaries (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, thread_uuid TEXT NOT NULL,
        summary TEXT NOT NULL, created_at TEXT NOT NULL, last_summarized_at TEXT,
        last_summarized_episode_valid_at TEXT
    );
    CREATE INDEX thread_summaries_graph ON thread_summaries(graph_uuid, uuid);
    CREATE TABLE tasks (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, graph_uuid TEXT, type TEXT NOT NULL,
        status TEXT NOT NULL, stage TEXT, payload TEXT NOT NULL, result TEXT, error TEXT,
        created_at TEXT NOT NULL, started_at TEXT, updated_at TEXT NOT NULL, completed_at TEXT
    );
    CREATE INDEX tasks_status ON tasks(status, created_at);
    CREATE INDEX tasks_project ON tasks(project_uuid, uuid);
    -- provenance: an episode mentions a node / supports an edge or observation
    CREATE TABLE links (
        kind TEXT NOT NULL, graph_uuid TEXT NOT NULL, uuid TEXT NOT NULL,
        episode_uuid TEXT NOT NULL, PRIMARY KEY (kind, uuid, episode_uuid)
    ) WITHOUT ROWID;
    CREATE INDEX links_episode ON links(kind, episode_uuid);
    CREATE TABLE embeddings (
        kind TEXT NOT NULL, uuid TEXT NOT NULL, owner_uuid TEXT NOT NULL,
        vector BLOB NOT NULL, PRIMARY KEY (kind, uuid)
    ) WITHOUT ROWID;
    CREATE INDEX embeddings_owner ON embeddings(kind, owner_uuid);
    """,
    # 2: full-text indexes (FTS5 BM25, Porter stemming) kept in step by triggers, the
    # embedding version counters that invalidate in-memory vector matrices, search cursors,
    # and a per-database secret that signs cursors.
    _fts(
        {
            "episodes": ("content",),
            "nodes": ("name", "summary"),
            "edges": ("fact",),
            "observations": ("name", "summary"),
            "thread_summaries": ("summary",),
        }
    )
    + """
    CREATE TABLE embedding_versions (
        kind TEXT NOT NULL, owner_uuid TEXT NOT NULL, version INTEGER NOT NULL,
        PRIMARY KEY (kind, owner_uuid)
    ) WITHOUT ROWID;
    CREATE TABLE search_cursors (
        token TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, fingerprint TEXT NOT NULL,
        results TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL
    );
    CREATE INDEX search_cursors_expiry ON search_cursors(expires_at);
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # 3: reserved for the Memory Engine face (memories, spaces)
    """
    CREATE TABLE spaces (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, slug TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL, created_at TEXT NOT NULL
    );
    CREATE INDEX spaces_project ON spaces(project_uuid, uuid);
    CREATE TABLE memories (
        uuid TEXT PRIMARY KEY, space_uuid TEXT NOT NULL, content TEXT NOT NULL,
        meta TEXT NOT NULL, tree TEXT NOT NULL, name TEXT,
        temporal_start TEXT, temporal_end TEXT, version INTEGER NOT NULL,
        version_hash TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT
    );
    CREATE INDEX memories_space ON memories(space_uuid, uuid);
    CREATE INDEX memories_tree ON memories(space_uuid, tree);
    CREATE INDEX memories_temporal ON memories(space_uuid, temporal_start)
        WHERE temporal_start IS NOT NULL;
    CREATE UNIQUE INDEX memories_name ON memories(space_uuid, tree, name)
        WHERE name IS NOT NULL;
    CREATE TABLE memory_events (
        uuid TEXT PRIMARY KEY, space_uuid TEXT NOT NULL, memory_uuid TEXT NOT NULL,
        at TEXT NOT NULL, operation TEXT NOT NULL, operation_id TEXT NOT NULL,
        cause TEXT NOT NULL, actor TEXT NOT NULL, content TEXT NOT NULL, meta TEXT NOT NULL,
        tree TEXT NOT NULL, name TEXT, temporal_start TEXT, temporal_end TEXT,
        version INTEGER NOT NULL, version_hash TEXT NOT NULL
    );
    CREATE INDEX memory_events_space ON memory_events(space_uuid, uuid);
    CREATE INDEX memory_events_memory ON memory_events(memory_uuid, version);
    CREATE INDEX memory_events_operation ON memory_events(space_uuid, operation_id);
    """
    + _fts({"memories": ("content",)}),
    # 4: the ingestion pipeline: ontologies of graphs and projects, and indexes for the
    # live-fact lookups of fact resolution and thread summaries.
    """
    CREATE TABLE ontologies (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, owner_type TEXT NOT NULL,
        data TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE INDEX edges_live ON edges(graph_uuid, source_node_uuid, name)
        WHERE expired_at IS NULL;
    CREATE INDEX episodes_thread_graph ON episodes(graph_uuid, thread_uuid);
    """,
    # 5: reserved for get_context (context templates)
    """
    CREATE TABLE context_templates (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, name TEXT NOT NULL,
        template TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX context_templates_name ON context_templates(project_uuid, name);
    -- time windows of get_context: facts by when they became / stopped being true
    CREATE INDEX edges_valid_time ON edges(graph_uuid, valid_at, created_at);
    CREATE INDEX edges_invalid_time ON edges(graph_uuid, invalid_at);
    """,
    # 6: a message's speaker is part of what it says ("When did Caroline ..." must match
    # Caroline's "I went to ..."): the episode index covers role_name as well as content.
    _DROP_EPISODE_FTS + _fts({"episodes": ("role_name", "content")}),
    # 7: contextual retrieval. A chat message is indexed with the exchange it answers, so
    # "5 years already!" is found by "How long has Mel been married?" through the question
    # it replies to. ``search_context`` holds the start of the two previous messages of
    # the same thread; the trigger fills it at insert (stored, so the index's 'delete'
    # always gets the values it indexed). Its column weighs half (``domain/scopes.py``).
    _DROP_EPISODE_FTS
    + """
    ALTER TABLE episodes ADD COLUMN search_context TEXT;
    """
    + f"""
    UPDATE episodes SET search_context = {_previous_messages("episodes")}
    WHERE thread_uuid IS NOT NULL;
    {_fts_table("episodes", "role_name, content, search_context")}
    CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    UPDATE episodes SET search_context = {_previous_messages("new")}
    WHERE rowid = new.rowid AND new.thread_uuid IS NOT NULL;
    INSERT INTO episodes_fts(rowid, role_name, content, search_context)
    SELECT rowid, role_name, content, search_context FROM episodes WHERE rowid = new.rowid;
    END;
    CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, role_name, content, search_context)
    VALUES ('delete', old.rowid, old.role_name, old.content, old.search_context);
    END;
    CREATE TRIGGER episodes_fts_update AFTER UPDATE OF role_name, content ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, role_name, content, search_context)
    VALUES ('delete', old.rowid, old.role_name, old.content, old.search_context);
    INSERT INTO episodes_fts(rowid, role_name, content, search_context)
    VALUES (new.rowid, new.role_name, new.content, new.search_context);
    END;
    INSERT INTO episodes_fts(episodes_fts) VALUES ('rebuild');
    """,
    # 8: a node's newest facts straight from an index (node summaries, per ingested fact):
    # without created_at in the endpoint indexes the planner scanned the graph's edges
    # (80 ms a summary at 100k facts).
    """
    DROP INDEX edges_source;
    DROP INDEX edges_target;
    CREATE INDEX edges_source ON edges(graph_uuid, source_node_uuid, created_at, uuid);
    CREATE INDEX edges_target ON edges(graph_uuid, target_node_uuid, created_at, uuid);
    """,
    # 9: vectors in a rowid table. In the WITHOUT ROWID table each ~1.6 KB row overflowed
    # the ~1 KB an index-organised page keeps inline, so every vector took a 4 KB overflow
    # page of its own (4.7 KB per 1.5 KB vector, 77 % of the database at 100k facts).
    """
    CREATE TABLE embeddings_v9 (
        kind TEXT NOT NULL, uuid TEXT NOT NULL, owner_uuid TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    INSERT INTO embeddings_v9 (kind, uuid, owner_uuid, vector)
        SELECT kind, uuid, owner_uuid, vector FROM embeddings;
    DROP TABLE embeddings;
    ALTER TABLE embeddings_v9 RENAME TO embeddings;
    CREATE UNIQUE INDEX embeddings_key ON embeddings(kind, uuid);
    CREATE INDEX embeddings_owner ON embeddings(kind, owner_uuid);
    """,
    # 10: document expansion. A message is also indexed with the facts extracted from it
    # ("I went to a LGBTQ support group yesterday" with "Caroline went to a LGBTQ support
    # group"): the facts name their entities and restate first-person speech in the third
    # person, the way questions ask. ``search_facts`` is kept by triggers on the
    # provenance links (a fact created or restated by the episode, a link removed, an
    # edge's fact rewritten), so every writer of links keeps it right. Weight 1.
    _DROP_EPISODE_FTS
    + """
    ALTER TABLE episodes ADD COLUMN search_facts TEXT;
    """
    + f"""
    UPDATE episodes SET search_facts = {_facts_of_episode("episodes")};
    {_fts_table("episodes", _EPISODE_FTS_COLUMNS_V10)}
    CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    UPDATE episodes SET search_context = {_previous_messages("new")}
    WHERE rowid = new.rowid AND new.thread_uuid IS NOT NULL;
    INSERT INTO episodes_fts(rowid, {_EPISODE_FTS_COLUMNS_V10})
    SELECT rowid, {_EPISODE_FTS_COLUMNS_V10} FROM episodes WHERE rowid = new.rowid;
    END;
    CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    {_episode_index_row("delete", "old", _EPISODE_FTS_COLUMNS_V10)}
    END;
    CREATE TRIGGER episodes_fts_update AFTER UPDATE OF role_name, content, search_facts
    ON episodes BEGIN
    {_episode_index_row("delete", "old", _EPISODE_FTS_COLUMNS_V10)}
    {_episode_index_row("insert", "new", _EPISODE_FTS_COLUMNS_V10)}
    END;
    INSERT INTO episodes_fts(episodes_fts) VALUES ('rebuild');
    CREATE TRIGGER episode_facts_link AFTER INSERT ON links WHEN new.kind = 'edges' BEGIN
    UPDATE episodes SET search_facts = {_facts_of_episode("episodes")}
    WHERE uuid = new.episode_uuid;
    END;
    CREATE TRIGGER episode_facts_unlink AFTER DELETE ON links WHEN old.kind = 'edges' BEGIN
    UPDATE episodes SET search_facts = {_facts_of_episode("episodes")}
    WHERE uuid = old.episode_uuid;
    END;
    CREATE TRIGGER episode_facts_edge_insert AFTER INSERT ON edges BEGIN
    UPDATE episodes SET search_facts = {_facts_of_episode("episodes")}
    WHERE uuid IN (SELECT episode_uuid FROM links WHERE kind = 'edges' AND uuid = new.uuid);
    END;
    CREATE TRIGGER episode_facts_edge_update AFTER UPDATE OF fact ON edges BEGIN
    UPDATE episodes SET search_facts = {_facts_of_episode("episodes")}
    WHERE uuid IN (SELECT episode_uuid FROM links WHERE kind = 'edges' AND uuid = new.uuid);
    END;
    """,
    # 11: a node's degree kept in a column, so listing nodes by degree reads an index
    # instead of counting every node's edges to sort them (0.3 s a page at 100k facts).
    # Triggers on edges move the degree of both ends as an edge is inserted, deleted,
    # expired or brought back, or moved to other ends or another graph; a node inserted
    # after edges that name it counts them. The column is no model field: record writes
    # (``_to_row``) never set it. (Edges must not be written with INSERT OR REPLACE: the
    # row it replaces goes without firing the delete trigger.)
    f"""
    ALTER TABLE nodes ADD COLUMN degree INTEGER NOT NULL DEFAULT 0;
    UPDATE nodes SET degree = {_degree_of("nodes")};
    CREATE INDEX nodes_degree ON nodes(graph_uuid, degree, uuid);
    CREATE TRIGGER nodes_degree_edge_insert AFTER INSERT ON edges
    WHEN new.expired_at IS NULL BEGIN
    {_add_degree("new", "+")}END;
    CREATE TRIGGER nodes_degree_edge_delete AFTER DELETE ON edges
    WHEN old.expired_at IS NULL BEGIN
    {_add_degree("old", "-")}END;
    CREATE TRIGGER nodes_degree_edge_update
    AFTER UPDATE OF expired_at, source_node_uuid, target_node_uuid, graph_uuid ON edges
    WHEN (old.expired_at IS NULL) <> (new.expired_at IS NULL)
        OR old.source_node_uuid IS NOT new.source_node_uuid
        OR old.target_node_uuid IS NOT new.target_node_uuid
        OR old.graph_uuid IS NOT new.graph_uuid BEGIN
    {_add_degree("old", "-")}{_add_degree("new", "+")}END;
    CREATE TRIGGER nodes_degree_node_insert AFTER INSERT ON nodes
    WHEN EXISTS (SELECT 1 FROM edges e WHERE e.graph_uuid = new.graph_uuid
        AND e.source_node_uuid = new.uuid AND e.expired_at IS NULL)
        OR EXISTS (SELECT 1 FROM edges e WHERE e.graph_uuid = new.graph_uuid
        AND e.target_node_uuid = new.uuid AND e.expired_at IS NULL) BEGIN
    UPDATE nodes SET degree = {_degree_of("new")} WHERE rowid = new.rowid;
    END;
    CREATE TRIGGER nodes_degree_node_move AFTER UPDATE OF uuid, graph_uuid ON nodes
    WHEN old.uuid IS NOT new.uuid OR old.graph_uuid IS NOT new.graph_uuid BEGIN
    UPDATE nodes SET degree = {_degree_of("new")} WHERE rowid = new.rowid;
    END;
    """,
    # 12: a memory's temporal range checked from the index. An overlap filter reads the
    # memories that start before the window ends; with the end in the index too, those that
    # ended before it began are skipped without reading their rows (memory.search meta +
    # temporal at 100k memories: 25 -> 6 ms for the count of matches).
    """
    DROP INDEX memories_temporal;
    CREATE INDEX memories_temporal ON memories(space_uuid, temporal_start, temporal_end)
        WHERE temporal_start IS NOT NULL;
    """,
    # 13: a message is also indexed with the start of its reply (``search_replies``,
    # weight 0.5): the reply often names what the message only alludes to ("Wow, your
    # pottery class sounds fun!"). LoCoMo evidence recall@10 78.6 -> 79.9 (docs/benchmarks.md).
    # The triggers keep every neighbour right: a new message is its predecessor's reply;
    # a message deleted or rewritten leaves its predecessor's reply and its successors'
    # context, so a deleted message's words are no longer found through its neighbours.
    _DROP_EPISODE_FTS
    + """
    ALTER TABLE episodes ADD COLUMN search_replies TEXT;
    """
    + f"""
    UPDATE episodes SET search_replies = {_next_message("episodes")}
    WHERE thread_uuid IS NOT NULL;
    {_fts_table("episodes", _EPISODE_FTS_COLUMNS)}
    CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    UPDATE episodes SET search_context = {_previous_messages("new")},
        search_replies = {_next_message("new")}
    WHERE rowid = new.rowid AND new.thread_uuid IS NOT NULL;
    INSERT INTO episodes_fts(rowid, {_EPISODE_FTS_COLUMNS})
    SELECT rowid, {_EPISODE_FTS_COLUMNS} FROM episodes WHERE rowid = new.rowid;
    {_reindex_episodes(_message_before("new"), _REPLY)}
    {_reindex_episodes(_messages_after("new"), _CONTEXT)}
    END;
    CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    {_episode_index_row("delete", "old", _EPISODE_FTS_COLUMNS)}
    {_reindex_episodes(_message_before("old"), _REPLY)}
    {_reindex_episodes(_messages_after("old"), _CONTEXT)}
    END;
    CREATE TRIGGER episodes_fts_update AFTER UPDATE OF role_name, content, search_facts
    ON episodes BEGIN
    {_episode_index_row("delete", "old", _EPISODE_FTS_COLUMNS)}
    {_episode_index_row("insert", "new", _EPISODE_FTS_COLUMNS)}
    END;
    CREATE TRIGGER episodes_neighbours_update AFTER UPDATE OF role_name, content ON episodes
    WHEN old.content IS NOT new.content OR old.role_name IS NOT new.role_name BEGIN
    {_reindex_episodes(_message_before("new"), _REPLY)}
    {_reindex_episodes(_messages_after("new"), _CONTEXT)}
    END;
    INSERT INTO episodes_fts(episodes_fts) VALUES ('rebuild');
    """,
    # 14: the change log of the full-text indexes: every row an index adds or drops, so
    # that an in-memory copy of the postings (term_index.py) catches up with writes
    # instead of being read again whole. Its triggers sit on the indexes' shadow tables
    # and are (re)made at every open (``ensure_change_log``).
    f"""
    CREATE TABLE {CHANGE_LOG} (
        seq INTEGER PRIMARY KEY,
        tbl TEXT NOT NULL,
        row INTEGER NOT NULL
    );
    """,
    # 15: the row log of the tables with in-memory filter columns: each row inserted,
    # deleted, or updated in a filtered column (filter_columns.COLUMNS, the owner, the
    # uuid), so that a copy catches up with any connection's writes (another process's
    # too) and never sees a rolled-back one.
    f"""
    CREATE TABLE {ROW_LOG} (
        seq INTEGER PRIMARY KEY,
        tbl TEXT NOT NULL,
        row INTEGER NOT NULL
    );
    {
        _row_log_triggers(
            "edges",
            "name, source_node_uuid, target_node_uuid, created_at,"
            " valid_at, invalid_at, expired_at",
        )
    }
    {_row_log_triggers("episodes", "thread_uuid, role, source, created_at")}
    {_row_log_triggers("nodes", "name, created_at")}
    """,
    # 16: what a record is searched by is computed above the store (graph_model/indexed_text.py,
    # graph_model/degree.py) and written as ordinary columns by the writers of episodes, edges,
    # links and nodes (graph_model/graph_writes.py): the triggers that computed an episode's
    # context, reply and facts and a node's degree go, their values stay. The episode
    # index's triggers only copy the columns, each of the five when it is written.
    _DROP_EPISODE_TRIGGERS
    + f"""
    CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    {_episode_index_row("insert", "new", _EPISODE_FTS_COLUMNS)}
    END;
    CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    {_episode_index_row("delete", "old", _EPISODE_FTS_COLUMNS)}
    END;
    CREATE TRIGGER episodes_fts_update AFTER UPDATE OF {_EPISODE_FTS_COLUMNS} ON episodes BEGIN
    {_episode_index_row("delete", "old", _EPISODE_FTS_COLUMNS)}
    {_episode_index_row("insert", "new", _EPISODE_FTS_COLUMNS)}
    END;
    """,
    # 17: task leases (queue.py). A claimed task is held by one worker process until
    # ``lease_expires`` (unix seconds); the holder renews it while working, and only an
    # expired lease is taken over.
    """
    ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
    ALTER TABLE tasks ADD COLUMN lease_expires REAL;
    """,
    # 18: a memory's id is unique in its space, not across every tenant: another space's
    # id is answered as a fresh one would be (a global key made ``memory.create`` an
    # oracle for ids in use elsewhere, issue 25). The table is rebuilt with its rowids, so
    # the full-text index (external content, by rowid) and its change log stay valid; a
    # vector is keyed by its owner too. The audit log's lookup of a memory is per space.
    """
    DROP TRIGGER memories_fts_insert;
    DROP TRIGGER memories_fts_delete;
    DROP TRIGGER memories_fts_update;
    CREATE TABLE memories_v18 (
        uuid TEXT NOT NULL, space_uuid TEXT NOT NULL, content TEXT NOT NULL,
        meta TEXT NOT NULL, tree TEXT NOT NULL, name TEXT,
        temporal_start TEXT, temporal_end TEXT, version INTEGER NOT NULL,
        version_hash TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT
    );
    INSERT INTO memories_v18 (rowid, uuid, space_uuid, content, meta, tree, name,
        temporal_start, temporal_end, version, version_hash, created_at, updated_at)
        SELECT rowid, uuid, space_uuid, content, meta, tree, name, temporal_start,
        temporal_end, version, version_hash, created_at, updated_at FROM memories;
    DROP TABLE memories;
    ALTER TABLE memories_v18 RENAME TO memories;
    CREATE UNIQUE INDEX memories_space ON memories(space_uuid, uuid);
    CREATE INDEX memories_tree ON memories(space_uuid, tree);
    CREATE INDEX memories_temporal ON memories(space_uuid, temporal_start, temporal_end)
        WHERE temporal_start IS NOT NULL;
    CREATE UNIQUE INDEX memories_name ON memories(space_uuid, tree, name)
        WHERE name IS NOT NULL;
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content)
    VALUES ('delete', old.rowid, old.content);
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content)
    VALUES ('delete', old.rowid, old.content);
    INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    DROP INDEX embeddings_key;
    CREATE UNIQUE INDEX embeddings_key ON embeddings(kind, uuid, owner_uuid);
    DROP INDEX memory_events_memory;
    CREATE INDEX memory_events_memory ON memory_events(space_uuid, memory_uuid, version);
    """,
    # 19: batches (services/graph/batches.py). Tasks get a priority: the queue claims live
    # work (0) before background work (1, a batch's items) and never claims a tracking
    # task (-1, the batch's own task, written by the work it tracks).
    """
    ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX tasks_pending ON tasks(priority, created_at, uuid) WHERE status = 'pending';
    CREATE TABLE batches (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, status TEXT NOT NULL,
        metadata TEXT, ignore_roles TEXT, strict_ontology INTEGER NOT NULL,
        item_count INTEGER NOT NULL, task_uuid TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE INDEX batches_project ON batches(project_uuid, uuid);
    CREATE TABLE batch_items (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, batch_uuid TEXT NOT NULL,
        sequence_index INTEGER NOT NULL, type TEXT NOT NULL, graph_uuid TEXT NOT NULL,
        user_uuid TEXT, thread_uuid TEXT, episode_uuid TEXT NOT NULL, task_uuid TEXT,
        data TEXT NOT NULL, created_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX batch_items_sequence ON batch_items(batch_uuid, sequence_index);
    CREATE INDEX batch_items_task ON batch_items(batch_uuid, task_uuid);
    """,
    # 20: instructions that steer user summaries, per project and per user.
    """
    CREATE TABLE summary_instructions (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, owner_type TEXT NOT NULL,
        data TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    """,
    # 21: debug logging (a project's switch), episodes' debug logs and ingestion traces
    # (ingest/trace.py), document summaries, and episodes by document.
    """
    CREATE TABLE debug_logging (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, enabled_until TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE episode_debug_logs (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, status TEXT NOT NULL,
        entries TEXT NOT NULL, error_message TEXT, started_at TEXT NOT NULL, completed_at TEXT
    );
    CREATE INDEX episode_debug_logs_graph ON episode_debug_logs(graph_uuid, uuid);
    CREATE TABLE ingestion_traces (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, episode_uuid TEXT NOT NULL,
        step TEXT NOT NULL, seq INTEGER NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL,
        output TEXT NOT NULL, error_message TEXT, created_at TEXT NOT NULL
    );
    CREATE INDEX ingestion_traces_episode ON ingestion_traces(graph_uuid, episode_uuid, seq);
    CREATE TABLE document_summaries (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, document_id TEXT NOT NULL,
        summary TEXT NOT NULL, created_at TEXT NOT NULL, last_summarized_at TEXT,
        last_summarized_episode_valid_at TEXT
    );
    CREATE UNIQUE INDEX document_summaries_document
        ON document_summaries(graph_uuid, document_id);
    CREATE INDEX episodes_document ON episodes(graph_uuid, document_id, created_at)
        WHERE document_id IS NOT NULL;
    """,
    # 22: hyperedges (services/graph/hyperedges.py): member edges carry their hyperedge's uuid.
    """
    ALTER TABLE edges ADD COLUMN hyperedge_uuid TEXT;
    CREATE INDEX edges_hyperedge ON edges(graph_uuid, hyperedge_uuid)
        WHERE hyperedge_uuid IS NOT NULL;
    CREATE TABLE hyperedges (
        uuid TEXT PRIMARY KEY, graph_uuid TEXT NOT NULL, created_at TEXT NOT NULL
    );
    CREATE INDEX hyperedges_graph ON hyperedges(graph_uuid, uuid);
    CREATE INDEX hyperedges_created ON hyperedges(graph_uuid, created_at, uuid);
    """,
    # 23: user groups and their members (services/graph/user_groups.py).
    """
    CREATE TABLE user_groups (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, name TEXT NOT NULL,
        description TEXT, version INTEGER NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE INDEX user_groups_project ON user_groups(project_uuid, uuid);
    CREATE TABLE user_group_members (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, group_uuid TEXT NOT NULL,
        user_uuid TEXT NOT NULL, created_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX user_group_members_pair ON user_group_members(group_uuid, user_uuid);
    CREATE INDEX user_group_members_user ON user_group_members(user_uuid, group_uuid);
    """,
    # 24: webhooks (ingest/webhooks.py): a project's endpoint, and the outbox of events.
    """
    CREATE TABLE webhook_endpoints (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, url TEXT NOT NULL,
        secret TEXT NOT NULL, events TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL
    );
    CREATE TABLE webhook_deliveries (
        uuid TEXT PRIMARY KEY, project_uuid TEXT NOT NULL, event_name TEXT NOT NULL,
        payload TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL,
        next_attempt_at TEXT NOT NULL, last_error TEXT, created_at TEXT NOT NULL,
        delivered_at TEXT
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
    CREATE INDEX webhook_deliveries_project ON webhook_deliveries(project_uuid, uuid);
    """,
    # 25: threads and graphs found by the developer's id (Zep v3 names them so on every
    # call: 60-90 ms a lookup among 100k threads without it). Not unique: the services
    # check, and a database made before may hold anything.
    """
    CREATE INDEX threads_thread_id ON threads(project_uuid, thread_id);
    CREATE INDEX graphs_graph_id ON graphs(project_uuid, graph_id);
    """,
    # 26: the embedder a store's vectors were made by (``settings.embedder_model``):
    # stores that already hold vectors were made by all-MiniLM-L6-v2; an empty one
    # records the configured embedder on its first start (runtime.py: store_embedder).
    """
    INSERT INTO settings (key, value)
        SELECT 'embedder_model', 'all-MiniLM-L6-v2' WHERE EXISTS (SELECT 1 FROM embeddings)
        ON CONFLICT (key) DO NOTHING;
    """,
]
