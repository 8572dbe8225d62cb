"""Trusted programmatic writes as ops: build args, propose + approve (actor ``api``), shape results.

These are the methods both store twins expose for programmatic use; every one goes through
the same proposal and commit path as a human-approved write, and is audited the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ... import validate as v
from ...identity import IdentityLevel, Owner
from ...time import format_utc
from ...types import CommitResult, PreferenceResult, ProfileResult
from ..driver import Op
from ..shell.common import StoreBase
from .proposals import trusted_write_op

__all__ = [
    "add",
    "delete_preference",
    "patch_profile",
    "remove",
    "replace",
    "set_preference",
]


def _iso(value: Any, field: str) -> str | None:
    return None if value is None else format_utc(v.aware(value, field))


def _evidence(
    *, source: str | None = None, source_event_id: Any = None, updated_at: Any = None
) -> dict[str, Any]:
    ev: dict[str, Any] = {}
    if source is not None:
        ev["source"] = source
    if source_event_id is not None:
        ev["source_event_id"] = source_event_id
    if updated_at is not None:
        ev["observed_at"] = _iso(updated_at, "updated_at")
    return ev


def _pref_result(res: CommitResult) -> PreferenceResult:
    d = res.details
    return PreferenceResult(
        status=res.write_status or "UNCHANGED",
        key=d["key"],
        revision=res.version or 0,
        value=d.get("value"),
        previous_value=d.get("previous_value"),
    )


def set_preference(
    owner: Owner,
    key: str,
    value: str,
    *,
    level: IdentityLevel,
    source: str,
    source_event_id: str | None,
    expires_at: datetime | None,
    updated_at: datetime | None,
    store: StoreBase,
) -> Op[PreferenceResult]:
    """Seed-semantics preference write (see :func:`~.prefs.apply_set_preference`).

    Run it in autocommit: an update of a key that is set commits optimistically, in two
    statements (read, gated commit), or in one when the store wrote the key last
    (:mod:`~.known`); anything else opens a transaction and takes the lock.
    """
    args: dict[str, Any] = {"key": key, "value": value}
    if expires_at is not None:
        args["expires_at"] = _iso(expires_at, "expires_at")
    ev = _evidence(source=source, source_event_id=source_event_id, updated_at=updated_at)
    res = yield from trusted_write_op(
        owner,
        "set_preference",
        args,
        level=level,
        evidence=ev,
        clock=store.clock,
        limits=store.limits,
        optimistic=True,
        known=store._known_prefs,
    )
    return _pref_result(res)


def delete_preference(
    owner: Owner,
    key: str,
    *,
    level: IdentityLevel,
    updated_at: datetime | None,
    store: StoreBase,
) -> Op[PreferenceResult]:
    """Delete a preference key of one identity."""
    ev = _evidence(updated_at=updated_at)
    res = yield from trusted_write_op(
        owner,
        "delete_preference",
        {"key": key},
        level=level,
        evidence=ev,
        clock=store.clock,
        limits=store.limits,
        known=store._known_prefs,
    )
    return _pref_result(res)


def patch_profile(
    owner: Owner,
    patch: Mapping[str, str | None],
    *,
    updated_at: datetime | None,
    store: StoreBase,
) -> Op[ProfileResult]:
    """Patch the profile; an empty patch is UNCHANGED without a proposal."""
    norm = v.profile_patch(patch, store.limits)
    if not norm:
        from .reads import get_profile_op

        prof = yield from get_profile_op(owner)
        return ProfileResult("UNCHANGED", (), (), prof.revision)
    ev = _evidence(updated_at=updated_at)
    res = yield from trusted_write_op(
        owner, "patch_profile", {"patch": norm}, evidence=ev, clock=store.clock, limits=store.limits
    )
    return ProfileResult(
        status=res.write_status or "UNCHANGED",
        changed=tuple(res.details.get("changed", ())),
        unchanged=tuple(res.details.get("unchanged", ())),
        revision=res.version or 0,
    )


def add(
    owner: Owner,
    kind: str,
    content: str,
    *,
    level: IdentityLevel,
    key: str | None,
    knowledge: Any,
    trust: str,
    sensitivity: str,
    confidence: float | None,
    evidence: Mapping[str, Any] | None,
    expires_at: datetime | None,
    store: StoreBase,
) -> Op[CommitResult]:
    """Add a record through the commit path (actor ``api``)."""
    k = v.knowledge(knowledge)
    args: dict[str, Any] = {
        "kind": kind,
        "content": content,
        "trust": v.trust(trust),
        "sensitivity": sensitivity,
    }
    if k is not None:
        args["knowledge"] = v.knowledge_to_json(k)
    if key is not None:
        args["key"] = key
    if confidence is not None:
        args["confidence"] = confidence
    if expires_at is not None:
        args["expires_at"] = _iso(expires_at, "expires_at")
    return (
        yield from trusted_write_op(
            owner,
            "add",
            args,
            level=level,
            evidence=evidence,
            clock=store.clock,
            limits=store.limits,
        )
    )


def replace(
    owner: Owner,
    record_id: str,
    content: str,
    *,
    base_version: int,
    knowledge: Any,
    expires_at: datetime | None,
    store: StoreBase,
) -> Op[CommitResult]:
    """Compare-and-set replace through the commit path."""
    v.bounded_int("base_version", base_version)
    k = v.knowledge(knowledge)
    args: dict[str, Any] = {"content": content}
    if k is not None:
        args["knowledge"] = v.knowledge_to_json(k)
    if expires_at is not None:
        args["expires_at"] = _iso(expires_at, "expires_at")
    return (
        yield from trusted_write_op(
            owner,
            "replace",
            args,
            target_id=record_id,
            base_version=base_version,
            clock=store.clock,
            limits=store.limits,
        )
    )


def remove(
    owner: Owner, record_id: str, *, base_version: int, store: StoreBase
) -> Op[CommitResult]:
    """Compare-and-set removal through the commit path."""
    v.bounded_int("base_version", base_version)
    return (
        yield from trusted_write_op(
            owner,
            "remove",
            {},
            target_id=record_id,
            base_version=base_version,
            clock=store.clock,
            limits=store.limits,
        )
    )
