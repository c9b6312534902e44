"""Trained weights -> the int8 ONNX file the product runs, and the parity check.

The recipe is the product's own (``ml/quantize.py``): export fp32, ``quant_pre_process``,
then ``quantize_dynamic`` (int8 weights per output channel, MatMulInteger), so the shipped
file runs on onnxruntime's integer kernels as it is, with no re-quantising on first load.

Parity: the int8 file against the fp32 torch model on the same texts — mean and worst
cosine of their vectors (bi-encoder), Spearman agreement of their scores (cross-encoder).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def to_onnx(model: Any, out: Path, output: str) -> None:
    """``model`` (a transformers module) as an fp32 ONNX file with dynamic batch and
    sequence axes, output named ``output``."""
    import torch

    model.eval()
    ids = torch.tensor([[101, 7592, 2088, 102]], dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    axes[output] = {0: "batch", 1: "sequence"} if output == "last_hidden_state" else {0: "batch"}
    with torch.inference_mode():
        torch.onnx.export(
            _wrapped(model, output),
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(out),
            input_names=list(INPUTS),
            output_names=[output],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _wrapped(model: Any, output: str) -> Any:
    import torch

    class Wrapped(torch.nn.Module):  # type: ignore[misc]  # torch is untyped here
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            result = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            if output == "last_hidden_state":
                return result.last_hidden_state
            return getattr(result, "logits", result)  # a module that returns its logits

    return Wrapped()


def to_int8(model: Any, out: Path, output: str) -> str:
    """``model`` as the int8 ONNX file ``out`` (fp32 export, then :func:`quantize`);
    returns the file's sha256."""
    with tempfile.TemporaryDirectory(prefix="graphrecall-export-") as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        to_onnx(model, fp32, output)
        return quantize(fp32, out)


def quantize(fp32: Path, out: Path) -> str:
    """The product's recipe; returns the file's sha256."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory(prefix="graphrecall-export-") as tmp:
        folded = Path(tmp) / "folded.onnx"
        quant_pre_process(str(fp32), str(folded), skip_symbolic_shape=True)
        quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=True)
    return hashlib.sha256(out.read_bytes()).hexdigest()


def embedding_parity(torch_encode: Any, onnx_encode: Any, texts: Sequence[str]) -> dict[str, float]:
    """Cosine between the fp32 model's and the int8 file's vectors of ``texts``."""
    a = np.asarray(torch_encode(texts), dtype=np.float64)
    b = np.asarray(onnx_encode(texts), dtype=np.float64)
    cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {
        "mean_cosine": round(float(cosine.mean()), 4),
        "min_cosine": round(float(cosine.min()), 4),
    }


def rank_parity(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman correlation of two score lists (ties broken by position)."""
    ra = np.argsort(np.argsort(np.asarray(a), kind="stable"), kind="stable")
    rb = np.argsort(np.argsort(np.asarray(b), kind="stable"), kind="stable")
    return round(float(np.corrcoef(ra, rb)[0, 1]), 4)


def onnx_encoder(path: Path, threads: int = 2) -> Any:
    """A ``mine.Encoder`` running ``path`` as the product does (``ml/embedder.py``: one
    text per run on integer kernels, mean pooling, L2 norm), caching each text's vector."""
    import onnxruntime as ort

    from graphrecall_training.bi_encoder import MAX_TOKENS, tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tok = tokenizer(MAX_TOKENS)
    tok.no_padding()
    cache: dict[str, Any] = {}

    def encode(texts: Sequence[str]) -> Any:
        for text in texts:
            if text in cache:
                continue
            ids = np.asarray([tok.encode(text).ids], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            pooled = np.asarray(session.run(None, feeds)[0], dtype=np.float32)[0].mean(axis=0)
            cache[text] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return np.stack([cache[t] for t in texts]).astype(np.float32)

    return encode


def onnx_scorer(path: Path, threads: int = 2) -> Any:
    """``(query, texts) -> scores`` running the int8 cross-encoder at ``path`` as the
    product does (``ml/cross_encoder.py``: pairs truncated longest-first at the training
    length, raw logits)."""
    import onnxruntime as ort

    from graphrecall_training.bi_encoder import tokenizer
    from graphrecall_training.cross_encoder import MAX_TOKENS

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    tok = tokenizer(MAX_TOKENS)
    tok.enable_truncation(MAX_TOKENS, strategy="only_second")

    def score(query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        enc = tok.encode_batch([(query, t) for t in texts])
        feeds = {
            "input_ids": np.asarray([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in enc], dtype=np.int64),
        }
        logits = np.asarray(session.run(None, feeds)[0], dtype=np.float64)
        return [float(x) for x in logits.reshape(len(texts))]

    return score


def calibration(score: Any, cases: Sequence[Any], depth: int = 30) -> tuple[float, float]:
    """``(scale, shift)`` with ``sigmoid(scale * logit + shift)`` ~ P(evidence): a
    one-feature logistic regression (Newton's method) over each case's ``depth``
    candidates, evidence against the rest."""
    xs: list[float] = []
    ys: list[float] = []
    from graphrecall_training.mine import bm25_order

    for case in cases:
        # a first stage's kind of candidates: BM25's best, then the conversation's order
        lexical = bm25_order(case.query, case.texts)
        order = (lexical + [i for i in range(len(case.texts)) if i not in set(lexical)])[:depth]
        xs += score(case.query, [case.texts[i] for i in order])
        ys += [1.0 if i in case.evidence else 0.0 for i in order]
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    features = np.stack([x, np.ones_like(x)], axis=1)
    w = np.zeros(2)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(features @ w)))
        gradient = features.T @ (p - y)
        hessian = (features * (p * (1 - p))[:, None]).T @ features + 1e-6 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return round(float(w[0]), 6), round(float(w[1]), 6)
