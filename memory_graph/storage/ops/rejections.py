"""Approval that can wait: remembered rejections, and recently expired proposals.

Remembered rejections: what a person said "no" to is not proposed again for a while (a
policy's automatic rejection is a rule, not news, and is not remembered).

When a proposal is rejected, its fingerprint is stored in ``mg_rejections`` with an expiry
(``Limits.rejection_ttl``). Proposing a write with the same fingerprint before that expiry
returns the rejected proposal instead of a new one. The fingerprint covers the target
identity (level, agent and workspace digests), the operation, the target (record id or
preference key) and the args with text folded (NFKC, case, whitespace) and without the
fields that do not change what is remembered (``expires_at``, ``confidence``), so "I like
jazz" rejected blocks "i like  JAZZ" but not "I like blues".

Recently expired proposals: the inbox shows proposals whose lifetime ran out undecided
(``Limits.expired_window``), so a late reviewer learns they expired instead of finding an
empty inbox.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import replace
from datetime import datetime
from typing import Any

from ... import validate as v
from ...identity import Identity, Owner
from ...proposals import canonical_json
from ...time import Clock
from ...types import Limits, Proposal
from ..driver import Op, Query
from .rows import proposal_from_row, visible

__all__ = [
    "list_expired_op",
    "rejection_fingerprint",
    "remember_rejection_op",
]

_IGNORED = ("expires_at", "confidence")


def _fold(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    if isinstance(value, dict):
        return {k: _fold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fold(v) for v in value]
    return value


def rejection_fingerprint(
    operation: str, ident: Identity, target_id: str | None, args: dict[str, Any]
) -> str:
    """The fingerprint of a write, as remembered when it is rejected.

    >>> from memory_graph import Owner
    >>> i = Owner("a").identity("user")
    >>> a = rejection_fingerprint("add", i, None, {"kind": "fact", "content": "I like  Jazz"})
    >>> a == rejection_fingerprint("add", i, None, {"kind": "fact", "content": "i like jazz"})
    True
    """
    body = {
        "operation": operation,
        "level": ident.level,
        "agent_key": ident.agent_key,
        "workspace_key": ident.workspace_key,
        "target": target_id,
        "args": _fold({k: v for k, v in args.items() if k not in _IGNORED}),
    }
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()[:32]


def remember_rejection_op(row: dict[str, Any], now: datetime, limits: Limits) -> Op[None]:
    """Remember the rejected proposal ``row`` (an ``mg_proposals`` row) until the TTL ends."""
    ident = Identity(row["scope_id"], row["level"], row["agent_key"], row["workspace_key"])
    args = row["args"] or {}
    fingerprint = rejection_fingerprint(row["operation"], ident, row["target_id"], args)
    target_key = args.get("key") or row["target_id"]
    yield Query(
        "INSERT INTO mg_rejections (scope_id, fingerprint, agent_key, workspace_key, level, "
        "operation, target_key, proposal_id, rejected_at, expires_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (scope_id, fingerprint) DO UPDATE SET proposal_id = EXCLUDED.proposal_id, "
        "rejected_at = EXCLUDED.rejected_at, expires_at = EXCLUDED.expires_at",
        (
            row["scope_id"],
            fingerprint,
            row["agent_key"],
            row["workspace_key"],
            row["level"],
            row["operation"],
            target_key,
            row["id"],
            now,
            now + limits.rejection_ttl,
        ),
        fetch="none",
    )


def list_expired_op(
    owner: Owner, *, thread_id: str | None = None, clock: Clock, limits: Limits
) -> Op[list[Proposal]]:
    """Proposals of ``owner`` that expired undecided within ``limits.expired_window``.

    A pending proposal past its ``expires_at`` is reported with status ``expired`` (deciding
    it now would make it so); reads never write. Newest expiry first.
    """
    if thread_id is not None:
        thread_id = v.text("thread_id", thread_id, max_bytes=512)
    now = clock()
    cond, params = visible(owner)
    sql = (
        f"SELECT * FROM mg_proposals WHERE {cond} AND expires_at <= %s AND expires_at > %s "
        "AND status IN ('pending', 'expired')"
    )
    qargs: list[Any] = [*params, now, now - limits.expired_window]
    if thread_id is not None:
        sql += " AND thread_id = %s"
        qargs.append(thread_id)
    rows = yield Query(sql + " ORDER BY expires_at DESC, id", qargs)
    return [replace(proposal_from_row(r), status="expired") for r in rows]
