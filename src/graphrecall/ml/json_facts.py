"""Facts from a JSON episode, read from its structure rather than from text.

A record (a JSON object) is about its subject: the value of a naming key ("name",
"first_name" + "last_name", "company", "event", "user", or an id such as "order_id").
Each other key is a fact about the subject, its relation named from the key
(``KEYS``: "employer" -> WORKS_FOR, "city" -> LIVES_IN, "role" -> HAS_ROLE, "languages" ->
SPEAKS; any other key K -> HAS_K), the value's entity typed from the key too ("employer"
-> Organization), never from NER on a bare value ("CTO" is a Role, not an Organization).
Keys are read as words first (``json_keys.humanised``: "employer_name" and
"current_employer" are the employer, "homeCity" the city, "pet_name" the pet).
Nested objects with a subject of their own are entities with their own facts, linked by
their key ("manager": {"name": "Sam Lee"} -> HAS_MANAGER Sam Lee), and the key types them
("company": {"name": ..., "city": ...} is an Organization, so its city says where it is
located: the path customer -> company -> city stays a chain of facts, person -> company
-> city); a record under a wrapper key ("customer": {...}) is typed by it; nested objects without
one belong to the record ("address": {"city": "Paris"} -> LIVES_IN Paris). Arrays give one
fact per item; an array of records gives each record's facts. Numbers, booleans, e-mail
addresses, URLs, phone numbers and long texts are attributes of the subject, not
entities. A date under a date key ("since", "start_date", "opened", "founded") dates the
record's facts. The graph's edge types are used when one fits a key (its name, or its
description naming the key).

A document with no record that has a subject gives None: the caller reads it as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from graphrecall.ml.extraction import EdgeType, ExtractedEntity, ExtractedFact, Extraction
from graphrecall.ml.json_keys import humanised, snake, words


@dataclass(frozen=True)
class KeyMeaning:
    relation: str
    label: str | None
    verb: str  # "{s} <verb> {o}"


_PERSON_HOME = KeyMeaning("LIVES_IN", "Location", "lives in")
KEYS: dict[str, KeyMeaning] = {
    **dict.fromkeys(("city", "home", "hometown", "residence", "lives_in"), _PERSON_HOME),
    **dict.fromkeys(
        ("employer", "company", "organization", "organisation", "works_at", "workplace"),
        KeyMeaning("WORKS_FOR", "Organization", "works for"),
    ),
    **dict.fromkeys(
        ("role", "title", "job_title", "position", "occupation", "job"),
        KeyMeaning("HAS_ROLE", "Role", "has the role"),
    ),
    **dict.fromkeys(("language", "languages"), KeyMeaning("SPEAKS", "Language", "speaks")),
    **dict.fromkeys(("skill", "skills"), KeyMeaning("HAS_SKILL", "Skill", "has the skill")),
    **dict.fromkeys(("hobby", "hobbies"), KeyMeaning("HAS_HOBBY", "Hobby", "has the hobby")),
    **dict.fromkeys(
        ("headquarters", "hq", "based_in"),
        KeyMeaning("IS_HEADQUARTERED_IN", "Location", "is headquartered in"),
    ),
    "industry": KeyMeaning("IS_IN_INDUSTRY", "Industry", "is in the industry"),
    "team": KeyMeaning("IS_MEMBER_OF_TEAM", "Team", "is a member of the team"),
    "business": KeyMeaning("OWNS_BUSINESS", "Organization", "owns the business"),
    "manager": KeyMeaning("HAS_MANAGER", "Person", "has the manager"),
    "spouse": KeyMeaning("IS_MARRIED_TO", "Person", "is married to"),
}
# Relations only a person has: an order's or a team's "company" is not its employer.
_PERSONS_ONLY = frozenset({"WORKS_FOR", "HAS_ROLE", "SPEAKS", "HAS_SKILL", "HAS_HOBBY"})
# Where an organisation is, its "city" says where it is, not where it lives.
_ORG_PLACE = KeyMeaning("IS_LOCATED_IN", "Location", "is located in")
PERSON_KEYS = frozenset(
    """manager boss supervisor ceo cto founder owner customer client buyer seller spouse
    partner wife husband winner author assignee contact user member mentor coach employee
    person people staff colleague friend student teacher patient attendee participant
    speaker reviewer""".split()  # noqa: SIM905
)
PLACE_KEYS = frozenset("city country venue location place address state region".split())  # noqa: SIM905
ORG_KEYS = frozenset("company employer organization organisation school university".split())  # noqa: SIM905
# Keys that name the record's subject, in order of preference, with the subject's type.
NAME_KEYS: tuple[tuple[str, str | None], ...] = (
    ("name", None),
    ("full_name", "Person"),
    ("user", "Person"),
    ("username", "Person"),
    ("company_name", "Organization"),
    ("company", "Organization"),
    ("organization", "Organization"),
    ("event", "Event"),
    ("product_name", "Product"),
)
DATE_KEYS = re.compile(
    r"^(date|since|start(ed)?(_date|_at)?|opened|founded|joined|created_at|.*_date)$"
)
_DATE_VALUE = re.compile(r"^(1[89]\d\d|2\d\d\d)(-\d\d(-\d\d)?)?([T ][\d:.+Z-]+)?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.\w+$")
_URL = re.compile(r"^(https?://|www\.)", re.I)
_PHONE = re.compile(r"^\+?[\d ()./-]{6,}$")
# Keys that describe an organisation, telling a "name" record is about one (checked
# before the personal keys: a company has a city too).
_ORGANISATIONAL = frozenset(
    """industry headquarters hq founded employees ceo website domain revenue sector
    customers clients products ticker""".split()  # noqa: SIM905
)
# Keys that describe a person, telling a "name" record is about one.
_PERSONAL = frozenset(
    """city employer role title job_title occupation email phone age birthday languages
    skills hobbies pet manager first_name last_name address spouse""".split()  # noqa: SIM905
)
MAX_VALUE_CHARS = 100


def extract(content: str, edge_types: list[EdgeType] | None = None) -> Extraction | None:
    """The facts of a JSON document, or None when it holds no record with a subject."""
    try:
        data = json.loads(content)
    except ValueError:
        return None
    reader = _Reader(edge_types or [])
    reader.walk(data, None)
    if not reader.facts:
        return None
    return Extraction(entities=list(reader.entities.values()), facts=reader.facts)


def _snake(key: str) -> str:
    """The key as the word it means ("employer_name" -> "employer"), in snake case."""
    return humanised(key, _KNOWN)


def _words(key: str) -> str:
    return _snake(key).replace("_", " ")


def _singular(word: str) -> str:
    if word in ("species", "series", "news", "status", "address"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def clean_value(value: str) -> str:
    return " ".join(value.split()).strip(" .,;:!?")


@dataclass
class _Reader:
    edge_types: list[EdgeType]
    entities: dict[str, ExtractedEntity] = field(default_factory=dict)
    facts: list[ExtractedFact] = field(default_factory=list)

    def entity(self, name: str, label: str | None) -> str:
        key = name.casefold()
        if key not in self.entities:
            self.entities[key] = ExtractedEntity(name=name, label=label)
        elif label and not self.entities[key].label:
            self.entities[key].label = label
        return self.entities[key].name

    def walk(self, value: Any, key: str | None) -> None:
        """Records anywhere in ``value`` (a top-level array, "employees": [...],
        "customer": {...}), each typed by the key it sits under."""
        if isinstance(value, list):
            for item in value:
                self.walk(item, key)
        elif isinstance(value, dict):
            subject = _subject(value)
            if subject is None:
                for inner_key, item in value.items():
                    if isinstance(item, dict | list):
                        self.walk(item, inner_key)
                return
            self.record(value, _typed(subject, key) if key else subject)

    def record(self, data: dict[str, Any], subject: tuple[str, str | None, str | None]) -> str:
        name, label, name_key = subject
        source = self.entity(name, label)
        when = _date_of(data)
        self.fields(source, label, data, {name_key, "first_name", "last_name"}, when)
        return source

    def fields(
        self,
        source: str,
        label: str | None,
        data: dict[str, Any],
        skip: set[str | None],
        when: str | None,
    ) -> None:
        for key, value in data.items():
            if key in skip or DATE_KEYS.match(snake(key)):
                continue
            if isinstance(value, dict):
                inner = _subject(value)
                if inner is None:  # "address": {"city": ...} belongs to the record
                    self.fields(source, label, value, set(), when)
                    continue
                target = self.record(value, _typed(inner, key))
                self.fact(source, label, key, target, when)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        inner = _subject(item)
                        if inner is not None:
                            target = self.record(item, _typed(inner, key))
                            self.fact(source, label, key, target, when)
                    elif isinstance(item, str) and _is_entity_value(item):
                        self.fact(source, label, key, self.value(key, item), when)
            elif isinstance(value, str) and _is_entity_value(value):
                self.fact(source, label, key, self.value(key, value), when)
            elif value is not None and not isinstance(value, dict | list):
                self.entities[source.casefold()].attributes[snake(key)] = value

    def value(self, key: str, text: str) -> str:
        meaning = KEYS.get(_snake(key))
        label = meaning.label if meaning and meaning.label else _label_for(key)
        return self.entity(clean_value(text), label)

    def fact(self, source: str, label: str | None, key: str, target: str, when: str | None) -> None:
        snake = _snake(key)
        meaning = KEYS.get(snake)
        label = self.entities[source.casefold()].label or label
        personal = label in (None, "Person")
        if meaning is not None and meaning.relation == "LIVES_IN" and not personal:
            meaning = _ORG_PLACE
        if meaning is not None and meaning.relation in _PERSONS_ONLY and not personal:
            meaning = None  # an order's "company" is not its employer: HAS_COMPANY
        if meaning is not None:
            relation, text = meaning.relation, f"{source} {meaning.verb} {target}"
        else:
            said = _singular(_words(key)) if snake.endswith("s") else _words(key)
            relation = "HAS_" + said.upper().replace(" ", "_")
            text = f"{source}'s {said} is {target}"
        relation = _fitting_type(self.edge_types, relation, _words(key)) or relation
        self.facts.append(
            ExtractedFact(
                source=source,
                relation=relation,
                target=target,
                fact=text,
                valid_at=when,
                rule="json_record",
            )
        )


def _subject(data: dict[str, Any]) -> tuple[str, str | None, str | None] | None:
    """(name, type, key) of the record's subject, or None."""
    first, last = data.get("first_name"), data.get("last_name")
    if isinstance(first, str) and first.strip():
        name = clean_value(f"{first} {last}" if isinstance(last, str) else first)
        return name, "Person", None
    for key, label in NAME_KEYS:
        value = data.get(key)
        if isinstance(value, str) and _is_entity_value(value):
            if key == "name" and label is None:
                keys = {_snake(k) for k in data}
                if _ORGANISATIONAL & keys:
                    label = "Organization"
                elif _PERSONAL & keys:
                    label = "Person"
            return clean_value(value), label, key
    for key, value in data.items():  # "order_id": "A-1043" -> the Order A-1043
        plain = snake(key)
        if (plain.endswith("_id") or plain == "id") and isinstance(value, str | int):
            kind = words(plain[:-3]).title().replace(" ", "") if plain != "id" else None
            return clean_value(str(value)), kind or None, key
    return None


