"""The PostgreSQL backend (pgvector for vectors; BM25 from statistics kept in tables)."""
