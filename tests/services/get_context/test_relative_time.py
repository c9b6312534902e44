"""The relative-time layer of get_context with a fixed "now": which phrases constrain, the
windows they resolve to in a time zone, and DST changes inside a window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphrecall.services.get_context.relative_time import MAX_PHRASES, interpret, names_a_time

# Wednesday 2026-11-25 15:00 UTC = 10:00 in New York (EST), 16:00 in Berlin (CET).
NOW = datetime(2026, 11, 25, 15, 0, tzinfo=UTC)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def window(query: str, tz: str = "America/New_York", now: datetime = NOW) -> tuple[str, str]:
    found = interpret(query, now=now, time_zone=tz).window
    assert found is not None, f"{query!r} should constrain"
    assert found.start is not None and found.end is not None
    return (
        found.start.strftime("%Y-%m-%dT%H:%MZ"),
        found.end.strftime("%Y-%m-%dT%H:%MZ"),
    )


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What happened yesterday?", "2026-11-24T05:00Z", "2026-11-25T05:00Z"),
        ("what did we do today", "2026-11-25T05:00Z", "2026-11-26T05:00Z"),
        ("Updates from last week", "2026-11-16T05:00Z", "2026-11-23T05:00Z"),
        ("What changed this week?", "2026-11-23T05:00Z", "2026-11-30T05:00Z"),
        ("What changed this month?", "2026-11-01T04:00Z", "2026-12-01T05:00Z"),
        ("anything from last month", "2026-10-01T04:00Z", "2026-11-01T04:00Z"),
        ("What did Alice do in March?", "2026-03-01T05:00Z", "2026-04-01T04:00Z"),
        ("what happened in march", "2026-03-01T05:00Z", "2026-04-01T04:00Z"),
        ("plans for next week", "2026-11-30T05:00Z", "2026-12-07T05:00Z"),
        ("What happened since Monday?", "2026-11-23T05:00Z", "2026-11-25T15:00Z"),
        ("news since March 3", "2026-03-03T05:00Z", "2026-11-25T15:00Z"),
        ("What happened in the last 3 days", "2026-11-22T15:00Z", "2026-11-25T15:00Z"),
        ("anything in the past week?", "2026-11-18T15:00Z", "2026-11-25T15:00Z"),
        ("What happened over the weekend?", "2026-11-21T05:00Z", "2026-11-23T05:00Z"),
        ("what did Bob say two weeks ago", "2026-11-09T05:00Z", "2026-11-16T05:00Z"),
        ("the day before yesterday", "2026-11-23T05:00Z", "2026-11-24T05:00Z"),
        ("What did Bob say on 2024-03-05?", "2024-03-05T05:00Z", "2024-03-06T05:00Z"),
        ("March 2024 revenue", "2024-03-01T05:00Z", "2024-04-01T04:00Z"),
        ("what about in 2023", "2023-01-01T05:00Z", "2024-01-01T05:00Z"),
        ("between May 1 and May 5", "2026-05-01T04:00Z", "2026-05-06T04:00Z"),
        ("what happened last Tuesday", "2026-11-24T05:00Z", "2026-11-25T05:00Z"),
        ("last March", "2026-03-01T05:00Z", "2026-04-01T04:00Z"),
        ("what happened tonight", "2026-11-25T23:00Z", "2026-11-26T11:00Z"),
    ],
)
def test_windows_in_new_york(query: str, start: str, end: str) -> None:
    assert window(query) == (start, end)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        # A year said once is both dates' year (read alone, "August 11" was 2026's).
        ("Where was John between August 11 and August 15 2023?", "2023-08-11", "2023-08-16"),
        ("from March 3 to March 10, 2024", "2024-03-03", "2024-03-11"),
        ("a meeting between August and November 2023?", "2023-08-01", "2023-12-01"),
        ("between May 1, 2024 and May 5", "2024-05-01", "2024-05-06"),
        # A period counted from a date (before: "before X" alone, an open start).
        ("Where was Tim in the week before 16 November 2023?", "2023-11-09", "2023-11-16"),
        ("the puppy she got two weeks before August 11, 2023", "2023-07-28", "2023-08-11"),
        ("what did we plan a month after March 3, 2024", "2024-03-04", "2024-04-04"),
        ("3 days after 2024-02-27", "2024-02-28", "2024-03-02"),
        # The latest such weekday before the date (Wednesday 25 October 2022: Sunday 23),
        # or the first after it (Saturday 28 October 2023: the next Saturday).
        ("shown on the Sunday before October 25, 2022", "2022-10-23", "2022-10-24"),
        ("What did they do on the Monday before July 24, 2023?", "2023-07-17", "2023-07-18"),
        ("What did they plan on the Saturday after October 28, 2023?", "2023-11-04", "2023-11-05"),
        ("over the weekend before 4th October, 2023", "2023-09-30", "2023-10-02"),
        ("What did Maria do last weekend before April 10, 2023?", "2023-04-08", "2023-04-10"),
        ("two weekends before April 10, 2023", "2023-04-01", "2023-04-03"),
        ("two Mondays after July 24, 2023", "2023-08-07", "2023-08-08"),
        ("What did Jolene finish last week before 23 January, 2023?", "2023-01-16", "2023-01-23"),
        # A comma straight before the year.
        ("the picture John shared on December 1,2023", "2023-12-01", "2023-12-02"),
    ],
)
def test_periods_counted_from_a_date(query: str, start: str, end: str) -> None:
    assert window(query, "UTC") == (start + "T00:00Z", end + "T00:00Z")


def test_only_the_first_phrases_are_read() -> None:
    years = ", ".join(f"in {2001 + i}" for i in range(MAX_PHRASES + 1))
    assert window(f"what happened {years}", "UTC") == (
        "2001-01-01T00:00Z",
        f"{2001 + MAX_PHRASES}-01-01T00:00Z",  # the last year named is not read
    )
    many = interpret("on May 5 and " * 700, now=NOW, time_zone="UTC")
    assert len(many.mentions) == MAX_PHRASES


def test_an_offset_needs_a_date() -> None:
    assert interpret("a day before my birthday", now=NOW, time_zone="UTC").window is None


@pytest.mark.parametrize(
    ("tz", "start", "end"),
    [
        # The same instant is a different "yesterday" in each zone.
        ("UTC", "2026-11-24T00:00Z", "2026-11-25T00:00Z"),
        ("Pacific/Kiritimati", "2026-11-24T10:00Z", "2026-11-25T10:00Z"),  # UTC+14: Nov 26
        ("Pacific/Pago_Pago", "2026-11-24T11:00Z", "2026-11-25T11:00Z"),  # UTC-11: Nov 25
        ("Asia/Kolkata", "2026-11-23T18:30Z", "2026-11-24T18:30Z"),  # a half-hour offset
    ],
)
def test_yesterday_depends_on_the_time_zone(tz: str, start: str, end: str) -> None:
    assert window("What happened yesterday?", tz) == (start, end)


def test_a_day_across_the_autumn_dst_change_is_25_hours() -> None:
    # New York leaves DST on Sunday 2026-11-01 at 02:00; it is Monday noon (EST).
    now = datetime(2026, 11, 2, 17, 0, tzinfo=UTC)
    found = interpret("what happened yesterday", now=now, time_zone="America/New_York").window
    assert found is not None and found.start is not None and found.end is not None
    assert found.start == utc("2026-11-01T04:00:00Z")  # midnight EDT
    assert found.end == utc("2026-11-02T05:00:00Z")  # midnight EST
    assert found.end - found.start == timedelta(hours=25)


def test_a_day_across_the_spring_dst_change_is_23_hours() -> None:
    # Berlin enters DST on Sunday 2026-03-29 at 02:00; it is Monday 12:00 (CEST).
    now = datetime(2026, 3, 30, 10, 0, tzinfo=UTC)
    found = interpret("What happened yesterday?", now=now, time_zone="Europe/Berlin").window
    assert found is not None and found.start is not None and found.end is not None
    assert found.start == utc("2026-03-28T23:00:00Z")  # midnight CET
    assert found.end == utc("2026-03-29T22:00:00Z")  # midnight CEST
    assert found.end - found.start == timedelta(hours=23)


def test_a_week_and_a_month_across_a_dst_change() -> None:
    now = datetime(2026, 11, 4, 17, 0, tzinfo=UTC)  # Wednesday after the change
    assert window("last week", now=now) == ("2026-10-26T04:00Z", "2026-11-02T05:00Z")
    assert window("this month", now=now) == ("2026-11-01T04:00Z", "2026-12-01T05:00Z")
    # A rolling month keeps the local clock time: 12:00 EST now, 12:00 EDT a month ago.
    assert window("in the past month", now=now) == ("2026-10-04T16:00Z", "2026-11-04T17:00Z")


@pytest.mark.parametrize(
    "query",
    [
        'Who sang the song "Yesterday" by the Beatles?',
        "Who sang Yesterday by the Beatles?",
        "play the Beatles song yesterday",
        "What are the chords of Yesterday?",
        "what did alice say about her last week at Acme?",
        "what did last year's report say about revenue",
        "What happened during the last week of the trip?",
        "I think 2 may work",
        "we meet every Monday",
        "a fleet of 2000 cars",
        "What did Alice say about hiking?",
        "we talked about it",
        "Did Bob watch Last Week Tonight?",
    ],
)
def test_phrases_that_do_not_constrain(query: str) -> None:
    assert interpret(query, now=NOW, time_zone="UTC").window is None


def test_the_decision_says_why() -> None:
    reading = interpret('Who sang "Yesterday"?', now=NOW, time_zone="UTC")
    assert [(m.text, m.constrains) for m in reading.mentions] == [("Yesterday", False)]
    assert "quoted" in reading.mentions[0].reason
    reading = interpret("What did Alice say about yesterday?", now=NOW, time_zone="UTC")
    assert reading.mentions[0].constrains


def test_the_ranking_query_loses_the_constraining_phrase() -> None:
    reading = interpret("What did Alice do in March?", now=NOW, time_zone="UTC")
    assert reading.query == "What did Alice do?"
    unchanged = interpret('Who sang "Yesterday"?', now=NOW, time_zone="UTC")
    assert unchanged.query == 'Who sang "Yesterday"?'


def test_several_phrases_cover_all_their_windows() -> None:
    assert window("what happened yesterday and last week", "UTC") == (
        "2026-11-16T00:00Z",
        "2026-11-25T00:00Z",
    )


def test_open_windows_and_their_description() -> None:
    before = interpret("what happened before March", now=NOW, time_zone="Europe/Berlin").window
    assert before is not None and before.start is None
    assert before.end == utc("2026-02-28T23:00:00Z")
    assert before.describe() == (
        'Evidence restricted to before 2026-02-28T23:00:00Z UTC, the window of "before March"'
        " in time zone Europe/Berlin."
    )
    since = interpret("what changed since yesterday", now=NOW, time_zone="UTC").window
    assert since is not None and since.end == NOW
    described = since.describe()
    assert "[2026-11-24T00:00:00Z, 2026-11-25T15:00:00Z) UTC" in described
    assert "time zone UTC" in described


@pytest.mark.parametrize(
    "query", ["WHAT HAPPENED YESTERDAY?", "What Happened Yesterday?", "Yesterday, what did Bob do?"]
)
def test_capitals_throughout_or_at_the_start_still_constrain(query: str) -> None:
    assert window(query, "UTC") == ("2026-11-24T00:00Z", "2026-11-25T00:00Z")


@pytest.mark.parametrize(
    ("query", "phrase"),
    [
        ("What happened yesterday?", True),
        ("What did Alice do in March?", True),
        ("between May 1 and May 5", True),
        ("What did Bob say on 2024-03-05?", True),
        ("What does Jordan like to eat?", False),
        ("Who may attend the party?", False),
        ("Where did Luis move?", False),
        ("", False),
    ],
)
def test_a_query_without_a_phrase_has_no_window_in_any_zone(query: str, phrase: bool) -> None:
    assert names_a_time(query) is phrase
    windows = {
        interpret(query, now=NOW, time_zone=tz).window is not None
        for tz in ("UTC", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati")
    }
    assert windows == {phrase}
