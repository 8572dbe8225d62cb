"""``format_utc``: every aware datetime renders in UTC with ``Z``; naive ones are refused.

The store's own values (``timezone.utc``) take a short path; everything else (a subclass, a
zone object that is UTC, another offset) goes the long way and must render the same instant.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from memory_graph import ValidationError
from memory_graph.time import format_utc


class _Stamp(datetime):
    """A datetime subclass (pendulum and arrow hand out such objects)."""


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
        datetime(2026, 1, 2, 11, 4, 5, tzinfo=timezone(timedelta(hours=8))),
        datetime(2026, 1, 1, 22, 4, 5, tzinfo=ZoneInfo("America/New_York")),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=ZoneInfo("UTC")),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(0))),
    ],
)
def test_one_instant_one_rendering(value: datetime) -> None:
    assert format_utc(value) == "2026-01-02T03:04:05Z"


def test_microseconds_are_kept() -> None:
    value = datetime(2026, 1, 2, 3, 4, 5, 120, tzinfo=timezone.utc)
    assert format_utc(value) == "2026-01-02T03:04:05.000120Z"


@pytest.mark.parametrize("tz", [timezone.utc, timezone(timedelta(hours=8))])
def test_a_subclass_renders_the_same(tz: timezone) -> None:
    value = _Stamp(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc).astimezone(tz)
    assert format_utc(value) == "2026-01-02T03:04:05Z"


@pytest.mark.parametrize("bad", [datetime(2026, 1, 2), "2026-01-02T03:04:05Z", None, 5])
def test_naive_or_not_a_datetime_is_refused(bad: object) -> None:
    with pytest.raises(ValidationError):
        format_utc(bad)  # type: ignore[arg-type]
