"""The kind of answer a question asks for, and whether a text could hold one.

"When did Dave find the car?" is answered by "I found it last week, and it was in bad
shape", which shares one word with the question; "How much have I spent on my bike?" by
"the new lights were $40". Episode search's answer leg (retrieval/engine.py) ranks the
candidates that hold an answer of the asked kind: a time, a sum of money, a length of time,
a measured quantity (a weight, a distance, a count of people) or a place. It reads the
question's form only (its first words, "how much ... spent"), and a text's surface (a
month, "yesterday", "$40", "two weeks", "20 pounds", "in Boston"): no model, and nothing a
question of another form could trigger.

Kinds measured and left out (docs/benchmarks.md, "The answer leg"): "who" (a relative or a
name: LoCoMo -2.1 at @5), "how many" of things (what is counted is rarely written as a
number; a count of people or of a unit is a quantity) and tastes ("favourite", "enjoy":
-1.3 at @5).
"""

from __future__ import annotations

import re
from typing import Literal

AnswerKind = Literal["time", "money", "duration", "quantity", "place"]

# Answers are matched in lower case (case-insensitive patterns are twice as slow on long
# texts), except what case tells apart: "May" and "March" are months, "may" and "march"
# verbs; a place is a capitalised name.
_MONTHS = "january|february|april|june|july|august|september|october|november|december"
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_UNITS = "minutes?|hours?|days?|weeks?|weekends?|months?|years?|nights?|mornings?|evenings?"
_AMOUNTS = (
    "\\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|couple|several"
)

# Measured amounts: weights, distances, volumes, energy, and counts of people.
_MEASURES = (
    "pounds?|lbs?|kg|kilos?|kilograms?|grams?|ounces?|oz|miles?|km|kilomet(?:er|re)s?"
    "|met(?:er|re)s?|feet|foot|ft|inch(?:es)?|yards?|laps?|steps|calories|kcal"
    "|lit(?:er|re)s?|gallons?|people|followers|subscribers|views|guests|attendees"
    "|participants|members|pages"
)

# First match wins: "how long ago" asks for a time, not a duration; "how many days ago"
# too.
_QUESTIONS: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = (
    (
        "time",
        re.compile(
            r"^\s*(when\b|what (date|day|year|month|time)\b|how long ago\b"
            r"|which (year|month|day)\b)|\bwhen did\b"
            r"|\bhow many (days|weeks|months|years) (ago|passed|had passed|between|since)\b"
            r"|\bwhich\b.*\bfirst\b|\b(the order of|in what order|earliest|latest)\b",
            re.I,
        ),
    ),
    (
        "money",
        re.compile(
            r"\bhow much\b.*\b(money|cost|costs|spend|spent|pay|paid|price|worth|raise|raised"
            r"|earn|earned|save|saved)\b|\b(money|cost|price)\b.*\bhow much\b",
            re.I,
        ),
    ),
    ("duration", re.compile(r"\bhow (long|many (minutes|hours|days|weeks|months|years))\b", re.I)),
    (
        "quantity",
        re.compile(
            rf"\bhow (far|heavy|tall|many ({_MEASURES}))\b"
            r"|\b(total|combined|overall) (weight|distance|mileage|number of)\b"
            r"|\bwhat (is|was) the (weight|distance|height|length|number of)\b",
            re.I,
        ),
    ),
    (
        "place",
        re.compile(
            r"^\s*(where\b|which (city|country|state|town|place|places|cities|countries)\b)"
            r"|\bwhere (did|do|does|is|was|are|were|has|have)\b",
            re.I,
        ),
    ),
)

_LOWER_ANSWERS: dict[AnswerKind, re.Pattern[str]] = {
    "time": re.compile(
        rf"(?<![a-z0-9])(?:{_MONTHS}|{_DAYS}|yesterday|today|tonight|tomorrow|ago"
        rf"|(?:last|this|next) (?:{_UNITS}|{_DAYS})|(?:19|20)\d\d|since"
        r"|\d{1,2}(?::\d\d)?\s?(?:am|pm)|o'clock)\b"
    ),
    "money": re.compile(r"[$€£]\s?\d|\b\d[\d,.]*\s?(?:dollars|bucks|euros|pounds|k)\b"),
    "duration": re.compile(rf"\b(?:{_AMOUNTS})[\s-]+(?:{_UNITS})\b"),
    "quantity": re.compile(rf"\b(?:\d[\d,.]*[\s-]?|(?:{_AMOUNTS})[\s-]+)(?:{_MEASURES})\b"),
}
_CASED_ANSWERS: dict[AnswerKind, re.Pattern[str]] = {
    "time": re.compile(r"\b(?:May|March)\b"),
    "place": re.compile(
        r"\b(?:in|at|to|from|near|around|visit|visited|visiting)\s+(?:the\s+)?[A-Z][a-z]+"
        r"|\b(?:city|country|town|park|beach|museum|restaurant|cafe|café|store|shop|mall"
        r"|library|school|church|lake|mountains?|island|downtown|abroad)\b"
    ),
}


def kind_of(question: str) -> AnswerKind | None:
    """The kind of answer ``question`` asks for; None for any other question."""
    for kind, pattern in _QUESTIONS:
        if pattern.search(question):
            return kind
    return None


def holds(kind: AnswerKind, text: str) -> bool:
    """Whether ``text`` mentions something of ``kind``: a candidate answer, not a proof."""
    lower = _LOWER_ANSWERS.get(kind)
    if lower is not None and lower.search(text.lower()) is not None:
        return True
    cased = _CASED_ANSWERS.get(kind)
    return cased is not None and cased.search(text) is not None
