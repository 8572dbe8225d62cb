"""Proposal ops: decide (the only commit path), inbox and trusted writes.

Propose lives in :mod:`~.propose` (re-exported here); grants in :mod:`~.grants`.

Concurrency: :func:`decide_op` locks the proposal row (``SELECT ... FOR UPDATE``) and reads
its status after the lock, so of N concurrent deciders exactly one commits and the others get
the stored result. The same statement takes the target's advisory lock once the row is locked
(:data:`_APPLY_LOCK`); apply ops lock their target row and compare-and-set its version. The
writes of a commit, the proposal's final state and the audit rows go in one statement.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, NamedTuple

from psycopg.types.json import Jsonb

from ... import validate as v
from ...errors import (
    ConflictError,
    NotFoundError,
    StaleWriteError,
    ValidationError,
)
from ...identity import IdentityLevel, Owner
from ...time import Clock, format_utc
from ...types import CommitResult, Limits, Proposal, Trust
from ..driver import BEGIN, Op, Query
from .commit import (
    CommitContext,
    Contended,
    Locked,
    Outcome,
    audit_row,
    lock,
    statement,
)
from .known import KnownPrefs, pref_key
from .prefs import (
    apply_delete_preference,
    apply_patch_profile,
    apply_set_preference,
    lock_preference,
    lock_profile,
)
from .propose import (
    Unsaved,
    commit_context,
    guard_args,
    insert_decided,
    propose_op,
    propose_row,
    untrusted_args,
)
from .records import apply_add, apply_remove, apply_replace
from .rejections import remember_rejection_op
from .rows import (
    commit_result_from_json,
    commit_result_to_json,
    identity_from_row,
    proposal_from_row,
    visible,
)

__all__ = [
    "decide_op",
    "get_proposal_op",
    "list_pending_op",
    "propose_op",
    "trusted_write_op",
]


def _id(what: str, value: Any) -> str:
    """A proposal or grant id as given: text (no NUL, no lone surrogate), at most 256 bytes.

    Ids are 32 hex digits; anything else cannot exist, but it is refused with a
    :class:`ValidationError` only when it is not text at all, so an unknown id stays a
    :class:`NotFoundError` like another owner's.
    """
    if not isinstance(value, str):
        raise ValidationError(f"{what} id must be a string, got {type(value).__name__}")
    return v.text(f"{what} id", value, max_bytes=256)


def _not_found(what: str, value: Any) -> NotFoundError:
    return NotFoundError(f"{what} {v.short(value)} not found for this owner")


def _select_proposal(owner: Owner, pid: str, *, lock: bool) -> Op[dict[str, Any] | None]:
    cond, params = visible(owner)
    row = yield Query(
        f"SELECT * FROM mg_proposals WHERE {cond} AND id = %s" + (" FOR UPDATE" if lock else ""),
        (*params, pid),
        fetch="one",
    )
    return row  # type: ignore[no-any-return]


# The advisory lock the apply op of a proposal needs, computed from the proposal row; the same
# keys as ``lock("records", ...)``, :func:`lock_preference` and :func:`lock_profile`.
_APPLY_LOCK = (
    "CASE p.operation "
    "WHEN 'add' THEN concat_ws(chr(31), 'records', p.scope_id, p.agent_key, p.workspace_key) "
    "WHEN 'set_preference' THEN concat_ws(chr(31), 'pref', p.scope_id, p.agent_key, "
    "p.workspace_key, p.target_id) "
    "WHEN 'delete_preference' THEN concat_ws(chr(31), 'pref', p.scope_id, p.agent_key, "
    "p.workspace_key, p.target_id) "
    "WHEN 'patch_profile' THEN concat_ws(chr(31), 'profile', p.scope_id) END"
)


def _lock_for_decision(owner: Owner, pid: str, *, apply: bool) -> Op[dict[str, Any] | None]:
    """Lock the proposal row, then (when it is pending and ``apply``) its target's lock.

    The row lock comes first, as in every other path, so lock order is unchanged; the
    target's reads come in later statements, whose snapshots follow both locks.
    """
    cond, params = visible(owner)
    row = yield Query(
        f"WITH p AS MATERIALIZED (SELECT * FROM mg_proposals WHERE {cond} AND id = %s "
        "FOR UPDATE) SELECT p.*, CASE WHEN %s AND p.status = 'pending' THEN "
        f"pg_advisory_xact_lock(hashtextextended({_APPLY_LOCK}, 0)) IS NULL END AS locked "
        "FROM p",
        (*params, pid, apply),
        fetch="one",
    )
    return row  # type: ignore[no-any-return]


def _finish(
    ctx: CommitContext,
    row: dict[str, Any],
    status: str,
    result: CommitResult,
    decision: dict[str, Any],
    args: dict[str, Any] | None = None,
    outcome: Outcome | None = None,
    unsaved: Unsaved | None = None,
) -> Op[bool]:
    """Store the final status + result with the outcome's writes and all audit rows, at once.

    ``args``: the edited args to store (``None`` keeps the row's). An ``unsaved`` proposal
    (a trusted write's) is inserted in its final state, after its ``proposed`` audit row,
    instead of being inserted pending and updated.
    Returns ``False`` (nothing written) when the outcome's guard did not hold.
    """
    decided = (status, ctx.now, ctx.actor, Jsonb(decision), Jsonb(commit_result_to_json(result)))
    if unsaved is not None:
        update = insert_decided(unsaved, *decided)
    else:
        edited = ("", ()) if args is None else (", args = %s", (Jsonb(args),))
        update = Query(
            "UPDATE mg_proposals SET status = %s, decided_at = %s, actor = %s, decision = %s, "
            f"result = %s{edited[0]} WHERE scope_id = %s AND id = %s AND {{ok}}",
            (*decided, *edited[1], row["scope_id"], row["id"]),
        )
    transition = audit_row(
        ctx,
        identity_from_row(row),
        "proposal",
        row["id"],
        status,
        {"status": "pending"},
        {"status": status, "decision": decision},
        result.version,
    )
    writes = outcome.writes if outcome is not None else ()
    audits = outcome.audits if outcome is not None else ()
    guard = outcome.guard if outcome is not None else None
    gate = outcome.gate if outcome is not None else None
    first = (unsaved.audit,) if unsaved is not None else ()
    done = yield statement([*writes, update], [*first, *audits, transition], guard, gate)
    return (guard is None and gate is None) or (done is not None and bool(done["ok"]))


def _apply(
    ctx: CommitContext,
    row: dict[str, Any],
    args: dict[str, Any],
    locked: Locked | None,
    optimistic: bool = False,
) -> Op[Outcome]:
    op, base = row["operation"], row["base_version"]
    if op == "add":
        return (yield from apply_add(ctx, args, optimistic=True))
    if op == "replace":
        return (yield from apply_replace(ctx, row["target_id"], base, args, locked))
    if op == "remove":
        return (yield from apply_remove(ctx, row["target_id"], base, locked))
    if op == "set_preference":
        return (yield from apply_set_preference(ctx, base, args, locked, optimistic=optimistic))
    if op == "delete_preference":
        return (yield from apply_delete_preference(ctx, base, args, locked))
    return (yield from apply_patch_profile(ctx, base, args, locked))


def decide_op(
    owner: Owner,
    pid: str,
    decision: Any,
    *,
    args: Any = None,
    message: str | None = None,
    actor: str = "human",
    clock: Clock,
    limits: Limits,
    trust: Trust | None = None,
) -> Op[CommitResult]:
    """Decide a proposal: approve, edit (re-validated, re-guarded) or reject, in one transaction.

    Returns the final status as data: ``approved``, ``rejected``, ``expired`` (decided at or
    after ``expires_at``; nothing written) or ``conflicted`` (the target changed since the base
    version; the newer value stays). A decided proposal returns its stored result.
    """
    dec = v.decision(decision)
    if message is not None:
        message = v.text("message", message, max_bytes=4096, min_bytes=0)
    actor = v.text("actor", actor, max_bytes=256)
    v.guarded("decision message and actor", message, actor)  # both are stored
    if dec == "edit" and args is None:
        raise ValidationError("an edit decision needs args: pass the edited args")
    pid = _id("proposal", pid)
    row = yield from _lock_for_decision(owner, pid, apply=dec != "reject")
    if row is None:
        raise _not_found("proposal", pid)
    return (yield from _decide(owner, row, dec, args, message, actor, clock, limits, trust))


def _decide(
    owner: Owner,
    row: dict[str, Any],
    dec: str,
    args: Any,
    message: str | None,
    actor: str,
    clock: Clock,
    limits: Limits,
    trust: Trust | None,
    locked: Locked | None = None,
    unsaved: Unsaved | None = None,
    optimistic: bool = False,
) -> Op[CommitResult]:
    """Decide a proposal row this transaction holds, with its target's lock (if it applies).

    ``locked``: the target as read under its lock by this transaction's propose, if any;
    ``unsaved``: the row itself when it is not written yet (a trusted write's);
    ``optimistic``: a trusted preference write in autocommit, its target read without a lock:
    it commits in one gated statement or raises :class:`Contended` having written nothing.
    """
    pid = row["id"]
    if row["status"] != "pending":
        return commit_result_from_json(row["result"])
    ident = identity_from_row(row)
    op = row["operation"]
    now = clock()
    new_args: dict[str, Any] = row["args"]
    if dec == "edit":
        # Edited args are untrusted input like the proposal's: validated, clamped and guarded
        # (with the proposal's evidence) before anything is written, even when expired.
        new_args = untrusted_args(v.operation_args(op, args, limits), now, limits)
        if op in ("set_preference", "delete_preference") and new_args["key"] != row["target_id"]:
            raise ValidationError("an edit cannot change the preference key: propose a new write")
        guard_args(op, new_args, row["evidence"])
    # A grant always writes agent-observed; otherwise an explicit add trust, else confirmed.
    trust_: Trust = trust or new_args.get("trust") or "user-confirmed"
    ctx = commit_context(owner, ident, now, actor, pid, trust_, row["evidence"], limits)
    record = {"decision": dec, "message": message, "args": new_args if dec == "edit" else None}
    if now >= row["expires_at"]:
        res = CommitResult(
            pid,
            "expired",
            op,
            message=(f"proposal expired at {format_utc(row['expires_at'])}: nothing was written"),
        )
        yield from _finish(ctx, row, "expired", res, record, unsaved=unsaved)
        return res
    if dec == "reject":
        res = CommitResult(pid, "rejected", op, message=message or "")
        yield from _finish(ctx, row, "rejected", res, record, unsaved=unsaved)
        if not actor.startswith(("policy", "grant:")):  # a person said no; a rule is no news
            yield from remember_rejection_op(row, now, limits)
        return res
    out = yield from _apply(ctx, row, new_args, locked, optimistic)
    while True:
        res = CommitResult(
            pid,
            "approved" if out.status == "approved" else "conflicted",
            op,
            out.write_status,
            out.record_id,
            out.version,
            out.message,
            out.details,
        )
        edited = new_args if dec == "edit" else None
        if (yield from _finish(ctx, row, res.status, res, record, edited, out, unsaved)):
            return res
        if optimistic:
            raise Contended("the preference changed since it was read")
        # An optimistic add met a duplicate or a full identity: read, then decide again.
        out = yield from apply_add(ctx, new_args)


def get_proposal_op(owner: Owner, pid: str) -> Op[Proposal]:
    """One proposal visible to the owner (NotFoundError otherwise)."""
    row = yield from _select_proposal(owner, _id("proposal", pid), lock=False)
    if row is None:
        raise _not_found("proposal", pid)
    return proposal_from_row(row)


def list_pending_op(
    owner: Owner, *, thread_id: str | None = None, clock: Clock
) -> Op[list[Proposal]]:
    """The inbox: pending, unexpired proposals of the owner, oldest first."""
    if thread_id is not None:
        thread_id = v.text("thread_id", thread_id, max_bytes=512)
    cond, params = visible(owner)
    sql = f"SELECT * FROM mg_proposals WHERE {cond} AND status = 'pending' AND expires_at > %s"
    qargs: list[Any] = [*params, clock()]
    if thread_id is not None:
        sql += " AND thread_id = %s"
        qargs.append(thread_id)
    # created_at is event time (often equal within a batch); recorded_at keeps the real order.
    rows = yield Query(sql + " ORDER BY created_at, recorded_at, id", qargs)
    return [proposal_from_row(r) for r in rows]


def trusted_write_op(
    owner: Owner,
    operation: str,
    args: dict[str, Any],
    *,
    level: IdentityLevel | None = None,
    target_id: str | None = None,
    base_version: int | None = None,
    evidence: Any = None,
    clock: Clock,
    limits: Limits,
    optimistic: bool = False,
    known: KnownPrefs | None = None,
) -> Op[CommitResult]:
    """A programmatic write: propose + approve (actor ``api``) in one transaction.

    ``optimistic`` (``set_preference`` of a key that is set, run in autocommit): read the
    target without a lock, then commit in one statement gated on it being unchanged; if it
    changed, or the write needs the lock (a new key, a conflict), open a transaction
    (:data:`BEGIN`) and write under the lock. Either way one proposal is committed.
    ``known`` (a store's :class:`~.known.KnownPrefs`) keeps the row each preference write
    leaves, and an optimistic write takes its target from there instead of reading it.

    Raises:
        StaleWriteError: a preference write whose ``updated_at`` is not newer (nothing changes).
        ConflictError: a preference/profile base changed concurrently (nothing changes).
    """
    write = _Write(
        owner, operation, args, level, target_id, base_version, evidence, clock, limits, known
    )
    if optimistic:
        try:
            return (yield from _trusted_write(write, optimistic=True))
        except Contended:
            if known is not None:
                ident = owner.identity(v.identity_level(level))
                known.drop(pref_key(ident, v.normalize_preference_key(args.get("key"))))
            yield BEGIN
    return (yield from _trusted_write(write))


class _Write(NamedTuple):
    """One trusted write, as given to :func:`trusted_write_op`."""

    owner: Owner
    operation: str
    args: dict[str, Any]
    level: IdentityLevel | None
    target_id: str | None
    base_version: int | None
    evidence: Any
    clock: Clock
    limits: Limits
    known: KnownPrefs | None


def _trusted_write(w: _Write, *, optimistic: bool = False) -> Op[CommitResult]:
    owner, operation, args, level, limits = w.owner, w.operation, w.args, w.level, w.limits
    known = w.known
    # Lock the target first so the base version read by propose is the one committed against.
    if optimistic:
        pass  # read without a lock; the commit statement is gated on what was read
    elif operation in ("set_preference", "delete_preference"):
        ident = owner.identity(v.identity_level(level))
        yield from lock_preference(ident, v.normalize_preference_key(args.get("key")))
    elif operation == "patch_profile":
        yield from lock_profile(owner.scope_id)
    elif operation == "add":
        ident = owner.identity(v.identity_level(level))
        yield from lock("records", ident.scope_id, ident.agent_key, ident.workspace_key)
    # One instant for the whole write, read once the lock is held (a write that waited for
    # the lock is later than the one it waited for): the target read at propose time is the
    # one applied.
    now = w.clock()

    def fixed() -> datetime:
        return now

    row, inserted, locked, unsaved = yield from propose_row(
        owner,
        operation,
        args,
        level=level,
        target_id=w.target_id,
        base_version=w.base_version,
        idempotency_key=f"api:{uuid.uuid4().hex}",
        evidence=w.evidence,
        thread_id=None,
        ttl=None,
        clock=fixed,
        limits=limits,
        lock_target=True,
        fresh=True,
        optimistic=optimistic,
        known=known,
    )
    if inserted:
        # This transaction created the row: no one else can see it, so it needs no row lock;
        # the target's lock is held and the target was read under it.
        res = yield from _decide(
            owner,
            row,
            "approve",
            None,
            None,
            "api",
            fixed,
            limits,
            None,
            locked,
            unsaved,
            optimistic,
        )
    else:
        res = yield from decide_op(
            owner, row["id"], "approve", actor="api", clock=fixed, limits=limits
        )
    if known is not None and operation in ("set_preference", "delete_preference"):
        # The row this write left (a hint, checked by the next write's gate: _known.py).
        key = pref_key(identity_from_row(row), row["target_id"])
        if operation == "set_preference" and locked is not None and locked.written is not None:
            known.put(key, locked.written)
        else:
            known.drop(key)
    if res.status == "conflicted" and operation not in ("replace", "remove"):
        if res.details.get("reason") == "stale":
            raise StaleWriteError(res.message + ": pass a later updated_at")
        raise ConflictError(res.message + ": retry the write")
    return res
