"""The guard's public value types: categories, the verdict, and the internal cue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CATEGORIES", "Cue", "GuardCategory", "GuardVerdict"]

GuardCategory = Literal[
    "health", "finance", "gov_id", "address", "political_religious", "third_party"
]
CATEGORIES: tuple[GuardCategory, ...] = (
    "health",
    "finance",
    "gov_id",
    "address",
    "political_religious",
    "third_party",
)
"""The sensitive categories, in the order of the verdict's precedence for own data."""


@dataclass(frozen=True)
class GuardVerdict:
    """The guard's decision on one text.

    Attributes:
        allowed: ``True`` when the text may be stored.
        category: the sensitive category that blocked it, else ``None``.
        reason: the rule that fired (never the text itself), else ``None``.
        spans: ``(start, end)`` offsets **in the original text** of every blocked part
            (a number, a contact, or the sentence that discloses), sorted and merged;
            empty when allowed. Masking ``text[start:end]`` removes what the guard saw.
    """

    allowed: bool
    category: GuardCategory | None = None
    reason: str | None = None
    spans: tuple[tuple[int, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the verdict as a plain JSON dict (offsets are not part of it).

        Returns:
            ``{"allowed": bool, "category": str | None, "reason": str | None}``.
        """
        return {"allowed": self.allowed, "category": self.category, "reason": self.reason}


@dataclass(frozen=True)
class Cue:
    """One detector finding inside a sentence, before the scoring rule.

    Attributes:
        category: the category the cue belongs to when it is the user's own data;
            ``None`` for cues that are sensitive only about someone else (contact
            details, sexuality, immigration or criminal status).
        reason: a fixed description of the rule (never the text).
        start: start offset in the sentence.
        end: end offset in the sentence.
        kind: ``"number"`` (a validated number: blocks unless the detector
            rejected it), ``"strong"`` (a specific term: a diagnosis, a drug, a
            bankruptcy) or ``"weak"`` (a generic term that needs a person bound to it).
        span_is_token: mask only the cue (numbers, contacts) instead of the sentence.
    """

    category: GuardCategory | None
    reason: str
    start: int
    end: int
    kind: Literal["number", "strong", "weak"] = "strong"
    span_is_token: bool = False
