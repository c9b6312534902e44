"""The PostgreSQL schema, as versioned migrations applied in order on open.

The version lives in ``schema_version``; migrations run under a transaction-level
advisory lock, so processes that start at once apply each one exactly once. Append new
migrations; never edit one that has shipped.

Every record table is keyed by its tenant column (a graph, a project or a memory space)
then uuid, so a deployment can shard by tenant. Text is the domain ``ctext`` (``text``
in the "C" collation): uuids and the fixed-width RFC 3339 timestamps then order byte by
byte, as the conformance rules (and SQLite's BINARY collation) require. JSON fields are
``jsonb``.

The lexical statistics BM25 needs (rows, tokens, each term's row count, per table, as
FTS5 keeps them for the whole table) are counted by triggers from each text row's
``lex_len`` and ``lex_tf``, in the writing transaction.
"""

from __future__ import annotations

from typing import Any

import psycopg

from graphrecall.domain.scopes import TEXT_TABLES

# Any constant shared by every graphrecall process: the key of the migration lock.
LOCK_KEY = 0x67726563616C6C  # "grecall"


def _lexical(table: str) -> str:
    """A text table's lexical columns, their GIN index and the statistics triggers."""
    return f"""
    ALTER TABLE {table} ADD COLUMN lex_tsv tsvector NOT NULL DEFAULT ''::tsvector;
    ALTER TABLE {table} ADD COLUMN lex_len integer NOT NULL DEFAULT 0;
    ALTER TABLE {table} ADD COLUMN lex_tf jsonb NOT NULL DEFAULT '{{}}'::jsonb;
    CREATE INDEX {table}_lex ON {table} USING gin (lex_tsv);
    CREATE TRIGGER {table}_lex_insert AFTER INSERT ON {table}
        FOR EACH ROW EXECUTE FUNCTION lexical_count();
    CREATE TRIGGER {table}_lex_delete AFTER DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION lexical_count();
    CREATE TRIGGER {table}_lex_update AFTER UPDATE OF lex_len, lex_tf ON {table}
        FOR EACH ROW WHEN (OLD.lex_tf IS DISTINCT FROM NEW.lex_tf
            OR OLD.lex_len IS DISTINCT FROM NEW.lex_len)
        EXECUTE FUNCTION lexical_count();
    """


LEXICAL_COUNT = """
    CREATE TABLE lexical_totals (
        tbl ctext PRIMARY KEY, rows bigint NOT NULL, tokens bigint NOT NULL
    );
    CREATE TABLE lexical_terms (
        tbl ctext NOT NULL, term ctext NOT NULL, rows bigint NOT NULL,
        PRIMARY KEY (tbl, term)
    );
    CREATE FUNCTION lexical_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE lexical_totals SET rows = rows - 1, tokens = tokens - OLD.lex_len
                WHERE tbl = TG_TABLE_NAME;
            UPDATE lexical_terms SET rows = rows - 1
                WHERE tbl = TG_TABLE_NAME
                AND term IN (SELECT jsonb_object_keys(OLD.lex_tf));
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO lexical_totals VALUES (TG_TABLE_NAME, 1, NEW.lex_len)
                ON CONFLICT (tbl) DO UPDATE SET rows = lexical_totals.rows + 1,
                tokens = lexical_totals.tokens + excluded.tokens;
            -- In term order: concurrent writers take the rows' locks in one order.
            INSERT INTO lexical_terms
                SELECT TG_TABLE_NAME, k, 1 FROM jsonb_object_keys(NEW.lex_tf) k ORDER BY k
                ON CONFLICT (tbl, term) DO UPDATE SET rows = lexical_terms.rows + 1;
        END IF;
        RETURN NULL;
    END $$;
"""

