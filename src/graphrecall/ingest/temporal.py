"""Times written in text ("last Tuesday", "in 2019", "since March") resolved against the
episode's reference time into timestamps for ``valid_at`` / ``invalid_at``.

dateparser does the parsing (offline, maintained); this module adds what it lacks: leading
prepositions are stripped, bare months and years resolve to their first day, and dates
resolve in the past relative to the reference time, because chat mostly reports what has
happened. Relative days are counted in the speaker's time zone (the user's, the graph's or
the project's, else UTC): "yesterday" said at 02:00 in Karachi is the Karachi yesterday.
Day-granular results are stored as midnight UTC of that calendar date (a floating date);
times of day are converted to UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from graphrecall.domain import clock

_LEAD = re.compile(r"^(?:since|from|in|on|at|during|around|by|until|till|til|of|the)\s+", re.I)
_TIME_OF_DAY = re.compile(r"\b(morning|afternoon|evening|night|noon|tonight|am|pm|\d:\d\d)\b", re.I)
_YEAR = re.compile(r"^(1[89]\d\d|2\d\d\d)$")
_SEASON = re.compile(r"^(?:(last|this|next|past)\s+)?(spring|summer|fall|autumn|winter)$", re.I)
_WEEKEND = re.compile(r"^(last|this|past|next)\s+weekend$", re.I)
_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def resolve(expression: str | None, reference: str, tz: str | None = None) -> str | None:
    """RFC 3339 UTC timestamp for ``expression`` relative to ``reference``, or None."""
    if not expression:
        return None
    text = expression.strip()
    if not text:
        return None
    if re.match(r"^\d{4}-\d{2}-\d{2}T", text):  # already a timestamp (LLM extractors)
        try:
            return clock.to_iso(clock.parse_iso(text, param="valid_at"))
        except ValueError:
            return None
    zone = _zone(tz)
    local = clock.parse_iso(reference, param="reference_time").astimezone(zone)
    return _resolve(text, local.replace(tzinfo=None).isoformat(), tz or "UTC")


def _zone(tz: str | None) -> tzinfo:
    if not tz:
        return UTC
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def _named_period(text: str, base: datetime) -> datetime | None:
    """Seasons and weekends, which dateparser does not read: the first day of "last
    summer" (the latest summer over by ``base``), "this winter", "next spring"; the
    Saturday of "last weekend" (the latest weekend over by ``base``) or "this weekend"."""
    season = _SEASON.match(text)
    if season is not None:
        which = (season.group(1) or "this").lower()
        month = _SEASON_START[season.group(2).lower()]
        starts = [datetime(year, month, 1) for year in range(base.year - 2, base.year + 2)]
        if which in ("last", "past"):
            # over: it began at least three months before ``base``
            over = [s for s in starts if (base.year - s.year) * 12 + base.month - s.month >= 3]
            return over[-1]
        if which == "next":
            return next(s for s in starts if s > base)
        current = [s for s in starts if s <= base]
        return current[-1] if current else None
    weekend = _WEEKEND.match(text)
    if weekend is not None:
        day = base.replace(hour=0, minute=0, second=0, microsecond=0)
        saturday = day - timedelta(days=(day.weekday() - 5) % 7)
        which = weekend.group(1).lower()
        if which in ("last", "past") and day.weekday() in (5, 6):
            saturday -= timedelta(days=7)  # said during a weekend: the one before
        if which == "next":
            saturday += timedelta(days=7)
        return saturday
    return None


@lru_cache(maxsize=4096)
def _resolve(text: str, base_iso: str, tz: str) -> str | None:
    import dateparser  # type: ignore[import-untyped]

    base = datetime.fromisoformat(base_iso)
    while True:
        stripped = _LEAD.sub("", text)
        if stripped == text:
            break
        text = stripped
    if _YEAR.match(text):
        return clock.to_iso(datetime(int(text), 1, 1, tzinfo=UTC))
    named = _named_period(text, base)
    if named is not None:
        return clock.to_iso(datetime(named.year, named.month, named.day, tzinfo=UTC))
    parsed = dateparser.parse(
        text,
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",
            "PREFER_DAY_OF_MONTH": "first",
            "PREFER_MONTH_OF_YEAR": "first",
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )
    if parsed is None:
        return None
    if (
        parsed > base
        and (parsed - base).days > 1
        and not re.search(r"\b(next|tomorrow|will)\b", text, re.I)
    ):
        return None  # a date in the future that the text does not say is in the future
    if not _TIME_OF_DAY.search(text):
        return clock.to_iso(datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC))
    return clock.to_iso(parsed.replace(tzinfo=_zone(tz)))
