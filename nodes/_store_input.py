"""The input checks of :class:`~nodes.GovernedStore`: keys, values, windows, TTLs, batches.

Each refuses bad input with a ``ValidationError`` before the store runs a query.
"""

from __future__ import annotations

import math
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from langgraph.store.base import Op

from memory_graph.safetext import truncate

from ._core import Owner, ValidationError

__all__ = [
    "KINDS",
    "VALUE_FIELDS",
    "check_key",
    "check_label",
    "check_value",
    "check_window",
    "is_uuid",
    "op_list",
    "shown",
    "ttl_expiry",
    "within",
]

KINDS = ("fact", "instruction", "experience")
"""The record kinds a ``GovernedStore`` item may have."""
VALUE_FIELDS = ("content", "kind")
"""The fields of an item value."""


def is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def within(named: Owner, run: Owner) -> bool:
    """Whether ``named`` (from a namespace) is one of ``run``'s identities' owners."""
    if named.scope_id != run.scope_id:
        return False
    if named.workspace is not None and named.workspace_key != run.workspace_key:
        return False
    return named.agent is None or named.agent_key == run.agent_key


def op_list(ops: Any) -> list[Op]:
    if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
        raise ValidationError("batch takes a list of store operations (GetOp, PutOp, ...)")
    return list(ops)


def shown(namespace: Any) -> str:
    return truncate(repr(tuple(namespace)), 80)


def check_key(key: Any) -> None:
    """An item key: non-blank text, no control or format characters (NUL, surrogates)."""
    if not isinstance(key, str) or not key.strip():
        raise ValidationError("an item key must be a non-blank string")
    if len(key.encode("utf-8", "surrogatepass")) > 1024:
        raise ValidationError("an item key is at most 1024 UTF-8 bytes")
    check_label("an item key", key)


def check_window(what: str, limit: Any, offset: Any) -> None:
    for name, value in (("limit", limit), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValidationError(f"{what} {name} must be an integer")
        if not 0 <= value <= 2**31 - 1:
            raise ValidationError(f"{what} {name} must be in 0..2147483647")


def check_label(what: str, text: str) -> None:
    """Refuse control and format characters (newlines, NUL, bidi overrides) in ids."""
    bad = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c).startswith("C")})
    if bad:
        raise ValidationError(f"{what} contains control or format characters {bad}: remove them")


def check_value(value: Any) -> tuple[str, str]:
    if not isinstance(value, Mapping):
        raise ValidationError(
            'an item value is an object {"content": str, "kind": ...}, got ' + type(value).__name__
        )
    extra = sorted(str(k) for k in value if k not in VALUE_FIELDS)
    if extra:
        raise ValidationError(
            f"item value has unknown fields {extra}: allowed are {', '.join(VALUE_FIELDS)} "
            "(memories are text; they are guarded and rendered into prompts)"
        )
    content = value.get("content")
    if not isinstance(content, str):
        raise ValidationError('an item value needs "content" as a string')
    kind = value.get("kind", "fact")
    if kind not in KINDS:
        raise ValidationError(f"item kind {kind!r} is not allowed: use one of {', '.join(KINDS)}")
    return content, str(kind)


def ttl_expiry(ttl: Any, now: datetime) -> str:
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        raise ValidationError("ttl is a number of minutes")
    if ttl <= 0 or ttl > 60 * 24 * 365 * 100:
        raise ValidationError("ttl must be more than 0 and at most 100 years, in minutes")
    at = now + timedelta(minutes=float(ttl))
    return at.isoformat()
