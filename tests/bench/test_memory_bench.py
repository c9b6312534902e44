"""``graphrecall bench memory`` end to end at a tiny size, through the CLI entry point:
every mode at both layers (the JSON-RPC one against a real server subprocess), JSON of
the documented shape, and a second run that reuses the built space. No timing
assertions: benchmarks measure speed, tests check behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrecall.cli import main
from graphrecall.store import vector_index
from graphrecall_bench.memory import wait_for_indexes


def test_bench_memory_times_every_mode_at_both_layers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench-out"
    argv = ["bench", "memory", "--size", "300", "--queries", "6", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads((out / "memory-bench-300.json").read_text())
    assert report["size"] == 300 and report["build"]["cached"] is False
    modes = report["results"]
    assert set(modes) == {
        "semantic",
        "fulltext",
        "hybrid",
        "filter-only (tree)",
        "filter-only (meta+temporal)",
        "hybrid + tree/meta",
    }
    for by_layer in modes.values():
        assert set(by_layer) == {"service", "rpc"}
        for layer in by_layer.values():
            assert 0 < layer["p50_ms"] <= layer["p95_ms"]
    for ranked in ("semantic", "hybrid"):
        assert modes[ranked]["service"]["mean_results"] == 10
        assert modes[ranked]["rpc"]["mean_results"] == 10
    assert "memory.search latency, 300 memories" in capsys.readouterr().out

    again = ["bench", "memory", "--size", "300", "--queries", "3", "--no-rpc", "--out", str(out)]
    assert main(again) == 0
    rerun = json.loads((out / "memory-bench-300.json").read_text())
    assert rerun["build"]["cached"] is True
    assert set(rerun["results"]["semantic"]) == {"service"}


def test_bench_memory_times_the_vector_index_once_it_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A space this small only gets an HNSW index when the threshold is lowered; the timed
    # calls must come after its background build, not beside it.
    monkeypatch.setattr(vector_index, "ANN_MIN_ROWS", 100)
    out = tmp_path / "bench-out"
    argv = ["bench", "memory", "--size", "300", "--queries", "3", "--no-rpc", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads((out / "memory-bench-300.json").read_text())
    assert report["indexes"]["service"]["ready"] == 1
    assert report["indexes"]["service"]["building"] == 0


def test_wait_for_indexes_searches_then_waits_for_the_build() -> None:
    calls: list[str] = []
    answers = iter([{"ready": 0, "building": 1}, {"ready": 0, "building": 1}])

    def status() -> dict[str, int]:
        calls.append("status")
        return next(answers, {"ready": 1, "building": 0})

    waited = wait_for_indexes(lambda: calls.append("search"), status)
    assert calls[0] == "search" and calls.count("status") == 4
    assert waited["ready"] == 1 and waited["building"] == 0 and waited["wait_s"] >= 0
