"""Changes of a single value, read from phrasings the clause rules get wrong.

The relations that hold one value at a time (``ingest/single_valued.py``: where someone
lives, whom they work for, their job, partner, age, status) are what contradiction
resolution acts on, so how they are said matters more than elsewhere. The small parser
reads some of their everyday phrasings badly: "Sam and I got divorced" (Sam got
"divorced"), "Chris and I broke up" (no fact), "I'm dating Chris" (no fact), "My wife is
Sam" ("Alice's wife" is Sam), "I'm 34", "I'm retired", "I moved away from Munich". The
patterns here read them as the speaker's facts in the table's relations, each with the
clause's own text and dates; the clause rule's readings of the same clause are dropped
(``Rules.run``).

Beside them, ``job_relation`` names a job's relation ("got a job at Initech" ->
GETS_JOB_AT, not GETS_AT: getting coffee at a café is no new employer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from graphrecall.ml.extraction import ExtractedFact, ExtractionInput
from graphrecall.ml.offline_words import FILLERS, GREETINGS
from graphrecall.ml.offline_words import ROLE_WORDS as _ROLE_WORDS


class Rules(Protocol):
    """What is read here of the clause rules (``offline_rules.Rules``, which calls
    ``read``): the message, its parse, and the rules' own readings of a clause."""

    item: ExtractionInput
    doc: Any
    speaker: str | None

    def _entity(self, name: str, label: str | None) -> str: ...
    def _subject(self, verb: Any) -> Any | None: ...
    def _not_a_statement(self, verb: Any, subject: Any) -> bool: ...
    def _clause_text(self, verb: Any, tokens: list[Any] | None = None) -> str: ...
    def _times(
        self, verb: Any, tokens: list[Any] | None = None
    ) -> tuple[str | None, str | None]: ...


