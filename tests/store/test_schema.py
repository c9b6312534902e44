"""``graphrecall migrate`` and the schema versions it reports, on SQLite and on a real
PostgreSQL server, with several processes migrating one fresh database at once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from graphrecall.cli import main
from graphrecall.store import open_store, schema
from graphrecall.store.postgres.migrations import MIGRATIONS as PG_MIGRATIONS
from graphrecall.store.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from tests import pg_server

ROOT = Path(__file__).resolve().parents[2]


def test_migrate_a_new_sqlite_file_then_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    assert schema.schema_version(db) == 0
    assert main(["migrate", "--db", str(db)]) == 0
    newest = len(SQLITE_MIGRATIONS)
    assert capsys.readouterr().out.strip() == (
        f"schema version {newest} (migrated from 0; newest {newest}) in {db}"
    )
    assert main(["--db", f"sqlite:///{db}", "migrate"]) == 0
    assert "already current" in capsys.readouterr().out
    assert schema.schema_version(f"sqlite:///{db}") == newest


def test_migrate_refuses_a_file_that_is_not_a_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "not.db"
    db.write_text("hello, not SQLite\n" * 100)
    assert main(["migrate", "--db", str(db)]) == 2
    assert str(db) in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_processes_migrate_one_fresh_database_at_once(backend: str, tmp_path: Path) -> None:
    if backend == "sqlite":
        url, newest = str(tmp_path / "fresh.db"), len(SQLITE_MIGRATIONS)
    else:
        url = pg_server.with_schema(pg_server.server_url(), f"t{uuid.uuid4().hex}")
        newest = len(PG_MIGRATIONS)
    assert schema.schema_version(url) == 0
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "graphrecall", "migrate", "--db", url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=120) for p in started]
    assert [p.returncode for p in started] == [0, 0, 0], outputs
    for out, _ in outputs:
        assert re.fullmatch(
            rf"schema version {newest} \((migrated from \d+|already current); newest {newest}\)"
            r" in \S+\n",
            out,
        ), out
    assert schema.schema_version(url) == newest
    if backend == "sqlite":
        return
    store = open_store(url)
    try:
        rows = store.db.query("SELECT version FROM schema_version ORDER BY version")  # type: ignore[attr-defined]
    finally:
        store.close()
    assert [r["version"] for r in rows] == list(range(1, newest + 1))  # each applied once


def test_log_lines_leave_a_postgres_password_out() -> None:
    assert schema.shown("postgresql://ann:s3cret@db:5432/gr") == "postgresql://ann:***@db:5432/gr"
    assert schema.shown("postgresql://ann@db/gr?schema=x") == "postgresql://ann@db/gr?schema=x"
    assert schema.shown("/var/lib/gr.db") == "/var/lib/gr.db"
