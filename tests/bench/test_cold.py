"""``graphrecall bench cold`` end to end at a tiny size, through the CLI entry point:
builds the users' graphs, asks every user through the SDK against a real (restarted)
server, and writes JSON of the documented shape. No timing assertions."""

from __future__ import annotations

import json
from pathlib import Path

from graphrecall.cli import main
from graphrecall_bench.cold import OPS


def test_bench_cold_writes_cold_and_warm_per_op(tmp_path: Path) -> None:
    out = tmp_path / "bench-out"
    result_path = tmp_path / "cold.json"
    argv = ["bench", "cold", "--users", "4", "--facts", "30", "--restart"]
    assert main([*argv, "--out", str(out), "--json", str(result_path)]) == 0

    result = json.loads(result_path.read_text())
    assert result["benchmark"] == "cold" and result["params"]["users"] == 4
    assert result["build"]["edges"] == 4 * 30 and result["build"]["db_bytes"] > 0
    for phase in ("cold", "warm"):
        for op in (*OPS, "first_call"):
            stats = result[phase][op]
            assert stats["n"] == 3  # every user but the one that warms the process
            assert 0 < stats["p50_ms"] <= stats["p95_ms"] <= stats["max_ms"]
    caches = result["health_after_warm"]["caches"]
    assert caches["vector_matrices"]["misses"] >= 3 * 3  # each user's three kinds, once
    assert result["rss_mb_after_warm"] > 0
    # the throw-away copy and what its servers saved beside it are gone
    assert not list(out.glob("*.run-*"))


def test_bench_cold_with_graph_warm_reads_no_matrix_in_the_cold_pass(tmp_path: Path) -> None:
    out = tmp_path / "bench-out"
    result_path = tmp_path / "cold.json"
    argv = ["bench", "cold", "--users", "4", "--facts", "30", "--graph-warm"]
    assert main([*argv, "--out", str(out), "--json", str(result_path)]) == 0

    result = json.loads(result_path.read_text())
    assert result["params"]["graph_warm"] is True and result["graph_warm_ms"]["n"] == 3
    before = result["health_start"]["caches"]["vector_matrices"]
    after = result["health_after_cold"]["caches"]["vector_matrices"]
    # graph.warm read every sampled graph's matrices: the cold pass only hits them.
    assert after["misses"] == before["misses"] and after["hits"] > before["hits"]