def _typed(
    subject: tuple[str, str | None, str | None], key: str
) -> tuple[str, str | None, str | None]:
    """The subject typed by the key it sits under: a key that names a kind ("company",
    "customer", "city") says what a record named by "name" is, over the guess from its
    other keys (a company with a city is not a person); otherwise the record's own type,
    else the key's words ("pet" -> Pet)."""
    name, label, name_key = subject
    kind = _kind_of(key)
    if kind is not None and name_key == "name":
        return name, kind, name_key
    return name, label or _label_for(key), name_key


def _kind_of(key: str) -> str | None:
    """The type a key names ("customer" -> Person, "company" -> Organization), or None."""
    word = _singular(_snake(key))
    if word in PERSON_KEYS:
        return "Person"
    if word in PLACE_KEYS:
        return "Location"
    if word in ORG_KEYS:
        return "Organization"
    meaning = KEYS.get(word) or KEYS.get(_snake(key))
    return meaning.label if meaning is not None and meaning.label else None


def _label_for(key: str) -> str | None:
    return _kind_of(key) or _words(_singular(_snake(key))).title().replace(" ", "") or None


def _is_entity_value(text: str) -> bool:
    value = text.strip()
    return (
        0 < len(value) <= MAX_VALUE_CHARS
        and any(ch.isalpha() for ch in value)
        and not _EMAIL.match(value)
        and not _URL.match(value)
        and not _PHONE.match(value)
        and not _DATE_VALUE.match(value)
    )


def _date_of(data: dict[str, Any]) -> str | None:
    for key, value in data.items():
        if not DATE_KEYS.match(snake(key)):
            continue
        text = str(value).strip()
        if _DATE_VALUE.match(text):
            return text if "T" in text or len(text) > 4 else f"in {text}"
    return None


def _fitting_type(types: list[EdgeType], relation: str, key_words: str) -> str | None:
    """The ontology's edge type for this relation: same name, or a description that
    names the key ("the company a person works for" fits "company")."""
    for t in types:
        if t.name.upper() == relation:
            return t.name
    for t in types:
        if re.search(rf"\b{re.escape(key_words)}\b", t.description, re.I):
            return t.name
    return None


# The keys with a meaning of their own, which ``json_keys.humanised`` reads keys into.
_KNOWN = frozenset(KEYS) | PERSON_KEYS | PLACE_KEYS | ORG_KEYS | {k for k, _ in NAME_KEYS}
