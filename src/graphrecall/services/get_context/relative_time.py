"""Relative calendar time in a ``get_context`` query: find phrases such as "yesterday",
"last week", "this month", "in March" or "since Monday", decide whether each really
constrains retrieval, and resolve the constraining ones to one UTC interval.

Three layers, each testable with a fixed ``now``:

1. *Finding* (our grammar, ``time_grammar.py``): regular expressions pick out candidate
   phrases, so a stray word ("we", "may", "march" as a verb) is never read as a date.
2. *Deciding* (our rules): a phrase is a retrieval constraint unless its context says it
   names something else: a quoted or title-cased title ("Yesterday" by the Beatles), a
   named work ("the song yesterday"), a possessive ("her last week at Acme", "last
   year's report"), a recurrence ("every Monday") or a part of a longer span ("the last
   week of the trip").
3. *Resolving*: dateparser reads the date inside the phrase against ``now`` in the
   caller's time zone (preferring the past); our range layer turns the parsed date and its
   period into a half-open local interval (day, ISO week from Monday, month, year, rolling
   "past N units", "since X" up to now), and the interval is converted to UTC with the
   zone's offsets on each bound, so a window across a DST change is 23 or 25 hours long.

Several constraining phrases combine into the smallest interval that covers them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from dateparser.date import DateDataParser  # type: ignore[import-untyped]

from graphrecall.services.get_context.time_grammar import (
    COMPILED,
    MONTH,
    MONTHS,
    NUM,
    NUMBER_WORDS,
    UNIT,
    WEEKDAY,
    WEEKDAYS,
    YEAR,
)

# Only a query's first phrases are read: dateparser takes ~1 ms a phrase, and a query of
# 8,192 characters can hold 700 dates (1.6 s of one core for one request).
MAX_PHRASES = 8
_YEAR_RX = re.compile(rf"\b{YEAR}\b")
_MONTH_RX = re.compile(rf"\b{MONTH}\b", re.IGNORECASE)

# -- the decision rules --------------------------------------------------------------------

_WORK_NOUNS = frozenset(
    """song songs track tracks album single film movie show series book novel
    play musical poem painting titled called named entitled lyrics ballad tune record hit
    cover sang sing sings singing""".split()  # noqa: SIM905
)
_AFTER_WORK = re.compile(
    r"^\s*(?:by\s+(?:the\s+)?[A-Z]|lyrics\b|chords\b|song\b|album\b|cover\b|soundtrack\b|"
    r"remix\b|single\b|music\s+video\b)"
)
_POSSESSIVES = frozenset(["my", "your", "his", "her", "their", "our", "its", "whose"])
_RECURRING = frozenset(["every", "each", "any"])
_NORMALLY_LOWER = re.compile(
    r"\b(Yesterday|Today|Tomorrow|Tonight|Last|This|Next|Past|Previous|Week|Month|Year|"
    r"Weekend|Ago|Night|Morning|Since|Between)\b"
)
_QUOTED = re.compile(r"[\"“”«»„]([^\"“”«»„]{1,120})[\"“”«»„]|(?<!\w)'([^']{1,120})'(?!\w)")
_APOSTROPHES = ("'s", "\u2019s")
_WORD = re.compile(r"[\w'\u2019]+")


@dataclass(frozen=True)
class Span:
    """A half-open local (naive) interval; ``None`` is an open bound."""

    start: datetime | None
    end: datetime | None


@dataclass(frozen=True)
class Mention:
    """A temporal phrase found in the query, and what we made of it."""

    text: str
    start: int
    end: int
    span: Span | None
    constrains: bool
    reason: str


@dataclass(frozen=True)
class TimeWindow:
    """The UTC interval evidence is restricted to (``None`` bounds are open)."""

    start: datetime | None
    end: datetime | None
    time_zone: str
    phrases: tuple[str, ...]

    def describe(self) -> str:
        """The sentence the context block carries about the restriction."""
        said = ", ".join(f'"{p}"' for p in self.phrases)
        if self.start is not None and self.end is not None:
            interval = f"[{_iso(self.start)}, {_iso(self.end)}) UTC"
        elif self.start is not None:
            interval = f"from {_iso(self.start)} UTC on"
        else:
            assert self.end is not None
            interval = f"before {_iso(self.end)} UTC"
        return (
            f"Evidence restricted to {interval}, the window of {said}"
            f" in time zone {self.time_zone}."
        )


@dataclass(frozen=True)
class Interpretation:
    window: TimeWindow | None
    mentions: tuple[Mention, ...]
    # The query without its constraining phrases, for ranking within the window.
    query: str


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def names_a_time(query: str) -> bool:
    """Whether ``query`` has any temporal phrase at all (whatever the zone or the day):
    without one, ``interpret`` finds no window in any zone."""
    return bool(_find(query))


def interpret(query: str, *, now: datetime, time_zone: str) -> Interpretation:
    """Find the temporal phrases of ``query`` and the window they impose (if any).

    ``now`` is an aware datetime (any zone); ``time_zone`` an IANA name already checked.
    """
    zone = ZoneInfo(time_zone)
    local_now = now.astimezone(zone).replace(tzinfo=None)
    found = _find(query)[:MAX_PHRASES]
    mentions = [_judge(query, kind, match, local_now) for kind, match in found]
    constraining = [m for m in mentions if m.constrains and m.span is not None]
    if not constraining:
        return Interpretation(None, tuple(mentions), query)
    starts = [m.span.start for m in constraining if m.span is not None]
    ends = [m.span.end for m in constraining if m.span is not None]
    start = None if any(s is None for s in starts) else min(s for s in starts if s is not None)
    end = None if any(e is None for e in ends) else max(e for e in ends if e is not None)
    window = TimeWindow(
        start=_to_utc(start, zone),
        end=_to_utc(end, zone),
        time_zone=time_zone,
        phrases=tuple(m.text for m in constraining),
    )
    return Interpretation(window, tuple(mentions), _strip(query, constraining))


def _to_utc(local: datetime | None, zone: ZoneInfo) -> datetime | None:
    return None if local is None else local.replace(tzinfo=zone).astimezone(UTC)


def _find(query: str) -> list[tuple[str, re.Match[str]]]:
    taken: list[tuple[int, int]] = []
    found: list[tuple[str, re.Match[str]]] = []
    for kind, rx in COMPILED:
        for match in rx.finditer(query):
            s, e = match.span()
            if any(s < te and ts < e for ts, te in taken):
                continue
            if re.search(r"\bmay\b", match.group(0)):
                continue  # lower-case "may" is the verb, not the month
            taken.append((s, e))
            found.append((kind, match))
    found.sort(key=lambda item: item[1].start())
    return found


def _strip(query: str, mentions: list[Mention]) -> str:
    out, last = [], 0
    for m in sorted(mentions, key=lambda m: m.start):
        out.append(query[last : m.start])
        last = m.end
    out.append(query[last:])
    text = re.sub(r"\s+", " ", "".join(out))
    return re.sub(r"\s+([?.!,;:])", r"\1", text).strip()


# -- deciding ------------------------------------------------------------------------------


def _judge(query: str, kind: str, match: re.Match[str], now: datetime) -> Mention:
    text = match.group(0)
    s, e = match.span()
    reason = _not_a_constraint(query, s, e)
    span = None
    if reason is None:
        span = _resolve(kind, match, now)
        if span is None:
            reason = "the date could not be read"
        elif span.start is not None and span.end is not None and span.start >= span.end:
            reason, span = "empty window", None
    return Mention(
        text=text.strip(),
        start=s,
        end=e,
        span=span,
        constrains=reason is None,
        reason=reason or "calendar constraint",
    )


def _not_a_constraint(query: str, s: int, e: int) -> str | None:
    """Why the phrase at ``query[s:e]`` is not a retrieval constraint, or None if it is."""
    text = query[s:e]
    before = _WORD.findall(query[:s].lower())
    after = query[e:]
    for quoted in _QUOTED.finditer(query):
        if quoted.start() < e and s < quoted.end():
            return "quoted: a title or a name"
    if any(w in _WORK_NOUNS for w in before[-3:]):
        return "names a work (song, film, book...)"
    if _AFTER_WORK.match(after):
        return "names a work (followed by its author or kind)"
    if after.startswith(_APOSTROPHES):
        return "possessive: names a thing by its date"
    if before and (before[-1] in _POSSESSIVES or before[-1].endswith(_APOSTROPHES)):
        return "possessive: a period of someone's life, not a calendar window"
    if before and before[-1] in _RECURRING:
        return "recurring, not a window"
    if re.match(r"^\s+of\b", after) and re.search(r"\b(?:last|first|past|next)\b", text, re.I):
        return "part of a longer span ('the last week of ...')"
    if _title_cased(query, s, e):
        return "title case mid-sentence: a title or a name"
    return None


def _title_cased(query: str, s: int, e: int) -> bool:
    """A normally lower-case temporal word capitalised where a sentence does not start,
    unless the rest of the query is capitalised too (all caps, or Title Case Throughout)."""
    rest = _NORMALLY_LOWER.sub(" ", query[:s] + " " + query[e:])
    words = re.findall(r"[A-Za-z]+", rest)[1:]
    if words and sum(1 for w in words if w[0].isupper()) / len(words) > 0.6:
        return False
    for found in _NORMALLY_LOWER.finditer(query, s, e):
        head = query[: found.start()].rstrip()
        if head and not head.endswith((".", "!", "?", ":", "\n")):
            return True
    return False


# -- resolving -----------------------------------------------------------------------------


def _resolve(kind: str, match: re.Match[str], now: datetime) -> Span | None:
    if kind == "rolling":
        groups = match.groupdict()
        number = groups.get("n1") or groups.get("n2")
        unit = groups.get("u1") or groups.get("u2") or groups.get("u3") or "day"
        return Span(_shift(now, unit, -_count(number)), now)
    if kind == "offset":
        return _offset(match, now)
    if kind == "between":
        a_text, b_text = _share_year(match.group("a"), match.group("b"))
        a, b = _point(a_text, now), _point(b_text, now)
        if a is None or b is None:
            return None
        first, second = sorted((a, b), key=lambda sp: sp.start or datetime.min)
        return Span(first.start, second.end)
    point = _point(match.group("a"), now)
    if point is None:
        return None
    if kind == "since":
        word = match.group(0).split()[0].lower()
        if word == "before":
            return Span(None, point.start)
        if word == "after":
            return Span(point.end, None)
        return Span(point.start, now)
    return point


def _share_year(a: str, b: str) -> tuple[str, str]:
    """ "between August 11 and August 15 2023": a year said once is both dates' year."""
    year_a, year_b = _YEAR_RX.search(a), _YEAR_RX.search(b)
    if year_b and not year_a and _MONTH_RX.search(a):
        return f"{a} {year_b.group(0)}", b
    if year_a and not year_b and _MONTH_RX.search(b):
        return a, f"{b} {year_a.group(0)}"
    return a, b


