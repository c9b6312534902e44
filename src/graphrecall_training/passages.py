"""A turn as the text the product embeds for it: the message with its speaker and day,
then the start of the message it replies to (``graph_model.indexed_text.vector_text``), so a
model is trained on what it will be asked to read."""

from __future__ import annotations

from graphrecall.domain.models import Episode
from graphrecall.graph_model.indexed_text import vector_text
from graphrecall_training.data import Pack, Turn

_STAMP = "2000-01-01T00:00:00Z"


def _episode(turn: Turn) -> Episode:
    when = _stamp(turn.date)
    return Episode(
        uuid=turn.id,
        graph_uuid="g",
        content=turn.text,
        source="message",
        role="assistant" if turn.speaker == "assistant" else "user",
        role_name=turn.speaker,
        reference_time=when or _STAMP,
        created_at=_STAMP,
    )


def _stamp(date: str | None) -> str | None:
    """The pack's "2023/05/20 (Sat) 14:21" as RFC 3339 (None when absent)."""
    if not date:
        return None
    day = date.split()[0].replace("/", "-")
    return f"{day}T00:00:00Z" if len(day) == 10 else None


def text(pack: Pack, turn_id: str) -> str:
    turn = pack.turns[turn_id]
    before = pack.previous(turn_id)
    episode = _episode(turn)
    if episode.reference_time == _STAMP:  # no date in the pack: none in the text either
        episode = episode.model_copy(update={"reference_time": "not a date"})
    return vector_text(episode, _episode(pack.turns[before]) if before else None)
