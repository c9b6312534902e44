"""``bench search``, ``bench memory``, ``bench locomo``, ``bench ingest`` and ``bench cold`` take
``--db postgresql://...`` and run on the tests' PostgreSQL server (``tests/pg_server.py``)
at a tiny size, through the CLI entry point. The results are checked for shape and for
values a real run on PostgreSQL gives (the build lives in its own schema; ingestion by
separate worker processes loses no task). No timing assertions."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from graphrecall.cli import main
from graphrecall.store.postgres.connection import split_schema
from graphrecall_bench.build import pg_location
from graphrecall_bench.cold import OPS
from graphrecall_bench.cold_build import ensure_cold_db
from tests import pg_server
from tests.bench.test_locomo_bench import write_tiny_locomo


@pytest.fixture(scope="module")
def pg() -> str:
    return pg_server.server_url()


def _tables(url: str) -> int:
    server, schema = split_schema(url)
    with psycopg.connect(server, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = %s", [schema]
        ).fetchone()
        assert row is not None
        return int(row[0])


def test_bench_search_on_postgres(tmp_path: Path, pg: str) -> None:
    out, result_path = tmp_path / "out", tmp_path / "search.json"
    argv = ["bench", "search", "--db", pg, "--sizes", "200", "--queries", "3"]
    argv += ["--warmup", "1", "--cases", "edges/rrf,nodes/rrf", "--layers", "engine,sdk"]
    assert main([*argv, "--out", str(out), "--json", str(result_path)]) == 0
    result = json.loads(result_path.read_text())
    assert result["params"]["backend"] == "postgresql"
    [run] = result["runs"]
    assert run["build"]["cached"] is False and run["build"]["db_bytes"] > 0
    assert {(r["case"], r["layer"]) for r in run["results"]} == {
        (c, layer) for c in ("edges/rrf", "nodes/rrf") for layer in ("engine", "sdk")
    }
    assert all(r["p50_ms"] > 0 for r in run["results"])
    assert _tables(pg_location(pg, 200, 7)) > 10  # the build is in its own schema
    assert not list(out.glob("*.db"))  # and nothing was built in SQLite

    again = [*argv[:6], "--cases", "none", "--out", str(out), "--json", str(result_path)]
    assert main(again) == 0
    assert json.loads(result_path.read_text())["runs"][0]["build"]["cached"] is True


def test_bench_memory_on_postgres(tmp_path: Path, pg: str) -> None:
    argv = ["bench", "memory", "--db", pg, "--size", "80", "--queries", "3", "--no-rpc"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "memory-bench-80-postgresql.json").read_text())
    assert report["backend"] == "postgresql" and report["size"] == 80
    assert report["results"]["semantic"]["service"]["mean_results"] == 10
    assert not list(tmp_path.glob("*.db"))


def test_bench_locomo_on_postgres(tmp_path: Path, pg: str) -> None:
    data = write_tiny_locomo(tmp_path / "tiny.json")
    out = tmp_path / "locomo.json"
    argv = ["bench", "locomo", "--db", pg, "--data", str(data), "--json", str(out)]
    assert main([*argv, "--png", str(tmp_path / "l.png"), "--workdir", str(tmp_path)]) == 0
    result = json.loads(out.read_text())
    assert result["params"]["backend"] == "postgresql"
    assert result["ingestion"]["messages"] == 10 and result["ingestion"]["failed_tasks"] == 0
    # Ten turns in all: a page of 25 holds every turn, so every evidence turn is found.
    assert result["search_episodes"]["recall@25"] == 1.0
    assert not list(tmp_path.glob("*.db"))


def test_bench_ingest_with_worker_processes_on_postgres(tmp_path: Path, pg: str) -> None:
    data = write_tiny_locomo(tmp_path / "tiny.json")
    out = tmp_path / "ingest.json"
    argv = ["bench", "ingest", "--db", pg, "--data", str(data), "--json", str(out)]
    argv += ["--mode", "http", "--workers", "2", "--max-turns", "7", "--facts", "0"]
    assert main([*argv, "--workdir", str(tmp_path)]) == 0
    result = json.loads(out.read_text())
    assert result["params"]["backend"] == "postgresql" and result["messages"] == 7
    assert set(result["runs"]) == {"http", "2 worker(s)"}
    for run in result["runs"].values():
        assert run["messages"] == 7 and run["failed_tasks"] == 0
        assert run["graph"]["episodes"] == run["graph"]["episodes_processed"] == 7
    assert (tmp_path / "ingest-w2" / "worker-1.log").exists()
    assert not list(tmp_path.glob("*.db"))


def test_bench_cold_on_postgres(tmp_path: Path, pg: str) -> None:
    out, result_path = tmp_path / "out", tmp_path / "cold.json"
    argv = ["bench", "cold", "--db", pg, "--users", "3", "--facts", "20", "--restart"]
    assert main([*argv, "--out", str(out), "--json", str(result_path)]) == 0
    result = json.loads(result_path.read_text())
    assert result["params"]["backend"] == "postgresql"
    assert result["build"]["cached"] is False and result["build"]["edges"] == 3 * 20
    assert result["build"]["db_bytes"] > 0
    for phase in ("cold", "warm"):
        for op in (*OPS, "first_call"):
            stats = result[phase][op]
            assert stats["n"] == 2  # every user but the one that warms the process
            assert 0 < stats["p50_ms"] <= stats["p95_ms"] <= stats["max_ms"]
    # Each sampled user's three kinds were read into the restarted server's matrix cache.
    assert result["health_after_warm"]["caches"]["vector_matrices"]["misses"] >= 2 * 3
    built = ensure_cold_db(3, 20, 7, out, db=pg)
    assert built.stats.cached is True and built.url is not None
    assert _tables(built.url) > 10  # the build is in its own schema
    assert not list(out.glob("*.db"))  # and nothing was built in SQLite


def test_bench_db_must_be_postgres(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["search"], ["memory"], ["locomo", "--data", "x.json"], ["cold"]):
        argv = ["bench", *command, "--db", str(tmp_path / "x.db"), "--out", str(tmp_path)]
        if command[0] == "locomo":
            argv = argv[:-2]
        assert main(argv) == 1
        assert "--db takes a postgresql:// URL" in capsys.readouterr().err
