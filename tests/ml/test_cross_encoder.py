"""Cross-encoders against real parts: a tiny random ONNX classifier built here, and a real
local HTTP server speaking the TEI and Cohere rerank formats. These check wiring, shapes and
failure handling, not ranking quality (no cross-encoder weights ship offline)."""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphrecall.ml.cross_encoder import (
    HttpCrossEncoder,
    OnnxCrossEncoder,
    load_cross_encoder,
)

VOCAB = 30522
HIDDEN = 8
QUERY = "where does alice live"
PASSAGES = [
    "Alice moved to Berlin last year.",
    "Bananas are rich in potassium.",
    "Bob works at a bakery in Paris and likes long walks along the river.",
    "The weather is nice.",
]
LONG = " ".join(["a much longer passage that pads every other row of its batch"] * 20)


def _weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "word": rng.normal(size=(VOCAB, HIDDEN)).astype(np.float32),
        "type": rng.normal(size=(2, HIDDEN)).astype(np.float32),
        "w": rng.normal(scale=3.0, size=(HIDDEN, 1)).astype(np.float32),
        "b": np.array([0.1], dtype=np.float32),
    }


def _build_model(
    directory: Path,
    *,
    logits: int = 1,
    inputs: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids"),
    seed: int = 0,
) -> Path:
    """Masked mean of word (+ token-type) embeddings -> linear head, like a tiny BERT
    sequence classifier. With 2 logits the head is [-z, 0], so softmax[1] == sigmoid(z)."""
    w = _weights(seed)
    head_w, head_b = w["w"], w["b"]
    if logits == 2:
        head_w = np.concatenate([-head_w, np.zeros_like(head_w)], axis=1)
        head_b = np.concatenate([-head_b, np.zeros_like(head_b)])
    inits = [
        numpy_helper.from_array(w["word"], "word_emb"),
        numpy_helper.from_array(w["type"], "type_emb"),
        numpy_helper.from_array(head_w, "head_w"),
        numpy_helper.from_array(head_b, "head_b"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
    ]
    nodes = [helper.make_node("Gather", ["word_emb", "input_ids"], ["hidden"])]
    if "token_type_ids" in inputs:
        nodes += [
            helper.make_node("Gather", ["type_emb", "token_type_ids"], ["types"]),
            helper.make_node("Add", ["hidden", "types"], ["summed"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["hidden"], ["summed"]))
    if "attention_mask" in inputs:
        nodes.append(helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT))
    else:  # every position counts
        nodes += [
            helper.make_node("Cast", ["input_ids"], ["ids_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["ids_f", "zero"], ["zeros"]),
            helper.make_node("Add", ["zeros", "one"], ["mask"]),
        ]
        inits += [
            numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
            numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        ]
    nodes += [
        helper.make_node("Unsqueeze", ["mask", "axis2"], ["mask3"]),
        helper.make_node("Mul", ["summed", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["total"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "axis1"], ["count"], keepdims=0),
        helper.make_node("Div", ["total", "count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "head_w"], ["projected"]),
        helper.make_node("Add", ["projected", "head_b"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in inputs],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", logits])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    directory.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(directory / "model.onnx"))
    tokenizer = resources.files("graphrecall.ml").joinpath("data/minilm-tokenizer.json")
    with resources.as_file(tokenizer) as path:
        shutil.copy(path, directory / "tokenizer.json")
    return directory


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_model(tmp_path_factory.mktemp("ce1"))


def test_scores_are_probabilities_in_order_and_deterministic(model_dir: Path) -> None:
    encoder = OnnxCrossEncoder(model_dir)
    assert encoder.name == f"onnx:{model_dir}"
    scores = encoder.score(QUERY, PASSAGES)
    assert scores is not None and len(scores) == len(PASSAGES)
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores)
    assert len(set(scores)) == len(scores)  # a random head separates distinct passages
    assert encoder.score(QUERY, PASSAGES) == scores
    reversed_scores = encoder.score(QUERY, PASSAGES[::-1])
    assert reversed_scores is not None
    np.testing.assert_allclose(reversed_scores[::-1], scores, atol=1e-6)
    assert encoder.score(QUERY, []) == []


def _reference(directory: Path, passage: str, *, with_types: bool = True) -> float:
    """The tiny model in numpy on the unpadded pair encoding."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    enc = tokenizer.encode(QUERY, passage)
    assert 1 in enc.type_ids  # a real pair: the passage is segment 1
    w = _weights()
    hidden = w["word"][enc.ids] + (w["type"][enc.type_ids] if with_types else 0.0)
    return float(1.0 / (1.0 + np.exp(-(hidden.mean(axis=0) @ w["w"] + w["b"])[0])))


def test_matches_a_numpy_reference_of_the_pair_encoding(model_dir: Path) -> None:
    scores = OnnxCrossEncoder(model_dir).score(QUERY, PASSAGES[:1])
    assert scores is not None
    assert scores[0] == pytest.approx(_reference(model_dir, PASSAGES[0]), abs=1e-5)


def test_padding_and_batching_do_not_change_a_score(model_dir: Path) -> None:
    encoder = OnnxCrossEncoder(model_dir, batch_size=3)
    alone = [encoder.score(QUERY, [p]) for p in PASSAGES]
    batched = encoder.score(QUERY, [*PASSAGES, LONG] * 3)
    assert batched is not None and len(batched) == 3 * (len(PASSAGES) + 1)
    for i, single in enumerate(alone):
        assert single is not None
        for repeat in range(3):
            assert batched[repeat * (len(PASSAGES) + 1) + i] == pytest.approx(single[0], abs=1e-6)


def test_truncates_to_max_tokens(model_dir: Path) -> None:
    encoder = OnnxCrossEncoder(model_dir, max_tokens=16)
    head = "alice lives in berlin with her cat and two dogs near the old river bank"
    scores = encoder.score(QUERY, [f"{head} and then a long tail", f"{head} {LONG}"])
    assert scores is not None
    assert scores[0] == pytest.approx(scores[1], abs=1e-6)  # only the first 16 tokens count
    full = OnnxCrossEncoder(model_dir).score(QUERY, [f"{head} and then a long tail", LONG])
    assert full is not None and full[0] != pytest.approx(full[1], abs=1e-6)


def test_two_logit_head_uses_softmax(tmp_path: Path, model_dir: Path) -> None:
    two = OnnxCrossEncoder(_build_model(tmp_path / "two", logits=2)).score(QUERY, PASSAGES)
    one = OnnxCrossEncoder(model_dir).score(QUERY, PASSAGES)
    assert two is not None and one is not None
    np.testing.assert_allclose(two, one, atol=1e-6)


def test_feeds_only_declared_inputs(tmp_path: Path) -> None:
    directory = _build_model(tmp_path / "ids-mask", inputs=("input_ids", "attention_mask"))
    encoder = OnnxCrossEncoder(directory, batch_size=2)
    batched = encoder.score(QUERY, [PASSAGES[0], LONG])
    alone = encoder.score(QUERY, [PASSAGES[0]])
    assert batched is not None and alone is not None
    assert batched[0] == pytest.approx(alone[0], abs=1e-6)
    # Without a mask every position counts, so this also shows the tokenizer's fixed
    # padding (to 128) is off: a lone pair is scored unpadded.
    only_ids = _build_model(tmp_path / "ids", inputs=("input_ids",))
    scores = OnnxCrossEncoder(only_ids).score(QUERY, PASSAGES[:1])
    assert scores is not None
    assert scores[0] == pytest.approx(_reference(only_ids, PASSAGES[0], with_types=False), abs=1e-5)


def test_unavailable_model_returns_none(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="graphrecall.ml.cross_encoder"):
        missing = OnnxCrossEncoder(tmp_path / "does-not-exist")
        assert missing.score(QUERY, PASSAGES) is None
        assert missing.score(QUERY, PASSAGES) is None
    assert "unavailable" in caplog.text
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx model")
    (broken / "tokenizer.json").write_text("{}")
    assert OnnxCrossEncoder(broken).score(QUERY, PASSAGES) is None


# --- HTTP -------------------------------------------------------------------------------


def _relevance(text: str) -> float:
    return min(len(text) / 100.0, 1.0)


class _RerankHandler(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def _reply(self, status: int, payload: Any) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        if self.path == "/tei":
            scores = [(i, _relevance(t)) for i, t in enumerate(body["texts"])]
            scores.sort(key=lambda item: -item[1])
            self._reply(200, [{"index": i, "score": s} for i, s in scores])
        elif self.path == "/tei-raw":
            raw = [{"index": i, "score": len(t) / 10.0 - 3.0} for i, t in enumerate(body["texts"])]
            self._reply(200, raw)
        elif self.path == "/cohere":
            docs = body["documents"][: body["top_n"]]
            ranked = sorted(enumerate(docs), key=lambda item: -_relevance(item[1]))
            results = [{"index": i, "relevance_score": _relevance(d)} for i, d in ranked]
            self._reply(200, {"id": "x", "results": results, "meta": {}})
        elif self.path == "/missing":
            self._reply(200, {"results": [{"index": 0, "relevance_score": 0.5}]})
        elif self.path == "/garbage":
            self._reply(200, b"<html>not json</html>")
        elif self.path == "/slow":
            time.sleep(1.0)
            self._reply(200, [])
        else:
            self._reply(500, {"error": "boom"})


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _RerankHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_http_tei_format(server: str) -> None:
    encoder = HttpCrossEncoder(f"{server}/tei")
    assert encoder.name == f"http:{server}/tei"
    scores = encoder.score(QUERY, PASSAGES)
    assert scores == pytest.approx([_relevance(p) for p in PASSAGES])
    request = _RerankHandler.requests[-1]
    assert request["body"] == {"query": QUERY, "texts": PASSAGES, "raw_scores": False}
    assert request["auth"] is None


def test_http_cohere_format_with_model_and_key(server: str) -> None:
    encoder = HttpCrossEncoder(f"{server}/cohere", model="rerank-v3", api_key="secret")
    scores = encoder.score(QUERY, PASSAGES)
    assert scores == pytest.approx([_relevance(p) for p in PASSAGES])
    request = _RerankHandler.requests[-1]
    assert request["body"] == {
        "model": "rerank-v3",
        "query": QUERY,
        "documents": PASSAGES,
        "top_n": len(PASSAGES),
    }
    assert request["auth"] == "Bearer secret"


def test_http_raw_logits_are_squashed(server: str) -> None:
    scores = HttpCrossEncoder(f"{server}/tei-raw").score(QUERY, PASSAGES)
    assert scores is not None and all(0.0 < s < 1.0 for s in scores)
    expected = [1.0 / (1.0 + np.exp(-(len(p) / 10.0 - 3.0))) for p in PASSAGES]
    assert scores == pytest.approx(expected)


@pytest.mark.parametrize("path", ["/error", "/missing", "/garbage"])
def test_http_failures_return_none(server: str, path: str) -> None:
    assert HttpCrossEncoder(f"{server}{path}").score(QUERY, PASSAGES) is None


def test_http_timeout_returns_none(server: str, caplog: pytest.LogCaptureFixture) -> None:
    encoder = HttpCrossEncoder(f"{server}/slow", timeout=0.2)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="graphrecall.ml.cross_encoder"):
        assert encoder.score(QUERY, PASSAGES) is None
    assert time.monotonic() - started < 0.9
    assert "failed" in caplog.text


def test_http_unreachable_returns_none() -> None:
    import socket

    with socket.socket() as sock:  # a port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert HttpCrossEncoder(f"http://127.0.0.1:{port}/rerank", timeout=1).score("q", ["p"]) is None


# --- dispatch ---------------------------------------------------------------------------


def test_load_cross_encoder_dispatch(tmp_path: Path) -> None:
    assert load_cross_encoder(None) is None
    assert load_cross_encoder("") is None
    assert load_cross_encoder("   ") is None
    onnx_encoder = load_cross_encoder(str(tmp_path))
    assert isinstance(onnx_encoder, OnnxCrossEncoder) and onnx_encoder.directory == tmp_path
    http_encoder = load_cross_encoder("https://rerank.example/v1/rerank", model="m")
    assert isinstance(http_encoder, HttpCrossEncoder)
    assert http_encoder.name == "http:https://rerank.example/v1/rerank"
    assert http_encoder.model == "m"
    assert isinstance(load_cross_encoder("http://localhost:8080/rerank"), HttpCrossEncoder)
    with pytest.raises(ValueError):
        load_cross_encoder("ftp://host/model")
