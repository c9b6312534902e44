"""A memory overlap filter is checked from the temporal index (start and end), without
reading rows that ended before the window began."""

from __future__ import annotations

from pathlib import Path

from graphrecall.store import open_store


def test_the_temporal_index_covers_start_and_end(tmp_path: Path) -> None:
    store = open_store(tmp_path / "db.sqlite")
    try:
        conn = store.db.conn  # type: ignore[attr-defined]
        columns = [r[2] for r in conn.execute("PRAGMA index_info(memories_temporal)")]
        assert columns == ["space_uuid", "temporal_start", "temporal_end"]
        plan = " ".join(
            str(r[3])
            for r in conn.execute(
                "EXPLAIN QUERY PLAN SELECT count(*) FROM memories t WHERE t.space_uuid = ?"
                " AND t.temporal_start < ? AND t.temporal_end > ?",
                ["s", "2023-03-01", "2023-01-01"],
            )
        )
        assert "COVERING INDEX memories_temporal" in plan
    finally:
        store.close()
