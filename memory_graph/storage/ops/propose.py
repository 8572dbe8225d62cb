"""Propose: validate, guard and store a write proposal (or replay it). Writes no memory.

A proposal's id is derived from the scope and its idempotency key, so re-running a node
replays the stored proposal instead of creating a second one. The commit path is in
:mod:`~.proposals`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from psycopg.types.json import Jsonb

from ... import validate as v
from ...errors import ConflictError, IdempotencyConflictError, ScopeError, ValidationError
from ...identity import Identity, Owner
from ...proposals import default_idempotency_key, payload_hash, proposal_id, render_diff
from ...time import Clock, format_utc
from ...types import Limits, Proposal, Trust
from ..driver import Op, Query
from .commit import CommitContext, Locked, audit_row
from .known import KnownPrefs, pref_key
from .prefs import pref_row, profile_row
from .reads import get_record_op
from .records import locked_record
from .rejections import rejection_fingerprint
from .rows import jsonb, proposal_from_row

__all__ = [
    "Proposed",
    "Unsaved",
    "commit_context",
    "guard_args",
    "insert_decided",
    "propose_op",
    "propose_row",
    "untrusted_args",
]


def guard_args(
    operation: str, args: dict[str, Any], ev: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Guard every stored text of a write: the args' texts and the evidence's free text.

    Raises:
        ValidationError: the guard blocked one of them (nothing is stored).
    """
    return v.guarded("", v.guard_text(operation, args), *v.evidence_text(ev or {}))


def untrusted_args(norm: dict[str, Any], now: datetime, limits: Limits) -> dict[str, Any]:
    """Canonical args from an untrusted source (a model, a tool, an import, a resume edit).

    ``confidence`` is the store's to set (1.0 when a human approves, 0.7 under a grant, raised
    by repeat mentions), so a given one is dropped; an ``expires_at`` later than
    ``now + limits.max_lifetime`` is clamped to that policy maximum.
    """
    norm.pop("confidence", None)
    if "expires_at" in norm:
        cap = now + limits.max_lifetime
        if v.aware(norm["expires_at"], "expires_at") > cap:
            norm["expires_at"] = format_utc(cap)
    return norm


def _new_write_identity(owner: Owner, operation: str, level: Any) -> Identity:
    if operation == "patch_profile":
        if level is not None and v.identity_level(level) != "user":
            raise ScopeError("the profile is one document per user: patch_profile is level 'user'")
        return owner.identity("user")
    if level is None:
        raise ValidationError(
            f"{operation} needs an explicit level: pass level= one of "
            "user_workspace, user, agent_workspace, agent"
        )
    return owner.identity(v.identity_level(level))


def _before(
    owner: Owner,
    level: Any,
    operation: str,
    args: dict[str, Any],
    target_id: str | None,
    now: datetime,
    lock_target: bool,
    optimistic: bool = False,
    known: KnownPrefs | None = None,
) -> Op[tuple[Identity, str | None, int | None, dict[str, Any] | None, Locked | None]]:
    """Resolve (identity, target_id, current version, current state) at propose time.

    A new write lives at its explicit ``level``; a replace or remove lives at its target's
    level (a different explicit level is a :class:`ScopeError`), so the proposal, its diff
    and its audit rows are visible exactly to those who see the target. With ``lock_target``
    (a trusted write, which holds the target's advisory lock) the target is read locked, as
    its apply op needs it, and returned too; ``optimistic`` reads a preference without the
    lock (see :func:`~.prefs.apply_set_preference`), or takes the row ``known`` holds for
    the key without reading it (:mod:`~.known`).
    """
    if operation in ("set_preference", "delete_preference"):
        ident = _new_write_identity(owner, operation, level)
        key = args["key"]
        if target_id is not None and target_id != key:
            raise ValidationError(
                f"target_id {v.short(target_id)} does not match the preference key {key!r}: "
                "omit target_id or pass the normalised key"
            )
        locked: Locked | None = None
        if lock_target:
            count = operation == "set_preference"
            found = known.get(pref_key(ident, key)) if optimistic and known else None
            if found is None:
                found = yield from pref_row(ident, key, now, count=count, lock=not optimistic)
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
            return ident, key, 0, None, locked
        state = {"value": row["content"]} if row["status"] == "active" else None
        return ident, key, int(row["version"]), state, locked
    if operation == "patch_profile":
        ident = _new_write_identity(owner, operation, level)
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
            return ident, None, 0, {"fields": {}}, locked
        return ident, None, int(row["revision"]), {"fields": row["fields"]}, locked
    if operation == "add":
        return _new_write_identity(owner, operation, level), None, None, None, None
    if target_id is None:
        raise ValidationError(f"{operation} needs target_id: the id of the record to change")
    wanted = None if level is None else v.identity_level(level)
    if lock_target:
        rec = yield from locked_record(owner, target_id)
    else:
        rec = yield from get_record_op(owner, target_id)
    if wanted is not None and wanted != rec.level:
        raise ScopeError(
            f"record {rec.id} lives at level {rec.level!r}, not {wanted!r}: a {operation} "
            "proposal takes its target's level (omit level)"
        )
    if rec.kind == "preference" and rec.key is not None:
        raise ValidationError(
            f"record {rec.id} is a keyed preference: use set_preference / delete_preference"
        )
    state = {"content": rec.content, "kind": rec.kind}
    return rec.identity, rec.id, rec.version, state, Locked(rec) if lock_target else None


