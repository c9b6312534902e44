"""FTS5's on-disk records as ``store/sqlite/fts5.py`` and ``term_index.py`` read them.

The in-memory term copies and the re-scoring statistics decode FTS5's averages record,
its ``_docsize`` rows and its structure record. These records are FTS5's internals, not
its API: if a SQLite upgrade changes them, these tests fail here, loudly, rather than
letting a copy rank with wrong lengths. (Searches stay correct without the copies: FTS5's
own ``bm25()`` ranks when no copy is current.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphrecall.store.sqlite import fts5
from graphrecall.store.sqlite.migrations import FTS_TOKENIZE

ROWS = [
    ("alpha beta", "gamma"),
    ("alpha " * 130, "delta epsilon"),  # a length over 127: a two-byte varint
    ("", "zeta eta theta iota"),
]


def index(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "fts.db", isolation_level=None)
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='{FTS_TOKENIZE}')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    rows = [(i, *row) for i, row in enumerate(ROWS, 1)]
    conn.executemany("INSERT INTO t(rowid, a, b) VALUES (?, ?, ?)", rows)
    return conn


def token_counts(conn: sqlite3.Connection) -> dict[int, list[int]]:
    """Each row's token count per column, counted from the index's own postings."""
    counts: dict[int, list[int]] = {}
    for doc, col in conn.execute("SELECT doc, col FROM v"):
        counts.setdefault(int(doc), [0, 0])[["a", "b"].index(col)] += 1
    return counts


def test_docsize_rows_decode_to_each_columns_token_count(tmp_path: Path) -> None:
    conn = index(tmp_path)
    expected = token_counts(conn)
    for rowid, blob in conn.execute("SELECT id, sz FROM t_docsize"):
        assert fts5.varints(bytes(blob)) == expected.get(int(rowid), [0, 0])
        assert fts5.row_length(bytes(blob)) == sum(expected.get(int(rowid), [0, 0]))


def test_the_averages_record_holds_the_row_count_and_each_columns_total(tmp_path: Path) -> None:
    conn = index(tmp_path)
    (blob,) = conn.execute("SELECT block FROM t_data WHERE id = ?", [fts5.AVERAGES_ID]).fetchone()
    rows, *totals = fts5.varints(bytes(blob))
    counts = token_counts(conn)
    assert rows == len(ROWS)
    assert totals == [sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())]


def test_every_committed_write_changes_the_structure_record(tmp_path: Path) -> None:
    conn = index(tmp_path)

    def structure() -> bytes:
        sql = "SELECT block FROM t_data WHERE id = ?"
        return bytes(conn.execute(sql, [fts5.STRUCTURE_ID]).fetchone()[0])

    before = structure()
    conn.execute("INSERT INTO t(rowid, a, b) VALUES (9, 'kappa', 'lambda')")
    after = structure()
    assert after != before
    conn.execute("DELETE FROM t WHERE rowid = 9")
    assert structure() not in (before, after)


def test_the_tokenizer_gives_the_indexs_own_tokens(tmp_path: Path) -> None:
    conn = index(tmp_path)
    tokenizer = fts5.Tokenizer(FTS_TOKENIZE)
    try:
        found = tokenizer.postings(["a", "b"], [(i, *row) for i, row in enumerate(ROWS, 1)])
        assert sorted(found) == sorted(conn.execute("SELECT term, doc, col FROM v").fetchall())
        assert tokenizer.tokens("Moving") == ("move",)
    finally:
        tokenizer.close()
