"""Times in text resolve against the episode's reference time."""

from __future__ import annotations

import pytest

from graphrecall.ingest.temporal import resolve

WEDNESDAY = "2026-11-25T15:00:00Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("last Tuesday", "2026-11-24"),
        ("yesterday", "2026-11-24"),
        ("two days ago", "2026-11-23"),
        ("in 2019", "2019-01-01"),
        ("2019", "2019-01-01"),
        ("since March", "2026-03-01"),
        ("March 2024", "2024-03-01"),
        ("7 May 2023", "2023-05-07"),
        ("last year", "2025-01-01"),
        ("2023-04-05T10:00:00Z", "2023-04-05"),
    ],
)
def test_expressions(text: str, expected: str) -> None:
    got = resolve(text, WEDNESDAY)
    assert got is not None and got.startswith(expected)


def test_reference_time_and_zone_matter() -> None:
    assert resolve("last Tuesday", "2024-01-03T12:00:00Z") == "2024-01-02T00:00:00.000000Z"
    # 02:00 in Karachi on 1 March 2024 is still 29 February in UTC.
    at = "2024-03-01T02:00:00+05:00"
    assert resolve("yesterday", at) == "2024-02-28T00:00:00.000000Z"
    assert resolve("yesterday", at, "Asia/Karachi") == "2024-02-29T00:00:00.000000Z"
    assert resolve("this morning", at, "Asia/Karachi") == "2024-03-01T04:00:00.000000Z"
    assert resolve("yesterday", at, "Not/AZone") == "2024-02-28T00:00:00.000000Z"


@pytest.mark.parametrize("text", ["the lake", "", "soon-ish", None])
def test_non_dates(text: str | None) -> None:
    assert resolve(text, WEDNESDAY) is None


def test_undated_future_is_rejected_but_announced_future_kept() -> None:
    assert resolve("December 30", WEDNESDAY) is not None  # prefers the past: 2025-12-30
    assert resolve("next month", WEDNESDAY) == "2026-12-01T00:00:00.000000Z"


@pytest.mark.parametrize(
    ("text", "reference", "expected"),
    [
        ("last summer", "2024-06-18T16:00:00Z", "2023-06-01"),  # this summer is not over
        ("last summer", "2024-10-18T16:00:00Z", "2024-06-01"),
        ("this summer", "2024-10-05T07:30:00Z", "2024-06-01"),
        ("this winter", "2024-01-10T00:00:00Z", "2023-12-01"),
        ("next spring", "2023-11-08T15:00:00Z", "2024-03-01"),
        ("last weekend", "2024-04-18T16:00:00Z", "2024-04-13"),  # a Thursday
        ("last weekend", "2024-04-20T16:00:00Z", "2024-04-13"),  # said on a Saturday
        ("Last Tuesday", "2024-03-14T09:00:00Z", "2024-03-12"),
        ("Yesterday morning", "2024-03-14T09:00:00Z", "2024-03-13T09"),
        ("on 3 May", "2024-05-20T10:00:00Z", "2024-05-03"),
    ],
)
def test_seasons_weekends_and_phrases_from_the_start_of_a_sentence(
    text: str, reference: str, expected: str
) -> None:
    got = resolve(text, reference)
    assert got is not None and got.startswith(expected)
