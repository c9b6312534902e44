"""The composition root: one Settings builds the store, the models, the worker and the
services context; ``warm`` loads the models before anything says it is ready."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrecall import runtime
from graphrecall.config import Settings, load_settings
from graphrecall.ml.embedder import CHAT, STOCK, MiniLMEmbedder
from graphrecall.ml.offline_extractor import OfflineExtractor
from graphrecall.store import matrix_cache


def test_the_parts_follow_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GRAPHRECALL_DB", str(tmp_path / "rt.db"))
    monkeypatch.setenv("GRAPHRECALL_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("GRAPHRECALL_EMBED_THREADS", "2")
    monkeypatch.setenv("GRAPHRECALL_WORKER_THREADS", "3")
    monkeypatch.setenv("GRAPHRECALL_TASK_LEASE_SECONDS", "9")
    with runtime.build(load_settings()) as rt:
        embedder = rt.models.embedder
        assert isinstance(embedder, MiniLMEmbedder)
        assert (embedder.threads, embedder.model_cache) == (2, tmp_path / "models")
        assert isinstance(rt.models.extractor, OfflineExtractor)
        assert (rt.worker.threads, rt.worker.lease_seconds) == (3, 9.0)
        assert rt.context.store is rt.store and rt.context.embedder is embedder
        assert rt.models.cross_encoder is None
        assert not rt.ready


def test_warm_loads_every_model_and_times_each_phase(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    settings = Settings(db=str(tmp_path / "warm.db"), model_cache=cache)
    with runtime.build(settings) as rt:
        timings = rt.warm()
        assert rt.ready
        assert {"database open", "embedder ready", "extractor ready"} <= set(timings)
        embedder = rt.models.embedder
        assert isinstance(embedder, MiniLMEmbedder) and embedder.computed == 0
        # The default model ships on integer kernels: nothing to build.
        assert embedder.family == CHAT.family and not list(cache.glob("*.onnx"))
    stock = Settings(db=str(tmp_path / "stock.db"), model_cache=cache, embedder="minilm")
    with runtime.build(stock) as rt:
        rt.warm()
        # The stock model's integer-kernel version was built into the configured cache.
        assert len(list(cache.glob("minilm-*.onnx"))) == 1


def test_a_store_keeps_the_embedder_its_vectors_were_made_by(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = str(tmp_path / "made.db")
    with runtime.build(Settings(db=db, embedder="minilm", extractor="none")) as rt:
        assert rt.store.setting(runtime.EMBEDDER_SETTING, "?") == STOCK.family
    # Configured for the chat model, the store's stock vectors still decide: no ranking
    # mixes two models' vectors.
    with runtime.build(Settings(db=db, extractor="none")) as rt:
        embedder = rt.models.embedder
        assert isinstance(embedder, MiniLMEmbedder) and embedder.family == STOCK.family
        assert rt.context.embedder is embedder and rt.worker.ctx.embedder is embedder
    assert "made by all-MiniLM-L6-v2, not the configured graphrecall-chat" in caplog.text
    with runtime.build(Settings(db=str(tmp_path / "new.db"), extractor="none")) as rt:
        embedder = rt.models.embedder
        assert isinstance(embedder, MiniLMEmbedder) and embedder.family == CHAT.family
        assert rt.store.setting(runtime.EMBEDDER_SETTING, "?") == CHAT.family


def test_without_models_nothing_is_loaded(tmp_path: Path) -> None:
    settings = Settings(db=str(tmp_path / "bare.db"), embedder="none", extractor="none")
    with runtime.build(settings) as rt:
        assert rt.models.embedder is None and rt.models.extractor is None
        assert set(rt.warm()) == {"database open", "date parser ready"}


def test_the_vector_cache_bound_follows_the_settings(tmp_path: Path) -> None:
    settings = Settings(db=str(tmp_path / "c.db"), embedder="none", vector_cache_mb=64)
    try:
        with runtime.build(settings) as rt:
            assert rt.store._vectors.matrices.max_bytes == 64 * 2**20  # type: ignore[attr-defined]
    finally:
        matrix_cache.configure(None)
    with runtime.build(Settings(db=str(tmp_path / "d.db"), embedder="none")) as rt:
        bound = rt.store._vectors.matrices.max_bytes  # type: ignore[attr-defined]
        assert bound == matrix_cache.default_max_bytes()


def test_a_database_path_under_a_file_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(runtime.StartupError, match=f"{blocker} is not a folder.*GRAPHRECALL_DB"):
        runtime.build(Settings(db=str(blocker / "x.db")))
