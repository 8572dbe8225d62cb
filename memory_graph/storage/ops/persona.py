"""Persona operations: the assistant's values and identity, the bootstrap, onboarding.

Each function returns a generator op (see :mod:`..driver`): it yields queries and does no
I/O itself, so the sync and async stores run the same body with ``run_sync`` / ``run_async``,
in one transaction together with its audit row.

A persona row is keyed by ``(scope_id, agent_key)``: one per user and assistant preset
(``agent_key`` is ``""`` without an agent). Its lifecycle (DESIGN §8):

- ``set_persona_op`` sets values and/or identity; ``None`` leaves a field unchanged and an
  identical write changes nothing (no revision bump, no audit row).
- ``ensure_bootstrap_op`` stores the one-time onboarding instruction only when none exists
  and onboarding is not complete. It never overwrites.
- ``complete_onboarding_op`` needs a profile with at least one field and a persona with
  values or identity; it then stamps ``onboarded_at`` and removes the bootstrap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ...errors import ConflictError, LimitExceededError, ValidationError
from ...identity import Owner
from ...time import ensure_aware, format_utc
from ...types import Persona
from ...validate import guarded
from ..driver import Op, Query

__all__ = [
    "MAX_PERSONA_BYTES",
    "complete_onboarding_op",
    "ensure_bootstrap_op",
    "get_persona_op",
    "persona_from_row",
    "persona_sql",
    "set_persona_op",
]

MAX_PERSONA_BYTES = 4096
"""Maximum UTF-8 size of assistant values, assistant identity and the bootstrap text."""

_COLUMNS = "assistant_values, assistant_identity, bootstrap, onboarded_at, revision, updated_at"
_SELECT = f"SELECT {_COLUMNS} FROM mg_personas WHERE scope_id = %s AND agent_key = %s"


def _check_text(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{field} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValidationError(f"{field} must not be blank: pass non-empty text")
    if "\x00" in value:
        raise ValidationError(f"{field} contains a NUL character: remove it")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{field} is not valid Unicode text (lone surrogate)") from exc
    if size > MAX_PERSONA_BYTES:
        raise LimitExceededError(
            f"{field} is {size} bytes, more than the limit of {MAX_PERSONA_BYTES} UTF-8 "
            "bytes: shorten it"
        )
    guarded(field, value)  # persona texts are stored and put in every prompt
    return value


def persona_sql(owner: Owner) -> tuple[str, tuple[Any, ...]]:
    """The owner's persona row (columns of :func:`persona_from_row`), and the params."""
    return _SELECT, (owner.scope_id, owner.agent_key)


def persona_from_row(row: Mapping[str, Any]) -> Persona:
    """A :class:`Persona` from a row of :func:`persona_sql`."""
    return _persona(row)


def _persona(row: Mapping[str, Any]) -> Persona:
    onboarded = row["onboarded_at"]
    updated = row["updated_at"]
    return Persona(
        assistant_values=row["assistant_values"],
        assistant_identity=row["assistant_identity"],
        bootstrap=row["bootstrap"],
        onboarded_at=None if onboarded is None else ensure_aware(onboarded),
        revision=int(row["revision"]),
        updated_at=None if updated is None else ensure_aware(updated),
    )


def _state(p: Persona | None) -> str | None:
    """The audit snapshot of a persona, as JSON text for a ``jsonb`` parameter."""
    if p is None:
        return None
    return json.dumps(
        {
            "assistant_values": p.assistant_values,
            "assistant_identity": p.assistant_identity,
            "bootstrap": p.bootstrap,
            "onboarded_at": None if p.onboarded_at is None else format_utc(p.onboarded_at),
            "revision": p.revision,
        },
        sort_keys=True,
    )


def _audit(
    owner: Owner,
    action: str,
    before: Persona | None,
    after: Persona,
    *,
    actor: str,
    now: datetime,
) -> Query:
    return Query(
        "INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, target_id, "
        "action, before, after, version, proposal_id, actor, at) "
        "VALUES (%s, %s, '', 'persona', %s, %s, %s::jsonb, %s::jsonb, %s, NULL, %s, %s)",
        (
            owner.scope_id,
            owner.agent_key,
            owner.agent_key,
            action,
            _state(before),
            _state(after),
            after.revision,
            actor,
            now,
        ),
        fetch="none",
    )


def _lock(owner: Owner) -> Op[Persona | None]:
    row = yield Query(_SELECT + " FOR UPDATE", (owner.scope_id, owner.agent_key), fetch="one")
    return None if row is None else _persona(row)


def _relock(owner: Owner) -> Op[Persona]:
    """Lock the row a concurrent transaction inserted while our insert did nothing."""
    current = yield from _lock(owner)
    if current is None:
        raise ConflictError("the persona changed concurrently: retry the operation")
    return current


def _insert(owner: Owner, **values: Any) -> Op[Persona | None]:
    """Insert a new row; ``None`` when a concurrent transaction inserted it first."""
    row = yield Query(
        "INSERT INTO mg_personas (scope_id, agent_key, assistant_values, assistant_identity, "
        "bootstrap, onboarded_at, revision, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, NULL, 1, %s) "
        f"ON CONFLICT (scope_id, agent_key) DO NOTHING RETURNING {_COLUMNS}",
        (
            owner.scope_id,
            owner.agent_key,
            values.get("assistant_values"),
            values.get("assistant_identity"),
            values.get("bootstrap"),
            values["now"],
        ),
        fetch="one",
    )
    return None if row is None else _persona(row)


