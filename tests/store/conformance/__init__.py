"""The store conformance suite: what every backend of :class:`graphrecall.store.Store`
must do, run against each store URL of ``conftest.STORE_URLS`` (SQLite today; the
PostgreSQL backend joins by adding its URL, e.g. through ``GRAPHRECALL_TEST_PG_URL``).
Results are compared record for record (whole pydantic records, not counts), so two
backends that pass return the same rows in the same order. ``test_coverage`` fails when a
public method of ``Store`` is exercised by no test here.

The rules, as the tests check them:

Records and scopes
  * A record reads back equal to what was written, every field: JSON fields as the same
    objects, booleans as booleans, ``None`` as ``None``, text byte for byte.
  * Timestamps are RFC 3339 UTC strings of fixed width (``clock.to_iso``:
    ``2026-01-02T03:04:05.000006Z``); a backend stores and returns the string unchanged
    and orders them as text, which is time order for that form.
  * A scope maps field -> value: a scalar is equality, a list/tuple is membership (an
    empty list matches nothing), ``None`` is "is null". An unknown field is a
    ``ValueError``. ``get`` with a scope returns None for a record outside it.
  * ``insert`` of several records is all or nothing (a duplicate uuid fails the batch).

Ordering
  * NULL sorts lowest: first ascending, last descending (``find``, ``list_page``; in
    ``list_page`` a NULL key sorts as the empty string, so it ties with ``""``).
  * Ties on the sort key are broken by uuid, in the same direction as the key.
  * ``find`` orders the same with or without a ``limit``.
  * ``list_page`` is keyset paginated on (order_by, uuid): every record present for the
    whole walk is returned exactly once even while rows are added; a row added after the
    walk's position is returned, one added before it is not; ``total_size`` counts the
    matches at the time of each page. A cursor is opaque; one that is not a cursor, or
    that was issued for another ordering, is a ``BadRequest`` naming ``cursor``; an
    unknown ``order_by`` is a ``BadRequest`` naming ``order_by``. ``search`` is a
    case-insensitive substring of any of ``search_fields``, with ``%`` and ``_`` taken
    literally.
  * ``iter_all`` yields every record of the scope once, ascending by uuid.
  * ``nodes_named``: names equal ignoring ASCII case, oldest (created_at, uuid) first.
  * ``claim_run`` takes the pending task with the smallest (created_at, uuid) whose graph
    has none in progress, with its graph's next batchable tasks, under a lease.
  * ``text_search``: best score first, ties by uuid ascending.
  * ``vector_search``: highest cosine first, ties by uuid ascending.
  * ``episodes_of``: newest episode uuid first (uuids are UUIDv7, so by uuid descending).
  * ``count_by`` keys NULL as ``None``.
  * ``adjacency``, ``linked_to_episodes``, ``matching``: sets (order unspecified).

Transactions
  * Everything written inside ``transaction()`` (records, updates, deletes, links,
    embeddings) commits together or not at all. Nesting joins the outer transaction: an
    inner block's exception caught inside the outer block does not undo the inner
    block's writes (no savepoints). ``in_transaction`` is true only on the thread inside.

Graph
  * ``adjacency``, ``graph_adjacency`` and ``node_degrees`` see live edges only (no
    ``expired_at``; ``invalid_at`` does not matter); a self-loop counts twice toward its
    node's degree; a node of another graph has degree 0; ``graph_adjacency`` follows
    every edge write (insert, update, delete, rollback).
  * Listing nodes by ``degree`` agrees with ``node_degrees``.

Provenance and embeddings
  * Every provenance read takes its graph and every embedding read or delete its owner
    (graph, or space for memories): a record of another tenant has no links or vectors.
  * ``link_episodes`` is idempotent. ``delete`` of a record removes its vector and its
    links; deleting an episode removes the links that cite it.
  * A vector reads back as the same float32 values; ``missing_embeddings`` lists the
    owner's records without one.

Search
  * ``text_search`` returns only records that contain a query term as a whole word,
    after case folding, diacritic removal and Porter stemming (no prefix or substring
    matches); scores are positive, higher is better; ``scope`` and ``where`` filter before
    the ``limit`` is applied; no terms, no results.
  * ``vector_search`` is exact cosine similarity (vectors are normalised) over the
    owner's records that pass ``scope`` and ``where``, which are applied while candidates
    are chosen, never after the ``limit`` (a filter never empties a page another match
    could fill). Scores equal numpy's float32 dot products within 1e-5.

Cursors, settings, keys, tasks
  * ``load_cursor`` returns what ``save_cursor`` stored until it expires, then None.
  * ``setting`` stores its default on the first read and returns the stored value after.
  * ``find_api_key`` ignores revoked keys.
  * ``claim_run`` marks the tasks processing under a lease; ``requeue_expired``
    puts tasks whose lease expired back to pending and returns how many (a live
    lease is left alone); only the holder of a lease renews it or finishes its task.
  * Maintenance (``compact_text_indexes``, ``refresh_text_indexes``) never changes what
    a search returns; the ``*_status`` methods return non-negative counts (``ready``,
    ``building``, more where a backend keeps them; empty where it keeps no such copy).
  * An API key's project must exist (the one foreign key).
"""