_NAME = r"[A-Z][\w'-]+(?: [A-Z][\w'-]+)?"
_I = r"(?:\b[Ii]\b)"
_BE = r"(?:'m|\s+am|\s+was|\s+have been|'ve been|\s+had been|\s+got|\s+get|\s+just got)"
_PAIR = rf"(?:\b(?P<x1>{_NAME}) and (?:I|me)\b|{_I} and (?P<x2>{_NAME})\b)"
_RECIPROCAL = {
    "divorced": ("DIVORCES", "divorced"),
    "broke up": ("BREAKS_UP_WITH", "single"),
    "split up": ("SPLITS_UP_WITH", "single"),
    "separated": ("SEPARATES_FROM", "separated"),
}
_ENDED = r"(?P<end>divorced|broke up|split up|separated)"
_PARTNER_NOUNS = {
    "husband": "IS_MARRIED_TO",
    "wife": "IS_MARRIED_TO",
    "spouse": "IS_MARRIED_TO",
    "boyfriend": "IS_DATING",
    "girlfriend": "IS_DATING",
    "partner": "HAS_PARTNER",
    "fiance": "IS_ENGAGED_TO",
    "fiancé": "IS_ENGAGED_TO",
    "fiancee": "IS_ENGAGED_TO",
    "fiancée": "IS_ENGAGED_TO",
}
_PARTNER = r"(?P<noun>husband|wife|spouse|boyfriend|girlfriend|partner|fianc[eé]e?)"
_STATUS = r"(?P<status>retired|unemployed|fired|laid off|divorced|separated|widowed|single)"
_DWELLING = r"(?:flat|apartment|house|home|place|condo|studio|room)"
# A job title, up to a date, a place or the end of the clause: "lead engineer".
_ROLE = (
    r"(?:a |an |the )?(?P<role>[A-Za-z][\w-]*(?: (?:of )?[A-Za-z][\w-]*){0,3}?)"
    r"(?=\s+(?:in|at|on|last|this|since|yesterday|today|for|and|but)\b|\s*[.,!;]|\s*$)"
)

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pair_ended", re.compile(rf"{_PAIR}(?:\s+(?:got|have|had|just|finally))*\s+{_ENDED}\b")),
    ("we_ended", re.compile(rf"\b[Ww]e(?:\s+(?:got|have|had|just|finally))*\s+{_ENDED}\b")),
    (
        "engaged",
        re.compile(rf"{_I}(?P<be>{_BE})?\s+(?P<what>engaged|married) to (?P<x1>{_NAME})\b"),
    ),
    (
        "dating",
        re.compile(
            rf"{_I}(?P<be>'m|\s+am|\s+was|\s+have been|'ve been|\s+started|\s+began)"
            rf"\s+dating (?P<x1>{_NAME})\b"
        ),
    ),
    (
        "my_partner",
        re.compile(rf"\b[Mm]y (?:new )?{_PARTNER} (?P<be>is|was|'s) (?P<x1>{_NAME})\b"),
    ),
    (
        "partner_is_mine",
        re.compile(rf"\b(?P<x1>{_NAME}) (?P<be>is|was|'s) my (?:new )?{_PARTNER}\b"),
    ),
    (
        "age",
        re.compile(
            rf"{_I}(?P<be>'m|\s+am|\s+was|\s+just turned|\s+turned)\s+(?P<age>\d{{1,3}})"
            r"(?: years old| years of age| yrs old)?(?=\s*(?:now|today|this year|last \w+)?"
            r"\s*(?:[.,!;]|$| and | but ))"
        ),
    ),
    (
        "status",
        re.compile(
            rf"{_I}(?P<be>{_BE})\s+(?:now\s+|officially\s+|finally\s+)?{_STATUS}(?![\w-])"
            r"(?!\s+(?:from|to|by|with|of|on|as)\b)(?!\s+[A-Z])"
        ),
    ),
    (
        "status",  # "I retired last year" (not "I retired from Acme": RETIRES_FROM)
        re.compile(
            rf"{_I}\s+(?:just\s+|finally\s+)?(?P<status>retired)(?![\w-])(?!\s+(?:from|as)\b)"
        ),
    ),
    ("promoted", re.compile(rf"{_I}(?P<be>{_BE})\s+promoted to {_ROLE}")),
    (
        "title",
        re.compile(
            rf"\b[Mm]y (?:new |current )?(?:job title|title|role|position) (?P<be>is|was|'s)"
            rf" (?:now )?{_ROLE}"
        ),
    ),
    (
        "moved_from",
        re.compile(r"\bmoved (?P<how>away|out) (?:from|of)\b"),
    ),
    (
        "moved_into",
        re.compile(rf"\bmoved (?:in)?to (?:a|an|my|our|the) (?:new |small |big )?{_DWELLING} in\b"),
    ),
)

# Verbs whose "<verb> a job at X" names an employer (a start or an end of one). "started
# a job at X" is STARTS_AT already.
# Job titles: the extractor's roles and the words titles end in.
ROLE_WORDS = _ROLE_WORDS | frozenset(
    """lead head officer administrator coordinator specialist technician mechanic
    electrician plumber carpenter barista bartender dentist surgeon therapist psychologist
    paramedic firefighter pilot salesperson representative recruiter librarian journalist
    reporter producer marketer waitress principal supervisor""".split()  # noqa: SIM905
)
_JOB_NOUNS = frozenset({"job", "position", "role", "internship", "post", "offer"})
JOB_VERBS = frozenset(
    {"GETS", "TAKES", "ACCEPTS", "LANDS", "FINDS", "QUITS", "LEAVES", "LOSES", "HAS"}
)


@dataclass
class _Found:
    relation: str
    target: str
    label: str | None
    verb: Any  # the token whose clause gives the text and the dates
    past: bool = False


def is_role(text: str) -> bool:
    """A job title: its head word is a role ("lead engineer", "head of design")."""
    words = text.casefold().split()
    if "of" in words:
        words = words[: words.index("of")]
    return bool(words) and words[-1] in ROLE_WORDS


