"""Writing a context block: one line per selected item, laid out in sections (the default)
or in a template's slots, packed into a character budget.

Packing is greedy in ranking order: each candidate goes in if the block with it still fits,
so a long item that does not fit leaves room for shorter ones after it. The block never
exceeds the budget, and ``truncated`` is true exactly when some candidate (or the block's
own frame: the time-window notice, a template's text) was left out for lack of room.
Lengths are measured from per-section counters, so packing stays linear in the number of
candidates; the rendered block is checked against the measure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from graphrecall.domain.models import Edge, Episode, Node, Observation, ThreadSummary
from graphrecall.services.get_context.templates import Part, Slot

Kind = Literal["edge", "node", "observation", "thread_summary", "episode", "user_summary"]
Rec = Edge | Node | Observation | ThreadSummary | Episode

HEADERS: dict[str, str] = {
    "edge": "Facts (with the dates they held, in UTC):",
    "node": "Entities:",
    "observation": "Observations:",
    "thread_summary": "Thread summaries:",
    "episode": "Episodes:",
    "user_summary": "User summary:",
}
SEPARATOR = "\n\n"
# The default block's sections, always in this order (docs/context.md): the same query
# over the same graph lays out the same way, whatever the scores of the day.
SECTION_ORDER: tuple[Kind, ...] = (
    "user_summary",
    "edge",
    "node",
    "observation",
    "thread_summary",
    "episode",
)


@dataclass
class Item:
    """A candidate for the block: a record, its relevance (the cross-scope scorer's, in
    [0, 1]) and its final score (relevance with recency bias), and the line it renders as."""

    kind: Kind
    record: Rec
    relevance: float | None
    score: float
    slot: int = 0
    line: str = ""
    # Its line is already in the block (a restated fact): it is selected, and its record
    # reported, without writing the line twice.
    repeat: bool = False

    @property
    def uuid(self) -> str:
        return self.record.uuid


@dataclass
class Packed:
    items: list[Item] = field(default_factory=list)  # in block order
    text: str = ""
    truncated: bool = False


# -- lines ---------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_STATED = re.compile(r"\s*\(stated \d+ times\)\s*$")


def _statement(text: str) -> str:
    return _one_line(text).rstrip(" .!?").casefold()


def statements(kind: Kind, record: Rec) -> frozenset[str]:
    """What an item says, sentence by sentence (normalised), for telling whether the block
    already says it: a fact's text; an observation's summary; an entity's summary (built
    from its facts). Other kinds: nothing (never a restatement)."""
    if kind == "edge" and isinstance(record, Edge):
        return frozenset({_statement(record.fact)})
    if kind == "observation" and isinstance(record, Observation):
        return frozenset({_statement(_STATED.sub("", record.summary))} - {""})
    if kind == "node" and isinstance(record, Node) and record.summary:
        return frozenset(_statement(s) for s in _SENTENCE_END.split(record.summary)) - {""}
    return frozenset()


def when(stamp: str | None) -> str:
    """A stored RFC 3339 UTC stamp as a date, with the time only when it is not midnight."""
    if not stamp:
        return "unknown"
    date, _, time = stamp.partition("T")
    hhmm = time[:5]
    return date if hhmm in ("", "00:00") else f"{date} {hhmm}"


def line_of(kind: Kind, record: Rec, *, include_attributes: bool = False) -> str:
    if kind == "edge":
        assert isinstance(record, Edge)
        span = _span(record)
        text = f"- {_one_line(record.fact)} ({span})" if span else f"- {_one_line(record.fact)}"
        return text + _attributes(record.attributes, include_attributes)
    if kind == "node":
        assert isinstance(record, Node)
        labels = [label for label in record.labels if label != "Entity"]
        head = f"{_one_line(record.name)} ({', '.join(labels)})" if labels else record.name
        body = f"- {head}: {_one_line(record.summary)}" if record.summary else f"- {head}"
        return body + _attributes(record.attributes, include_attributes)
    if kind == "observation":
        assert isinstance(record, Observation)
        name, summary = _one_line(record.name), _one_line(record.summary)
        if not name or summary.startswith(name):
            return f"- {summary}"
        # "Pattern: X" summarised as "X. (stated 2 times)": say X once.
        label, colon, rest = name.partition(": ")
        if colon and rest and summary.startswith(rest):
            return f"- {label}: {summary}"
        return f"- {name}: {summary}"
    if kind == "thread_summary":
        assert isinstance(record, ThreadSummary)
        through = (
            record.last_summarized_episode_valid_at
            or record.last_summarized_at
            or record.created_at
        )
        return f"- {_one_line(record.summary)} (conversation up to {when(through)})"
    if kind == "episode":
        assert isinstance(record, Episode)
        speaker = record.role_name or record.role
        said = f"{speaker}: " if speaker else ""
        return f"- [{when(record.reference_time)}] {said}{_one_line(record.content)}"
    assert isinstance(record, Node)
    return _one_line(record.summary or "")


def _span(edge: Edge) -> str:
    """When a fact held, as briefly as it can be said: ``since FROM``, ``FROM to UNTIL``,
    ``until UNTIL``, with ``superseded DATE`` when it expired without an end date, and
    nothing when no date is known. (The earlier ``valid: FROM to present`` spent 17 of a
    fact line's ~90 characters on words; LoCoMo coverage at 2,500 characters +0.75.)"""
    since = when(edge.valid_at) if edge.valid_at else None
    if edge.invalid_at:
        until = when(edge.invalid_at)
        return f"{since} to {until}" if since else f"until {until}"
    parts = [f"since {since}"] if since else []
    if edge.expired_at:
        parts.append(f"superseded {when(edge.expired_at)}")
    return ", ".join(parts)


def _attributes(attributes: Mapping[str, object] | None, wanted: bool) -> str:
    if not wanted or not attributes:
        return ""
    return f" [attributes: {json.dumps(attributes, sort_keys=True, default=str)}]"


# -- layouts -------------------------------------------------------------------------------

Counts = Mapping[Hashable, tuple[int, int]]  # group -> (items, total line length)


class Layout(Protocol):
    def group(self, item: Item) -> Hashable: ...

    def length(self, counts: Counts) -> int: ...

    def render(self, selected: Sequence[Item]) -> tuple[str, list[Item]]:
        """The block for items selected in ranking order, and the items in block order."""
        ...


class SectionLayout:
    """The default block: the time-window notice (if any), then one section per kind in
    ``SECTION_ORDER``, items by rank within a section."""

    def __init__(self, notice: str | None = None) -> None:
        self.notice = notice

    def group(self, item: Item) -> Hashable:
        return item.kind

    def length(self, counts: Counts) -> int:
        parts = [len(self.notice)] if self.notice else []
        for kind, (n, total) in counts.items():
            if n:
                parts.append(len(HEADERS[str(kind)]) + 1 + total + n - 1)
        return sum(parts) + len(SEPARATOR) * max(len(parts) - 1, 0)

    def render(self, selected: Sequence[Item]) -> tuple[str, list[Item]]:
        sections: dict[str, list[Item]] = {}
        for item in selected:
            sections.setdefault(item.kind, []).append(item)
        blocks = [self.notice] if self.notice else []
        ordered: list[Item] = []
        for kind in SECTION_ORDER:
            items = sections.get(kind, [])
            lines = [i.line for i in items if not i.repeat]
            if lines:  # a section of restatements only is not written
                blocks.append("\n".join([HEADERS[kind], *lines]))
            ordered.extend(items)
        return SEPARATOR.join(blocks), ordered


class TemplateLayout:
    """A template's text with each slot replaced by its items' lines (rank order); the
    time-window notice, if any, comes first."""

    def __init__(self, parts: Sequence[Part], notice: str | None = None) -> None:
        self.parts = list(parts)
        self.notice = notice
        literal = sum(len(p) for p in self.parts if isinstance(p, str))
        self.fixed = literal + (len(notice) + len(SEPARATOR) if notice else 0)

    def slots(self) -> list[tuple[int, Slot]]:
        return [(i, p) for i, p in enumerate(self.parts) if isinstance(p, Slot)]

    def group(self, item: Item) -> Hashable:
        return item.slot

    def length(self, counts: Counts) -> int:
        return self.fixed + sum(total + n - 1 for n, total in counts.values() if n)

    def render(self, selected: Sequence[Item]) -> tuple[str, list[Item]]:
        by_slot: dict[int, list[Item]] = {}
        for item in selected:
            by_slot.setdefault(item.slot, []).append(item)
        out = [self.notice, SEPARATOR] if self.notice else []
        ordered: list[Item] = []
        for index, part in enumerate(self.parts):
            if isinstance(part, str):
                out.append(part)
                continue
            items = by_slot.get(index, [])
            out.append("\n".join(i.line for i in items if not i.repeat))
            ordered.extend(items)
        return "".join(out), ordered


def pack(candidates: Sequence[Item], layout: Layout, budget: int) -> Packed:
    """Fill the block greedily in the order of ``candidates`` (best first). A candidate
    whose line is already in its section (the same fact extracted twice, from two
    messages) is selected with the first but not written again: it costs no room, and
    the results still report both records, so the provenance of that line is complete.
    So is an observation or an entity that only restates facts already written (the
    observation "Preference: Alice loves tea" of the fact "Alice loves tea", an entity
    whose summary is the block's facts about it)."""
    counts: dict[Hashable, tuple[int, int]] = {}
    if layout.length(counts) > budget:
        return Packed(truncated=True)
    chosen: list[Item] = []
    written: set[tuple[Hashable, str]] = set()
    facts: set[str] = set()  # the statements of the facts written so far
    truncated = False
    for item in candidates:
        key = layout.group(item)
        said = statements(item.kind, item.record) if item.kind != "edge" else frozenset()
        item.repeat = (key, item.line) in written or bool(said and said <= facts)
        if item.repeat:
            chosen.append(item)
            continue
        n, total = counts.get(key, (0, 0))
        trial = {**counts, key: (n + 1, total + len(item.line))}
        if layout.length(trial) <= budget:
            counts = trial
            chosen.append(item)
            written.add((key, item.line))
            if item.kind == "edge":
                facts |= statements("edge", item.record)
        else:
            truncated = True
    text, ordered = layout.render(chosen)
    if len(text) != layout.length(counts):  # pragma: no cover - a layout bug
        raise AssertionError("context block length differs from its measure")
    return Packed(items=ordered, text=text, truncated=truncated)
