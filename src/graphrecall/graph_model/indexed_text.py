"""What an episode is searched by besides its own words: pure functions, one definition for
the full-text columns and the vector text.

A chat message alone is often meaningless ("5 years already!"), so it is also found through
the exchange around it (contextual retrieval): the full-text index holds, beside the
message, the start of the messages before it (``search_context``, weight 0.5), the facts
extracted from it (``search_facts``: they name their entities and restate first-person
speech the way questions ask) and the start of its reply (``search_replies``, weight 0.5:
the reply often names what the message only alludes to). Its vector is computed from the
message with its date and the start of the message it replies to.

These texts are computed here and written as ordinary columns by the writers of episodes,
edges and links (``graph_writes.py``); no backend computes them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from datetime import datetime

from graphrecall.domain.models import Edge, Episode

# ``search_context``: the last CONTEXT_MESSAGES messages before an episode in its thread,
# newest first, CONTEXT_CHARS characters of each; ``search_replies``: CONTEXT_CHARS of the
# message after it.
CONTEXT_MESSAGES = 2
CONTEXT_CHARS = 300
# How much of the previous message an episode's vector text keeps. On LoCoMo (10 samples)
# 100 characters rank as well as 300 once fused with BM25 (hybrid recall@5/@10 66.9/75.9
# vs 66.9/76.2; vector alone 42.8/53.0 vs 44.9/54.4) at about half the extra tokens to
# embed; indexing is cheap, so the full-text index keeps 300 of each of two messages.
VECTOR_CONTEXT_CHARS = 100


def said(episode: Episode) -> str:
    """A message with its speaker ("Caroline: I went ..."): the speaker is part of what it
    says ("When did Caroline ..." must match Caroline's "I went to ...")."""
    return f"{episode.role_name}: {episode.content}" if episode.role_name else episode.content


def context_text(previous: Sequence[Episode]) -> str | None:
    """``search_context`` of a message from the messages before it, newest first (None for
    a thread's first message)."""
    kept = previous[:CONTEXT_MESSAGES]
    return "\n".join(said(p)[:CONTEXT_CHARS] for p in kept) if kept else None


def reply_text(reply: Episode | None) -> str | None:
    """``search_replies`` of a message from the one after it (None for a thread's last)."""
    return None if reply is None else said(reply)[:CONTEXT_CHARS]


def facts_text(edges: Iterable[Edge]) -> str | None:
    """``search_facts`` of an episode from the edges linked to it (created or restated by
    it): their facts, oldest first, one a line (None when it has none)."""
    facts = [e.fact for e in sorted(edges, key=lambda e: (e.created_at, e.uuid))]
    return "\n".join(facts) if facts else None


def thread_texts(
    messages: Sequence[Episode], *, from_start: bool, to_end: bool
) -> dict[str, dict[str, str | None]]:
    """``search_context`` and ``search_replies`` of messages of one thread, from a run of
    consecutive messages of it (any order): uuid -> the fields the run determines. The run
    starts at the thread's first message when ``from_start`` (else its first
    CONTEXT_MESSAGES messages lack their predecessors) and ends at its last when ``to_end``
    (else its last message lacks its reply). The messages before and after one are those
    strictly earlier and later by ``created_at``."""
    ordered = sorted(messages, key=lambda e: (e.created_at, e.uuid))
    stamps = [e.created_at for e in ordered]
    out: dict[str, dict[str, str | None]] = {}
    for message in ordered:
        before = bisect_left(stamps, message.created_at)
        after = bisect_right(stamps, message.created_at)
        fields: dict[str, str | None] = {}
        if from_start or before >= CONTEXT_MESSAGES:
            previous = ordered[max(0, before - CONTEXT_MESSAGES) : before]
            fields["search_context"] = context_text(previous[::-1])
        if to_end or after < len(ordered):
            fields["search_replies"] = reply_text(ordered[after] if after < len(ordered) else None)
        out[message.uuid] = fields
    return out


def vector_text(episode: Episode, previous: Episode | None) -> str:
    """What an episode's vector stands for: the message with its date, then the start of
    the message it replies to: "On 8 May 2023, Mel: 5 years already!\\n(replying to
    Caroline: How long have you been married?)". The message comes first: the embedder
    reads only its first 128 tokens. On LoCoMo (10 samples) this lifts vector-only evidence
    recall@10 from 41.3 % to 53.0 % (docs/benchmarks.md)."""
    text = said(episode)
    day = _day(episode.reference_time)
    if day:
        text = f"On {day}, {text}"
    if previous is not None:
        text += f"\n(replying to {said(previous)[:VECTOR_CONTEXT_CHARS]})"
    return text


def _day(stamp: str) -> str | None:
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return f"{when.day} {when:%B %Y}"
