"""Training the cross-encoder: (question, turn with its context) -> relevance, initialised
from all-MiniLM-L6-v2's encoder. The pair is read jointly (every token attends to both
segments); the logit is the scaled cosine of the mean of the question's token states and
the mean of the passage's (the pooling the model was trained with), plus a bias. So the
untrained model already ranks as a bi-encoder would, and training teaches the joint
reading. Two heads that start from nothing stayed at chance for 40 steps on this machine
(a linear head on [CLS], never trained in this model, and one on the pair's mean); see
docs/models.md. Trained listwise: each
question's evidence turn against its hard negatives from the same conversation (BM25's
top turns that hold no evidence, plus random turns of the conversation), a softmax over
the group. The passage is the text the product embeds (``passages.text``: speaker, day,
the start of the message it replies to).

Held-out measure (early stopping): rerank the first ``RERANK_DEPTH`` candidates of the
stock RRF ranking (stock vectors + BM25) and take evidence recall@5/@10 of the result.

Needs the ``training`` extra (torch, transformers); the product never imports this.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from graphrecall_training import evaluate, loop
from graphrecall_training.bi_encoder import base_model_dir, tokenizer
from graphrecall_training.mine import Encoder, Pair

log = logging.getLogger(__name__)

MAX_TOKENS = 160  # question + passage; the passage is cut first
RERANK_DEPTH = 20


@dataclass(frozen=True)
class Settings:
    seed: int = 13
    groups: int = 16  # questions per step
    negatives: int = 3  # per question per step
    lr: float = 3e-5
    epochs: int = 1
    minutes: float = 45.0
    eval_every: int = 150


HEAD_FILE = "head.pt"


def _model(model_dir: Path) -> Any:
    """The encoder with its head: ``model_dir`` is the base model's folder, or one this
    module saved (the encoder's files plus ``head.pt``)."""
    import torch
    from transformers import AutoModel

    class SegmentCosineScorer(torch.nn.Module):  # type: ignore[misc]  # torch is untyped
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(model_dir))
            # logit = scale * cosine + bias; the scale of the bi-encoder's loss to start
            self.head = torch.nn.Linear(1, 1)
            with torch.no_grad():
                self.head.weight.fill_(20.0)
                self.head.bias.zero_()
            head = model_dir / HEAD_FILE
            if head.is_file():
                self.head.load_state_dict(torch.load(head, weights_only=True))

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            states = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.to(states.dtype)
            second = token_type_ids.to(states.dtype) * mask
            first = mask - second
            question = _mean(states, first)
            passage = _mean(states, second)
            cosine = torch.nn.functional.cosine_similarity(question, passage, dim=-1)
            return self.head(cosine.unsqueeze(-1))  # logits, [batch, 1]

        def save_pretrained(self, out: str) -> None:
            self.encoder.save_pretrained(out)
            torch.save(self.head.state_dict(), Path(out) / HEAD_FILE)

    def _mean(states: Any, weights: Any) -> Any:
        w = weights.unsqueeze(-1)
        return (states * w).sum(dim=1) / w.sum(dim=1).clamp(min=1.0)

    return SegmentCosineScorer()


class Scorer:
    def __init__(self, model_dir: Path) -> None:
        import torch

        self.torch = torch
        self.model = _model(model_dir)
        self.tok = tokenizer(MAX_TOKENS)
        self.tok.enable_truncation(MAX_TOKENS, strategy="only_second")

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> Any:
        torch = self.torch
        enc = self.tok.encode_batch(list(pairs))
        ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
        types = torch.tensor([e.type_ids for e in enc], dtype=torch.long)
        logits = self.model(input_ids=ids, attention_mask=mask, token_type_ids=types)
        return logits[:, 0]

    def scores(self, query: str, texts: Sequence[str], batch: int = 32) -> list[float]:
        torch = self.torch
        self.model.eval()
        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch):
                out += self([(query, t) for t in texts[start : start + batch]]).tolist()
        return out


def reranked_recall(
    cases: Sequence[evaluate.Case],
    first_stage: dict[int, list[int]],
    score: Any,
    depth: int = RERANK_DEPTH,
) -> dict[str, float]:
    """Evidence recall@5/@10 (percent) after reordering each case's first ``depth``
    candidates of ``first_stage`` by ``score(query, texts)``."""
    sums = {"rerank@5": 0.0, "rerank@10": 0.0}
    for n, case in enumerate(cases):
        order = first_stage[n]
        head = order[:depth]
        values = score(case.query, [case.texts[i] for i in head])
        ranked = [i for _, i in sorted(zip(values, head, strict=True), key=lambda s: -s[0])]
        ranked += order[depth:]
        for k in (5, 10):
            sums[f"rerank@{k}"] += len(case.evidence.intersection(ranked[:k])) / len(case.evidence)
    return {key: round(100 * v / max(len(cases), 1), 2) for key, v in sums.items()}


def first_stage_orders(cases: Sequence[evaluate.Case], stock: Encoder) -> dict[int, list[int]]:
    """Each case's candidates in the stock RRF order (vectors + BM25)."""
    return {n: evaluate.rrf_order(case, stock) for n, case in enumerate(cases)}


def train(
    pairs: Sequence[Pair],
    held_out: Sequence[evaluate.Case],
    first_stage: dict[int, list[int]],
    out: Path,
    settings: Settings,
) -> dict[str, Any]:
    import torch

    loop.seed(settings.seed)
    scorer = Scorer(base_model_dir())
    width = 1 + settings.negatives

    def loss_of(groups: list[Pair], rng: random.Random) -> Any:
        inputs: list[tuple[str, str]] = []
        for p in groups:
            negatives = list(p.negatives)
            rng.shuffle(negatives)
            negatives = (negatives * width)[: settings.negatives]
            inputs += [(p.query, p.positive)] + [(p.query, n) for n in negatives]
        logits = scorer(inputs).view(len(groups), width)
        return torch.nn.functional.cross_entropy(logits, torch.zeros(len(groups), dtype=torch.long))

    schedule = loop.Schedule(
        seed=settings.seed,
        batch=settings.groups,
        lr=settings.lr,
        epochs=settings.epochs,
        minutes=settings.minutes,
        eval_every=settings.eval_every,
        # a fresh head scores at random: nothing to measure before the first steps
        evaluate_first=False,
    )
    return loop.fit(
        scorer.model,
        [p for p in pairs if p.negatives],
        loss_of,
        lambda: reranked_recall(held_out, first_stage, scorer.scores),
        _selected,
        out,
        schedule,
        {**asdict(settings), "held_out_questions": len(held_out)},
    )


def _selected(row: dict[str, Any]) -> float:
    return float(row["rerank@5"] + row["rerank@10"])