def _offset(match: re.Match[str], now: datetime) -> Span | None:
    """The period ``n`` units (or the weekday, or the weekend) before or after a date."""
    anchor = _point(match.group("a"), now)
    if anchor is None or anchor.start is None or anchor.end is None:
        return None
    unit = match.group("u").lower()
    name = unit.rstrip("s")  # "weekends", "Mondays": one name per day or weekend
    before = match.group("dir").lower() == "before"
    count = _count(match.group("n"))
    # The latest day before the date that is day ``target`` of the week, or the first
    # after it; "two Mondays before" is a week further.
    if name == "weekend" or name in WEEKDAYS:
        target = 5 if name == "weekend" else WEEKDAYS.index(name)
        length = timedelta(days=2 if name == "weekend" else 1)
        further = timedelta(weeks=count - 1)
        if before:
            back = (anchor.start.weekday() - target) % 7 or 7
            day = anchor.start - timedelta(days=back) - further
        else:
            day = anchor.end + timedelta(days=(target - anchor.end.weekday()) % 7) + further
        return Span(day, day + length)
    if before:
        return Span(_shift(anchor.start, unit, -count), anchor.start)
    return Span(anchor.end, _shift(anchor.end, unit, count))


def _count(number: str | None) -> int:
    if not number:
        return 1
    number = " ".join(number.lower().split())
    return int(number) if number.isdigit() else NUMBER_WORDS.get(number, 1)


