"""``graphrecall bench stall`` end to end at a tiny size, through the CLI entry point: a
real server subprocess, tenant A's heavy requests from a process of their own, and the
JSON of the documented shape. No timing assertions: benchmarks measure speed, tests check
behaviour (here: that the capped requests are accepted and the audit's are refused)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrecall.cli import main


def _run(tmp_path: Path, shape: str) -> dict[str, object]:
    path = tmp_path / f"stall-{shape}.json"
    argv = ["bench", "stall", "--shape", shape, "--facts", "20", "--memories", "20"]
    argv += ["--attackers", "1", "--seconds", "0.5", "--out", str(tmp_path / shape)]
    argv += ["--json", str(path)]
    assert main(argv) == 0
    report: dict[str, object] = json.loads(path.read_text())
    return report


def test_bench_stall_times_tenant_b_idle_and_under_each_heavy_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capped = _run(tmp_path, "capped")
    phases = capped["phases"]
    assert isinstance(phases, dict)
    assert list(phases) == ["idle", "plain", "template", "memory", "terms", "idle_after"]
    for name, phase in phases.items():
        stats = phase["tenant_b"]
        assert stats["requests"] > 0 and 0 < stats["p50_ms"] <= stats["p95_ms"] <= stats["max_ms"]
        assert phase["ratio_p50"] > 0
        if not name.startswith("idle"):
            # The heaviest requests the caps allow are accepted, every one of them.
            assert set(phase["tenant_a"]["answers"]) == {"200"}, (name, phase["tenant_a"])
    assert "tenant B during" in capsys.readouterr().out

    audit = _run(tmp_path, "audit")
    phases = audit["phases"]
    assert isinstance(phases, dict)
    assert "refused" in phases["template"]  # 60 slots of limit 1000: refused when saved
    assert set(phases["memory"]["tenant_a"]["answers"]) == {"rpc -32602"}
    assert set(phases["terms"]["tenant_a"]["answers"]) == {"400"}
