"""The training packs of ``../shared/training`` (one schema: conversations of turns, and
questions that point at the turns holding their evidence), and a held-out split.

The split is by conversation, so no held-out question shares a turn with a training one:
a question goes to the held-out side when its first conversation's id hashes there.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKS = ("friendsqa.json.gz", "molweni_test.json.gz", "longmemeval_s_train.json.gz")
HELD_OUT_SHARE = 0.1


@dataclass(frozen=True)
class Turn:
    id: str
    speaker: str
    text: str
    date: str | None  # as the pack writes it ("2023/05/20 (Sat) 14:21"), or None


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    conversation_ids: tuple[str, ...]
    evidence: tuple[str, ...]  # turn ids
    source: str


@dataclass
class Pack:
    turns: dict[str, Turn]
    conversations: dict[str, tuple[str, ...]]  # conversation id -> its turn ids, in order
    questions: list[Question]

    def candidates(self, question: Question) -> list[str]:
        """The turns a question is searched over: those of its conversations."""
        return [t for c in question.conversation_ids for t in self.conversations[c]]

    def previous(self, turn_id: str) -> str | None:
        """The turn before ``turn_id`` in its conversation (what it replies to)."""
        return self._previous.get(turn_id)

    def __post_init__(self) -> None:
        self._previous: dict[str, str] = {}
        for ids in self.conversations.values():
            for before, after in itertools.pairwise(ids):
                self._previous[after] = before


def load(folder: Path, names: Sequence[str] = PACKS) -> Pack:
    turns: dict[str, Turn] = {}
    conversations: dict[str, tuple[str, ...]] = {}
    questions: list[Question] = []
    for name in names:
        raw = read_json(folder / name)
        source = name.split(".")[0]
        for conv in raw["conversations"]:
            ids = []
            for t in conv["turns"]:
                turns[t["id"]] = Turn(
                    t["id"], t["speaker"], t["text"], t.get("date") or conv.get("date")
                )
                ids.append(t["id"])
            conversations[conv["id"]] = tuple(ids)
        for q in raw["questions"]:
            evidence = tuple(e for e in q["evidence_turn_ids"] if e in turns)
            if evidence:
                questions.append(
                    Question(q["id"], q["question"], tuple(q["conversation_ids"]), evidence, source)
                )
    return Pack(turns, conversations, questions)


def read_json(path: Path) -> Any:
    """A JSON file, gzipped when its name ends in ``.gz``."""
    if path.suffix == ".gz":
        with gzip.open(path) as f:
            return json.loads(f.read())
    return json.loads(path.read_text())


def held_out(question: Question) -> bool:
    digest = hashlib.sha256(question.conversation_ids[0].encode()).digest()
    return digest[0] < 256 * HELD_OUT_SHARE


def split(questions: Iterable[Question]) -> tuple[list[Question], list[Question]]:
    """(training, held-out)."""
    train: list[Question] = []
    kept: list[Question] = []
    for q in questions:
        (kept if held_out(q) else train).append(q)
    return train, kept