def job_relation(relation_parts: list[str], verb: Any) -> list[str]:
    """ "got a job at Initech": [GETS, JOB, AT] when the verb's object is a job."""
    if len(relation_parts) < 2 or relation_parts[0].upper() not in JOB_VERBS:
        return relation_parts
    if any(c.dep_ == "dobj" and c.lemma_.lower() in _JOB_NOUNS for c in verb.children):
        return [relation_parts[0], "job", *relation_parts[1:]]
    return relation_parts


def read(rules: Rules) -> list[ExtractedFact]:
    """The speaker's changes of a single value in ``rules``' message."""
    if not rules.speaker:
        return []
    out: list[ExtractedFact] = []
    for sent in rules.doc.sents:
        text = sent.text
        for kind, pattern in PATTERNS:
            for match in pattern.finditer(text):
                found = _read(rules, sent, kind, match)
                if found is None:
                    continue
                top = found.verb
                while (
                    top.dep_ in ("xcomp", "acomp", "aux", "auxpass", "prt") and top.head is not top
                ):
                    top = top.head
                subject = rules._subject(top)
                if text.rstrip().endswith("?") or (
                    subject is not None and rules._not_a_statement(top, subject)
                ):
                    continue  # "If I'm single ...", "Am I 34?"
                valid, invalid = rules._times(top)
                text_of = rules._clause_text(top)
                if subject is None:  # the parse lost the subject ("Chris and I broke up")
                    text_of = rules._clause_text(sent.root, trimmed(list(sent)))
                if found.relation in ("HAS_AGE", "TURNS") and valid:
                    # spaCy reads "34 years old" as a date: only the rest of it is one
                    valid = re.sub(r"\b\d{1,3}\b(?: years old| years of age| yrs old)?", "", valid)
                    valid = valid.strip() or None
                out.append(
                    ExtractedFact(
                        source=rules._entity(rules.speaker, rules.item.speaker_label or "Person"),
                        relation=found.relation,
                        target=rules._entity(found.target, found.label),
                        fact=text_of,
                        valid_at=valid,
                        invalid_at=invalid,
                        rule="change",
                        past=found.past,
                    )
                )
    return out


def _token_at(sent: Any, offset: int) -> Any | None:
    while offset < len(sent.text) and sent.text[offset].isspace():
        offset += 1
    span = sent.doc.char_span(
        sent.start_char + offset, sent.start_char + offset + 1, alignment_mode="expand"
    )
    return span[0] if span is not None and len(span) else None


def _verb_near(sent: Any, match: re.Match[str], group: str | int = 0) -> Any | None:
    token = _token_at(sent, match.start(group))
    if token is None:
        return None
    # The verb of the clause: the matched word or the head it hangs from.
    for candidate in (token, *token.ancestors):
        if candidate.pos_ in ("VERB", "AUX"):
            return candidate
    return sent.root


def _person(sent: Any, name: str | None) -> str | None:
    """A name the parse also reads as a person or proper noun."""
    if not name:
        return None
    start = sent.text.find(name)
    token = _token_at(sent, start) if start >= 0 else None
    if token is None or (token.pos_ != "PROPN" and token.ent_type_ != "PERSON"):
        return None
    return name


def _place_after(sent: Any, offset: int) -> tuple[str, str] | None:
    """The first place named after ``offset`` in the sentence (within a few words)."""
    for ent in sent.ents:
        if ent.start_char - sent.start_char >= offset and ent.label_ in ("GPE", "LOC", "FAC"):
            if ent.start_char - sent.start_char - offset > 40:
                return None
            return ent.text, "Location"
    return None


