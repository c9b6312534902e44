"""Training the cross-encoder: (question, turn with its context) -> relevance, initialised
from all-MiniLM-L6-v2's encoder with a fresh one-logit head, trained listwise: each
question's evidence turn against its hard negatives from the same conversation (BM25's
top turns that hold no evidence, plus random turns of the conversation), a softmax over
the group. The passage is the text the product embeds (``passages.text``: speaker, day,
the start of the message it replies to).

Held-out measure (early stopping): rerank the first ``RERANK_DEPTH`` candidates of the
stock RRF ranking (stock vectors + BM25) and take evidence recall@5/@10 of the result.

Needs the ``training`` extra (torch, transformers); the product never imports this.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphrecall_training import evaluate
from graphrecall_training.bi_encoder import base_model_dir, tokenizer
from graphrecall_training.mine import Encoder, Pair

log = logging.getLogger(__name__)

MAX_TOKENS = 192  # question + passage; the passage is cut first
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


class Scorer:
    def __init__(self, model_dir: Path) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification

        self.torch = torch
        self.model = AutoModelForSequenceClassification.from_pretrained(
            str(model_dir), num_labels=1
        )
        self.tok = tokenizer(MAX_TOKENS)
        self.tok.enable_truncation(MAX_TOKENS, strategy="only_second")

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> Any:
        torch = self.torch
        enc = self.tok.encode_batch(list(pairs))
        ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
        mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
        types = torch.tensor([e.type_ids for e in enc], dtype=torch.long)
        logits = self.model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
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

    random.seed(settings.seed)
    np.random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    started = time.monotonic()
    scorer = Scorer(base_model_dir())
    model = scorer.model
    usable = [p for p in pairs if p.negatives]
    steps_per_epoch = len(usable) // settings.groups
    total = steps_per_epoch * settings.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    warm = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    history: list[dict[str, Any]] = []
    out.mkdir(parents=True, exist_ok=True)

    def checkpoint(step: int) -> None:
        score = reranked_recall(held_out, first_stage, scorer.scores)
        history.append({"step": step, "minutes": _minutes(started), **score})
        log.info("step %d: held-out %s", step, score)
        if max(map(_selected, history)) == _selected(history[-1]):
            model.save_pretrained(str(out))

    rng = random.Random(settings.seed)
    step = 0
    stopped = "epochs"
    for epoch in range(settings.epochs):
        order = list(usable)
        rng.shuffle(order)
        for start in range(0, steps_per_epoch * settings.groups, settings.groups):
            if _minutes(started) > settings.minutes:
                stopped = "minutes"
                break
            model.train()
            groups = order[start : start + settings.groups]
            inputs: list[tuple[str, str]] = []
            width = 1 + settings.negatives
            for p in groups:
                negatives = list(p.negatives)
                rng.shuffle(negatives)
                negatives = (negatives * width)[: settings.negatives]
                inputs += [(p.query, p.positive)] + [(p.query, n) for n in negatives]
            logits = scorer(inputs).view(len(groups), width)
            loss = torch.nn.functional.cross_entropy(
                logits, torch.zeros(len(groups), dtype=torch.long)
            )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            step += 1
            if step % 20 == 0:
                log.info(
                    "epoch %d step %d/%d loss %.4f (%.1f min)",
                    epoch,
                    step,
                    total,
                    float(loss.detach()),
                    _minutes(started),
                )
            if step % settings.eval_every == 0:
                checkpoint(step)
        if stopped == "minutes":
            break
    if not history or history[-1]["step"] != step:
        checkpoint(step)
    record = {
        "settings": asdict(settings),
        "pairs": len(usable),
        "held_out_questions": len(held_out),
        "steps": step,
        "stopped_by": stopped,
        "minutes": _minutes(started),
        "best": max(history, key=_selected),
        "history": history,
    }
    (out / "run.json").write_text(json.dumps(record, indent=2))
    return record


def _selected(row: dict[str, Any]) -> float:
    return float(row["rerank@5"] + row["rerank@10"])


def _minutes(since: float) -> float:
    return round((time.monotonic() - since) / 60, 2)
