"""What a JSON key means, read the way a person reads it.

Keys name things the way programmers do: "employer_name", "homeCity", "current_employer",
"company-name". ``humanised`` turns such a key into the word the record means ("employer",
"city", "employer", "company"), so that ``json_facts`` finds its relation and its type
("employer" -> WORKS_FOR an Organization) and a key it does not know reads as words
("pet_name" -> HAS_PET, "Ana's pet is Rex").

It is deliberately narrow: a trailing word that only says the value is a name or a label
("_name", "_label", "_value") is dropped, and so is a leading word that only says the value
is the present or main one ("current_", "primary_", "home_" before a place). Anything else
keeps its words: "birth_city" is not where someone lives, "company_city" is not where the
record's subject lives.
"""

from __future__ import annotations

import re

# "employer_name" is the employer; "pet_name" the pet. (Not "_id": an id names a record.)
FILLER_SUFFIXES = frozenset({"name", "label", "value", "text"})
# "full_name", "display_name": a name of the subject itself, not a thing it has.
OWN_NAMES = frozenset({"full", "first", "last", "middle", "given", "family", "display", "nick"})
# "current_employer" is the employer; "primary_language" a language.
QUALIFIERS = frozenset({"current", "present", "primary", "main", "latest", "preferred"})
# "home_city", "home_address": where someone lives; "work_*" would say something else.
HOME = "home"
PLACE_WORDS = frozenset({"city", "country", "town", "address", "state", "region"})


def words(key: str) -> str:
    """A key as lower-case words: "homeCity" -> "home city", "employer_name" -> "employer
    name"."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key).replace("-", " ").replace("_", " ")
    return " ".join(spaced.split()).lower()


def snake(key: str) -> str:
    return words(key).replace(" ", "_")


def humanised(key: str, known: frozenset[str] | set[str]) -> str:
    """The snake-case word ``key`` means: itself when ``known`` (the keys with a meaning of
    their own) holds it, else without a filler suffix or a qualifier when that leaves a
    known key or a single word ("employer_name" -> "employer", "current_city" -> "city",
    "pet_name" -> "pet"); else the key's own words."""
    whole = snake(key)
    if whole in known:
        return whole
    parts = whole.split("_")
    if parts[0] in OWN_NAMES:
        return whole
    if len(parts) > 1 and parts[-1] in FILLER_SUFFIXES:
        parts = parts[:-1]
    if len(parts) > 1 and parts[0] in QUALIFIERS:
        parts = parts[1:]
    if len(parts) == 2 and parts[0] == HOME and parts[1] in PLACE_WORDS:
        parts = parts[1:]
    shorter = "_".join(parts)
    if shorter in known or len(parts) == 1:
        return shorter
    return whole