def _update(owner: Owner, current: Persona, now: datetime, **changes: Any) -> Op[Persona]:
    sets = ", ".join(f"{name} = %s" for name in changes)
    row = yield Query(
        f"UPDATE mg_personas SET {sets}, revision = revision + 1, updated_at = %s, "
        "recorded_at = now() WHERE scope_id = %s AND agent_key = %s AND revision = %s "
        f"RETURNING {_COLUMNS}",
        (*changes.values(), now, owner.scope_id, owner.agent_key, current.revision),
        fetch="one",
    )
    if row is None:  # cannot happen while the row is locked FOR UPDATE; fail safe anyway
        raise ConflictError("the persona changed concurrently: retry the operation")
    return _persona(row)


def get_persona_op(owner: Owner) -> Op[Persona | None]:
    """Read the owner's persona (for ``owner.agent``), or ``None`` when none is stored.

    Args:
        owner: the owner; the row is selected by its scope and agent digest.
    """
    row = yield Query(_SELECT, (owner.scope_id, owner.agent_key), fetch="one")
    return None if row is None else _persona(row)


def set_persona_op(
    owner: Owner,
    *,
    assistant_values: str | None,
    assistant_identity: str | None,
    now: datetime,
    actor: str = "api",
) -> Op[Persona]:
    """Set the assistant's values and/or identity.

    ``None`` leaves a field unchanged. When nothing changes, nothing is written and the
    revision stays; otherwise the revision goes up by one and an audit row is appended.
    With no stored persona and nothing to set, an empty persona (revision 0) is returned
    and nothing is created.

    Args:
        owner: whose persona (one per user and agent).
        assistant_values: new values text, or ``None``.
        assistant_identity: new identity text, or ``None``.
        now: the write time (tz-aware).
        actor: recorded in the audit row.

    Raises:
        ValidationError: a text is blank or not a string, or ``now`` is naive.
        LimitExceededError: a text is over :data:`MAX_PERSONA_BYTES` bytes.
    """
    changes: dict[str, str] = {}
    if assistant_values is not None:
        changes["assistant_values"] = _check_text("assistant_values", assistant_values)
    if assistant_identity is not None:
        changes["assistant_identity"] = _check_text("assistant_identity", assistant_identity)
    now = ensure_aware(now, "now")
    current = yield from _lock(owner)
    if current is None:
        if not changes:
            return Persona(None, None, None, None, 0, None)
        created = yield from _insert(owner, now=now, **changes)
        if created is not None:
            yield _audit(owner, "create", None, created, actor=actor, now=now)
            return created
        current = yield from _relock(owner)
    changes = {k: val for k, val in changes.items() if getattr(current, k) != val}
    if not changes:
        return current
    updated = yield from _update(owner, current, now, **changes)
    yield _audit(owner, "update", current, updated, actor=actor, now=now)
    return updated


def ensure_bootstrap_op(owner: Owner, text: str, *, now: datetime, actor: str = "api") -> Op[bool]:
    """Store the one-time onboarding instruction unless one exists or onboarding is done.

    Never overwrites an existing bootstrap.

    Args:
        owner: whose persona.
        text: the bootstrap instruction.
        now: the write time (tz-aware).
        actor: recorded in the audit row.

    Returns:
        ``True`` when this call stored the bootstrap, ``False`` when it changed nothing.

    Raises:
        ValidationError: ``text`` is blank or not a string, or ``now`` is naive.
        LimitExceededError: ``text`` is over :data:`MAX_PERSONA_BYTES` bytes.
    """
    text = _check_text("bootstrap", text)
    now = ensure_aware(now, "now")
    current = yield from _lock(owner)
    if current is None:
        created = yield from _insert(owner, now=now, bootstrap=text)
        if created is not None:
            yield _audit(owner, "bootstrap", None, created, actor=actor, now=now)
            return True
        current = yield from _relock(owner)
    if current.bootstrap is not None or current.onboarded_at is not None:
        return False
    updated = yield from _update(owner, current, now, bootstrap=text)
    yield _audit(owner, "bootstrap", current, updated, actor=actor, now=now)
    return True


def complete_onboarding_op(owner: Owner, *, now: datetime, actor: str = "api") -> Op[Persona]:
    """Mark onboarding complete and remove the bootstrap. Idempotent.

    Args:
        owner: whose persona.
        now: the completion time (tz-aware).
        actor: recorded in the audit row.

    Returns:
        The persona with ``onboarded_at`` set and no bootstrap. A repeat call returns it
        unchanged, with no write.

    Raises:
        ValidationError: ``"onboarding is incomplete: ..."`` naming what is missing, until
            the user's profile has at least one field and the persona has assistant values
            or an assistant identity.
    """
    now = ensure_aware(now, "now")
    current = yield from _lock(owner)
    if current is not None and current.onboarded_at is not None:
        return current
    profile = yield Query(
        "SELECT fields FROM mg_profiles WHERE scope_id = %s", (owner.scope_id,), fetch="one"
    )
    fields = profile["fields"] if profile is not None else None
    has_profile = isinstance(fields, dict) and any(
        isinstance(val, str) and val.strip() for val in fields.values()
    )
    has_persona = current is not None and bool(
        (current.assistant_values or "").strip() or (current.assistant_identity or "").strip()
    )
    missing = []
    if not has_profile:
        missing.append("the user profile has no fields yet (patch_profile)")
    if not has_persona:
        missing.append(
            "the persona has neither assistant values nor an assistant identity (set_persona)"
        )
    if missing or current is None:  # no row implies has_persona is False
        raise ValidationError(f"onboarding is incomplete: {'; '.join(missing)}")
    updated = yield from _update(owner, current, now, onboarded_at=now, bootstrap=None)
    yield _audit(owner, "complete_onboarding", current, updated, actor=actor, now=now)
    return updated
