"""Grant ops: bounded auto-approval for exactly one principal (create, read, decide under one).

A grant approves through the same commit path as a person (:func:`~.proposals._decide`),
as actor ``grant:<id>`` with trust ``agent-observed``, and counts what it approved.
"""

from __future__ import annotations

import uuid
from typing import Any

from ... import validate as v
from ...errors import NotFoundError, ScopeError, ValidationError
from ...identity import Identity, IdentityLevel, Owner
from ...time import Clock
from ...types import CommitResult, Grant, Limits
from ..driver import Op, Query
from .commit import audit_row, statement
from .proposals import _decide, _id, _lock_for_decision, _not_found
from .propose import commit_context
from .reads import get_record_op
from .rows import commit_result_from_json, grant_from_row

__all__ = ["create_grant_op", "decide_with_grant_op", "get_grant_op", "grant_covers"]


def create_grant_op(
    owner: Owner,
    *,
    expires_at: Any,
    kinds: Any,
    operations: Any,
    max_mutations: Any,
    max_bytes: Any,
    clock: Clock,
) -> Op[Grant]:
    """Create a bounded auto-approval grant for exactly this owner."""
    now = clock()
    exp = v.expiry(expires_at, now)
    kinds_t = _names("kinds", kinds, v.grant_kind)
    ops_t = _names("operations", operations, v.operation)
    if not kinds_t or not ops_t:
        raise ValidationError("a grant needs at least one kind and one operation")
    for name, val in (("max_mutations", max_mutations), ("max_bytes", max_bytes)):
        v.bounded_int(name, val, lo=1)
    if (owner.agent or owner.workspace) and ("profile" in kinds_t or "patch_profile" in ops_t):
        raise ScopeError(
            "the profile is user-level (seen from every workspace and agent): only a grant "
            "of the plain user (no workspace, no agent) may cover it"
        )
    gid = uuid.uuid4().hex
    row = yield Query(
        "INSERT INTO mg_grants (scope_id, id, agent_key, workspace_key, expires_at, kinds, "
        "operations, max_mutations, max_bytes, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s) RETURNING *",
        (
            owner.scope_id,
            gid,
            owner.agent_key,
            owner.workspace_key,
            exp,
            kinds_t,
            ops_t,
            max_mutations,
            max_bytes,
            now,
        ),
        fetch="one",
    )
    ident = _exact_identity(owner)
    ctx = commit_context(owner, ident, now, "api", None, "user-confirmed", {}, Limits())
    after = {
        "kinds": kinds_t,
        "operations": ops_t,
        "max_mutations": max_mutations,
        "max_bytes": max_bytes,
        "expires_at": exp,
    }
    yield statement((), [audit_row(ctx, ident, "grant", gid, "create", None, after, None)])
    return grant_from_row(row)


def _names(field: str, values: Any, check: Any) -> list[str]:
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, set, frozenset)):
        raise ValidationError(f"{field} must be a list of names, got {type(values).__name__}")
    if len(values) > 16:
        raise ValidationError(f"{field} has {len(values)} entries: at most 16 are allowed")
    return sorted({check(x) for x in values})


def _exact_identity(owner: Owner) -> Identity:
    level: IdentityLevel = (
        ("agent_workspace" if owner.workspace else "agent")
        if owner.agent
        else ("user_workspace" if owner.workspace else "user")
    )
    return owner.identity(level)


def _grant_row(owner: Owner, gid: str, *, lock: bool) -> Op[dict[str, Any]]:
    gid = _id("grant", gid)
    row = yield Query(
        "SELECT * FROM mg_grants WHERE scope_id = %s AND agent_key = %s AND workspace_key = %s "
        "AND id = %s" + (" FOR UPDATE" if lock else ""),
        (owner.scope_id, owner.agent_key, owner.workspace_key, gid),
        fetch="one",
    )
    if row is None:
        raise _not_found("grant", gid)
    return row  # type: ignore[no-any-return]


def get_grant_op(owner: Owner, gid: str) -> Op[Grant]:
    """A grant of exactly this owner (NotFoundError otherwise)."""
    return grant_from_row((yield from _grant_row(owner, gid, lock=False)))


def _proposal_kind(owner: Owner, row: dict[str, Any]) -> Op[str]:
    op = row["operation"]
    if op == "add":
        return str(row["args"]["kind"])
    if op in ("set_preference", "delete_preference"):
        return "preference"
    if op == "patch_profile":
        return "profile"
    try:
        rec = yield from get_record_op(owner, row["target_id"])
    except NotFoundError:
        return ""
    return rec.kind


def grant_covers(grant: dict[str, Any], row: dict[str, Any]) -> bool:
    """Whether a grant's scope covers a proposal's identity (the grant scope rule).

    A grant belongs to exactly one principal (user, workspace, agent). It covers a proposal
    only when the proposal's identity is at the grant's own level or narrower: when the grant
    has a workspace, the proposal must be at that workspace; when it has an agent, at that
    agent. So a grant of a workspace or agent principal never approves a user-level write
    (nor the profile), which every other workspace and agent of the user would see.
    """
    return all(not grant[k] or row[k] == grant[k] for k in ("agent_key", "workspace_key"))


def decide_with_grant_op(
    owner: Owner, pid: str, gid: str, *, clock: Clock, limits: Limits
) -> Op[CommitResult | None]:
    """Approve under a grant when it allows it; else ``None`` and the proposal stays pending."""
    grant = yield from _grant_row(owner, gid, lock=True)
    row = yield from _lock_for_decision(owner, _id("proposal", pid), apply=True)
    if row is None:
        raise _not_found("proposal", pid)
    if row["status"] != "pending":
        return commit_result_from_json(row["result"])
    now = clock()
    size = len(v.guard_text(row["operation"], row["args"]).encode("utf-8"))
    kind = yield from _proposal_kind(owner, row)
    if (
        now >= grant["expires_at"]
        or grant["revoked_at"] is not None
        or grant["used_mutations"] >= grant["max_mutations"]
        or grant["used_bytes"] + size > grant["max_bytes"]
        or row["operation"] not in grant["operations"]
        or kind not in grant["kinds"]
        or not grant_covers(grant, row)
    ):
        return None
    actor = v.text("actor", f"grant:{gid}", max_bytes=256)
    res = yield from _decide(
        owner, row, "approve", None, None, actor, clock, limits, "agent-observed"
    )
    if res.status == "approved" and res.write_status != "UNCHANGED":
        yield Query(
            "UPDATE mg_grants SET used_mutations = used_mutations + 1, "
            "used_bytes = used_bytes + %s WHERE scope_id = %s AND id = %s",
            (size, grant["scope_id"], grant["id"]),
            fetch="none",
        )
    return res
