"""Reading LoCoMo-format files (Maharana et al., ACL 2024): ``graphrecall import`` of a
LoCoMo file, and the benchmarks (``graphrecall_bench``) that measure on one.

A file is a list of samples; each has ``conversation`` (``speaker_a``, ``speaker_b``,
``session_N`` turn lists and ``session_N_date_time`` strings) and ``qa`` (question, answer,
``evidence`` dialogue ids, category). The generated annotations (``observation``,
``session_summary``, ``event_summary``) are never read: they must not reach the system
under test.

Evidence ids are normalised here, because a few in the public file are malformed
("D8:6; D9:17", "D:11:26", "D1:3 ", "D10:1:4"). Every raw id either resolves to turns of
the conversation or is reported as unresolved; none is dropped silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_SESSION = re.compile(r"session_(\d+)")
_DIA = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)(?:\s*:\s*(\d+))?")
_WELL_FORMED = re.compile(r"D\d+:\d+")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str  # the message's name ("" for none)
    content: str  # the text, plus " [image: caption]" when the turn shared an image
    role: str = "user"  # the message's role (LoCoMo: always "user", two named people)


@dataclass(frozen=True)
class Session:
    index: int
    date_time: str
    reference_time: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    index: int  # position in the sample's ``qa`` list
    question: str
    answer: str | None
    category: int
    evidence_raw: tuple[str, ...]
    evidence: tuple[str, ...]  # resolved dialogue ids, deduplicated, in order
    unresolved: tuple[str, ...]  # raw ids (or parts of them) that match no turn
    normalised: tuple[tuple[str, str], ...]  # (raw, resolved) pairs that needed fixing


@dataclass(frozen=True)
class Sample:
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


def load(path: Path, samples: int | None = None) -> list[Sample]:
    """The first ``samples`` samples of a LoCoMo-format JSON file (all when None)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a non-empty JSON list of LoCoMo samples")
    if samples is not None:
        if samples < 1:
            raise ValueError("--samples must be at least 1")
        data = data[:samples]
    return [parse_sample(raw, i) for i, raw in enumerate(data)]


def parse_sample(raw: dict[str, Any], position: int) -> Sample:
    conv = raw.get("conversation")
    if not isinstance(conv, dict):
        raise ValueError(f"sample {position}: no 'conversation' object")
    sample_id = str(raw.get("sample_id") or f"sample-{position}")
    sessions = []
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not isinstance(turns, list) or not turns:
            continue
        when = str(conv.get(f"session_{n}_date_time") or "")
        try:
            reference = parse_session_time(when)
        except ValueError as exc:
            raise ValueError(f"{sample_id} session_{n}: {exc}") from None
        sessions.append(
            Session(
                index=n,
                date_time=when,
                reference_time=reference,
                turns=tuple(
                    Turn(str(t["dia_id"]).strip(), str(t["speaker"]), message_content(t))
                    for t in turns
                ),
            )
        )
    known = {t.dia_id for s in sessions for t in s.turns}
    questions = [
        _question(i, q, known) for i, q in enumerate(raw.get("qa") or []) if isinstance(q, dict)
    ]
    return Sample(
        sample_id=sample_id,
        speaker_a=str(conv.get("speaker_a") or "Speaker A"),
        speaker_b=str(conv.get("speaker_b") or "Speaker B"),
        sessions=tuple(sessions),
        questions=tuple(questions),
    )


def message_content(turn: dict[str, Any]) -> str:
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        text = f"{text} [image: {caption}]".strip()
    return text or "[empty turn]"


def parse_session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> 2023-05-08T13:56Z (the data has no time zone: UTC)."""
    cleaned = " ".join(text.replace("\u202f", " ").split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised session date/time {text!r}")


def normalise_evidence(raw: str, known: set[str]) -> tuple[list[str], list[str]]:
    """(resolved dialogue ids, unresolved parts) of one raw evidence entry.

    An entry may hold several ids ("D8:6; D9:17"), stray spaces or colons ("D:11:26",
    "D1:3 "), or a third number ("D10:1:4", read as D10:14 if that turn exists, else
    D10:1). Ids that match no turn of the conversation are unresolved.
    """
    found: list[str] = []
    missing: list[str] = []
    matches = list(_DIA.finditer(raw))
    if not matches:
        return [], [raw]
    for m in matches:
        session, turn, extra = m.group(1), m.group(2), m.group(3)
        candidates = [f"D{int(session)}:{int(turn)}"]
        if extra is not None:
            candidates = [f"D{int(session)}:{int(turn + extra)}", *candidates]
        hit = next((c for c in candidates if c in known), None)
        if hit is None:
            missing.append(m.group(0))
        elif hit not in found:
            found.append(hit)
    return found, missing


def _question(index: int, raw: dict[str, Any], known: set[str]) -> Question:
    evidence_raw = tuple(str(e) for e in raw.get("evidence") or [])
    evidence: list[str] = []
    unresolved: list[str] = []
    normalised: list[tuple[str, str]] = []
    for entry in evidence_raw:
        found, missing = normalise_evidence(entry, known)
        unresolved.extend(missing)
        if found and not (_WELL_FORMED.fullmatch(entry) and found == [entry]):
            normalised.append((entry, " ".join(found)))
        evidence.extend(f for f in found if f not in evidence)
    answer = raw.get("answer", raw.get("adversarial_answer"))
    try:
        category = int(raw.get("category") or 0)
    except (TypeError, ValueError):
        category = 0
    return Question(
        index=index,
        question=str(raw.get("question") or ""),
        answer=None if answer is None else str(answer),
        category=category,
        evidence_raw=evidence_raw,
        evidence=tuple(evidence),
        unresolved=tuple(unresolved),
        normalised=tuple(normalised),
    )


def category_name(category: int) -> str:
    return CATEGORIES.get(category, f"category {category}")
