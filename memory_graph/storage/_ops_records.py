"""Generator ops that apply one approved record write (the commit path), with its audit rows.

Preferences and the profile have their own apply ops in :mod:`._ops_prefs`.

Only :mod:`._ops_proposals` calls these: nothing else writes memory. Each ``apply_*`` takes
the row lock it needs, re-checks the base version (compare-and-set) and returns an
:class:`Outcome`; a lost compare-and-set is the outcome ``conflicted``, never a partial write.
"""

from __future__ import annotations

import hashlib
import unicodedata
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from .._identity import Identity, Owner
from .._types import Limits, Record, Trust, WriteStatus
from ..errors import LimitExceededError, NotFoundError, ValidationError
from ..tokenize import index_tokens
from ..validate import expiry
from ._driver import Op, Query
from ._rows import RECORD_COLS, jsonable, knowledge_from_json, record_from_row, visible

__all__ = [
    "CommitContext",
    "Outcome",
    "apply_add",
    "apply_remove",
    "apply_replace",
    "audit",
    "capacity",
    "content_hash",
    "drop_tokens",
    "lock",
    "reinforce_op",
    "reinforced_confidence",
    "set_tokens",
]


def content_hash(content: str) -> str:
    """SHA-256 (hex) of the NFKC-normalised content."""
    return hashlib.sha256(unicodedata.normalize("NFKC", content).encode("utf-8")).hexdigest()


def reinforced_confidence(c: float) -> float:
    """A repeat mention raises confidence: ``c + (1 - c) * 0.25``, capped at 1."""
    return min(1.0, c + (1.0 - c) * 0.25)


@dataclass(frozen=True)
class CommitContext:
    """Who commits, when, and with which trust and provenance."""

    owner: Owner
    identity: Identity
    now: datetime
    actor: str
    proposal_id: str | None
    trust: Trust
    evidence: dict[str, Any]
    limits: Limits

    @property
    def updated_at(self) -> datetime:
        """Event time: ``evidence.observed_at`` when given, else now."""
        raw = self.evidence.get("observed_at")
        return datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else self.now

    @property
    def source(self) -> str:
        """``evidence.source``, else ``api`` for trusted writes, else ``conversation``."""
        default = "api" if self.actor == "api" else "conversation"
        return str(self.evidence.get("source") or default)


@dataclass(frozen=True)
class Outcome:
    """What an apply op did: ``approved`` with a write status, or ``conflicted``."""

    status: str
    write_status: WriteStatus | None = None
    record_id: str | None = None
    version: int | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def lock(*parts: str) -> Op[None]:
    """A transaction-scoped advisory lock on ``parts`` (re-entrant within a transaction)."""
    yield Query(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        ("\x1f".join(parts),),
        fetch="none",
    )


def audit(
    ctx: CommitContext,
    ident: Identity,
    target_kind: str,
    target_id: str | None,
    action: str,
    before: Any,
    after: Any,
    version: int | None,
) -> Op[None]:
    """Append one audit row in the current transaction."""
    yield Query(
        "INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, target_id, "
        "action, before, after, version, proposal_id, actor, at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            ident.scope_id,
            ident.agent_key,
            ident.workspace_key,
            target_kind,
            target_id,
            action,
            Jsonb(jsonable(before)) if before is not None else None,
            Jsonb(jsonable(after)) if after is not None else None,
            version,
            ctx.proposal_id,
            ctx.actor,
            ctx.now,
        ),
        fetch="none",
    )


def set_tokens(scope: str, record_id: str, content: str, knowledge: Any) -> Op[None]:
    tokens = sorted(set(index_tokens(content, knowledge_from_json(knowledge))))
    yield Query(
        "UPDATE mg_records SET tokens = %s WHERE scope_id = %s AND id = %s",
        (tokens, scope, record_id),
        fetch="none",
    )
    yield Query(
        "DELETE FROM mg_record_tokens WHERE scope_id = %s AND record_id = %s",
        (scope, record_id),
        fetch="none",
    )
    if tokens:
        yield Query(
            "INSERT INTO mg_record_tokens (scope_id, token, record_id) "
            "SELECT %s, t, %s FROM unnest(%s::text[]) AS t",
            (scope, record_id, tokens),
            fetch="none",
        )


def drop_tokens(scope: str, record_id: str) -> Op[None]:
    yield Query(
        "DELETE FROM mg_record_tokens WHERE scope_id = %s AND record_id = %s",
        (scope, record_id),
        fetch="none",
    )


