"""Reading LongMemEval files (Wu et al., ICLR 2025) for ``bench longmemeval``.

A file (JSON, or gzipped JSON when its name ends in ``.gz``) is a list of questions; each
carries its own haystack: ``haystack_sessions`` (lists of ``{role, content, has_answer?}``
turns), ``haystack_session_ids``, ``haystack_dates`` ("2023/05/20 (Sat) 02:21", the
session's reference time) and ``answer_session_ids``. Every question becomes one
:class:`~graphrecall.library.locomo.Sample` (a user, its sessions threads, its turns
messages), so the ingestion of ``bench locomo`` serves both benchmarks.

Turn ids follow LongMemEval's own corpus ids, ``<session id>_<turn index>``, so the
session of a turn is the id without its last ``_`` part (its ``strip_turn_id``). A turn
over the API's message limit is split at whitespace into several messages, ids
``<turn id>~<part>``; the parts rank as their turn (:func:`turn_of`).
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graphrecall.domain.limits import MAX_MESSAGE_CHARS
from graphrecall.library.locomo import Sample, Session, Turn

ABSTENTION_SUFFIX = "_abs"
_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2})(?:\s*\(\w+\))?\s*(\d{1,2}):(\d{2})")


@dataclass(frozen=True)
class LmeQuestion:
    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: str
    now: datetime  # question_date, read as UTC
    answer_sessions: tuple[str, ...]
    evidence_turns: tuple[str, ...]  # turn ids with has_answer, plus every turn of an
    # answer session that marks none (then the session as a whole is the evidence)
    unmarked_answer_sessions: int  # answer sessions that mark no turn
    turn_ids: tuple[str, ...]  # every turn of the haystack, in order (the corpus)

    @property
    def abstention(self) -> bool:
        return self.question_id.endswith(ABSTENTION_SUFFIX)


@dataclass(frozen=True)
class LmeItem:
    question: LmeQuestion
    sample: Sample  # the haystack, ready to ingest
    split_turns: int  # turns over the message limit, sent as several messages
    messages: int


def load(path: Path, max_questions: int | None = None) -> list[LmeItem]:
    """The first ``max_questions`` questions (all when None) of a LongMemEval file."""
    path = Path(path)
    raw_bytes = path.read_bytes()
    if path.suffix == ".gz":
        raw_bytes = gzip.decompress(raw_bytes)
    data = json.loads(raw_bytes.decode("utf-8"))
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a non-empty JSON list of LongMemEval questions")
    if max_questions is not None:
        if max_questions < 1:
            raise ValueError("--max-questions must be at least 1")
        data = round_robin(data)[:max_questions]
    return [parse_item(raw, i) for i, raw in enumerate(data)]


def round_robin(data: list[Any]) -> list[Any]:
    """The questions taken one of each type in turn (file order within a type), so that
    the first N of a file grouped by type still span the types."""
    by_type: dict[str, list[Any]] = {}
    for raw in data:
        kind = str(raw.get("question_type")) if isinstance(raw, dict) else ""
        by_type.setdefault(kind, []).append(raw)
    out: list[Any] = []
    queues = list(by_type.values())
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def parse_date(text: str) -> datetime:
    """'2023/05/20 (Sat) 02:21' -> 2023-05-20T02:21Z (the data has no time zone: UTC)."""
    m = _DATE.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"unrecognised LongMemEval date {text!r}")
    year, month, day, hour, minute = (int(g) for g in m.groups())
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def split_text(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """``text`` in parts of at most ``limit`` characters, cut at the last whitespace
    before the limit when there is one (else hard), nothing dropped but that whitespace."""
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind(" ", limit // 2, limit + 1)
        cut = cut if cut > 0 else limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest or not parts:
        parts.append(rest)
    return parts


def turn_of(message_id: str) -> str:
    """The turn id of a message id (a split turn's parts are ``<turn id>~<n>``)."""
    return message_id.split("~", 1)[0]


def session_of(turn_id: str) -> str:
    """LongMemEval's ``strip_turn_id``: the id without its last ``_`` part."""
    return "_".join(turn_id.split("_")[:-1])


def parse_item(raw: dict[str, Any], position: int) -> LmeItem:
    where = f"question {position}"
    try:
        qid = str(raw["question_id"])
        sessions_raw = raw["haystack_sessions"]
        session_ids = [str(s) for s in raw["haystack_session_ids"]]
        dates = [str(d) for d in raw["haystack_dates"]]
    except KeyError as exc:
        raise ValueError(f"{where}: missing field {exc.args[0]!r}") from None
    if not (len(sessions_raw) == len(session_ids) == len(dates)):
        raise ValueError(f"{qid}: haystack_sessions, _session_ids and _dates differ in length")
    answer_sessions = tuple(str(s) for s in raw.get("answer_session_ids") or ())
    sessions: list[Session] = []
    turn_ids: list[str] = []
    evidence: list[str] = []
    unmarked = split = messages = 0
    for index, (sid, when, turns) in enumerate(zip(session_ids, dates, sessions_raw, strict=True)):
        ids = [f"{sid}_{i}" for i in range(len(turns))]
        # Evidence lies in answer sessions only (as upstream, whose turn ids name them).
        answer = sid in answer_sessions
        marked = [tid for tid, t in zip(ids, turns, strict=True) if answer and t.get("has_answer")]
        if answer and not marked:
            unmarked += 1
            marked = ids
        evidence += marked
        turn_ids += ids
        out: list[Turn] = []
        for tid, t in zip(ids, turns, strict=True):
            role = str(t.get("role") or "user")
            content = str(t.get("content") or "").strip() or "[empty turn]"
            parts = split_text(content)
            split += len(parts) > 1
            for n, part in enumerate(parts):
                out.append(Turn(tid if n == 0 else f"{tid}~{n}", "", part, role))
        messages += len(out)
        sessions.append(Session(index, when, parse_date(when), tuple(out)))
    question = LmeQuestion(
        question_id=qid,
        question_type=str(raw.get("question_type") or "unknown"),
        question=str(raw.get("question") or ""),
        answer=str(raw.get("answer") or ""),
        question_date=str(raw.get("question_date") or ""),
        now=parse_date(str(raw.get("question_date") or dates[-1])),
        answer_sessions=answer_sessions,
        evidence_turns=tuple(evidence),
        unmarked_answer_sessions=unmarked,
        turn_ids=tuple(turn_ids),
    )
    sample = Sample(
        sample_id=qid,
        speaker_a="User",
        speaker_b="Assistant",
        sessions=tuple(sessions),
        questions=(),
    )
    return LmeItem(question, sample, split, messages)
