"""Propose: validate, guard and store a write proposal (or replay it). Writes no memory.

A proposal's id is derived from the scope and its idempotency key, so re-running a node
replays the stored proposal instead of creating a second one. The commit path is in
:mod:`._ops_proposals`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from .. import validate as v
from .._identity import Identity, Owner
from .._time import Clock
from .._types import Limits, Proposal, Trust
from ..errors import ConflictError, IdempotencyConflictError, ValidationError
from ..proposals import default_idempotency_key, payload_hash, proposal_id, render_diff
from ._driver import Op, Query
from ._ops_prefs import pref_row, profile_row
from ._ops_reads import get_record_op
from ._ops_records import CommitContext, Locked, audit_row, locked_record
from ._rows import proposal_from_row

__all__ = ["commit_context", "guard_args", "propose_op", "propose_row"]


def guard_args(operation: str, args: dict[str, Any]) -> dict[str, Any]:
    from ..guard import check

    verdict = check(v.guard_text(operation, args))
    if not verdict.allowed:
        raise ValidationError(
            f"blocked by the sensitive-data guard (category: {verdict.category}): "
            "this content is not stored; remove the sensitive part"
        )
    return verdict.to_json()


def _target_identity(owner: Owner, operation: str, level: Any) -> Identity:
    if operation == "patch_profile":
        return owner.identity("user")  # the profile is one document per user
    return owner.identity(v.identity_level(level))


def _before(
    owner: Owner,
    ident: Identity,
    operation: str,
    args: dict[str, Any],
    target_id: str | None,
    now: datetime,
    lock_target: bool,
) -> Op[tuple[str | None, int | None, dict[str, Any] | None, Locked | None]]:
    """Resolve (target_id, current version, current state) at propose time.

    With ``lock_target`` (a trusted write, which holds the target's advisory lock) the
    target is read locked, as its apply op needs it, and returned too.
    """
    if operation in ("set_preference", "delete_preference"):
        key = args["key"]
        if target_id is not None and target_id != key:
            raise ValidationError(
                f"target_id {target_id!r} does not match the preference key {key!r}: "
                "omit target_id or pass the normalised key"
            )
        locked: Locked | None = None
        if lock_target:
            found = yield from pref_row(ident, key, now, count=operation == "set_preference")
            row = found if found["id"] is not None else None
            locked = Locked(found)
        else:
            row = yield Query(
                "SELECT content, version, status FROM mg_records WHERE scope_id = %s AND "
                "agent_key = %s AND workspace_key = %s AND kind = 'preference' AND key = %s",
                (ident.scope_id, ident.agent_key, ident.workspace_key, key),
                fetch="one",
            )
        if row is None:
            return key, 0, None, locked
        state = {"value": row["content"]} if row["status"] == "active" else None
        return key, int(row["version"]), state, locked
    if operation == "patch_profile":
        if lock_target:
            row = yield from profile_row(owner.scope_id)
        else:
            row = yield Query(
                "SELECT fields, revision FROM mg_profiles WHERE scope_id = %s",
                (owner.scope_id,),
                fetch="one",
            )
        locked = Locked(row) if lock_target else None
        if row is None:
            return None, 0, {"fields": {}}, locked
        return None, int(row["revision"]), {"fields": row["fields"]}, locked
    if operation == "add":
        return None, None, None, None
    if not isinstance(target_id, str):
        raise ValidationError(f"{operation} needs target_id: the id of the record to change")
    if lock_target:
        rec = yield from locked_record(owner, target_id)
    else:
        rec = yield from get_record_op(owner, target_id)
    if rec.kind == "preference" and rec.key is not None:
        raise ValidationError(
            f"record {target_id} is a keyed preference: use set_preference / delete_preference"
        )
    state = {"content": rec.content, "kind": rec.kind}
    return rec.id, rec.version, state, Locked(rec) if lock_target else None


def propose_op(
    owner: Owner,
    operation: Any,
    args: Any,
    *,
    level: Any = "user",
    target_id: str | None = None,
    base_version: int | None = None,
    idempotency_key: str | None = None,
    evidence: Any = None,
    thread_id: str | None = None,
    ttl: timedelta | None = None,
    clock: Clock,
    limits: Limits,
) -> Op[Proposal]:
    """Create (or replay) a proposal. Validates and guards the args fully; writes no memory."""
    row, _, _ = yield from propose_row(
        owner,
        operation,
        args,
        level=level,
        target_id=target_id,
        base_version=base_version,
        idempotency_key=idempotency_key,
        evidence=evidence,
        thread_id=thread_id,
        ttl=ttl,
        clock=clock,
        limits=limits,
    )
    return proposal_from_row(row)


def propose_row(
    owner: Owner,
    operation: Any,
    args: Any,
    *,
    level: Any,
    target_id: str | None,
    base_version: int | None,
    idempotency_key: str | None,
    evidence: Any,
    thread_id: str | None,
    ttl: timedelta | None,
    clock: Clock,
    limits: Limits,
    lock_target: bool = False,
) -> Op[tuple[dict[str, Any], bool, Locked | None]]:
    """:func:`propose_op`, returning the proposal row, whether this call inserted it and,
    with ``lock_target``, the target read under its lock (see :func:`_before`)."""
    op = v.operation(operation)
    ident = _target_identity(owner, op, level)
    norm = v.operation_args(op, args, limits)
    ev = v.evidence(evidence)
    if thread_id is not None:
        thread_id = v.text("thread_id", thread_id, max_bytes=512)
    thread_id = thread_id or ev.get("thread_id")
    if base_version is not None and (
        isinstance(base_version, bool) or not isinstance(base_version, int) or base_version < 0
    ):
        raise ValidationError("base_version must be a non-negative integer or None")
    ttl = limits.proposal_ttl if ttl is None else ttl
    if not isinstance(ttl, timedelta) or ttl <= timedelta(0):
        raise ValidationError("ttl must be a positive timedelta")
    if idempotency_key is not None:
        idempotency_key = v.text("idempotency_key", idempotency_key, max_bytes=256)
    now = clock()
    updated_at = v.aware(ev["observed_at"], "observed_at") if "observed_at" in ev else now
    if "expires_at" in norm:
        v.expiry(norm["expires_at"], updated_at if op == "set_preference" else max(updated_at, now))
    verdict = guard_args(op, norm)
    target, current, before, locked = yield from _before(
        owner, ident, op, norm, target_id, now, lock_target
    )
    base = current if base_version is None else base_version
    key = idempotency_key or default_idempotency_key(
        op, ident.level, (ident.agent_key, ident.workspace_key), target, norm, ev
    )
    pid = proposal_id(owner.scope_id, key)
    phash = payload_hash(op, ident.level, target, norm)
    ctx = commit_context(owner, ident, now, "system", pid, "user-confirmed", ev, limits)
    proposed = audit_row(
        ctx,
        ident,
        "proposal",
        pid,
        "proposed",
        None,
        {"operation": op, "target_id": target, "base_version": base, "args": norm},
        None,
    )
    for _ in range(2):
        # Insert-or-read in one statement; the audit row is written only with a new row. A
        # concurrent insert not yet visible to this statement's snapshot reads as no row: retry.
        row = yield Query(
            "WITH ins AS (INSERT INTO mg_proposals (scope_id, id, level, agent_key, "
            "workspace_key, operation, target_id, base_version, args, payload_hash, diff, "
            "evidence, guard, status, idempotency_key, thread_id, created_at, expires_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'pending', %s, %s, %s, "
            "%s) ON CONFLICT (scope_id, id) DO NOTHING RETURNING *), "
            "aud AS (INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, "
            "target_id, action, before, after, version, proposal_id, actor, at) "
            "SELECT %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::jsonb, "
            "%s::jsonb, %s::integer, %s::text, %s::text, %s::timestamptz FROM ins) "
            "SELECT true AS inserted, ins.* FROM ins UNION ALL "
            "SELECT false AS inserted, p.* FROM mg_proposals p WHERE p.scope_id = %s "
            "AND p.id = %s AND NOT EXISTS (SELECT 1 FROM ins)",
            (
                owner.scope_id,
                pid,
                ident.level,
                ident.agent_key,
                ident.workspace_key,
                op,
                target,
                base,
                Jsonb(norm),
                phash,
                render_diff(op, norm, before),
                Jsonb(ev),
                Jsonb(verdict),
                key,
                thread_id,
                now,
                now + ttl,
                *proposed,
                owner.scope_id,
                pid,
            ),
            fetch="one",
        )
        if row is None:
            continue
        if row["inserted"]:
            return row, True, locked
        same_identity = (row["agent_key"], row["workspace_key"]) == (
            ident.agent_key,
            ident.workspace_key,
        )
        if not same_identity or row["payload_hash"] != phash:
            raise IdempotencyConflictError(
                f"idempotency key {key!r} was already used for a different payload: "
                "use a new idempotency key"
            )
        return row, False, locked
    raise ConflictError("a concurrent proposal with the same id appeared: retry")  # unreachable


def commit_context(
    owner: Owner,
    ident: Identity,
    now: datetime,
    actor: str,
    pid: str | None,
    trust: Trust,
    ev: dict[str, Any],
    limits: Limits,
) -> CommitContext:
    return CommitContext(owner, ident, now, actor, pid, trust, ev, limits)