def _read(rules: Rules, sent: Any, kind: str, match: re.Match[str]) -> _Found | None:
    groups = match.groupdict()
    be = (groups.get("be") or "").strip()
    past = be in ("was", "had been")
    if kind == "pair_ended":
        name = _person(sent, groups.get("x1") or groups.get("x2"))
        verb = _verb_near(sent, match, "end")
        if name is None or verb is None:
            return None
        return _Found(_RECIPROCAL[groups["end"]][0], name, "Person", verb)
    if kind == "we_ended":
        verb = _verb_near(sent, match, "end")
        target = _RECIPROCAL[groups["end"]][1]
        return None if verb is None else _Found("IS", target, None, verb)
    if kind == "engaged":
        name = _person(sent, groups.get("x1"))
        verb = _verb_near(sent, match, "what")
        if name is None or verb is None:
            return None
        state = (
            "IS" if be in ("", "'m", "am", "was", "have been", "'ve been", "had been") else "GETS"
        )
        what = groups["what"].upper()
        relation = f"{state}_{what}_TO" if state == "GETS" else f"IS_{what}_TO"
        if not be and what == "MARRIED":
            return None  # "I married Sam" is read as MARRIES already
        return _Found(relation, name, "Person", verb, past)
    if kind == "dating":
        name = _person(sent, groups.get("x1"))
        verb = _verb_near(sent, match, "be")
        if name is None or verb is None:
            return None
        relation = "STARTS_DATING" if be in ("started", "began") else "IS_DATING"
        return _Found(relation, name, "Person", verb, past)
    if kind in ("my_partner", "partner_is_mine"):
        name = _person(sent, groups.get("x1"))
        verb = _verb_near(sent, match, "be")
        if name is None or verb is None:
            return None
        relation = _PARTNER_NOUNS[groups["noun"].lower()]
        return _Found(relation, name, "Person", verb, past)
    if kind == "age":
        age = int(groups["age"])
        verb = _verb_near(sent, match, "be")
        if not 0 < age < 120 or verb is None:
            return None
        turned = be.endswith("turned")
        return _Found("TURNS" if turned else "HAS_AGE", f"{age} years old", None, verb, past)
    if kind == "status":
        verb = _verb_near(sent, match, "status")
        if verb is None:
            return None
        relation = "GETS" if be in ("got", "get", "just got") else "IS"
        return _Found(relation, groups["status"], None, verb, past)
    if kind in ("promoted", "title"):
        role = groups["role"].strip()
        verb = _verb_near(sent, match, "be")
        if verb is None or not is_role(role):
            return None
        relation = "IS_PROMOTED_TO" if kind == "promoted" else "HAS_TITLE"
        return _Found(relation, role.lower(), None, verb, past and kind == "title")
    if kind == "moved_from":
        place = _place_after(sent, match.end())
        verb = _verb_near(sent, match)
        if place is None or verb is None:
            return None
        relation = "MOVES_AWAY_FROM" if groups["how"] == "away" else "MOVES_OUT_OF"
        return _Found(relation, place[0], place[1], verb)
    if kind == "moved_into":
        place = _place_after(sent, match.end())
        verb = _verb_near(sent, match)
        if place is None or verb is None:
            return None
        return _Found("MOVES_TO", place[0], place[1], verb)
    return None


def trimmed(tokens: list[Any]) -> list[Any]:
    """A clause's tokens without the punctuation, conjunctions, greetings and leading
    "how"/"when" at its ends."""
    while tokens and (tokens[-1].is_punct or tokens[-1].dep_ == "cc"):
        tokens.pop()
    while tokens and (
        tokens[0].is_punct
        or tokens[0].dep_ in ("cc", "mark", "intj")
        or tokens[0].lower_ in GREETINGS
        or (tokens[0].lower_ in FILLERS and tokens[0].dep_ in ("advmod", "intj", "discourse"))
        or (tokens[0].tag_ == "WRB" and tokens[0].lower_ in ("how", "when"))
    ):
        tokens.pop(0)
    return tokens
