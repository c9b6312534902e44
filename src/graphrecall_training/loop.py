"""The training loop both models share: seeded, AdamW with a linear warm-up and decay,
gradient clipping, a stop by epochs, minutes or steps, and early stopping on the held-out
split (the best weights by ``selected`` are saved; the run's record goes to
``out/run.json``). Each model gives its batch loss and its held-out measure."""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Schedule:
    seed: int = 13
    batch: int = 32  # items per step
    lr: float = 2e-5
    epochs: int = 1
    minutes: float = 50.0  # training stops when this is spent (evaluation included)
    # ... or after this many steps: a step count reproduces a run on any machine
    max_steps: int | None = None
    eval_every: int = 100  # steps
    warmup: float = 0.1  # share of the planned steps with a rising learning rate
    evaluate_first: bool = True  # measure the starting weights too (step 0)


def seed(value: int) -> None:
    import torch

    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)


def fit(
    model: Any,
    items: Sequence[T],
    loss_of: Callable[[list[T], random.Random], Any],
    held_out: Callable[[], dict[str, float]],
    selected: Callable[[dict[str, Any]], float],
    out: Path,
    schedule: Schedule,
    settings: dict[str, Any],
) -> dict[str, Any]:
    """Train ``model`` (call :func:`seed` before making it) on ``items``; returns the run's
    record. ``loss_of(batch, rng)`` is one step's loss; ``held_out()`` scores the current
    weights; ``settings`` are recorded as given."""
    import torch

    started = time.monotonic()
    steps_per_epoch = len(items) // schedule.batch
    total = steps_per_epoch * schedule.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=schedule.lr, weight_decay=0.01)
    warm = max(1, int(total * schedule.warmup))
    lr_schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    history: list[dict[str, Any]] = []

    def checkpoint(step: int) -> None:
        score = held_out()
        history.append({"step": step, "minutes": _minutes(started), **score})
        log.info("step %d: held-out %s", step, score)
        if max(map(selected, history)) == selected(history[-1]):
            model.save_pretrained(str(out))

    out.mkdir(parents=True, exist_ok=True)
    if schedule.evaluate_first:
        checkpoint(0)
    step = 0
    rng = random.Random(schedule.seed)
    stopped = "epochs"
    for epoch in range(schedule.epochs):
        order = list(items)
        rng.shuffle(order)
        for start in range(0, steps_per_epoch * schedule.batch, schedule.batch):
            if _minutes(started) > schedule.minutes:
                stopped = "minutes"
                break
            if schedule.max_steps is not None and step >= schedule.max_steps:
                stopped = "steps"
                break
            model.train()
            loss = loss_of(order[start : start + schedule.batch], rng)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_schedule.step()
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
            if step % schedule.eval_every == 0:
                checkpoint(step)
        if stopped != "epochs":
            break
    if not history or history[-1]["step"] != step:
        checkpoint(step)
    record = {
        "settings": settings,
        "schedule": asdict(schedule),
        "items": len(items),
        "steps": step,
        "stopped_by": stopped,
        "minutes": _minutes(started),
        "best": max(history, key=selected),
        "history": history,
    }
    (out / "run.json").write_text(json.dumps(record, indent=2))
    return record


def _minutes(since: float) -> float:
    return round((time.monotonic() - since) / 60, 2)
