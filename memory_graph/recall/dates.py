"""Stage 5 (a leaf), dates: a question's text -> the time window it names; tokens -> whether
they say a time. Pure.

Dates a question names, as time windows over the documents' times.

"What did Mel paint in July 2023?", "Who did Maria meet on May 3, 2023?", "我2023年5月去了
哪里？", "上周我买了什么？": the evidence of such a question was said (observed) in that
period, or shortly after it (people tell what they did "last week"), and often shares no
word with the question but the person's name. :func:`question_window` reads the dates of a
question — English day / month / year forms, Chinese ``年`` / ``月`` / ``日`` forms, and
relative ones ("yesterday", "last week", "上周", "去年") counted back from the recall's time —
into a :class:`Window`; the ranking adds documents observed in it to the candidates and
raises their score (:mod:`memory_graph.recall.rank`).

A month without a year ("in June") matches that month of every year; "before"/"after" a
date widen the window to the weeks before / after it; "early" / "beginning of", "late" /
"end of" and "the second week of" narrow a month.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache

__all__ = ["TELL_SLACK", "Window", "asks_when", "date_of", "question_window", "says_time"]

TELL_SLACK = timedelta(days=10)
"""A document observed this long after a window still matches it (told afterwards)."""

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
# Month names are matched capitalised ("May", "March"): lower-case "may" / "march" are verbs.
_MON = r"(?P<mon>" + "|".join(sorted((m.capitalize() for m in _MONTHS), key=len, reverse=True))
_MON += r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_EN_DATES = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b"),
    re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b"),
    re.compile(rf"\b{_MON},?\s+{_YEAR}\b"),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON}\b"),
    re.compile(rf"\b{_MON}\s+{_DAY}\b(?!,?\s*(?:19|20)\d\d)"),
    re.compile(rf"\b{_MON}\b(?!\s+(?:I|we|you|he|she|they|it)\b)"),
    re.compile(rf"(?<![\d.,:/-]){_YEAR}\b(?![.,:/-]\d)"),
)
_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_NUM = r"[0-9零〇一二两三四五六七八九十]"
_ZH_DATE = re.compile(
    rf"(?:(?P<year>(?:19|20)\d\d|[零〇一二三四五六七八九]{{4}})年)?"
    rf"(?:(?P<mon>{_CN_NUM}{{1,3}})月(?:份)?)?"
    rf"(?:(?P<day>{_CN_NUM}{{1,3}})[日号])?"
)
# Numeric dates. Ambiguity rule: a dot or dash between day and month is read day first
# (``24.06.2023``, ``24-06-2023``, the European form), a year first is read year, month, day
# (``2023.06.24``, ``2023/6/24``). A slash date (``06/24/2023``, ``24/06/2023``, ``6/24``) is
# read both ways when both are valid dates: the window holds both days (a wrong day only adds
# candidates); when one part is above 12 only the valid reading counts. A date without a year
# (``6/24``) needs a word before it that introduces a date ("on", "since", ...), so fractions and
# scores ("3/4 cup", "won 2/1") are not read as dates.
_NUM_YMD = re.compile(
    r"(?<![\d.,:/-])(?P<year>(?:19|20)\d\d)([./-])(?P<a>[01]?\d)\2(?P<b>[0-3]?\d)"
    r"(?![\d/-]|\.\d)"
)
_NUM_DMY = re.compile(
    r"(?<![\d.,:/-])(?P<a>[0-3]?\d)([./-])(?P<b>[0-3]?\d)\2(?P<year>(?:19|20)\d\d)"
    r"(?![\d/-]|\.\d)"
)
_NUM_MD = re.compile(
    r"\b(?:on|since|before|after|by|until|till|from|of)\s+(?:the\s+)?"
    r"(?P<a>[0-3]?\d)/(?P<b>[0-3]?\d)(?![\d/.]|\.\d)",
    re.IGNORECASE,
)


def _numeric_readings(
    a: int, b: int, sep: str, year: int | None, *, year_first: bool
) -> list[tuple[int, int]]:
    """``(month, day)`` readings of a numeric date's two parts (the ambiguity rule above)."""
    if year_first:
        pairs = [(a, b)]
    elif sep in ".-":
        pairs = [(b, a)]
    else:
        pairs = [(a, b), (b, a)]
    out: list[tuple[int, int]] = []
    for mon, day in pairs:
        if day >= 1 and _valid(year, mon, day) and (mon, day) not in out:
            out.append((mon, day))
    return out


