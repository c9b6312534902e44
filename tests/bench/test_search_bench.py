"""``graphrecall bench search`` end to end at a tiny size, through the CLI entry point.

Checks that the benchmark runs every case at every layer (including the SDK against a
real server subprocess) and writes JSON of the documented shape. No timing assertions:
benchmarks measure speed, tests check behaviour.
"""

from __future__ import annotations

import json
from pathlib import Path

from graphrecall.cli import main
from graphrecall_bench.search_cases import CASES, LAYERS


def test_bench_search_writes_results_for_every_case_and_layer(tmp_path: Path) -> None:
    out = tmp_path / "bench-out"
    result_path = tmp_path / "search.json"
    argv = ["bench", "search", "--sizes", "300", "--queries", "20", "--warmup", "2"]
    assert main([*argv, "--out", str(out), "--json", str(result_path)]) == 0

    result = json.loads(result_path.read_text())
    assert result["benchmark"] == "search"
    assert result["params"]["sizes"] == [300]
    assert result["machine"]["cpus"] >= 1
    [run] = result["runs"]
    assert run["size"] == 300

    build = run["build"]
    assert build["edges"] == 300
    assert build["nodes"] > 0 and build["episodes"] > 0 and build["node_links"] > 0
    assert build["db_bytes"] > 0 and build["db_bytes_per_fact"] > 0
    assert build["embed_texts"] == build["edges"] + build["nodes"] + build["episodes"]
    assert build["embed_texts_per_s"] > 0
    assert run["extra"]["query_embedding_ms"]["p50"] > 0

    measured = {(r["case"], r["layer"]) for r in run["results"]}
    expected = {
        (case.name, layer)
        for case in CASES
        for layer in LAYERS
        if case.scope != "context" or layer == "sdk"  # get_context runs through the SDK only
    }
    assert measured == expected
    for r in run["results"]:
        assert r["n"] == 20
        assert 0 < r["min_ms"] <= r["p50_ms"] <= r["p95_ms"] <= r["max_ms"]
        assert r["mean_ms"] > 0 and r["first_ms"] > 0
        assert 0 <= r["hit_at_10"] <= 1
        assert r["results_mean"] > 0
    # The SDK returns what the service ranked (up to float noise in near-ties).
    by_key = {(r["case"], r["layer"]): r for r in run["results"]}
    for case in CASES:
        if case.scope == "context":
            continue
        sdk, service = by_key[(case.name, "sdk")], by_key[(case.name, "service")]
        assert abs(sdk["hit_at_10"] - service["hit_at_10"]) <= 0.15

    [verdict] = result["target"]["verdicts"]
    assert verdict["size"] == 300 and verdict["at_target_size"] is False

    # A second run reuses the cached database instead of building and embedding again.
    again = tmp_path / "again.json"
    argv2 = [*argv[:-4], "--queries", "5", "--layers", "engine", "--cases", "edges/rrf"]
    assert main([*argv2, "--warmup", "1", "--out", str(out), "--json", str(again)]) == 0
    rerun = json.loads(again.read_text())["runs"][0]
    assert rerun["build"]["cached"] is True
    assert [(r["case"], r["layer"]) for r in rerun["results"]] == [("edges/rrf", "engine")]
    assert not list(out.glob("*.run*"))  # the per-run working copy is cleaned up
