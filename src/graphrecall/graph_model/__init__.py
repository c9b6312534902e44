"""The graph write model: how records are written, indexed (their search text, their
degree) and embedded. It sits above ``store/`` and below ``retrieval/``, ``ingest/`` and
``services/``, which all write or read records through it."""
