"""The embedder's integer-kernel model, prepared from the shipped weights on first load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphrecall.ml import quantize
from graphrecall.ml.embedder import MiniLMEmbedder

TEXTS = [
    "Alice moved to Berlin.",
    "On 8 May 2023, Melanie: 5 years already!\n(replying to Caroline: How long have you been)",
    "Bob plays the trumpet in a jazz band on Fridays.",
    "Thanks!",
]


def test_integer_model_agrees_with_the_shipped_weights() -> None:
    fast = MiniLMEmbedder().embed(TEXTS)
    exact = MiniLMEmbedder(quantize=False).embed(TEXTS)
    cosines = (fast * exact).sum(axis=1)
    assert cosines.min() > 0.97, cosines
    # Not the same computation: the integer model is really in use.
    assert np.abs(fast - exact).max() > 1e-4


def test_a_text_gets_the_same_vector_in_any_batch() -> None:
    embedder = MiniLMEmbedder()
    together = embedder.embed(TEXTS)
    for i, text in enumerate(TEXTS):
        embedder._cache.clear()
        np.testing.assert_allclose(embedder.embed([text])[0], together[i], atol=1e-6)


def test_the_model_is_built_once_then_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Path] = []
    real_build = quantize._build

    def counting_build(source: Path) -> bytes:
        built.append(source)
        return real_build(source)

    monkeypatch.setattr(quantize, "_build", counting_build)
    first = MiniLMEmbedder(model_cache=tmp_path).embed(TEXTS[:1])
    cached = list(tmp_path.glob("minilm-*.onnx"))
    assert len(cached) == 1 and len(built) == 1
    assert not list(tmp_path.glob("*.part"))
    second = MiniLMEmbedder(model_cache=tmp_path).embed(TEXTS[:1])
    assert len(built) == 1  # read from the cache
    np.testing.assert_allclose(first, second, atol=1e-6)


def test_a_damaged_cache_file_is_rebuilt(tmp_path: Path) -> None:
    good = MiniLMEmbedder(model_cache=tmp_path).embed(TEXTS[:1])
    (cached,) = tmp_path.glob("minilm-*.onnx")
    cached.write_bytes(b"not an onnx model")
    again = MiniLMEmbedder(model_cache=tmp_path).embed(TEXTS[:1])
    np.testing.assert_allclose(good, again, atol=1e-6)
    assert cached.stat().st_size > 1_000_000  # replaced by a good copy


def test_an_unwritable_cache_still_loads(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    vectors = MiniLMEmbedder(model_cache=blocker / "models").embed(TEXTS[:2])
    assert vectors.shape == (2, 384)
