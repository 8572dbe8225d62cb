"""Candidate types: the pydantic schema at the LLM boundary and the runtime ``Candidate``.

A profile statement is a candidate whose key is ``profile.<field>`` (``profile.name``,
``profile.call_them``, ``profile.occupation``, ``profile.timezone``, ``profile.language``,
``profile.pronouns``); :func:`~memory_graph.extraction.plan_writes` turns those into profile
patches. Every other keyed candidate is a preference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import ValidationError
from ..time import format_utc, parse_utc
from ..types import Kind

__all__ = [
    "PROFILE_PREFIX",
    "Action",
    "Sensitivity",
    "Candidate",
    "CandidateModel",
    "ExtractedMemories",
    "normalize_key",
]

Action = Literal["set", "retract"]
Sensitivity = Literal[
    "health", "finance", "gov_id", "address", "political_religious", "third_party", "none"
]
PROFILE_PREFIX = "profile."
"""Keys under this prefix name a profile field instead of a preference."""

_KEY = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*$")


def normalize_key(key: str) -> str:
    """Normalise a preference key (strip + casefold) and check its shape.

    Args:
        key: the raw key.

    Returns:
        The normalised key.

    Raises:
        ValidationError: the key does not match ``^[a-z0-9]+([._-][a-z0-9]+)*$``.

    >>> normalize_key("  Reply.Length ")
    'reply.length'
    """
    if not isinstance(key, str):
        raise ValidationError(f"key must be a string, got {type(key).__name__}")
    norm = key.strip().casefold()
    if not _KEY.match(norm) or len(norm) > 128:
        raise ValidationError(
            f"key {key!r} is invalid: use lowercase ascii words joined by '.', '_' or '-', "
            "e.g. 'reply.length'"
        )
    return norm


class CandidateModel(BaseModel):
    """One memory candidate as a model must return it (structured output)."""

    model_config = ConfigDict(extra="ignore")

    kind: Kind = Field(description="preference | fact | instruction | experience")
    action: Action = Field(
        default="set", description="'set' to store, 'retract' when the user withdraws it"
    )
    key: str | None = Field(
        default=None,
        description="Required for preferences and profile fields, e.g. 'reply.length', "
        "'tools.editor', 'profile.call_them'. Lowercase ascii, dot separated.",
    )
    value: str | None = Field(
        default=None, description="The preference or profile value, in the user's own words."
    )
    content: str | None = Field(
        default=None,
        description="For facts, instructions and experiences: the statement, in the "
        "user's language. Do not translate.",
    )
    quote: str = Field(description="The user's exact words, copied verbatim from the message.")
    message_index: int = Field(ge=0, description="Index of the human message quoted.")
    expires_at: str | None = Field(
        default=None, description="ISO-8601 with offset, only if the user gave an end date."
    )
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    sensitivity: Sensitivity = Field(
        default="none",
        description="The sensitive category this candidate discloses about the user or "
        "another person (health, finance, gov_id, address, political_religious, "
        "third_party), or 'none'. Euphemisms count: 'my shrink' is health.",
    )
    """The model's own reading of the candidate. It can only add a block: a category
    blocks the candidate even when the deterministic guard allows it, and ``"none"``
    never unblocks what the guard blocks. A value outside the list makes the candidate
    invalid (dropped, never stored)."""

    @field_validator("sensitivity", mode="before")
    @classmethod
    def _check_sensitivity(cls, value: Any) -> Any:
        if value is None:
            return "none"
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("key")
    @classmethod
    def _check_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return normalize_key(value)
        except ValidationError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("expires_at")
    @classmethod
    def _check_expiry(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return format_utc(parse_utc(value, "expires_at"))
        except ValidationError as exc:
            raise ValueError(str(exc)) from exc

    @field_validator("quote")
    @classmethod
    def _check_quote(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("quote must not be blank")
        return value

    @model_validator(mode="after")
    def _check_shape(self) -> CandidateModel:
        if self.kind == "preference" and self.key is None:
            raise ValueError("a preference needs a key")
        if self.key is not None and self.key.startswith(PROFILE_PREFIX) and self.kind != "fact":
            self.kind = "fact"
        if self.action == "set":
            text = self.value if self.key is not None else self.content
            if text is None or not text.strip():
                raise ValueError("a 'set' candidate needs a value (keyed) or content")
        return self


class ExtractedMemories(BaseModel):
    """Explicit, stable statements the user made about themselves. Empty when none."""

    candidates: list[CandidateModel] = Field(default_factory=list)


@dataclass(frozen=True)
class Candidate:
    """A validated, grounded candidate with provenance attached by the harness.

    ``source_event_id`` is the id of the quoted human message, ``thread_id`` comes from
    the caller and ``observed_at`` from the clock; none of them comes from a model.
    """

    kind: Kind
    action: Action
    key: str | None
    value: str | None
    content: str | None
    quote: str
    message_index: int
    source_event_id: str | None = None
    thread_id: str | None = None
    observed_at: datetime | None = None
    expires_at: datetime | None = None
    confidence: float | None = None

    @property
    def text(self) -> str:
        """The value for keyed candidates, otherwise the content (``""`` if neither)."""
        return (self.value if self.key is not None else self.content) or ""

    @property
    def profile_field(self) -> str | None:
        """The profile field named by a ``profile.<field>`` key, else ``None``."""
        if self.key is not None and self.key.startswith(PROFILE_PREFIX):
            return self.key[len(PROFILE_PREFIX) :]
        return None

    def to_json(self) -> dict[str, Any]:
        """Return the candidate as a plain JSON dict (timestamps in UTC with ``Z``)."""
        return {
            "kind": self.kind,
            "action": self.action,
            "key": self.key,
            "value": self.value,
            "content": self.content,
            "quote": self.quote,
            "message_index": self.message_index,
            "source_event_id": self.source_event_id,
            "thread_id": self.thread_id,
            "observed_at": format_utc(self.observed_at) if self.observed_at else None,
            "expires_at": format_utc(self.expires_at) if self.expires_at else None,
            "confidence": self.confidence,
        }