# Every text row added, rewritten (its ``lex_len`` or ``lex_tf``) or dropped, by its
# ``lex_seq``, numbered in commit order: the trigger takes a per-schema advisory lock
# before it draws the number and holds it to the commit, so no transaction can commit an
# entry numbered below one already visible (a reader that has seen entry N has seen
# every entry before it). The store's write transactions hold the write lock already, so
# this lock never waits for them; it orders any other writer too. A pruned log's floor
# (``lexical_log_floor``): a copy read before it is read again whole.
CHANGE_LOG_SQL = """
    CREATE TABLE lexical_changes (
        seq bigserial PRIMARY KEY, tbl ctext NOT NULL, row bigint NOT NULL
    );
    CREATE TABLE lexical_log_floor (seq bigint NOT NULL);
    INSERT INTO lexical_log_floor VALUES (0);
    CREATE FUNCTION lexical_log() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('graphrecall lexical log'),
            hashtext(TG_TABLE_SCHEMA));
        INSERT INTO lexical_changes (tbl, row) VALUES (TG_TABLE_NAME,
            CASE WHEN TG_OP = 'DELETE' THEN OLD.lex_seq ELSE NEW.lex_seq END);
        RETURN NULL;
    END $$;
"""


def _logged(table: str) -> str:
    """A text table's change-log triggers (as its statistics triggers fire), and the
    index that looks its changed rows up by ``lex_seq``."""
    return f"""
    CREATE INDEX {table}_lex_seq ON {table}(lex_seq);
    CREATE TRIGGER {table}_lex_log_insert AFTER INSERT ON {table}
        FOR EACH ROW EXECUTE FUNCTION lexical_log();
    CREATE TRIGGER {table}_lex_log_delete AFTER DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION lexical_log();
    CREATE TRIGGER {table}_lex_log_update AFTER UPDATE OF lex_len, lex_tf ON {table}
        FOR EACH ROW WHEN (OLD.lex_tf IS DISTINCT FROM NEW.lex_tf
            OR OLD.lex_len IS DISTINCT FROM NEW.lex_len)
        EXECUTE FUNCTION lexical_log();
    """


# The kinds that carry embeddings, and the dimension the HNSW indexes cover.
VECTOR_TABLES = ("edges", "nodes", "episodes", "observations", "memories")
HNSW_DIMS = 384


def hnsw_index(table: str) -> str:
    """The HNSW index of one kind's vectors (migration 6; bulk loads rebuild it)."""
    return f"""
    CREATE INDEX embeddings_hnsw_{table} ON embeddings
        USING hnsw ((embedding::vector({HNSW_DIMS})) vector_cosine_ops)
        WHERE kind = '{table}' AND vector_dims(embedding) = {HNSW_DIMS};
    """


_VECTOR_COUNTS = """
    CREATE TABLE embedding_counts (
        owner_uuid ctext NOT NULL, kind ctext NOT NULL, n bigint NOT NULL,
        PRIMARY KEY (owner_uuid, kind)
    );
    CREATE FUNCTION embedding_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE embedding_counts c SET n = c.n - d.n
                FROM (SELECT owner_uuid, kind, count(*) AS n FROM old_rows
                      GROUP BY owner_uuid, kind) d
                WHERE c.owner_uuid = d.owner_uuid AND c.kind = d.kind;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            -- In key order: concurrent writers take the rows' locks in one order.
            INSERT INTO embedding_counts
                SELECT owner_uuid, kind, count(*) FROM new_rows
                GROUP BY owner_uuid, kind ORDER BY owner_uuid, kind
                ON CONFLICT (owner_uuid, kind) DO UPDATE SET n = embedding_counts.n + excluded.n;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER embeddings_count_insert AFTER INSERT ON embeddings
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION embedding_count();
    CREATE TRIGGER embeddings_count_delete AFTER DELETE ON embeddings
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION embedding_count();
    CREATE TRIGGER embeddings_count_update AFTER UPDATE ON embeddings
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION embedding_count();
    INSERT INTO embedding_counts
        SELECT owner_uuid, kind, count(*) FROM embeddings GROUP BY owner_uuid, kind;
"""