def _point(text: str, now: datetime) -> Span | None:
    """The calendar period a point phrase names, in local time."""
    phrase = " ".join(text.lower().split())
    phrase = re.sub(r"^(?:this past|previous)\b", "last", phrase)
    phrase = re.sub(r"^coming\b", "next", phrase)
    if phrase.endswith("weekend"):
        return _weekend(phrase, now)
    day_part = _day_part(phrase, now)
    if day_part is not None:
        return day_part
    named = re.fullmatch(rf"(last|this|next)\s+({MONTH})", phrase)
    if named:
        return _named_month(named.group(1), MONTHS.index(named.group(2)) + 1, now)
    if re.fullmatch(r"past\s+" + WEEKDAY, phrase):
        phrase = "last " + phrase.split()[1]
    phrase = phrase.removeprefix("on ")
    ago = re.fullmatch(rf"({NUM})\s+({UNIT})\s+ago", phrase)
    if ago:
        unit = ago.group(2).rstrip("s")
        grain = "week" if unit == "fortnight" else unit
        return _period(_shift(now, unit, -_count(ago.group(1))), grain)
    parsed = _parse(phrase, now)
    if parsed is None:
        return None
    anchor, period = parsed
    return _period(anchor, period)


def _parse(phrase: str, now: datetime) -> tuple[datetime, str] | None:
    """dateparser reads the phrase against ``now`` (past preferred); its period tells the
    grain the phrase names (day, week, month, year)."""
    settings: dict[str, Any] = {
        "RELATIVE_BASE": now,
        "PREFER_DATES_FROM": "past",
        "RETURN_TIME_AS_PERIOD": True,
        "PREFER_DAY_OF_MONTH": "first",
    }
    data = DateDataParser(languages=["en"], settings=settings).get_date_data(phrase)
    if data.date_obj is None:
        return None
    period = data.period or "day"
    if re.search(r"\bhours?\b", phrase):
        period = "hour"
    elif re.fullmatch(rf"(?:{MONTH})(?:,?\s+{YEAR})?", phrase):
        period = "month"
    elif re.fullmatch(YEAR, phrase):
        period = "year"
    elif re.search(r"\bfortnights?\b", phrase):
        period = "week"
    anchor: datetime = data.date_obj.replace(tzinfo=None)
    return anchor, period