def capacity(ctx: CommitContext, ident: Identity) -> Op[None]:
    row = yield Query(
        "SELECT count(*) AS n FROM mg_records WHERE scope_id = %s AND agent_key = %s "
        "AND workspace_key = %s AND status = 'active' "
        "AND (expires_at IS NULL OR expires_at > %s)",
        (ident.scope_id, ident.agent_key, ident.workspace_key, ctx.now),
        fetch="one",
    )
    cap = ctx.limits.max_records_per_identity
    if row["n"] >= cap:
        raise LimitExceededError(
            f"identity {ident.level!r} already holds {cap} active records, the limit: "
            "remove some records first or raise Limits.max_records_per_identity"
        )


def _locked_record(owner: Owner, record_id: str) -> Op[Record]:
    cond, params = visible(owner)
    try:
        uuid.UUID(record_id)
    except (ValueError, TypeError, AttributeError):
        raise NotFoundError(f"record {record_id!r} not found for this owner") from None
    row = yield Query(
        f"SELECT {RECORD_COLS} FROM mg_records WHERE {cond} AND id = %s FOR UPDATE",
        (*params, record_id),
        fetch="one",
    )
    if row is None:
        raise NotFoundError(f"record {record_id!r} not found for this owner")
    return record_from_row(row)


def _record_state(r: Record) -> dict[str, Any]:
    return {
        "kind": r.kind,
        "key": r.key,
        "content": r.content,
        "status": r.status,
        "confidence": r.confidence,
        "expires_at": r.expires_at,
        "version": r.version,
    }


def apply_add(ctx: CommitContext, args: dict[str, Any]) -> Op[Outcome]:
    """Insert a record, or reinforce an active duplicate (same hash + knowledge + identity)."""
    ident = ctx.identity
    updated_at = ctx.updated_at
    exp = expiry(args.get("expires_at"), max(updated_at, ctx.now))
    knowledge = args.get("knowledge")
    chash = content_hash(args["content"])
    # Serialises adds per identity: the capacity count and duplicate check stay exact.
    yield from lock("records", ident.scope_id, ident.agent_key, ident.workspace_key)
    dup = yield Query(
        f"SELECT {RECORD_COLS} FROM mg_records WHERE scope_id = %s AND agent_key = %s "
        "AND workspace_key = %s AND content_hash = %s AND status = 'active' "
        "AND (expires_at IS NULL OR expires_at > %s) "
        "AND knowledge IS NOT DISTINCT FROM %s::jsonb ORDER BY created_at, id LIMIT 1 FOR UPDATE",
        (
            ident.scope_id,
            ident.agent_key,
            ident.workspace_key,
            chash,
            ctx.now,
            Jsonb(knowledge) if knowledge is not None else None,
        ),
        fetch="one",
    )
    if dup is not None:
        r = record_from_row(dup)
        conf = reinforced_confidence(r.confidence)
        yield Query(
            "UPDATE mg_records SET confidence = %s WHERE scope_id = %s AND id = %s",
            (conf, r.identity.scope_id, r.id),
            fetch="none",
        )
        yield from audit(
            ctx,
            ident,
            "record",
            r.id,
            "reinforce",
            {"confidence": r.confidence},
            {"confidence": conf},
            r.version,
        )
        return Outcome(
            "approved",
            "UNCHANGED",
            r.id,
            r.version,
            "duplicate: confidence raised",
            {"confidence": conf},
        )
    yield from capacity(ctx, ident)
    rid = str(uuid.uuid4())
    ev = ctx.evidence
    conf = args.get("confidence", 1.0 if ctx.trust == "user-confirmed" else 0.7)
    claim = (knowledge or {}).get("claim") or {}
    yield Query(
        "INSERT INTO mg_records (scope_id, id, level, agent_key, workspace_key, kind, key, "
        "content, trust, sensitivity, confidence, source, source_event_id, observed_at, quote, "
        "thread_id, uri, knowledge, claim_key, claim_value, expires_at, content_hash, "
        "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            ident.scope_id,
            rid,
            ident.level,
            ident.agent_key,
            ident.workspace_key,
            args["kind"],
            args.get("key"),
            args["content"],
            ctx.trust,
            args.get("sensitivity", "private"),
            conf,
            ctx.source,
            ev.get("source_event_id"),
            ev.get("observed_at"),
            ev.get("quote"),
            ev.get("thread_id"),
            ev.get("uri"),
            Jsonb(knowledge) if knowledge else None,
            claim.get("key"),
            claim.get("value"),
            exp,
            chash,
            updated_at,
            updated_at,
        ),
        fetch="none",
    )
    yield from set_tokens(ident.scope_id, rid, args["content"], knowledge)
    after = {**args, "trust": ctx.trust, "confidence": conf, "status": "active"}
    yield from audit(ctx, ident, "record", rid, "create", None, after, 1)
    return Outcome("approved", "CREATED", rid, 1)


