"""Pure proposal helpers: idempotency keys, deterministic ids, payload hashes and diffs.

A proposal's id is derived from the owner's scope and an idempotency key, so re-running a
node that proposes the same write never creates a second proposal:

>>> pid = proposal_id("0123456789abcdef", "set_preference:user:tone:abc")
>>> len(pid), pid == proposal_id("0123456789abcdef", "set_preference:user:tone:abc")
(32, True)
>>> render_diff("set_preference", {"key": "tone", "value": "casual"}, {"value": "formal"})
'preference tone: "formal" -> "casual"'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

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


def _q(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value is not None else "(none)"


def render_diff(operation: str, args: Mapping[str, Any], before: Mapping[str, Any] | None) -> str:
    """A short human-readable diff of what the proposal would change.

    Args:
        operation: the proposal operation.
        args: its canonical args.
        before: the current state of the target (``None`` when absent): ``{"value": ...}``
            for a preference, ``{"content": ..., "kind": ...}`` for a record, ``{"fields":
            {...}}`` for the profile.

    Returns:
        One or more lines.
    """
    before = before or {}
    if operation == "set_preference":
        old = before.get("value")
        line = f"preference {args['key']}: {_q(old)} -> {_q(args['value'])}"
        if args.get("expires_at"):
            line += f" (expires {args['expires_at']})"
        return line
    if operation == "delete_preference":
        return f"preference {args['key']}: {_q(before.get('value'))} -> (deleted)"
    if operation == "patch_profile":
        fields = before.get("fields") or {}
        lines = [
            f"profile {name}: {_q(fields.get(name))} -> "
            + (_q(value) if value is not None else "(deleted)")
            for name, value in args["patch"].items()
        ]
        return "\n".join(lines)
    if operation == "add":
        line = f"+ {args['kind']}: {args['content']}"
        if args.get("expires_at"):
            line += f" (expires {args['expires_at']})"
        return line
    if operation == "replace":
        return f"- {before.get('content', '(unknown)')}\n+ {args['content']}"
    if operation == "remove":
        return f"- {before.get('content', '(unknown)')}"
    raise ValueError(f"unknown operation {operation!r}")