def _numeric(text: str) -> tuple[list[tuple[float, float]], int, int, list[tuple[int, int]]]:
    """Numeric dates: spans of dated ones, the first month / day without a year, and where."""
    spans: list[tuple[float, float]] = []
    month_only, month_day = 0, 0
    taken: list[tuple[int, int]] = []
    for pattern, year_first in ((_NUM_YMD, True), (_NUM_DMY, False), (_NUM_MD, False)):
        for m in pattern.finditer(text):
            if len(taken) >= _MAX_DATES:
                return spans, month_only, month_day, taken
            start = m.start("a") if pattern is _NUM_MD else m.start()
            if any(x < m.end() and start < y for x, y in taken):
                continue
            groups = m.groupdict()
            year = int(groups["year"]) if groups.get("year") else None
            sep = m.group(2) if pattern is not _NUM_MD else "/"
            readings = _numeric_readings(
                int(groups["a"]), int(groups["b"]), sep, year, year_first=year_first
            )
            if not readings:
                continue
            taken.append((start, m.end()))
            if year is None:
                if not month_only:
                    month_only, month_day = readings[0]
                continue
            prefix = text[max(0, start - 40) : start]
            for mon, day in readings:
                lo, hi = _span(year, mon, day)
                first, last = _shape(
                    datetime.fromtimestamp(lo, timezone.utc),
                    datetime.fromtimestamp(hi, timezone.utc),
                    prefix,
                )
                spans.append((first.timestamp(), last.timestamp()))
    return spans, month_only, month_day, taken


