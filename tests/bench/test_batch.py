"""``graphrecall bench batch`` end to end at a tiny size, through the CLI entry point: a
real server subprocess, live messages idle, in rounds while a batch runs, and idle again
once it has finished; the JSON of the documented shape. No timing assertions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrecall.cli import main


def test_bench_batch_samples_idle_the_batch_in_rounds_and_idle_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "batch.json"
    argv = ["bench", "batch", "--items", "40", "--threads", "4", "--live", "3", "--rounds", "2"]
    argv += ["--gap", "0.5", "--after", "300", "--json", str(path)]
    argv += ["--workdir", str(tmp_path / "work")]
    assert main(argv) == 0
    report = json.loads(path.read_text())
    assert [p["phase"] for p in report["phases"]] == ["idle", "batch 1", "batch 2", "idle after"]
    for phase in report["phases"]:
        assert len(phase["samples"]["processed"]) == 3 and len(phase["load"]) == 2
        assert phase["http"]["p50_ms"] <= phase["processed"]["p50_ms"]
    assert report["batch_status"] == "succeeded"
    assert report["idle"]["processed"]["n"] == 6 and report["batch"]["processed"]["n"] == 6
    during = sum(p["items_done_during"] for p in report["phases"][1:3])
    assert report["batch"]["items_done_during"] == during
    assert "batch of 40 items" in capsys.readouterr().out
