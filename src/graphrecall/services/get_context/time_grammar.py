"""The grammar of relative calendar time (``relative_time.py``'s first layer, *finding*):
the regular expressions that pick out candidate time phrases in a query ("yesterday",
"last week", "in March", "since Monday", "the past 3 days"), each with its kind. Words
alone ("we", "may", "march" as a verb) never match: a phrase needs its grammar around it.
"""

from __future__ import annotations

import re

# -- the grammar -----------------------------------------------------------------------

MONTHS = """january february march april may june july august september
    october november december""".split()  # noqa: SIM905
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
}
MONTH = r"(?:" + "|".join(MONTHS) + r")"
WEEKDAY = r"(?:" + "|".join(WEEKDAYS) + r")"
YEAR = r"(?:19|20)\d{2}"
DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
NUM = (
    r"(?:\d{1,3}|a couple of|couple of|a few|few|an?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve)"
)
UNIT = r"(?:hour|day|week|fortnight|month|year)s?"
# A calendar date dateparser reads: ISO, day + month (+ year), month + year, month, year.
# Before a year: a space, or a comma with or without one ("December 1,2023").
_THEN_YEAR = rf"(?:,\s*|\s+){YEAR}"
DATE = (
    rf"(?:{YEAR}-\d{{2}}-\d{{2}}"
    rf"|{MONTH}\s+{DAY}(?:{_THEN_YEAR})?"
    rf"|{DAY}\s+(?:of\s+)?{MONTH}(?:{_THEN_YEAR})?"
    rf"|{MONTH}{_THEN_YEAR}"
    rf"|{MONTH}|{YEAR})"
)
# A date specific enough to count without a preposition ("May 5, 2024", "2024-03-05").
SPECIFIC_DATE = (
    rf"(?:{YEAR}-\d{{2}}-\d{{2}}"
    rf"|{MONTH}\s+{DAY}(?:{_THEN_YEAR})?"
    rf"|{DAY}\s+(?:of\s+)?{MONTH}(?:{_THEN_YEAR})?"
    rf"|{MONTH}{_THEN_YEAR})"
)
DAY_WORD = (
    r"(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|"
    r"tomorrow|tonight|last\s+night|this\s+(?:morning|afternoon|evening)|earlier\s+today)"
)
CALENDAR = (
    r"(?:(?:last|this|next|previous|coming|this\s+past)\s+(?:week|month|year)"
    rf"|{NUM}\s+{UNIT}\s+ago)"
)
WEEKEND = r"(?:(?:last|this|next|this\s+past|the|over\s+the|on\s+the|during\s+the)\s+weekend)"
NAMED_DAY = rf"(?:(?:last|this|next|on|past)\s+{WEEKDAY})"
NAMED_MONTH = rf"(?:(?:last|this|next)\s+{MONTH})"
POINT = rf"(?:{DAY_WORD}|{CALENDAR}|{WEEKEND}|{NAMED_DAY}|{NAMED_MONTH}|{DATE}|{WEEKDAY})"

# Order matters: earlier patterns claim their text first.
PATTERNS: list[tuple[str, str]] = [
    ("point", r"\b(?P<a>the\s+day\s+(?:before\s+yesterday|after\s+tomorrow))\b"),
    # A period counted from a date: "two weeks before August 11, 2023", "the Monday
    # before July 24", "the weekend after 4 October" ("last" is often said for "the").
    (
        "offset",
        rf"\b(?:(?:the|last|this\s+past)\s+)?(?:(?P<n>{NUM})\s+)?"
        rf"(?P<u>{UNIT}|weekends?|{WEEKDAY}s?)\s+(?P<dir>before|after)\s+(?P<a>{DATE})\b",
    ),
    ("between", rf"\bbetween\s+(?P<a>{POINT})\s+and\s+(?P<b>{POINT})\b"),
    ("between", rf"\bfrom\s+(?P<a>{POINT})\s+(?:to|until|till|through)\s+(?P<b>{POINT})\b"),
    ("since", rf"\b(?:since|after|before)\s+(?P<a>{POINT})\b"),
    (
        "rolling",
        rf"\b(?:(?:in|during|over|within|for)\s+)?(?:(?:the\s+(?:last|past|previous))"
        rf"\s+(?:(?P<n1>{NUM})\s+)?(?P<u1>{UNIT})"
        rf"|(?:last|past|previous)\s+(?P<n2>{NUM})\s+(?P<u2>{UNIT})"
        rf"|past\s+(?P<u3>{UNIT}))\b",
    ),
    ("point", rf"\b(?:(?:in|on|during|throughout)\s+)?(?P<a>{DAY_WORD}|{CALENDAR})\b"),
    ("point", rf"\b(?:(?:in|on|during)\s+)?(?P<a>{WEEKEND}|{NAMED_DAY}|{NAMED_MONTH})\b"),
    ("point", rf"\b(?:in|during|throughout)\s+(?P<a>{DATE})\b"),
    ("point", rf"\bon\s+(?P<a>{SPECIFIC_DATE})\b"),
    ("point", rf"\b(?P<a>{SPECIFIC_DATE})\b"),
]
COMPILED = [(kind, re.compile(rx, re.IGNORECASE)) for kind, rx in PATTERNS]