_BEFORE = re.compile(r"\b(?:before|prior to|leading up to)\s+(?:the\s+)?$|^(?:之前|以前|前)", re.I)
_AFTER = re.compile(r"\b(?:after|since|following)\s+(?:the\s+)?$|^(?:之后|以后|后)", re.I)
_EARLY = re.compile(r"\b(?:early|beginning of|start of|first week of)\s+(?:the\s+)?$", re.I)
_LATE = re.compile(r"\b(?:late|end of|last week of)\s+(?:the\s+)?$", re.I)
_NTH_WEEK = re.compile(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+week\s+of\s+$", re.I)
_WEEK_NO = {
    "first": 0,
    "1st": 0,
    "second": 1,
    "2nd": 1,
    "third": 2,
    "3rd": 2,
    "fourth": 3,
    "4th": 3,
}

# Relative periods, counted back from the recall's time: (pattern, days back, days long).
_RELATIVE: tuple[tuple[re.Pattern[str], int, int], ...] = (
    (re.compile(r"\b(?:today|tonight|this morning)\b|今天|今晚", re.I), 0, 1),
    (re.compile(r"\b(?:yesterday|last night)\b|昨天|昨晚", re.I), 1, 1),
    (re.compile(r"前天"), 2, 1),
    (re.compile(r"\b(?:this week)\b|这周|本周|这个星期|这礼拜", re.I), 6, 7),
    (re.compile(r"\b(?:last week|last weekend|a week ago)\b|上周|上个?星期|上礼拜", re.I), 13, 10),
    (re.compile(r"\b(?:this month)\b|这个月|本月", re.I), 30, 31),
    (re.compile(r"\b(?:last month|a month ago)\b|上个?月", re.I), 60, 35),
    (re.compile(r"\b(?:this year)\b|今年", re.I), 365, 366),
    (re.compile(r"\b(?:last year|a year ago)\b|去年", re.I), 730, 400),
)


# A date that is an attribute (a birthday, an anniversary), not the time something was said.
_ATTRIBUTE_DATE = re.compile(
    r"\b(?:born|birth|births|birthday|birthdays|anniversary|anniversaries)\b"
    r"|生日|出生|诞辰|纪念日",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Window:
    """Time intervals a question names: documents observed in ``[start, end + TELL_SLACK)``
    of one of them match. ``month``-only windows (no year) match that month of any year."""

    spans: tuple[tuple[float, float], ...] = ()
    """``(start, end)`` in POSIX seconds (UTC)."""
    month: int = 0
    """A month without a year (1..12), or 0."""
    day: int = 0
    """With ``month``: a day of it (0 for the whole month)."""

    def intervals(self, first_year: int, last_year: int) -> list[tuple[float, float]]:
        """The window as intervals with the slack, over ``first_year``..``last_year`` for a
        month without a year; sorted."""
        slack = TELL_SLACK.total_seconds()
        out = [(a, b + slack) for a, b in self.spans]
        if self.month:
            for year in range(first_year, last_year + 1):
                out.append(_span(year, self.month, self.day, slack))
        return sorted(out)

    def holds(self, t: float | None) -> bool:
        """Whether a document observed at ``t`` (POSIX seconds) matches."""
        if t is None:
            return False
        slack = TELL_SLACK.total_seconds()
        if any(a <= t < b + slack for a, b in self.spans):
            return True
        if self.month:
            year = datetime.fromtimestamp(t, timezone.utc).year
            return any(
                a <= t < b
                for a, b in (_span(y, self.month, self.day, slack) for y in (year - 1, year))
            )
        return False


def _span(year: int, month: int, day: int, slack: float = 0.0) -> tuple[float, float]:
    if day:
        start = datetime(year, month, day, tzinfo=timezone.utc)
        return start.timestamp(), (start + timedelta(days=1)).timestamp() + slack
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    days = calendar.monthrange(year, month)[1]
    return start.timestamp(), (start + timedelta(days=days)).timestamp() + slack


def _cn_int(raw: str) -> int:
    if raw.isdigit():
        return int(raw)
    if all(c in _CN_DIGITS for c in raw):  # 二〇二三
        return int("".join(str(_CN_DIGITS[c]) for c in raw))
    tens, _, ones = raw.partition("十")
    if "十" not in raw:
        return _CN_DIGITS.get(raw, 0)
    return (_CN_DIGITS.get(tens, 1) if tens else 1) * 10 + (_CN_DIGITS.get(ones, 0) if ones else 0)


def _valid(year: int | None, month: int, day: int) -> bool:
    if not 1 <= month <= 12 or day < 0:
        return False
    limit = calendar.monthrange(year or 2000, month)[1]
    return day <= limit


def _shape(start: datetime, end: datetime, prefix: str) -> tuple[datetime, datetime]:
    """Apply "before" / "after" / "early" / "late" / "second week of" written before a date."""
    if _BEFORE.search(prefix):
        return start - timedelta(days=21), start + timedelta(days=1)
    if _AFTER.search(prefix):
        return start, end + timedelta(days=21)
    if (end - start).days >= 28:
        if _EARLY.search(prefix):
            return start, start + timedelta(days=10)
        if _LATE.search(prefix):
            return end - timedelta(days=10), end
        nth = _NTH_WEEK.search(prefix)
        if nth:
            first = start + timedelta(days=7 * _WEEK_NO[nth.group(1).lower()])
            return first, first + timedelta(days=7)
    return start, end


_MAX_DATES = 16
"""Dates read from one question per script, at most: a question names a few, and every
candidate document is tested against each (a text of thousands of dates is not a question
about when; reading them all was quadratic in the text)."""


def _english(text: str) -> tuple[list[tuple[float, float]], int, int, list[tuple[int, int]]]:
    spans: list[tuple[float, float]] = []
    month_only, month_day = 0, 0
    taken: list[tuple[int, int]] = []
    for pattern in _EN_DATES:
        for m in pattern.finditer(text):
            if len(taken) >= _MAX_DATES:
                return spans, month_only, month_day, taken
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            groups = m.groupdict()
            mon = _MONTHS[groups["mon"].lower().rstrip(".")] if groups.get("mon") else 0
            day = int(groups["day"]) if groups.get("day") else 0
            year = int(groups["year"]) if groups.get("year") else None
            if mon and not _valid(year, mon, day):
                continue
            taken.append((m.start(), m.end()))
            prefix = text[max(0, m.start() - 40) : m.start()]
            if year is None:
                if not month_only:
                    month_only, month_day = mon, day
                continue
            if mon:
                a, b = _span(year, mon, day)
            else:
                a = datetime(year, 1, 1, tzinfo=timezone.utc).timestamp()
                b = datetime(year + 1, 1, 1, tzinfo=timezone.utc).timestamp()
            start, end = _shape(
                datetime.fromtimestamp(a, timezone.utc),
                datetime.fromtimestamp(b, timezone.utc),
                prefix,
            )
            spans.append((start.timestamp(), end.timestamp()))
    return spans, month_only, month_day, taken


def _chinese(text: str) -> tuple[list[tuple[float, float]], int, int]:
    spans: list[tuple[float, float]] = []
    month_only, month_day = 0, 0
    for m in _ZH_DATE.finditer(text):
        if len(spans) >= _MAX_DATES:
            break
        if not m.group("mon"):
            if m.group("year") and not m.group("day"):
                whole = _cn_int(m.group("year"))
                first = datetime(whole, 1, 1, tzinfo=timezone.utc)
                after = datetime(whole + 1, 1, 1, tzinfo=timezone.utc)
                spans.append((first.timestamp(), after.timestamp()))
            continue
        mon = _cn_int(m.group("mon"))
        day = _cn_int(m.group("day")) if m.group("day") else 0
        year = _cn_int(m.group("year")) if m.group("year") else None
        if not _valid(year, mon, day):
            continue
        suffix = text[m.end() : m.end() + 2]
        if year is None:
            if not month_only:
                month_only, month_day = mon, day
            continue
        lo, hi = _span(year, mon, day)
        start, end = _shape(
            datetime.fromtimestamp(lo, timezone.utc),
            datetime.fromtimestamp(hi, timezone.utc),
            suffix,
        )
        spans.append((start.timestamp(), end.timestamp()))
    return spans, month_only, month_day


def _blank(text: str, taken: Sequence[tuple[int, int]]) -> str:
    """``text`` with the spans already read replaced by spaces (so a numeric date's year is
    not read again as a year of its own)."""
    if not taken:
        return text
    chars = list(text)
    for a, b in taken:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


@lru_cache(maxsize=4096)
def _dates_of(
    text: str,
) -> tuple[tuple[tuple[float, float], ...], int, int, tuple[tuple[int, int], ...]] | None:
    """A text's absolute spans, month of any year (and day), and relative periods (days back,
    days long); ``None`` for a date that is an attribute (memoised: recall asks per leg)."""
    if _ATTRIBUTE_DATE.search(text):
        return None  # "who was born in May": the date is what is asked about, not when
    num_spans, month, day, _taken = _numeric(text)
    en_spans, en_month, en_day, _taken = _english(_blank(text, _taken))
    zh_spans, zh_month, zh_day = _chinese(text)
    spans = num_spans + en_spans + zh_spans
    for m, d in ((en_month, en_day), (zh_month, zh_day)):
        if not month:
            month, day = m, d
    relative = tuple((back, length) for pattern, back, length in _RELATIVE if pattern.search(text))
    return tuple(spans), month, day, relative


def question_window(text: str, now: datetime | None = None) -> Window | None:
    """The time window a question names, or ``None`` when it names no date.

    Args:
        text: The question.
        now: The recall's time, for relative dates ("yesterday", "上周"); without it they
            are ignored.

    Returns:
        The window (absolute dates, a month of any year, relative periods), or ``None``.

    Examples:
        >>> w = question_window("What did Mel paint on 8 May, 2023?")
        >>> datetime.fromtimestamp(w.spans[0][0], timezone.utc).date().isoformat()
        '2023-05-08'
        >>> question_window("When did Melanie go camping in June?").month
        6
        >>> question_window("You may march on") is None
        True
        >>> question_window("Who was born in June 1990?") is None
        True
        >>> may = datetime(2023, 5, 1, tzinfo=timezone.utc).timestamp()
        >>> question_window("我2023年5月去了哪里？").spans[0][0] == may
        True
    """
    found = _dates_of(text)
    if found is None:
        return None
    spans, month, day, relative = found
    out = list(spans)
    if now is not None and not spans and not month:  # an absolute date anchors "last week"
        at = now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)
        for back, length in relative:
            start = at - timedelta(days=back)
            out.append((start.timestamp(), (start + timedelta(days=length)).timestamp()))
    if not out and not month:
        return None
    return Window(spans=tuple(out), month=month if not spans else 0, day=day if not spans else 0)


_LOOSE_CLOCK = re.compile(r"\d:\d")
_CLOCK = re.compile(r"(?<![\d:])([01]?\d|2[0-3])[:.h]([0-5]\d)(?:\s*([ap])\.?m\b\.?)?", re.I)


def date_of(text: str) -> datetime | None:
    """The instant a short date text names (a document's time), or ``None``.

    Reads every form :func:`question_window` reads — ``24.06.2023``, ``2023.06.24``,
    ``24/06/2023``, ``3rd of May 2023``, ``May 3, 2023``, ``2023年5月3日`` — and a clock time
    written before or after it (``14:30``, ``2:30 pm``). A slash date that reads both ways is
    taken month first (the first reading). Day precision (a year alone is its first day);
    UTC.

    Examples:
        >>> date_of("24.06.2023 14:30").isoformat()
        '2023-06-24T14:30:00+00:00'
        >>> date_of("2:05 pm on 3rd of May, 2023").isoformat()
        '2023-05-03T14:05:00+00:00'
        >>> date_of("2023年5月3日").date().isoformat(), date_of("no date here")
        ('2023-05-03', None)
        >>> date_of("99:99 pm on 8 May, 2023") is None  # an impossible time: not a date
        True
    """
    if not isinstance(text, str) or len(text) > 200:
        return None
    num_spans, _m, _d, taken = _numeric(text)
    spans = num_spans or _english(_blank(text, taken))[0] or _chinese(text)[0]
    if not spans:
        return None
    day = datetime.fromtimestamp(spans[0][0], timezone.utc)
    rest = _blank(text, taken)
    clock = _CLOCK.search(rest)
    if clock is None:
        return None if _LOOSE_CLOCK.search(rest) else day  # "99:99": not a time
    hour, minute = int(clock.group(1)), int(clock.group(2))
    half = (clock.group(3) or "").lower()
    if half and not 1 <= hour <= 12:
        return None
    if half == "p" and hour < 12:
        hour += 12
    elif half == "a" and hour == 12:
        hour = 0
    return day.replace(hour=hour, minute=minute)


# What a "when" question asks for is a time: its evidence usually says one ("last week",
# "yesterday", "on Friday", "3 years ago", "上周", "去年"), while most statements say none.
_ASKS_WHEN = re.compile(
    r"(?:^|[.?!;,]\s*|\b(?:and|or|but)\s+)(?:when|since when|what (?:date|day|time|year|month|week)"
    r"|which (?:date|day|year|month|week)|how long(?: ago)?)\b"
    r"|什么时候|啥时候|何时|哪天|哪一天|几号|几月|哪年|哪一年|哪个月|多久",
    re.IGNORECASE,
)
_TIME_WORDS = frozenset(
    """yesterday today tonight tomorrow ago weekend weekends week weeks month months year
    years lately recently monday tuesday wednesday thursday friday saturday sunday mondays
    fridays saturdays sundays january february april june july august september october
    november december""".split()
)
_TIME_PAIRS = frozenset(
    "昨天 今天 明天 前天 后天 昨晚 今晚 上周 下周 本周 周末 去年 今年 明年 前年 最近 星期"
    " 礼拜 上个 下个 年前 天前 月前 周前".split()
)
_DATE_UNITS = frozenset("年月日号")
_TIME_TOKENS = _TIME_WORDS | _TIME_PAIRS


@lru_cache(maxsize=4096)
def asks_when(text: str) -> bool:
    """Whether a question asks for a time ("when", "how long", "什么时候", "哪天", ...).

    Examples:
        >>> asks_when("When did Sam move?"), asks_when("我什么时候去的杭州？")
        (True, True)
        >>> asks_when("Where did Sam move?")
        False
    """
    return _ASKS_WHEN.search(text) is not None


def says_time(tokens: Sequence[str]) -> bool:
    """Whether index tokens say a time: a time word, a year, or a number before 年/月/日/号.

    Examples:
        >>> from .tokenize import tokenize
        >>> says_time(tokenize("We moved last week")), says_time(tokenize("我5月8日到的"))
        (True, True)
        >>> says_time(tokenize("We moved to Lisbon")), says_time(tokenize("我到了杭州"))
        (False, False)
    """
    if not _TIME_TOKENS.isdisjoint(tokens):
        return True
    numbers = [i for i, token in enumerate(tokens) if token.isdigit()]
    for i in numbers:
        token = tokens[i]
        if len(token) == 4 and token[:2] in ("19", "20"):
            return True
        if i + 1 < len(tokens) and tokens[i + 1] in _DATE_UNITS:
            return True
    return False