def propose_op(
    owner: Owner,
    operation: Any,
    args: Any,
    *,
    level: Any = None,
    target_id: str | None = None,
    base_version: int | None = None,
    idempotency_key: str | None = None,
    evidence: Any = None,
    thread_id: str | None = None,
    ttl: timedelta | None = None,
    clock: Clock,
    limits: Limits,
) -> Op[Proposal]:
    """Create (or replay) a proposal. Validates and guards the args fully; writes no memory.

    The returned proposal has ``replayed=True`` when it already existed (same idempotency
    key, same payload).
    """
    row, inserted, _, _ = yield from propose_row(
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
    return replace(proposal_from_row(row), replayed=not inserted)


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
    fresh: bool = False,
    optimistic: bool = False,
    known: KnownPrefs | None = None,
) -> Op[Proposed]:
    """:func:`propose_op`, returning the proposal row, whether this call inserted it and,
    with ``lock_target``, the target read under its lock (see :func:`_before`).

    ``lock_target`` marks a trusted write (the application's own ``add``, ``set_preference``
    ...): only then is a given ``confidence`` kept and a long ``expires_at`` left unclamped.

    ``fresh``: the caller guarantees a never-used idempotency key (a trusted write's random
    one). There is then no replay to look for, and no remembered rejection either: those keep
    a refused write from being *proposed* again, and a trusted write asks no reviewer. The
    row is built here and not written: ``unsaved`` holds it, and the commit statement inserts
    it in its decided state (:func:`insert_decided`), so propose adds no statement and no
    round trip to a trusted write (a duplicate id still fails the transaction).

    ``optimistic``: the trusted write holds no lock yet; its target is read without one (or
    taken from ``known``, see :func:`_before`).
    """
    op = v.operation(operation)
    if level is not None:
        v.identity_level(level)
    norm = v.operation_args(op, args, limits)
    ev = v.evidence(evidence)
    if thread_id is not None:
        thread_id = v.text("thread_id", thread_id, max_bytes=512)
    thread_id = thread_id or ev.get("thread_id")
    if target_id is not None:
        target_id = v.text("target_id", target_id, max_bytes=512, min_bytes=0)
    if base_version is not None:
        v.bounded_int("base_version", base_version)
    ttl = limits.proposal_ttl if ttl is None else ttl
    if not isinstance(ttl, timedelta) or ttl <= timedelta(0):
        raise ValidationError("ttl must be a positive timedelta")
    ttl = min(ttl, limits.max_proposal_ttl)
    if idempotency_key is not None:
        idempotency_key = v.text("idempotency_key", idempotency_key, max_bytes=256)
        if not fresh:  # a caller's key is stored text; a trusted write's is a random hex id
            v.guarded("idempotency_key", idempotency_key)
    now = clock()
    if not lock_target:
        norm = untrusted_args(norm, now, limits)
    updated_at = v.aware(ev["observed_at"], "observed_at") if "observed_at" in ev else now
    if "expires_at" in norm:
        v.expiry(norm["expires_at"], updated_at if op == "set_preference" else max(updated_at, now))
    verdict = guard_args(op, norm, ev)
    ident, target, current, before, locked = yield from _before(
        owner, level, op, norm, target_id, now, lock_target, optimistic, known
    )
    base = current if base_version is None else base_version
    key = idempotency_key or default_idempotency_key(
        op, ident.level, (ident.agent_key, ident.workspace_key), target, norm, ev
    )
    pid = proposal_id(owner.scope_id, key)
    phash = payload_hash(op, ident.level, target, norm)
    if not fresh:  # a trusted write's key is new, and it asks no reviewer: nothing to find
        refused = yield from _remembered_rejection(owner, pid, op, ident, target, norm, now)
        if refused is not None:
            return Proposed(refused, False, locked)
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
    values = (
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
    )
    if fresh:
        return Proposed(_fresh_row(values), True, locked, Unsaved(values, proposed))
    for _ in range(2):
        # Insert-or-read in one statement; the audit row is written only with a new row. A
        # concurrent insert not yet visible to this statement's snapshot reads as no row: retry.
        row = yield Query(
            f"WITH ins AS ({_INSERT_PROPOSAL} ON CONFLICT (scope_id, id) DO NOTHING "
            f"RETURNING *), aud AS ({_AUDIT_PROPOSED} FROM ins) "
            "SELECT true AS inserted, ins.* FROM ins UNION ALL "
            "SELECT false AS inserted, p.* FROM mg_proposals p WHERE p.scope_id = %s "
            "AND p.id = %s AND NOT EXISTS (SELECT 1 FROM ins)",
            (*values, *proposed, owner.scope_id, pid),
            fetch="one",
        )
        if row is None:
            continue
        if row["inserted"]:
            return Proposed(row, True, locked)
        same_identity = (row["agent_key"], row["workspace_key"]) == (
            ident.agent_key,
            ident.workspace_key,
        )
        if not same_identity or row["payload_hash"] != phash:
            raise IdempotencyConflictError(
                f"idempotency key {v.short(key)} was already used for a different payload: "
                "use a new idempotency key"
            )
        return Proposed(row, False, locked)
    raise ConflictError("a concurrent proposal with the same id appeared: retry")  # unreachable


