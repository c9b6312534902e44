"""``graphrecall bench scale`` end to end at two tiny sizes, through the CLI entry point.

Checks that every case runs at every layer for every size, that the embedding cap splits
vectors into real and derived ones exactly as asked (and withholds hit@10 where vectors are
derived), that ingestion into the built graph processes the fixed batch, and that the JSON,
the table and the PNG come out. No timing assertions: benchmarks measure speed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from graphrecall.cli import main
from graphrecall.domain.models import Edge
from graphrecall_bench import scale
from graphrecall_bench.build import derive_vectors
from graphrecall_bench.search_cases import CASES


def test_bench_scale_measures_every_size_case_and_layer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench-out"
    result_path = tmp_path / "scale.json"
    png = tmp_path / "scale.png"
    argv = ["bench", "scale", "--sizes", "200,400", "--queries", "6", "--warmup", "1"]
    argv += ["--embed-cap", "250", "--ingest-messages", "12", "--out", str(out)]
    assert main([*argv, "--json", str(result_path), "--png", str(png)]) == 0

    result = json.loads(result_path.read_text())
    assert result["benchmark"] == "scale"
    assert result["params"]["sizes"] == [200, 400]
    assert result["params"]["embed_cap"] == 250
    assert result["params"]["layers"] == ["engine", "sdk"]
    small, large = result["runs"]
    assert [small["size"], large["size"]] == [200, 400]
    assert small["facts"] == 200 and large["facts"] == 400
    assert large["build"]["nodes"] >= small["build"]["nodes"]
    assert large["build"]["episodes"] > small["build"]["episodes"]
    assert large["db_bytes"] > small["db_bytes"] > 0

    for run in result["runs"]:
        build = run["build"]
        counts = {"edge": build["edges"], "node": build["nodes"], "episode": build["episodes"]}
        for kind, total in counts.items():
            assert run["vectors"][kind] == {"real": min(total, 250), "derived": max(total - 250, 0)}
        assert build["embed_texts"] == sum(min(n, 250) for n in counts.values())
        assert run["bytes_per_fact"] == round(run["db_bytes"] / run["size"], 1)

        measured = {(r["case"], r["layer"]) for r in run["results"]}
        expected = {
            (case.name, layer)
            for case in CASES
            for layer in ("engine", "sdk")
            if case.scope != "context" or layer == "sdk"
        }
        assert measured == expected
        for r in run["results"]:
            assert r["n"] == 6
            assert 0 < r["min_ms"] <= r["p50_ms"] <= r["p95_ms"] <= r["max_ms"]

        ingest = run["ingest"]
        assert ingest["messages"] == 12 and ingest["tasks"] == 1
        assert ingest["failed_tasks"] == 0 and ingest["unprocessed_episodes"] == 0
        assert ingest["messages_per_s"] > 0 and ingest["new_edges"] >= 0
        assert ingest["cpu_s"] > 0 and ingest["messages_per_cpu_s"] > 0
        assert ingest["breakdown"]["extract_items"] > 0
        assert run["copy_bytes_after_run"] >= run["db_bytes"]

    # 200 facts: every kind under the cap, so hit@10 is reported; 400: 150 derived edges.
    assert small["derived_vectors"] == 0 and small["hit_at_10_withheld"] is None
    assert all(0 <= r["hit_at_10"] <= 1 for r in small["results"])
    assert large["vectors"]["edge"] == {"real": 250, "derived": 150}
    assert large["hit_at_10_withheld"]
    assert all(r["hit_at_10"] is None for r in large["results"])

    printed = capsys.readouterr().out
    assert "engine layer" in printed and "sdk layer" in printed
    real = sum(v["real"] for v in large["vectors"].values())
    assert "withheld" in printed and f"{real:,} / {large['derived_vectors']:,}" in printed
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert result["png"] is None and not png.exists()
    else:
        assert result["png"] == str(png)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # A cached database with another real/derived split is rebuilt, not silently reused.
    again = tmp_path / "again.json"
    argv2 = ["bench", "scale", "--sizes", "400", "--queries", "3", "--warmup", "0"]
    argv2 += ["--layers", "engine", "--cases", "edges/rrf", "--ingest-messages", "0"]
    argv2 += ["--embed-cap", "0", "--out", str(out), "--json", str(again), "--png", str(png)]
    assert main(argv2) == 0
    [rerun] = json.loads(again.read_text())["runs"]
    assert rerun["build"]["cached"] is False and rerun["derived_vectors"] == 0
    assert rerun["ingest"] is None
    # Only the cap's tail was embedded: the 250 cached real edge vectors were reused.
    assert rerun["build"]["embed_texts"] == 400 - 250 + sum(
        max(rerun["build"][k] - 250, 0) for k in ("nodes", "episodes")
    )
    assert not list(out.glob("*.run*"))

    # --cases none: storage and ingestion only (no search, no vector index to wait for).
    bare = tmp_path / "bare.json"
    argv4 = ["bench", "scale", "--sizes", "200", "--cases", "none", "--ingest-messages", "3"]
    assert main([*argv4, "--out", str(out), "--json", str(bare), "--png", str(png)]) == 0
    [only] = json.loads(bare.read_text())["runs"]
    assert only["results"] == [] and only["ingest"]["messages"] == 3
    assert only["bytes_per_fact"] == small["bytes_per_fact"]

    # --show merges saved runs without measuring: for 400 facts the rerun's edges/rrf
    # (and build) replace the first run's, its other cases and its ingestion stay.
    merged_path = tmp_path / "merged.json"
    argv3 = ["bench", "scale", "--show", f"{result_path},{again}", "--json", str(merged_path)]
    assert main([*argv3, "--png", str(png)]) == 0
    merged = json.loads(merged_path.read_text())
    assert [r["size"] for r in merged["runs"]] == [200, 400]
    assert merged["runs"][0] == small
    mixed = merged["runs"][1]
    assert mixed["build"] == rerun["build"] and mixed["ingest"] == large["ingest"]
    by_key = {(r["case"], r["layer"]): r for r in mixed["results"]}
    assert len(by_key) == len(large["results"])
    assert by_key[("edges/rrf", "engine")] == rerun["results"][0]
    assert by_key[("edges/mmr", "sdk")] == next(
        r for r in large["results"] if (r["case"], r["layer"]) == ("edges/mmr", "sdk")
    )
    assert merged["params"]["sizes"] == [200, 400] and len(merged["merged_from"]) == 2


def test_derived_vectors_are_unit_length_seeded_copies_of_real_ones() -> None:
    rng = np.random.default_rng(0)
    real = rng.normal(size=(50, 384)).astype(np.float32)
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    derived = derive_vectors(real, 1_000, 7, Edge)
    assert derived.shape == (1_000, 384) and derived.dtype == np.float32
    assert np.allclose(np.linalg.norm(derived, axis=1), 1, atol=1e-5)
    nearest = (derived @ real.T).max(axis=1)
    assert nearest.min() > 0.8  # each one stays close to the real vector it came from
    assert np.array_equal(derived, derive_vectors(real, 1_000, 7, Edge))
    assert not np.array_equal(derived, derive_vectors(real, 1_000, 8, Edge))


def test_chat_batch_is_fixed_and_the_size_labels_read_well() -> None:
    batch = scale.chat_batch(40, 7)
    assert len(batch) == 40 and batch == scale.chat_batch(40, 7)
    assert {role for role, *_ in batch} <= {"user", "assistant"}
    assert all(text and when for _, _, text, when in batch)
    assert [scale._size_label(n) for n in (400, 10_000, 1_000_000)] == ["400", "10k", "1M"]
