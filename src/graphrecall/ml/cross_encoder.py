"""Cross-encoders: score (query, passage) pairs jointly, for an optional rerank stage.

No cross-encoder weights ship for offline use (docs: offline-models.md), so this stage is
off unless ``GRAPHRECALL_CROSS_ENCODER`` names one: a local directory holding an ONNX
sequence-classification export (``model.onnx`` + ``tokenizer.json``), or the URL of a
``/rerank`` endpoint (text-embeddings-inference, Cohere, Jina, vLLM). Scoring never raises:
on any failure ``score`` logs and returns None, and the caller keeps the retrieved order,
because a broken reranker must not break recall.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float64]

_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PAD_TOKENS = ("[PAD]", "<pad>", "<|pad|>")


class CrossEncoder(Protocol):
    """Relevance of passages to a query, each in [0, 1]."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float] | None:
        """Relevance of each passage to the query, each in [0, 1] (higher = more relevant),
        same order as passages. Returns None when the model cannot score (unavailable,
        HTTP error, timeout) so the caller falls back to the retrieved order."""
        ...


def _sigmoid(x: Floats) -> Floats:
    # exp of a clipped value cannot overflow; float64 keeps tiny differences apart.
    result: Floats = 1.0 / (1.0 + np.exp(-np.clip(x, -500.0, 500.0)))
    return result


def _probabilities(logits: Floats) -> Floats | None:
    """Logits as exported by HF sequence classifiers -> P(relevant), or None if unknown."""
    if logits.ndim == 1:
        return _sigmoid(logits)
    if logits.ndim == 2 and logits.shape[1] == 1:
        return _sigmoid(logits[:, 0])
    if logits.ndim == 2 and logits.shape[1] == 2:
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        result: Floats = shifted[:, 1] / shifted.sum(axis=1)
        return result
    return None