def _remembered_rejection(
    owner: Owner,
    pid: str,
    op: str,
    ident: Identity,
    target: str | None,
    norm: dict[str, Any],
    now: datetime,
) -> Op[dict[str, Any] | None]:
    """The rejected proposal to return instead of proposing a write the owner refused.

    A replay of an existing proposal (same id) is never redirected.
    """
    # The replay check and the rejection lookup in one statement (one round trip).
    fingerprint = rejection_fingerprint(op, ident, target, norm)
    found = yield Query(
        "SELECT EXISTS (SELECT 1 FROM mg_proposals WHERE scope_id = %s AND id = %s) AS replay, "
        "(SELECT proposal_id FROM mg_rejections WHERE scope_id = %s AND fingerprint = %s "
        "AND expires_at > %s) AS rejected",
        (owner.scope_id, pid, owner.scope_id, fingerprint, now),
        fetch="one",
    )
    rejected = found["rejected"]
    if found["replay"] or rejected is None:
        return None
    row: dict[str, Any] | None = yield Query(
        "SELECT * FROM mg_proposals WHERE scope_id = %s AND id = %s",
        (owner.scope_id, rejected),
        fetch="one",
    )
    return None if row is None else {**row, "inserted": False}


_PROPOSAL_COLS = (
    "scope_id, id, level, agent_key, workspace_key, operation, target_id, base_version, args, "
    "payload_hash, diff, evidence, guard, idempotency_key, thread_id, created_at, expires_at"
)
_PROPOSAL_VALUES = (
    "%s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::integer, "
    "%s::jsonb, %s::text, %s::text, %s::jsonb, %s::jsonb, %s::text, %s::text, "
    "%s::timestamptz, %s::timestamptz"
)
_INSERT_PROPOSAL = (
    f"INSERT INTO mg_proposals ({_PROPOSAL_COLS}, status) VALUES ({_PROPOSAL_VALUES}, 'pending')"
)
_DECIDED_COLS = f"{_PROPOSAL_COLS}, status, decided_at, actor, decision, result"
_DECIDED_NAMES = tuple(_DECIDED_COLS.split(", "))
# One jsonb argument for the whole row (as an added record goes): 22 parameters fewer for
# psycopg to adapt on every trusted write.
_INSERT_DECIDED = (
    f"INSERT INTO mg_proposals ({_DECIDED_COLS}) SELECT {_DECIDED_COLS} "
    "FROM jsonb_populate_record(NULL::mg_proposals, %s) WHERE {ok}"
)
_AUDIT_PROPOSED = (
    "INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, target_id, action, "
    "before, after, version, proposal_id, actor, at) SELECT %s::text, %s::text, %s::text, "
    "%s::text, %s::text, %s::text, %s::jsonb, %s::jsonb, %s::integer, %s::text, %s::text, "
    "%s::timestamptz"
)


@dataclass(frozen=True)
class Unsaved:
    """A trusted write's proposal row, not written yet: its insert values, its audit row."""

    values: tuple[Any, ...]
    audit: tuple[Any, ...]


class Proposed(NamedTuple):
    """What :func:`propose_row` returns."""

    row: dict[str, Any]
    inserted: bool
    locked: Locked | None
    unsaved: Unsaved | None = None


def insert_decided(unsaved: Unsaved, *decided: Any) -> Query:
    """Insert an unsaved proposal in its decided state, with ``{ok}`` in its ``WHERE``.

    ``decided``: status, decided_at, actor, decision and result, as ``_finish`` stores them.
    """
    row = {
        name: value.obj if isinstance(value, Jsonb) else value
        for name, value in zip(_DECIDED_NAMES, (*unsaved.values, *decided), strict=True)
    }
    return Query(_INSERT_DECIDED, (jsonb(row),), fetch="none")


def _fresh_row(values: tuple[Any, ...]) -> dict[str, Any]:
    """The row :data:`_INSERT_PROPOSAL` writes for ``values``, as the database returns it."""
    names = (
        "scope_id id level agent_key workspace_key operation target_id base_version args "
        "payload_hash diff evidence guard idempotency_key thread_id created_at expires_at"
    ).split()
    row = {n: (v.obj if isinstance(v, Jsonb) else v) for n, v in zip(names, values, strict=True)}
    row.update(
        status="pending", decided_at=None, actor=None, decision=None, result=None, grant_id=None
    )
    return row


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