def _period(anchor: datetime, period: str) -> Span:
    day = anchor.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "hour":
        hour = anchor.replace(minute=0, second=0, microsecond=0)
        return Span(hour, hour + timedelta(hours=1))
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        return Span(monday, monday + timedelta(days=7))
    if period == "month":
        first = day.replace(day=1)
        return Span(first, _add_months(first, 1))
    if period == "year":
        first = day.replace(month=1, day=1)
        return Span(first, first.replace(year=first.year + 1))
    return Span(day, day + timedelta(days=1))


def _day_part(phrase: str, now: datetime) -> Span | None:
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    parts = {
        "this morning": (0, 12),
        "this afternoon": (12, 18),
        "this evening": (18, 24),
        "tonight": (18, 30),
        "earlier today": (0, None),
        "last night": (-6, 6),
    }
    if phrase not in parts:
        return None
    lo, hi = parts[phrase]
    end = now if hi is None else today + timedelta(hours=hi)
    return Span(today + timedelta(hours=lo), end)


def _weekend(phrase: str, now: datetime) -> Span:
    """Saturday 00:00 to Monday 00:00: the latest that has begun, or the next one."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    saturday = today - timedelta(days=(today.weekday() - 5) % 7)
    if phrase.startswith("last") and today.weekday() >= 5:
        saturday -= timedelta(days=7)
    if phrase.startswith("next") or (phrase.startswith("this") and today.weekday() < 5):
        saturday += timedelta(days=7)
    return Span(saturday, saturday + timedelta(days=2))


def _named_month(which: str, month: int, now: datetime) -> Span:
    year = now.year
    if which == "last" and month >= now.month:
        year -= 1
    if which == "next" and month <= now.month:
        year += 1
    first = datetime(year, month, 1)
    return Span(first, _add_months(first, 1))


def _add_months(dt: datetime, months: int) -> datetime:
    index = dt.year * 12 + dt.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    days_in_month = (datetime(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)).day
    return dt.replace(year=year, month=month, day=min(dt.day, days_in_month))


def _shift(now: datetime, unit: str, count: int) -> datetime:
    unit = unit.lower().rstrip("s")
    if unit == "hour":
        return now + timedelta(hours=count)
    if unit == "day":
        return now + timedelta(days=count)
    if unit == "week":
        return now + timedelta(weeks=count)
    if unit == "fortnight":
        return now + timedelta(weeks=2 * count)
    if unit == "month":
        return _add_months(now, count)
    return _add_months(now, 12 * count)


def warm_up() -> None:
    """Load dateparser's language data and build its regexes (about a second, once per
    process), so that the first query with a date in it does not pay for it."""
    interpret("what happened yesterday and in March", now=datetime.now(UTC), time_zone="UTC")