class OnnxCrossEncoder:
    """A local ONNX sequence-classification model (e.g. an ms-marco-MiniLM-L-6-v2 export).

    Loaded lazily on the first ``score`` so that configuring it costs nothing at start-up;
    a load failure is logged once and remembered, and ``score`` then returns None.
    """

    def __init__(
        self, directory: str | Path, *, max_tokens: int = 512, batch_size: int = 32
    ) -> None:
        if max_tokens < 4 or batch_size < 1:
            raise ValueError("max_tokens must be >= 4 and batch_size >= 1")
        self.directory = Path(directory).expanduser()
        self.name = f"onnx:{self.directory}"
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: dict[str, Any] = {}
        self._failed = False

    def _load(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_path = self.directory / "model.onnx"
        tokenizer_path = self.directory / "tokenizer.json"
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise FileNotFoundError(f"{path} does not exist")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        declared = {i.name: i.type for i in session.get_inputs()}
        if "input_ids" not in declared:
            raise ValueError(f"{model_path} has no input_ids input (has {sorted(declared)})")
        inputs = {
            name: np.int32 if declared[name] == "tensor(int32)" else np.int64
            for name in _MODEL_INPUTS
            if name in declared
        }
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # Exports often pad every input to a fixed length; pad to the batch's longest instead,
        # keeping the pad token the tokenizer was configured with.
        padding = tokenizer.padding or {}
        pad_token = padding.get("pad_token")
        pad_id = padding.get("pad_id")
        if pad_token is None or pad_id is None:
            pad_token, pad_id = "[PAD]", 0
            for candidate in _PAD_TOKENS:
                token_id = tokenizer.token_to_id(candidate)
                if token_id is not None:
                    pad_token, pad_id = candidate, token_id
                    break
        tokenizer.no_padding()
        tokenizer.enable_padding(
            direction=padding.get("direction", "right"),
            pad_id=pad_id,
            pad_type_id=padding.get("pad_type_id", 0),
            pad_token=pad_token,
        )
        tokenizer.enable_truncation(self.max_tokens, strategy="longest_first")
        self._session, self._tokenizer, self._inputs = session, tokenizer, inputs
        log.info("loaded cross-encoder %s (inputs %s)", self.name, ", ".join(inputs))

    def _ready(self) -> bool:
        with self._lock:
            if self._session is None and not self._failed:
                try:
                    self._load()
                except Exception as exc:  # any load failure disables the stage, never raises
                    self._failed = True
                    log.warning("cross-encoder %s unavailable: %s", self.name, exc)
            return self._session is not None

    def score(self, query: str, passages: Sequence[str]) -> list[float] | None:
        if not passages:
            return []
        if not self._ready():
            return None
        # Sorting by length keeps padding small inside each batch.
        order = sorted(range(len(passages)), key=lambda i: len(passages[i]))
        out = np.zeros(len(passages), dtype=np.float64)
        try:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                scores = self._score_batch(query, [passages[i] for i in idx])
                if scores is None:
                    return None
                out[idx] = scores
        except Exception as exc:  # the caller keeps the retrieved order
            log.warning("cross-encoder %s failed to score: %s", self.name, exc)
            return None
        return [float(s) for s in out]

    def _score_batch(self, query: str, passages: list[str]) -> Floats | None:
        encodings = self._tokenizer.encode_batch([(query, p) for p in passages])
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        feeds = {name: np.array(columns[name], dtype=dtype) for name, dtype in self._inputs.items()}
        outputs = self._session.run(None, feeds)
        logits = np.asarray(outputs[0], dtype=np.float64)
        probabilities = _probabilities(logits)
        if probabilities is None or probabilities.shape != (len(passages),):
            log.warning(
                "cross-encoder %s: unsupported output shape %s (want [batch], [batch, 1] "
                "or [batch, 2])",
                self.name,
                logits.shape,
            )
            return None
        return probabilities


def _as_score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def _parse_rerank(payload: Any, count: int) -> list[float] | None:
    """Both response shapes -> scores in passage order, or None if malformed/incomplete.

    TEI: ``[{"index": i, "score": s}, ...]``; Cohere/Jina/vLLM:
    ``{"results": [{"index": i, "relevance_score": s}, ...]}`` (ordered by relevance).
    """
    items = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(items, list):
        return None
    scores: list[float | None] = [None] * count
    for item in items:
        if not isinstance(item, dict):
            return None
        index = item.get("index")
        raw = item.get("relevance_score", item.get("score"))
        value = _as_score(raw)
        if isinstance(index, bool) or not isinstance(index, int) or value is None:
            return None
        if not 0 <= index < count:
            return None
        scores[index] = value
    complete = [s for s in scores if s is not None]
    if len(complete) != count:
        return None
    # Raw logits: squash all of them, so that scores stay comparable within the response.
    if any(not 0.0 <= s <= 1.0 for s in complete):
        return [float(s) for s in _sigmoid(np.array(complete, dtype=np.float64))]
    return complete


class HttpCrossEncoder:
    """A ``/rerank`` endpoint: text-embeddings-inference, or Cohere-style when ``model`` is set.

    ``url`` is the full endpoint (e.g. ``http://localhost:8080/rerank``). Every failure
    (connection, status, timeout, malformed or incomplete body) logs and returns None.
    """

    def __init__(
        self,
        url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.url = url
        self.model = model
        self.name = f"http:{url}"
        self.timeout = timeout
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"

    def _body(self, query: str, passages: Sequence[str]) -> dict[str, Any]:
        if self.model is not None:
            return {
                "model": self.model,
                "query": query,
                "documents": list(passages),
                "top_n": len(passages),
            }
        return {"query": query, "texts": list(passages), "raw_scores": False}

    def score(self, query: str, passages: Sequence[str]) -> list[float] | None:
        if not passages:
            return []
        try:
            # httpx is imported here: the offline default never needs it.
            import httpx

            response = httpx.post(
                self.url,
                json=self._body(query, passages),
                headers=self._headers,
                timeout=self.timeout,
            )
            response.raise_for_status()
            payload = response.json()
        except Exception as exc:  # the caller keeps the retrieved order
            log.warning("cross-encoder %s failed: %s", self.name, exc)
            return None
        scores = _parse_rerank(payload, len(passages))
        if scores is None:
            log.warning("cross-encoder %s: malformed or incomplete rerank response", self.name)
        return scores


def load_cross_encoder(
    spec: str | None, *, model: str | None = None, api_key: str | None = None
) -> CrossEncoder | None:
    """From the setting GRAPHRECALL_CROSS_ENCODER: None/"" -> None (the caller uses the offline
    default); a path to a directory -> OnnxCrossEncoder; an http(s):// URL -> HttpCrossEncoder.

    ``model`` and ``api_key`` only apply to a URL. A path that does not exist still gives an
    OnnxCrossEncoder, which logs and returns None from ``score``, so a typo is visible in
    the log rather than fatal. Any other URL scheme is a configuration error.
    """
    spec = (spec or "").strip()
    if not spec:
        return None
    scheme, sep, _ = spec.partition("://")
    if sep:
        if scheme.lower() in ("http", "https"):
            return HttpCrossEncoder(spec, model=model, api_key=api_key)
        raise ValueError(f"unsupported cross-encoder URL scheme {scheme!r} (use http or https)")
    return OnnxCrossEncoder(spec)
