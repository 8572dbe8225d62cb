"""Pure proposal helpers: idempotency keys, deterministic ids, payload hashes and diffs.

A proposal's id is derived from the owner's scope and an idempotency key, so re-running a
node that proposes the same write never creates a second proposal:

>>> pid = proposal_id("0123456789abcdef", "set_preference:user:tone:abc")
>>> len(pid), pid == proposal_id("0123456789abcdef", "set_preference:user:tone:abc")
(32, True)
>>> render_diff("set_preference", {"key": "tone", "value": "casual"}, {"value": "formal"})
'preference tone: "formal" -> "casual"'

Every value in a diff is one quoted string (JSON quoting, then the rendering rule, with its
parentheses escaped), so only the diff itself writes an arrow, a line or a ``(...)`` note:

>>> print(render_diff("add", {"kind": "fact", "content": 'tea" (expires 2099) -> x'}, None))
+ fact: "tea\\" \\(expires 2099\\) -> x"
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from .safetext import fold

__all__ = [
    "canonical_json",
    "default_idempotency_key",
    "payload_hash",
    "proposal_id",
    "render_diff",
]


def canonical_json(value: Any) -> str:
    """Deterministic JSON text: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def payload_hash(operation: str, level: str, target_id: str | None, args: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical payload; same key + different hash is an idempotency conflict."""
    return _sha(
        canonical_json(
            {"operation": operation, "level": level, "target_id": target_id, "args": dict(args)}
        )
    )


def default_idempotency_key(
    operation: str,
    level: str,
    identity_keys: tuple[str, str],
    target_id: str | None,
    args: Mapping[str, Any],
    evidence: Mapping[str, Any],
) -> str:
    """The key used when the caller gives none.

    It covers the operation, the identity (level plus agent/workspace digests), the target,
    the canonical args and ``evidence.source_event_id``: proposing the same thing from the same
    event twice yields the same key.
    """
    body = canonical_json(
        {
            "identity": list(identity_keys),
            "target_id": target_id,
            "args": dict(args),
            "source_event_id": evidence.get("source_event_id"),
        }
    )
    return f"{operation}:{level}:{_sha(body)[:32]}"


def proposal_id(scope_id: str, idempotency_key: str) -> str:
    """First 32 hex digits of ``sha256(scope_id + ":" + idempotency_key)``."""
    return _sha(f"{scope_id}:{idempotency_key}")[:32]


_NOTE_ESCAPES = str.maketrans({"(": "\\(", ")": "\\)"})
_BARE = re.compile(r"[\w.:+-]+")


def _q(value: Any) -> str:
    """A stored or model-written value as one quoted string, or ``(none)``.

    JSON quoting (so ``"`` and ``\\`` are escaped and the value cannot close its quotes), then
    :func:`~memory_graph.safetext.fold` (one line, no control or format character, look-alike
    brackets folded), then ``( )`` escaped as ``\\( \\)``: a value can add no arrow, line or
    ``(...)`` note to the diff.
    """
    if value is None:
        return "(none)"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return fold(text).translate(_NOTE_ESCAPES)


def _name(value: Any) -> str:
    """A key, kind, field name or date: as is when it is a plain word, else :func:`_q`."""
    text = str(value)
    return text if _BARE.fullmatch(text) else _q(text)


def render_diff(operation: str, args: Mapping[str, Any], before: Mapping[str, Any] | None) -> str:
    """A short human-readable diff of what the proposal would change.

    Args:
        operation: the proposal operation.
        args: its canonical args.
        before: the current state of the target (``None`` when absent): ``{"value": ...}``
            for a preference, ``{"content": ..., "kind": ...}`` for a record, ``{"fields":
            {...}}`` for the profile.

    Returns:
        One or more lines. Values are quoted (:func:`_q`): outside the quotes there is only
        the diff's structure (``preference k:``, ``->``, ``+``/``-``, ``(none)``,
        ``(deleted)``, ``(unknown)``, ``(expires ...)``).
    """
    before = before or {}
    if operation == "set_preference":
        old = before.get("value")
        line = f"preference {_name(args['key'])}: {_q(old)} -> {_q(args['value'])}"
        if args.get("expires_at"):
            line += f" (expires {_name(args['expires_at'])})"
        return line
    if operation == "delete_preference":
        return f"preference {_name(args['key'])}: {_q(before.get('value'))} -> (deleted)"
    if operation == "patch_profile":
        fields = before.get("fields") or {}
        lines = [
            f"profile {_name(name)}: {_q(fields.get(name))} -> "
            + (_q(value) if value is not None else "(deleted)")
            for name, value in args["patch"].items()
        ]
        return "\n".join(lines)
    if operation == "add":
        line = f"+ {_name(args['kind'])}: {_q(args['content'])}"
        if args.get("expires_at"):
            line += f" (expires {_name(args['expires_at'])})"
        return line
    if operation == "replace":
        return f"- {_content(before)}\n+ {_q(args['content'])}"
    if operation == "remove":
        return f"- {_content(before)}"
    raise ValueError(f"unknown operation {operation!r}")


def _content(before: Mapping[str, Any]) -> str:
    return _q(before["content"]) if "content" in before else "(unknown)"