def apply_replace(
    ctx: CommitContext, record_id: str, base_version: int | None, args: dict[str, Any]
) -> Op[Outcome]:
    """Compare-and-set replace of a record's content, knowledge and expiry."""
    r = yield from _locked_record(ctx.owner, record_id)
    if r.status != "active" or r.version != base_version:
        return Outcome(
            "conflicted",
            None,
            r.id,
            r.version,
            f"record changed since version {base_version} (now {r.version}, "
            f"{r.status}): the newer value stays",
            {"reason": "version"},
        )
    updated_at = max(ctx.updated_at, r.updated_at)
    exp = expiry(args.get("expires_at"), max(updated_at, ctx.now))
    knowledge = args.get("knowledge")
    claim = (knowledge or {}).get("claim") or {}
    version = r.version + 1
    yield Query(
        "UPDATE mg_records SET content = %s, knowledge = %s, claim_key = %s, claim_value = %s, "
        "expires_at = %s, content_hash = %s, version = %s, updated_at = %s, recorded_at = now() "
        "WHERE scope_id = %s AND id = %s",
        (
            args["content"],
            Jsonb(knowledge) if knowledge else None,
            claim.get("key"),
            claim.get("value"),
            exp,
            content_hash(args["content"]),
            version,
            updated_at,
            r.identity.scope_id,
            r.id,
        ),
        fetch="none",
    )
    yield from set_tokens(r.identity.scope_id, r.id, args["content"], knowledge)
    yield from audit(
        ctx,
        r.identity,
        "record",
        r.id,
        "replace",
        _record_state(r),
        {**args, "version": version},
        version,
    )
    return Outcome("approved", "UPDATED", r.id, version)


def apply_remove(ctx: CommitContext, record_id: str, base_version: int | None) -> Op[Outcome]:
    """Compare-and-set removal: a status change, never a hard delete."""
    r = yield from _locked_record(ctx.owner, record_id)
    if r.status != "active" or r.version != base_version:
        return Outcome(
            "conflicted",
            None,
            r.id,
            r.version,
            f"record changed since version {base_version} (now {r.version}, "
            f"{r.status}): the newer value stays",
            {"reason": "version"},
        )
    version = r.version + 1
    yield Query(
        "UPDATE mg_records SET status = 'removed', version = %s, recorded_at = now() "
        "WHERE scope_id = %s AND id = %s",
        (version, r.identity.scope_id, r.id),
        fetch="none",
    )
    yield from drop_tokens(r.identity.scope_id, r.id)
    yield from audit(
        ctx,
        r.identity,
        "record",
        r.id,
        "remove",
        _record_state(r),
        {"status": "removed", "version": version},
        version,
    )
    return Outcome("approved", "DELETED", r.id, version)


def reinforce_op(owner: Owner, record_id: str, *, clock: Any, limits: Limits) -> Op[Record]:
    """Raise an active record's confidence (a repeat mention), audited as actor ``api``."""
    r = yield from _locked_record(owner, record_id)
    now = clock()
    if not r.is_active(now):
        raise ValidationError(f"record {record_id} is not active: only active records reinforce")
    ctx = CommitContext(owner, r.identity, now, "api", None, r.trust, {}, limits)
    conf = reinforced_confidence(r.confidence)
    yield Query(
        "UPDATE mg_records SET confidence = %s WHERE scope_id = %s AND id = %s",
        (conf, r.identity.scope_id, r.id),
        fetch="none",
    )
    yield from audit(
        ctx,
        r.identity,
        "record",
        r.id,
        "reinforce",
        {"confidence": r.confidence},
        {"confidence": conf},
        r.version,
    )
    row = yield Query(
        f"SELECT {RECORD_COLS} FROM mg_records WHERE scope_id = %s AND id = %s",
        (r.identity.scope_id, r.id),
        fetch="one",
    )
    return record_from_row(row)
