"""Time: tz-aware UTC everywhere, naive datetimes rejected, an injectable clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from .errors import ValidationError

__all__ = ["Clock", "ensure_aware", "format_utc", "parse_utc", "system_clock"]

Clock = Callable[[], datetime]
"""A zero-argument callable returning the current tz-aware time. Injectable for tests."""


def system_clock() -> datetime:
    """The real clock, in UTC."""
    return datetime.now(timezone.utc)


def ensure_aware(value: datetime, field: str = "datetime") -> datetime:
    """Return ``value`` converted to UTC.

    Raises:
        ValidationError: ``value`` is naive or not a datetime.

    >>> ensure_aware(datetime(2026, 1, 1, tzinfo=timezone.utc)).isoformat()
    '2026-01-01T00:00:00+00:00'
    """
    if not isinstance(value, datetime):
        raise ValidationError(f"{field} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValidationError(
            f"{field} is a naive datetime: pass a timezone-aware one, e.g. tzinfo=timezone.utc"
        )
    return value.astimezone(timezone.utc)


def format_utc(value: datetime) -> str:
    """Render an aware datetime in UTC with a ``Z`` suffix.

    >>> format_utc(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    '2026-01-02T03:04:05Z'
    """
    if type(value) is datetime and value.tzinfo is timezone.utc:  # the store's own values
        return value.isoformat().replace("+00:00", "Z")
    return ensure_aware(value).isoformat().replace("+00:00", "Z")


def parse_utc(text: str, field: str = "datetime") -> datetime:
    """Parse an ISO-8601 timestamp that carries an offset (``Z`` allowed).

    Raises:
        ValidationError: the text is not ISO-8601 or has no offset.
    """
    if not isinstance(text, str):
        raise ValidationError(f"{field} must be an ISO-8601 string, got {type(text).__name__}")
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValidationError(
            f"{field} is not ISO-8601: {text!r}; use e.g. 2026-01-02T03:04:05Z"
        ) from exc
    return ensure_aware(value, field)
