"""The extraction benchmark's data: cases of episodes with what a careful reader extracts.

The file format is described at the top of ``bench/data/extraction.txt``; this module
parses it into :class:`Case` records and says when an extracted fact matches a gold one.

Matching is lenient on wording and strict on substance:
- names match when they are equal ignoring case, spacing, a leading "the", trailing
  punctuation and an owner ("Ana Silva's thesis" ~ "thesis"), or when the shorter is a
  whole-word part of the longer that is its start (a first name: "Kofi" ~ "Kofi
  Mensah"), its end (a head noun: "rescue dog" ~ "dog") or at least half its words
  ("Orbital Labs" is not "new job at Orbital Labs"); a gold name may list alternatives
  a careful reader accepts equally ("bakery / Amman": the clause says both);
- a relation matches when any of the gold words is a part of the edge name, lower case
  ("work" ~ WORKS_AT, WORKS_FOR; "*" ~ anything);
- a date matches when the edge's ``valid_at`` starts with the gold prefix (a year, a
  month or a day).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).parent / "data" / "extraction.txt"


@dataclass
class GoldFact:
    subject: str
    relations: tuple[str, ...]  # words, any of which is part of a matching edge name
    object: str
    date: str | None = None


@dataclass
class Item:
    """One episode: a message (``speaker`` set) or a JSON record (``json`` set)."""

    reference_time: str
    text: str
    speaker: str | None = None
    role: str = "user"
    is_json: bool = False
    facts: list[GoldFact] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    not_entities: list[str] = field(default_factory=list)


@dataclass
class Case:
    case_id: str
    user: str  # "First Last"
    time_zone: str | None
    items: list[Item] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)  # subject, object
    live: list[tuple[str, str]] = field(default_factory=list)


def load(path: Path = DATA) -> list[Case]:
    cases: list[Case] = []
    when: str | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name}:{number}"
        if line.startswith("== "):
            parts = [p.strip() for p in line[3:].split("|")]
            opts = dict(p.split("=", 1) for p in parts[1:])
            cases.append(Case(parts[0], opts["user"], opts.get("tz")))
            when = None
            continue
        if not cases:
            raise ValueError(f"{where}: data before the first case")
        case = cases[-1]
        if line.startswith("@ "):
            when = line[2:].strip()
        elif line.startswith("  + "):
            bits = [b.strip() for b in line[4:].split("|")]
            if len(bits) not in (3, 4):
                raise ValueError(f"{where}: a fact is subject | relation words | object [| date]")
            date = bits[3] if len(bits) == 4 else None
            case.items[-1].facts.append(GoldFact(bits[0], tuple(bits[1].split()), bits[2], date))
        elif line.startswith("  e "):
            case.items[-1].entities += [n.strip() for n in line[4:].split(";")]
        elif line.startswith("  x "):
            case.items[-1].not_entities += [n.strip() for n in line[4:].split(";")]
        elif line.startswith(("! ", "= ")):
            subject, obj = (b.strip() for b in line[2:].split("|"))
            (case.invalid if line[0] == "!" else case.live).append((subject, obj))
        elif when is None:
            raise ValueError(f"{where}: an episode before its reference time (@ ...)")
        elif line.startswith("json: "):
            text = line[6:].strip()
            json.loads(text)  # a broken record is a broken benchmark: fail loudly
            case.items.append(Item(when, text, is_json=True))
        elif ": " in line:
            name, text = line.split(": ", 1)
            role = "assistant" if name == "Assistant" else "user"
            case.items.append(Item(when, text.strip(), speaker=name, role=role))
        else:
            raise ValueError(f"{where}: cannot read {line!r}")
    return cases


_THE = re.compile(r"^the\s+", re.I)


def norm(name: str) -> str:
    return _THE.sub("", " ".join(name.replace("\u2019", "'").split())).strip(" .,;:!?").casefold()


_PREPOSITIONS = frozenset("at in of for with on to from near by".split())  # noqa: SIM905
_OWNER = re.compile(r"^[\w .-]+?'s\s+")


def names_match(gold: str, found: str) -> bool:
    """Any of ``gold``'s alternatives ("bakery / Amman") names ``found``."""
    return any(_name_matches(g, found) for g in gold.split(" / "))


def _name_matches(gold: str, found: str) -> bool:
    a, b = norm(gold), norm(found)
    if a == b or _OWNER.sub("", a) == _OWNER.sub("", b):  # "Ana's thesis" ~ "thesis"
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if not short:
        return False
    if re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long) is None:
        return False
    short_words, long_words = short.split(), long.split()
    return (
        long.startswith(short + " ")  # a first name: "Kofi" ~ "Kofi Mensah"
        or (  # the head noun: "rescue dog" ~ "dog", not "job at Orbital Labs"
            long.endswith(" " + short) and not _PREPOSITIONS & set(long[: -len(short)].split())
        )
        or 2 * len(short_words) >= len(long_words)
    )


def relation_matches(words: tuple[str, ...], relation: str) -> bool:
    name = relation.casefold()
    return any(w == "*" or w.casefold() in name for w in words)


def fact_matches(gold: GoldFact, source: str, relation: str, target: str) -> bool:
    return (
        names_match(gold.subject, source)
        and (gold.object == "*" or names_match(gold.object, target))
        and relation_matches(gold.relations, relation)
    )