MIGRATIONS: list[str] = [
    # 1: the foundation: every record kind, links, embeddings, cursors, settings, and
    # the lexical columns and statistics.
    """
    CREATE DOMAIN ctext AS text COLLATE "C";
    CREATE TABLE projects (
        uuid ctext NOT NULL, name ctext NOT NULL, default_time_zone ctext,
        created_at ctext NOT NULL, PRIMARY KEY (uuid)
    );
    CREATE TABLE api_keys (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, name ctext, prefix
        ctext NOT NULL, key_hash ctext NOT NULL, created_at ctext NOT NULL,
        revoked_at ctext, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX api_keys_uuid ON api_keys(uuid);
    ALTER TABLE api_keys ADD FOREIGN KEY (project_uuid) REFERENCES projects(uuid);
    CREATE UNIQUE INDEX api_keys_hash ON api_keys(key_hash);
    CREATE TABLE users (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, graph_uuid ctext NOT
        NULL, node_uuid ctext NOT NULL, user_id ctext, email ctext, first_name
        ctext, last_name ctext, metadata jsonb, time_zone ctext,
        disable_default_ontology boolean, created_at ctext NOT NULL, updated_at
        ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX users_uuid ON users(uuid);
    CREATE TABLE graphs (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, type ctext NOT NULL,
        graph_id ctext, name ctext, description ctext, time_zone ctext,
        user_uuid ctext, created_at ctext NOT NULL, updated_at ctext NOT NULL,
        PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX graphs_uuid ON graphs(uuid);
    CREATE TABLE threads (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, graph_uuid ctext NOT
        NULL, user_uuid ctext NOT NULL, thread_id ctext, created_at ctext NOT
        NULL, updated_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX threads_uuid ON threads(uuid);
    CREATE TABLE episodes (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, content ctext NOT NULL,
        source ctext NOT NULL, source_description ctext, role ctext, role_name
        ctext, metadata jsonb, reference_time ctext NOT NULL, created_at ctext
        NOT NULL, document_id ctext, thread_uuid ctext, processed boolean NOT
        NULL, PRIMARY KEY (graph_uuid, uuid)
    );
    CREATE INDEX episodes_uuid ON episodes(uuid);
    CREATE TABLE nodes (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, name ctext NOT NULL,
        labels jsonb NOT NULL, summary ctext, attributes jsonb, metadata jsonb,
        created_at ctext NOT NULL, updated_at ctext NOT NULL, PRIMARY KEY
        (graph_uuid, uuid)
    );
    CREATE INDEX nodes_uuid ON nodes(uuid);
    CREATE TABLE edges (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, name ctext NOT NULL,
        fact ctext NOT NULL, source_node_uuid ctext NOT NULL, target_node_uuid
        ctext NOT NULL, attributes jsonb, metadata jsonb, created_at ctext NOT
        NULL, updated_at ctext NOT NULL, valid_at ctext, invalid_at ctext,
        expired_at ctext, PRIMARY KEY (graph_uuid, uuid)
    );
    CREATE INDEX edges_uuid ON edges(uuid);
    CREATE TABLE observations (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, name ctext NOT NULL,
        labels jsonb NOT NULL, summary ctext NOT NULL, attributes jsonb,
        created_at ctext NOT NULL, updated_at ctext NOT NULL, PRIMARY KEY
        (graph_uuid, uuid)
    );
    CREATE INDEX observations_uuid ON observations(uuid);
    CREATE TABLE thread_summaries (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, thread_uuid ctext NOT
        NULL, summary ctext NOT NULL, created_at ctext NOT NULL,
        last_summarized_at ctext, last_summarized_episode_valid_at ctext,
        PRIMARY KEY (graph_uuid, uuid)
    );
    CREATE INDEX thread_summaries_uuid ON thread_summaries(uuid);
    CREATE TABLE tasks (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, graph_uuid ctext, type
        ctext NOT NULL, status ctext NOT NULL, stage ctext, payload jsonb NOT
        NULL, result jsonb, error jsonb, created_at ctext NOT NULL, started_at
        ctext, updated_at ctext NOT NULL, completed_at ctext, PRIMARY KEY
        (project_uuid, uuid)
    );
    CREATE INDEX tasks_uuid ON tasks(uuid);
    CREATE TABLE spaces (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, slug ctext NOT NULL,
        name ctext NOT NULL, created_at ctext NOT NULL, PRIMARY KEY
        (project_uuid, uuid)
    );
    CREATE INDEX spaces_uuid ON spaces(uuid);
    CREATE TABLE memories (
        uuid ctext NOT NULL, space_uuid ctext NOT NULL, content ctext NOT NULL,
        meta jsonb NOT NULL, tree ctext NOT NULL, name ctext, temporal_start
        ctext, temporal_end ctext, version bigint NOT NULL, version_hash ctext
        NOT NULL, created_at ctext NOT NULL, updated_at ctext, PRIMARY KEY
        (space_uuid, uuid)
    );
    CREATE INDEX memories_uuid ON memories(uuid);
    CREATE TABLE memory_events (
        uuid ctext NOT NULL, space_uuid ctext NOT NULL, memory_uuid ctext NOT
        NULL, at ctext NOT NULL, operation ctext NOT NULL, operation_id ctext
        NOT NULL, cause ctext NOT NULL, actor jsonb NOT NULL, content ctext NOT
        NULL, meta jsonb NOT NULL, tree ctext NOT NULL, name ctext,
        temporal_start ctext, temporal_end ctext, version bigint NOT NULL,
        version_hash ctext NOT NULL, PRIMARY KEY (space_uuid, uuid)
    );
    CREATE INDEX memory_events_uuid ON memory_events(uuid);
    CREATE TABLE ontologies (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, owner_type ctext NOT
        NULL, data jsonb NOT NULL, updated_at ctext NOT NULL, PRIMARY KEY
        (project_uuid, uuid)
    );
    CREATE INDEX ontologies_uuid ON ontologies(uuid);
    CREATE TABLE context_templates (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, name ctext NOT NULL,
        template ctext NOT NULL, created_at ctext NOT NULL, updated_at ctext NOT
        NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX context_templates_uuid ON context_templates(uuid);
    CREATE INDEX nodes_name ON nodes(graph_uuid, lower(name));
    CREATE INDEX edges_source ON edges(graph_uuid, source_node_uuid) WHERE expired_at IS NULL;
    CREATE INDEX edges_target ON edges(graph_uuid, target_node_uuid) WHERE expired_at IS NULL;
    CREATE INDEX tasks_pending ON tasks(created_at, uuid) WHERE status = 'pending';
    CREATE INDEX tasks_processing ON tasks(uuid) WHERE status = 'processing';
    ALTER TABLE episodes ADD COLUMN search_context ctext;
    ALTER TABLE episodes ADD COLUMN search_facts ctext;
    ALTER TABLE episodes ADD COLUMN search_replies ctext;
    CREATE TABLE links (
        kind ctext NOT NULL, graph_uuid ctext NOT NULL, uuid ctext NOT NULL,
        episode_uuid ctext NOT NULL, PRIMARY KEY (graph_uuid, kind, uuid, episode_uuid)
    );
    CREATE INDEX links_episode ON links(graph_uuid, kind, episode_uuid);
    CREATE INDEX links_uuid ON links(kind, uuid);
    CREATE INDEX links_episode_any ON links(episode_uuid);
    CREATE TABLE embeddings (
        kind ctext NOT NULL, owner_uuid ctext NOT NULL, uuid ctext NOT NULL,
        embedding vector NOT NULL, PRIMARY KEY (owner_uuid, kind, uuid)
    );
    CREATE INDEX embeddings_uuid ON embeddings(kind, uuid);
    CREATE TABLE search_cursors (
        token ctext PRIMARY KEY, project_uuid ctext NOT NULL, fingerprint ctext NOT NULL,
        results ctext NOT NULL, created_at ctext NOT NULL, expires_at ctext NOT NULL
    );
    CREATE INDEX search_cursors_expiry ON search_cursors(expires_at);
    CREATE TABLE settings (key ctext PRIMARY KEY, value ctext NOT NULL);
    """
    + LEXICAL_COUNT
    + "".join(_lexical(t) for t in TEXT_TABLES),
    # 2: each text row's insertion order, as SQLite's rowid keeps it: the common-terms
    # plan's fill ranks the newest rows that match it (store/lexical/plan.py).
    "".join(f"ALTER TABLE {t} ADD COLUMN lex_seq bigserial;\n" for t in TEXT_TABLES),
    # 3: a node's degree, stored (graph_model/degree.py keeps it; listing by degree reads the
    # index), and a claimed task's lease (store/postgres/queue.py).
    """
    ALTER TABLE nodes ADD COLUMN degree bigint NOT NULL DEFAULT 0;
    CREATE INDEX nodes_degree ON nodes(graph_uuid, degree, uuid);
    ALTER TABLE tasks ADD COLUMN lease_owner ctext;
    ALTER TABLE tasks ADD COLUMN lease_expires double precision;
    """,
    # 4: tree patterns (``TreePattern``) matched label by label, as domain/tree_match.py
    # does for SQLite: dynamic programming over (labels, items), linear in their product
    # whatever the pattern. ``items`` is a JSON array of [label regex (ARE) or null,
    # negated, lo, hi or null].
    """
    CREATE FUNCTION gr_tree_match(items jsonb, path text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE AS $fn$
    DECLARE
        labels text[];
        n int;
        reach boolean[];
        step boolean[];
        before int[];
        item jsonb;
        pat text;
        neg boolean;
        lo int;
        hi int;
        i int;
        run int;
        most int;
    BEGIN
        IF path IS NULL THEN
            RETURN false;
        END IF;
        labels := CASE WHEN path = '' THEN ARRAY[]::text[] ELSE string_to_array(path, '.') END;
        n := coalesce(array_length(labels, 1), 0);
        reach := array_fill(false, ARRAY[n + 1]);
        reach[1] := true;
        FOR item IN SELECT value FROM jsonb_array_elements(items) LOOP
            pat := item->>0;
            neg := (item->>1)::boolean;
            lo := (item->>2)::int;
            hi := (item->>3)::int;
            before := array_fill(0, ARRAY[n + 2]);
            FOR i IN 0..n LOOP
                before[i + 2] := before[i + 1] + CASE WHEN reach[i + 1] THEN 1 ELSE 0 END;
            END LOOP;
            step := array_fill(false, ARRAY[n + 1]);
            run := 0;
            FOR i IN 0..n LOOP
                IF i > 0 THEN
                    IF pat IS NULL OR ((labels[i] COLLATE "C" ~ pat) <> neg) THEN
                        run := run + 1;
                    ELSE
                        run := 0;
                    END IF;
                END IF;
                most := CASE WHEN hi IS NULL THEN run ELSE least(hi, run) END;
                IF most >= lo THEN
                    step[i + 1] := before[i - lo + 2] - before[i - most + 1] > 0;
                END IF;
            END LOOP;
            reach := step;
            IF NOT (true = ANY(reach)) THEN
                RETURN false;
            END IF;
        END LOOP;
        RETURN reach[n + 1];
    END
    $fn$;
    """,
    # 5: a memory's id is unique in its space only (the key was always (space_uuid, uuid);
    # SQLite's migration 18 makes it so there): a memory's audit log is read per space,
    # from an index, not by scanning the space's whole log.
    """
    CREATE INDEX memory_events_memory ON memory_events(space_uuid, memory_uuid, version);
    """,
    # 6: approximate vector search for big owners (store/postgres/vectors.py): an HNSW
    # (cosine) index per kind over the bundled embedder's 384-dimension vectors (the
    # column is an untyped ``vector``, so each index is on the cast, partial on the kind
    # and the dimension), and each owner's vector count per kind, kept by statement
    # triggers, which decides between the exact scan and the index.
    _VECTOR_COUNTS + "".join(hnsw_index(t) for t in VECTOR_TABLES),
    # 7: batches and task priorities, as SQLite's migration 19.
    """
    ALTER TABLE tasks ADD COLUMN priority integer NOT NULL DEFAULT 0;
    DROP INDEX IF EXISTS tasks_pending;
    CREATE INDEX tasks_pending ON tasks(priority, created_at, uuid) WHERE status = 'pending';
    CREATE TABLE batches (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, status ctext NOT NULL,
        metadata jsonb, ignore_roles jsonb, strict_ontology boolean NOT NULL,
        item_count bigint NOT NULL, task_uuid ctext, created_at ctext NOT NULL,
        updated_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX batches_uuid ON batches(uuid);
    CREATE TABLE batch_items (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, batch_uuid ctext NOT NULL,
        sequence_index bigint NOT NULL, type ctext NOT NULL, graph_uuid ctext NOT NULL,
        user_uuid ctext, thread_uuid ctext, episode_uuid ctext NOT NULL, task_uuid ctext,
        data jsonb NOT NULL, created_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX batch_items_uuid ON batch_items(uuid);
    CREATE UNIQUE INDEX batch_items_sequence ON batch_items(batch_uuid, sequence_index);
    CREATE INDEX batch_items_task ON batch_items(batch_uuid, task_uuid);
    """,
    # 8: user summary instructions, as SQLite's migration 20.
    """
    CREATE TABLE summary_instructions (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, owner_type ctext NOT NULL,
        data jsonb NOT NULL, updated_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX summary_instructions_uuid ON summary_instructions(uuid);
    """,
    # 9: the change log the processes' in-memory postings copies catch up from
    # (store/postgres/term_index.py).
    CHANGE_LOG_SQL + "".join(_logged(t) for t in TEXT_TABLES),
    # 10: debug logs, ingestion traces, document summaries, as SQLite's migration 21.
    """
    CREATE TABLE debug_logging (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, enabled_until ctext NOT NULL,
        updated_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX debug_logging_uuid ON debug_logging(uuid);
    CREATE TABLE episode_debug_logs (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, status ctext NOT NULL,
        entries jsonb NOT NULL, error_message ctext, started_at ctext NOT NULL, completed_at ctext,
        PRIMARY KEY (graph_uuid, uuid)
    );
    CREATE INDEX episode_debug_logs_uuid ON episode_debug_logs(uuid);
    CREATE TABLE ingestion_traces (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, episode_uuid ctext NOT NULL,
        step ctext NOT NULL, seq bigint NOT NULL, status ctext NOT NULL, input jsonb NOT NULL,
        output jsonb NOT NULL, error_message ctext, created_at ctext NOT NULL,
        PRIMARY KEY (graph_uuid, uuid)
    );
    CREATE INDEX ingestion_traces_uuid ON ingestion_traces(uuid);
    CREATE INDEX ingestion_traces_episode ON ingestion_traces(graph_uuid, episode_uuid, seq);
    CREATE TABLE document_summaries (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, document_id ctext NOT NULL,
        summary ctext NOT NULL, created_at ctext NOT NULL, last_summarized_at ctext,
        last_summarized_episode_valid_at ctext, PRIMARY KEY (graph_uuid, uuid)
    );
    CREATE INDEX document_summaries_uuid ON document_summaries(uuid);
    CREATE UNIQUE INDEX document_summaries_document
        ON document_summaries(graph_uuid, document_id);
    CREATE INDEX episodes_document ON episodes(graph_uuid, document_id, created_at)
        WHERE document_id IS NOT NULL;
    """,
    # 11: hyperedges, as SQLite's migration 22.
    """
    ALTER TABLE edges ADD COLUMN hyperedge_uuid ctext;
    CREATE INDEX edges_hyperedge ON edges(graph_uuid, hyperedge_uuid)
        WHERE hyperedge_uuid IS NOT NULL;
    CREATE TABLE hyperedges (
        uuid ctext NOT NULL, graph_uuid ctext NOT NULL, created_at ctext NOT NULL,
        PRIMARY KEY (graph_uuid, uuid)
    );
    CREATE INDEX hyperedges_uuid ON hyperedges(uuid);
    CREATE INDEX hyperedges_created ON hyperedges(graph_uuid, created_at, uuid);
    """,
    # 12: user groups and their members, as SQLite's migration 23.
    """
    CREATE TABLE user_groups (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, name ctext NOT NULL,
        description ctext, version integer NOT NULL,
        created_at ctext NOT NULL, updated_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX user_groups_uuid ON user_groups(uuid);
    CREATE TABLE user_group_members (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, group_uuid ctext NOT NULL,
        user_uuid ctext NOT NULL, created_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX user_group_members_uuid ON user_group_members(uuid);
    CREATE UNIQUE INDEX user_group_members_pair ON user_group_members(group_uuid, user_uuid);
    CREATE INDEX user_group_members_user ON user_group_members(user_uuid, group_uuid);
    """,
    # 13: webhooks, as SQLite's migration 24.
    """
    CREATE TABLE webhook_endpoints (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, url ctext NOT NULL,
        secret ctext NOT NULL, events jsonb NOT NULL,
        created_at ctext NOT NULL, updated_at ctext NOT NULL, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX webhook_endpoints_uuid ON webhook_endpoints(uuid);
    CREATE TABLE webhook_deliveries (
        uuid ctext NOT NULL, project_uuid ctext NOT NULL, event_name ctext NOT NULL,
        payload jsonb NOT NULL, status ctext NOT NULL, attempts integer NOT NULL,
        next_attempt_at ctext NOT NULL, last_error ctext, created_at ctext NOT NULL,
        delivered_at ctext, PRIMARY KEY (project_uuid, uuid)
    );
    CREATE INDEX webhook_deliveries_uuid ON webhook_deliveries(uuid);
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
    """,
    # 14: the vector change log: every embedding written or dropped, numbered in commit
    # order (under the lexical log's lock), so each process's in-memory matrices
    # (``vector_copies.py``) catch up with writes made by any process.
    """
    CREATE TABLE vector_changes (
        seq bigserial PRIMARY KEY, kind ctext NOT NULL, owner_uuid ctext NOT NULL,
        uuid ctext NOT NULL
    );
    CREATE INDEX vector_changes_owner ON vector_changes(owner_uuid, kind, seq);
    CREATE TABLE vector_log_floor (seq bigint NOT NULL);
    INSERT INTO vector_log_floor VALUES (0);
    CREATE FUNCTION vector_log() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('graphrecall lexical log'),
            hashtext(TG_TABLE_SCHEMA));
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            INSERT INTO vector_changes (kind, owner_uuid, uuid)
                SELECT kind, owner_uuid, uuid FROM old_rows;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO vector_changes (kind, owner_uuid, uuid)
                SELECT kind, owner_uuid, uuid FROM new_rows;
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER embeddings_log_insert AFTER INSERT ON embeddings
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vector_log();
    CREATE TRIGGER embeddings_log_delete AFTER DELETE ON embeddings
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vector_log();
    CREATE TRIGGER embeddings_log_update AFTER UPDATE ON embeddings
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION vector_log();
    """,
    # 15: the term-index copies saved whole (``term_index_image.py``): a restarted
    # process loads one and catches it up from the change log instead of reading the
    # table's rows again.
    """
    CREATE TABLE term_index_images (
        tbl ctext PRIMARY KEY, seq bigint NOT NULL, meta text NOT NULL,
        arrays bytea NOT NULL
    );
    """,
    # 16: a thread's messages in order within a graph (episode search's reply leg reads a
    # message's reply; SQLite has had its ``episodes_thread`` index from the start).
    """
    CREATE INDEX episodes_thread ON episodes(graph_uuid, thread_uuid, created_at, uuid);
    """,
    # 17: threads and graphs found by the developer's id (Zep v3 names them so on every
    # call). Not unique: the services check, and a database made before may hold anything.
    """
    CREATE INDEX threads_thread_id ON threads(project_uuid, thread_id);
    CREATE INDEX graphs_graph_id ON graphs(project_uuid, graph_id);
    """,
    # 18: the embedder a store's vectors were made by (``settings.embedder_model``):
    # stores that already hold vectors were made by all-MiniLM-L6-v2; an empty one
    # records the configured embedder on its first start (runtime.py: store_embedder).
    """
    INSERT INTO settings (key, value)
        SELECT 'embedder_model', 'all-MiniLM-L6-v2' WHERE EXISTS (SELECT 1 FROM embeddings)
        ON CONFLICT (key) DO NOTHING;
    """,
]


def migrate(conn: psycopg.Connection[Any], schema: str) -> int:
    """Bring ``schema`` to the newest version; returns it. Safe to call from several
    processes at once: each migration runs in a transaction holding the advisory lock."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) AS v FROM schema_version").fetchone()
        version = int(_first(row) or 0)
        if version > len(MIGRATIONS):
            raise RuntimeError(
                f"database schema version {version} is newer than this graphrecall "
                f"({len(MIGRATIONS)}); upgrade graphrecall"
            )
        for number in range(version + 1, len(MIGRATIONS) + 1):
            conn.execute(MIGRATIONS[number - 1])
            conn.execute("INSERT INTO schema_version VALUES (%s)", [number])
    return len(MIGRATIONS)


def _first(row: Any) -> Any:
    if row is None:
        return None
    return next(iter(row.values())) if isinstance(row, dict) else row[0]
