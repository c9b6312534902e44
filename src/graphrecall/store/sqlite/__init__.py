"""The embedded backend: one SQLite file in WAL mode."""
