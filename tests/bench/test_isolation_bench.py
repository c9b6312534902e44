"""``graphrecall bench isolation`` end to end at a tiny size, through the CLI entry point:
a real server subprocess, tenant A's pattern searches from a process of their own, and
the JSON of the documented shape. No timing assertions: benchmarks measure speed, tests
check behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrecall.cli import main


def test_bench_isolation_times_tenant_b_alone_and_under_tenant_a(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench-out"
    path = tmp_path / "isolation.json"
    argv = ["bench", "isolation", "--memories", "50", "--chars", "200", "--attackers", "2"]
    argv += ["--seconds", "1", "--out", str(out), "--json", str(path)]
    assert main(argv) == 0
    report = json.loads(path.read_text())
    assert report["memories"] == 50 and report["attackers"] == 2
    for phase in ("tenant_b_alone", "tenant_b_under_load"):
        stats = report[phase]
        assert stats["requests"] > 0 and 0 < stats["p50_ms"] <= stats["p95_ms"] <= stats["max_ms"]
        assert 0 <= stats["over_target"] <= stats["requests"]
    assert set(report["added_ms"]) == {"p50_ms", "p95_ms", "max_ms"}
    answers = report["tenant_a"]["answers"]
    assert answers.get("ok", 0) > 0  # A's searches ran (refusals name the regex gate)
    assert set(answers) <= {"ok", "VALIDATION_ERROR"}
    assert "tenant B" in capsys.readouterr().out
