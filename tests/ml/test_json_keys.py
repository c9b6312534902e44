"""JSON keys read as the words they mean."""

from __future__ import annotations

import pytest

from graphrecall.ml.json_keys import humanised, words

KNOWN = frozenset({"employer", "city", "company", "role"})


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("employer_name", "employer"),
        ("employerName", "employer"),
        ("current-employer", "employer"),
        ("primary_role", "role"),
        ("homeCity", "city"),
        ("pet_name", "pet"),  # unknown, but one word once the filler is gone
        ("birth_city", "birth_city"),  # not where someone lives
        ("company_city", "company_city"),  # not the subject's city
        ("full_name", "full_name"),  # the subject's own name, not a thing it has
        ("favourite_colour", "favourite_colour"),
        ("city", "city"),
    ],
)
def test_humanised(key: str, meant: str) -> None:
    assert humanised(key, KNOWN) == meant


def test_words() -> None:
    assert words("favouriteColour") == "favourite colour"
    assert words("start-date_UTC") == "start date utc"
