"""Relations that hold one value at a time, and how a new statement changes them.

This is the one table of them (``SLOTS``); docs/ingestion.md shows it as a table. Each
slot says which relations *state* its value ("lives in"), which *start* a new value
("moved to"), which *end* the value they name ("left Acme", "doesn't live in Munich"
anymore), and which words after a copula ("is", "became", "got") are a value of the slot
("is a nurse") or end every value of it ("is retired", "got divorced", "is single").

The decisions (``decide``), for a new fact ``new`` against the live facts ``known`` of
the same source entity:

- a **value** (a state or a start) retires the slot's live facts with another target:
  the one whose value began later is the current one; when the dates do not tell (a
  fact with no date of its own began at some time up to when it was said, so "I moved
  to Berlin last month" need not be older than "I live in Munich" said three weeks
  ago), the one *said* later is: the episode's reference time, then the order of
  arrival. So a newer statement retires the older value, never the reverse; a report
  that turns out older than what is known is stored already ended (history);
- an **ending** retires the slot's live facts with the same target (any target for
  "is retired", "got divorced"), without needing a replacement; the ending is itself a
  fact and stays valid;
- **no retirement** by: a state told in the past ("I lived in Hamburg": history, stored
  ended by the time it was said, or when the next known value began); a plan ("I'm
  moving to Paris next month": a start dated after it was said); an addition ("I also
  work at Globex", "Ana is also my friend"); another value of the same message ("I work
  at Acme and Globex"); a relation outside the table (hobbies, friends, likes: many at
  a time).

A retired fact gets ``invalid_at`` (when it stopped being true: when the new value
began or the ending happened, never before the retired fact's own start) and
``expired_at`` (when the graph learned it), and in its ``attributes``
``invalidated_by_episode`` and ``invalidated_by_edge`` (what retired it) and
``invalidation_reason`` (why, in words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from graphrecall.domain import clock
from graphrecall.ml.offline_changes import is_role

Kind = Literal["state", "start", "end", "end_all", "vague"]

# The copulas after which a word is a value of a slot ("is a nurse", "became a manager",
# "got divorced", "is now single").
COPULAS = frozenset({"IS", "BECOMES", "GETS", "IS_NOW", "REMAINS", "STAYS"})


@dataclass(frozen=True)
class Slot:
    """One single-valued relation of a subject (where it lives, whom it works for)."""

    name: str
    holds: str  # what it holds, in words (docs, traces)
    states: frozenset[str]  # say the value holds: LIVES_IN
    starts: frozenset[str] = frozenset()  # say a new value began: MOVES_TO
    ends: frozenset[str] = frozenset()  # end the value they name: LEAVES Acme
    # The same states told in the past, as an LLM may name them (LIVED_IN): history.
    past: frozenset[str] = frozenset()
    # Said with a copula (IS, BECOMES, GETS): targets that are a value of the slot
    # ("single") and targets that end every value of it ("divorced", "retired").
    values: frozenset[str] = frozenset()
    ends_all: frozenset[str] = frozenset()
    # Targets of ``ends`` that stand for the slot's value, whatever it is ("quit my job").
    any_value: frozenset[str] = frozenset()
    # Relations that say something of the value without naming it ("lives near the
    # university"): a new value (a start) retires them; they retire nothing.
    vague: frozenset[str] = frozenset()
    role_values: bool = False  # a target ending in a job title is a value (occupation)
    # Relations that count only with a named target: "joined Globex" is a new employer,
    # "joined a gym" or "started agility classes" is not.
    named_only: frozenset[str] = frozenset()
    # False: many values at a time (what someone owns): only endings retire, and only
    # the value they name.
    one_at_a_time: bool = True
    notes: str = field(default="", compare=False)  # a caveat, for the docs' table
    # The names an LLM extractor is asked to use (its prompt), value first, then endings.
    prompt: str = field(default="", compare=False)

    def relations(self) -> frozenset[str]:
        return self.states | self.starts | self.past


_FS = frozenset
SLOTS: tuple[Slot, ...] = (
    Slot(
        "residence",
        "where someone lives",
        prompt="LIVES_IN, MOVES_TO; ending: MOVES_AWAY_FROM, NOT_LIVES_IN",
        states=_FS({"LIVES_IN", "LIVES_AT", "RESIDES_IN", "RESIDES_AT", "IS_BASED_IN"}),
        starts=_FS(
            {
                "MOVES_TO",
                "RELOCATES_TO",
                "MOVES_BACK_TO",
                "MOVES_INTO",
                "SETTLES_IN",
                "MOVED_TO",
                "RELOCATED_TO",
            }
        ),
        ends=_FS(
            {
                "MOVES_FROM",
                "MOVES_OUT_OF",
                "MOVES_AWAY_FROM",
                "MOVED_FROM",
                "MOVED_OUT_OF",
                "MOVED_AWAY_FROM",
                "NOT_LIVES_IN",
                "NOT_LIVES_AT",
                "NO_LONGER_LIVES_IN",
            }
        ),
        past=_FS({"LIVED_IN", "LIVED_AT", "USED_TO_LIVE_IN", "USES_TO_LIVE_IN", "RESIDED_IN"}),
        vague=_FS({"LIVES_NEAR", "LIVES_CLOSE_TO", "LIVES_NEXT_TO", "LIVES_BY", "LIVES_AROUND"}),
        notes='"left Munich" retires nothing: it may be a trip.',
    ),
    Slot(
        "employer",
        "whom someone works for",
        prompt="WORKS_AT, JOINS; ending: LEAVES, QUITS, IS_FIRED_FROM, RETIRES_FROM",
        states=_FS(
            {
                "WORKS_AT",
                "WORKS_FOR",
                "IS_EMPLOYED_BY",
                "IS_EMPLOYED_AT",
                "EMPLOYED_BY",
                "WORKS_WITH_COMPANY",
                "HAS_EMPLOYER",
                "HAS_JOB_AT",
                "HAS_JOB_WITH",
            }
        ),
        starts=_FS(
            {
                "JOINS",
                "JOINED",
                "STARTS_AT",
                "STARTS_WORKING_AT",
                "STARTS_WORKING_FOR",
                "GETS_JOB_AT",
                "GETS_JOB_WITH",
                "TAKES_JOB_AT",
                "TAKES_JOB_WITH",
                "ACCEPTS_JOB_AT",
                "ACCEPTS_JOB_WITH",
                "LANDS_JOB_AT",
                "FINDS_JOB_AT",
                "IS_HIRED_BY",
                "IS_HIRED_AT",
                "HIRED_BY",
            }
        ),
        ends=_FS(
            {
                "LEAVES",
                "LEFT",
                "QUITS",
                "QUIT",
                "RESIGNS_FROM",
                "RESIGNED_FROM",
                "RETIRES_FROM",
                "RETIRED_FROM",
                "IS_FIRED_FROM",
                "IS_FIRED_BY",
                "IS_LAID_OFF_FROM",
                "IS_LAID_OFF_BY",
                "STOPS_WORKING_AT",
                "STOPS_WORKING_FOR",
                "NOT_WORKS_AT",
                "NOT_WORKS_FOR",
                "NOT_IS_EMPLOYED_BY",
                "NO_LONGER_WORKS_AT",
                "NO_LONGER_WORKS_FOR",
                "LOSES",
                "QUITS_JOB_AT",
                "LEAVES_JOB_AT",
                "LOSES_JOB_AT",
                "QUITS_AT",
            }
        ),
        past=_FS(
            {"WORKED_AT", "WORKED_FOR", "WAS_EMPLOYED_BY", "USES_TO_WORK_AT", "USES_TO_WORK_FOR"}
        ),
        ends_all=_FS({"retired", "unemployed", "jobless", "fired", "laid off"}),
        named_only=_FS({"JOINS", "JOINED", "STARTS_AT"}),
        any_value=_FS({"job", "work", "position", "employer", "company"}),
    ),
    Slot(
        "occupation",
        "someone's job or title",
        prompt="WORKS_AS, HAS_TITLE, IS_PROMOTED_TO",
        states=_FS(
            {
                "WORKS_AS",
                "IS_EMPLOYED_AS",
                "HAS_ROLE",
                "HAS_TITLE",
                "HAS_JOB_TITLE",
                "HAS_OCCUPATION",
                "SERVES_AS",
            }
        ),
        starts=_FS({"IS_PROMOTED_TO", "BECOMES", "IS_APPOINTED", "IS_APPOINTED_AS"}),
        ends=_FS({"NOT_WORKS_AS", "NO_LONGER_WORKS_AS"}),
        past=_FS({"WORKED_AS", "WAS_EMPLOYED_AS", "USES_TO_WORK_AS", "USES_TO_BE"}),
        role_values=True,
    ),
    Slot(
        "partner",
        "whom someone is married to, engaged to or dating",
        prompt=(
            "IS_MARRIED_TO, IS_ENGAGED_TO, IS_DATING, MARRIES;"
            " ending: DIVORCES, BREAKS_UP_WITH, SEPARATES_FROM"
        ),
        states=_FS(
            {
                "IS_MARRIED_TO",
                "MARRIED_TO",
                "IS_ENGAGED_TO",
                "IS_DATING",
                "DATES",
                "HAS_PARTNER",
                "IS_PARTNER_OF",
                "HAS_SPOUSE",
                "IS_IN_RELATIONSHIP_WITH",
            }
        ),
        starts=_FS({"MARRIES", "GETS_MARRIED_TO", "GETS_ENGAGED_TO", "STARTS_DATING"}),
        ends=_FS(
            {
                "DIVORCES",
                "DIVORCED",
                "IS_DIVORCED_FROM",
                "GETS_DIVORCED_FROM",
                "BREAKS_UP_WITH",
                "BROKE_UP_WITH",
                "SEPARATES_FROM",
                "IS_SEPARATED_FROM",
                "SPLITS_UP_WITH",
                "SPLITS_WITH",
                "LEAVES",
                "NOT_IS_MARRIED_TO",
                "NOT_IS_DATING",
                "NOT_DATES",
                "STOPS_DATING",
            }
        ),
        past=_FS({"WAS_MARRIED_TO", "WAS_ENGAGED_TO", "DATED", "WAS_DATING"}),
        ends_all=_FS({"divorced", "single", "separated", "widowed"}),
    ),
    Slot(
        "relationship status",
        "single, married, engaged, divorced, ...",
        prompt="IS single|married|divorced|...",
        states=_FS({"HAS_RELATIONSHIP_STATUS"}),
        values=_FS({"single", "married", "engaged", "divorced", "separated", "widowed"}),
    ),
    Slot(
        "work status",
        "employed, unemployed, retired, ...",
        prompt="IS employed|unemployed|retired",
        states=_FS({"HAS_EMPLOYMENT_STATUS"}),
        values=_FS({"employed", "unemployed", "retired", "self-employed", "freelance"}),
    ),
    Slot(
        "age",
        "how old someone is",
        prompt='HAS_AGE "34 years old", TURNS',
        states=_FS({"HAS_AGE", "IS_AGED", "IS_AGE"}),
        starts=_FS({"TURNS"}),
        past=_FS({"WAS_AGED"}),
    ),
    Slot(
        "possession",
        "what someone owns (many at a time)",
        prompt="OWNS; ending: SELLS, GIVES_AWAY",
        states=_FS({"OWNS", "HAS"}),
        starts=_FS({"BUYS"}),
        ends=_FS({"SELLS", "GIVES_AWAY", "GETS_RID_OF", "DONATES", "NOT_OWNS", "NO_LONGER_OWNS"}),
        one_at_a_time=False,
        notes="many at a time: only an ending retires, and only what it names",
    ),
)


@dataclass(frozen=True)
class Reading:
    slot: Slot
    kind: Kind


def _target_word(target: str) -> str:
    """ "Dana's job" -> "job"; "a nurse" -> "nurse"."""
    text = re.sub(r"^.*'s\s+", "", target.casefold()).strip()
    return re.sub(r"^(?:a|an|the|my|her|his|their|our)\s+", "", text)


def read(relation: str, target: str) -> list[Reading]:
    """How a fact reads against the table: each slot it states a value of, starts, ends
    (for the named target, or every value), or says something vague of. Empty for a
    relation outside the table (many values at a time)."""
    word = _target_word(target)
    out: list[Reading] = []
    named = _named(target)
    for slot in SLOTS:
        kind: Kind | None = None
        if relation in slot.named_only and not named:
            continue
        if relation in slot.states or relation in slot.past:
            kind = "state"
        elif relation in slot.starts:
            kind = "start"
        elif relation in slot.ends:
            kind = "end_all" if word in slot.any_value else "end"
        elif relation in slot.vague:
            kind = "vague"
        elif relation in COPULAS:
            if word in slot.ends_all:
                kind = "end_all"
            elif word in slot.values or (slot.role_values and _is_role(word)):
                kind = "start" if relation in ("BECOMES", "GETS") else "state"
        if kind is not None:
            out.append(Reading(slot, kind))
    # A slot's own "BECOMES" (occupation) only counts for a job title: "became a mother".
    return [
        r
        for r in out
        if not (
            r.slot.role_values
            and relation in COPULAS
            and r.kind in ("state", "start")
            and not _is_role(word)
        )
    ]


def _is_role(word: str) -> bool:
    return is_role(word)


def _named(target: str) -> bool:
    """A proper name ("Globex", "Orbital Labs"), not a common noun ("gym", "Dana's job")."""
    text = re.sub(r"^.*'s\s+", "", target.strip())
    return text[:1].isupper()


def is_past_relation(relation: str) -> bool:
    return any(relation in slot.past for slot in SLOTS)


@dataclass
class Known:
    """A fact as the decision sees it (the new one, or a live one of the same source)."""

    uuid: str
    relation: str
    target_uuid: str
    target: str  # the target's name
    fact: str
    valid_at: str | None
    told_at: str  # reference time of the (first) episode that said it
    arrived_at: str  # when the graph got it (created_at)
    explicit: bool  # valid_at is a date the text named, not the time it was said
    past: bool = False  # told in the past tense: "I lived in Hamburg"
    also: bool = False  # an addition: "I also work at Globex"
    same_episode: bool = False  # said in the episode now being applied
    invalid_at: str | None = None  # the new fact's own end ("until 2020")


@dataclass
class Retirement:
    uuid: str
    invalid_at: str
    reason: str


@dataclass
class Decision:
    retire: list[Retirement] = field(default_factory=list)
    # The new fact turns out to be history: it ended here (None: it stays valid).
    new_invalid_at: str | None = None
    new_reason: str | None = None
    notes: list[str] = field(default_factory=list)  # why nothing was retired, for traces


def _later(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a or b
    return a if clock.parse_iso(a, param="t") >= clock.parse_iso(b, param="t") else b


def _ts(value: str) -> datetime:
    return clock.parse_iso(value, param="t")


def period_end(valid_at: str) -> datetime:
    """The end of the period a named date stands for, read from the timestamp the date
    resolved to (``ingest/temporal.py`` stores a year as 1 January, a month as its first
    day, a day as midnight): "in 2019" lasts a year, "in May" or "last month" a month,
    "last Tuesday" a day; a time of day is a point."""
    t = _ts(valid_at)
    if (t.hour, t.minute, t.second, t.microsecond) != (0, 0, 0, 0):
        return t + timedelta(seconds=1)
    if t.day != 1:
        return t + timedelta(days=1)
    if t.month != 1:
        return (t.replace(day=28) + timedelta(days=4)).replace(day=1)
    return t.replace(year=t.year + 1)


def _starts_after(a: Known, b: Known) -> bool:
    """``a``'s value began strictly after ``b``'s, as far as their dates tell. A fact with
    no date of its own began at some time up to when it was said."""
    if not a.explicit or a.valid_at is None:
        return False  # when ``a`` began is unknown: never provably after
    a_lo = _ts(a.valid_at)
    if b.explicit and b.valid_at is not None:
        return a_lo >= period_end(b.valid_at)
    return a_lo > _ts(b.told_at)


def _said_after(a: Known, b: Known) -> bool:
    ta, tb = _ts(a.told_at), _ts(b.told_at)
    if ta != tb:
        return ta > tb
    return a.arrived_at >= b.arrived_at


def newer(a: Known, b: Known) -> bool:
    """Whether ``a``'s value is the current one rather than ``b``'s: by their dates where
    they tell, else by which was said later."""
    if _starts_after(a, b):
        return True
    if _starts_after(b, a):
        return False
    return _said_after(a, b)


def _same_value(a: Known, b: Known) -> bool:
    """The same node, or the same thing named with its owner or without ("Dana's car",
    "car")."""
    return a.target_uuid == b.target_uuid or (
        bool(a.target) and _target_word(a.target) == _target_word(b.target)
    )


def _plan(new: Known) -> bool:
    """A start dated more than a day after it was said: a plan, not yet a change."""
    if not new.explicit or new.valid_at is None:
        return False
    return _ts(new.valid_at) > _ts(new.told_at) + timedelta(days=1)


def _ended_at(new: Known, old: Known) -> str:
    """When ``old`` stopped being true because of ``new``: when ``new`` began, but never
    before ``old`` itself began."""
    return _later(new.valid_at or new.told_at, old.valid_at) or new.told_at


def decide(new: Known, known: Iterable[Known]) -> Decision:
    """What the new fact retires among ``known`` (live facts of the same source), and
    whether it is itself history. Pure: the pipeline applies it."""
    decision = Decision()
    known = [k for k in known if k.uuid != new.uuid]
    for reading in read(new.relation, new.target):
        slot, kind = reading.slot, reading.kind
        peers = [
            (k, r.kind)
            for k in known
            for r in read(k.relation, k.target)
            if r.slot is slot and r.kind in ("state", "start", "vague")
        ]
        if kind in ("end", "end_all"):
            _ending(decision, new, slot, kind, peers)
        elif kind in ("state", "start"):
            _value(decision, new, slot, kind, peers)
    return decision


def _ending(
    decision: Decision, new: Known, slot: Slot, kind: Kind, peers: Sequence[tuple[Known, Kind]]
) -> None:
    if _plan(new):
        decision.notes.append(f"{slot.name}: an ending dated after it was said, a plan")
        return
    if kind == "end_all" and new.past and new.relation in COPULAS:
        decision.notes.append(f"{slot.name}: a status told in the past ({new.fact!r})")
        return
    for old, _ in peers:
        if kind == "end" and not _same_value(old, new):
            continue
        if _starts_after(old, new):
            continue  # began after this ending ("rejoined Acme in 2022")
        what = "it" if kind == "end" else f"any {slot.name}"
        decision.retire.append(
            Retirement(
                old.uuid,
                _ended_at(new, old),
                f"{slot.name} ({slot.holds}): {new.fact!r} ends {what}",
            )
        )


def _value(
    decision: Decision, new: Known, slot: Slot, kind: Kind, peers: Sequence[tuple[Known, Kind]]
) -> None:
    if not slot.one_at_a_time:
        return
    others = [(o, k) for o, k in peers if o.target_uuid != new.target_uuid]
    if kind == "state" and (new.past or is_past_relation(new.relation)):
        # History ("I lived in Hamburg"): retires nothing; it had ended by the time it
        # was said, or when a value known to have begun after it began.
        if new.invalid_at is None and decision.new_invalid_at is None:
            start = new.valid_at or new.told_at
            ends = [
                o.valid_at
                for o, k in others
                if k != "vague" and o.valid_at and _ts(o.valid_at) > _ts(start)
            ]
            end = min([*ends, new.told_at], key=_ts)
            decision.new_invalid_at = _later(end, start)
            decision.new_reason = f"{slot.name} ({slot.holds}): told in the past, no longer holds"
        return
    if new.invalid_at is not None and _ts(new.invalid_at) <= _ts(new.told_at):
        decision.notes.append(f"{slot.name}: {new.fact!r} had ended, retires nothing")
        return
    if new.also:
        decision.notes.append(f"{slot.name}: an addition ({new.fact!r}), retires nothing")
        return
    if _plan(new):
        decision.notes.append(f"{slot.name}: a change dated after it was said, a plan")
        return
    for old, okind in others:
        if okind == "vague":  # "lives near the university": a move ends it
            if kind == "start" and not _starts_after(old, new):
                decision.retire.append(
                    Retirement(
                        old.uuid,
                        _ended_at(new, old),
                        f"{slot.name} ({slot.holds}): a new value, {new.fact!r}",
                    )
                )
            continue
        if old.same_episode:
            decision.notes.append(f"{slot.name}: {old.fact!r} is of the same message, both kept")
            continue
        if newer(new, old):
            decision.retire.append(
                Retirement(
                    old.uuid,
                    _ended_at(new, old),
                    f"{slot.name} ({slot.holds}) has one value at a time: the newer"
                    f" statement {new.fact!r} replaces it",
                )
            )
        elif decision.new_invalid_at is None and new.invalid_at is None:
            decision.new_invalid_at = _ended_at(old, new)
            decision.new_reason = (
                f"{slot.name} ({slot.holds}) has one value at a time: {old.fact!r} is"
                " newer, so this one is history"
            )
