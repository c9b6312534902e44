"""The benchmark's server process: waiting for its index copies after a bulk write."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrecall_bench.server import ServerProcess


def _server(tmp_path: Path, statuses: list[int], monkeypatch: pytest.MonkeyPatch) -> ServerProcess:
    server = ServerProcess(tmp_path / "x.db", "gr_test_key_0123456789", tmp_path / "log")
    looks = iter(statuses)
    monkeypatch.setattr(server, "index_status", lambda: {"ready": 1, "building": next(looks)})
    monkeypatch.setattr("graphrecall_bench.server.time.sleep", lambda _s: None)
    return server


def test_wait_for_copies_needs_two_quiet_looks_in_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A build, a quiet look, then a catch-up the next search started: not done yet.
    server = _server(tmp_path, [1, 1, 0, 1, 0, 0], monkeypatch)
    searches: list[int] = []
    waited = server.wait_for_copies(lambda: searches.append(1))
    assert len(searches) == 6  # a search before each look
    assert waited >= 0


def test_wait_for_copies_gives_up_after_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _server(tmp_path, [1] * 10, monkeypatch)
    with pytest.raises(RuntimeError, match="still building"):
        server.wait_for_copies(timeout_s=0)
