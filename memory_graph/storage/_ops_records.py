"""Generator ops that apply one approved write (the commit path) and append its audit rows.

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
from .._time import format_utc
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
    "apply_delete_preference",
    "apply_patch_profile",
    "apply_remove",
    "apply_replace",
    "apply_set_preference",
    "audit",
    "content_hash",
    "lock",
    "reinforce_op",
    "reinforced_confidence",
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


def _set_tokens(scope: str, record_id: str, content: str, knowledge: Any) -> Op[None]:
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


def _drop_tokens(scope: str, record_id: str) -> Op[None]:
    yield Query(
        "DELETE FROM mg_record_tokens WHERE scope_id = %s AND record_id = %s",
        (scope, record_id),
        fetch="none",
    )


def _capacity(ctx: CommitContext, ident: Identity) -> Op[None]:
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
    yield from _capacity(ctx, ident)
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
    yield from _set_tokens(ident.scope_id, rid, args["content"], knowledge)
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
    yield from _set_tokens(r.identity.scope_id, r.id, args["content"], knowledge)
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
    yield from _drop_tokens(r.identity.scope_id, r.id)
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


def _pref_row(ident: Identity, key: str) -> Op[dict[str, Any] | None]:
    row = yield Query(
        f"SELECT {RECORD_COLS} FROM mg_records WHERE scope_id = %s AND agent_key = %s "
        "AND workspace_key = %s AND kind = 'preference' AND key = %s FOR UPDATE",
        (ident.scope_id, ident.agent_key, ident.workspace_key, key),
        fetch="one",
    )
    return row  # type: ignore[no-any-return]


def _pref_state(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None or row["status"] != "active":
        return None
    return {
        "value": row["content"],
        "source": row["source"],
        "source_event_id": row["source_event_id"],
        "expires_at": row["expires_at"],
        "updated_at": row["updated_at"],
        "revision": row["version"],
    }


def lock_preference(ident: Identity, key: str) -> Op[None]:
    """The advisory lock serialising writes of one (identity, preference key)."""
    yield from lock("pref", ident.scope_id, ident.agent_key, ident.workspace_key, key)


def apply_set_preference(
    ctx: CommitContext, base_version: int | None, args: dict[str, Any]
) -> Op[Outcome]:
    """Seed semantics (DESIGN §3): UNCHANGED / CREATED / UPDATED, stale writes conflicted."""
    ident, key, value = ctx.identity, args["key"], args["value"]
    yield from lock_preference(ident, key)
    row = yield from _pref_row(ident, key)
    current = 0 if row is None else int(row["version"])
    updated_at = ctx.updated_at
    exp = expiry(args.get("expires_at"), updated_at)
    state = _pref_state(row)
    ev = ctx.evidence
    if state is not None and (
        state["value"] == value
        and state["source"] == ctx.source
        and state["expires_at"] == exp
        and state["source_event_id"] == ev.get("source_event_id")
    ):
        return Outcome(
            "approved",
            "UNCHANGED",
            str(row["id"]) if row else None,
            current,
            "same value, source, expiry and event: nothing written",
            {"key": key, "value": value},
        )
    if base_version is not None and current != base_version:
        return Outcome(
            "conflicted",
            None,
            None,
            current,
            f"preference {key} changed since revision {base_version} (now {current})"
            ": the newer value stays",
            {"reason": "version", "key": key},
        )
    if row is not None and updated_at <= row["updated_at"]:
        return Outcome(
            "conflicted",
            None,
            str(row["id"]),
            current,
            f"stale write: updated_at {format_utc(updated_at)} is not later than the "
            f"stored {format_utc(row['updated_at'])} for preference {key}",
            {"reason": "stale", "key": key},
        )
    common = (
        value,
        ctx.trust,
        ctx.source,
        ev.get("source_event_id"),
        ev.get("observed_at"),
        ev.get("quote"),
        ev.get("thread_id"),
        ev.get("uri"),
        exp,
        content_hash(value),
        updated_at,
    )
    status: WriteStatus
    if row is None:
        yield from _capacity(ctx, ident)
        rid = str(uuid.uuid4())
        yield Query(
            "INSERT INTO mg_records (content, trust, source, source_event_id, observed_at, quote, "
            "thread_id, uri, expires_at, content_hash, updated_at, scope_id, id, level, "
            "agent_key, workspace_key, kind, key, sensitivity, confidence, created_at) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 'preference', %s, "
            "'private', 1.0, %s)",
            (
                *common,
                ident.scope_id,
                rid,
                ident.level,
                ident.agent_key,
                ident.workspace_key,
                key,
                updated_at,
            ),
            fetch="none",
        )
        version, status = 1, "CREATED"
    else:
        rid, version = str(row["id"]), current + 1
        if state is None:
            yield from _capacity(ctx, ident)
        yield Query(
            "UPDATE mg_records SET content = %s, trust = %s, source = %s, source_event_id = %s, "
            "observed_at = %s, quote = %s, thread_id = %s, uri = %s, expires_at = %s, "
            "content_hash = %s, updated_at = %s, status = 'active', version = %s, "
            "recorded_at = now() WHERE scope_id = %s AND id = %s",
            (*common, version, ident.scope_id, rid),
            fetch="none",
        )
        status = "CREATED" if state is None else "UPDATED"
    yield from _set_tokens(ident.scope_id, rid, value, None)
    after = {
        "value": value,
        "source": ctx.source,
        "source_event_id": ev.get("source_event_id"),
        "expires_at": exp,
        "updated_at": updated_at,
        "revision": version,
    }
    yield from audit(ctx, ident, "preference", key, "set", _pref_state(row), after, version)
    return Outcome(
        "approved",
        status,
        rid,
        version,
        "",
        {"key": key, "value": value, "previous_value": state["value"] if state else None},
    )


def apply_delete_preference(
    ctx: CommitContext, base_version: int | None, args: dict[str, Any]
) -> Op[Outcome]:
    """Delete a key: DELETED with the previous value, or UNCHANGED (revision 0) if missing."""
    ident, key = ctx.identity, args["key"]
    yield from lock_preference(ident, key)
    row = yield from _pref_row(ident, key)
    state = _pref_state(row)
    if state is None or row is None:
        return Outcome(
            "approved", "UNCHANGED", None, 0, f"preference {key} is not set", {"key": key}
        )
    current = int(row["version"])
    if base_version is not None and current != base_version:
        return Outcome(
            "conflicted",
            None,
            None,
            current,
            f"preference {key} changed since revision {base_version} (now {current})"
            ": the newer value stays",
            {"reason": "version", "key": key},
        )
    updated_at = max(ctx.updated_at, row["updated_at"])
    version = current + 1
    yield Query(
        "UPDATE mg_records SET status = 'removed', version = %s, updated_at = %s, "
        "recorded_at = now() WHERE scope_id = %s AND id = %s",
        (version, updated_at, ident.scope_id, row["id"]),
        fetch="none",
    )
    yield from _drop_tokens(ident.scope_id, str(row["id"]))
    yield from audit(ctx, ident, "preference", key, "delete", state, None, version)
    return Outcome(
        "approved",
        "DELETED",
        str(row["id"]),
        version,
        "",
        {"key": key, "previous_value": state["value"]},
    )


def lock_profile(scope: str) -> Op[None]:
    """The advisory lock serialising profile patches of one user."""
    yield from lock("profile", scope)


def apply_patch_profile(
    ctx: CommitContext, base_version: int | None, args: dict[str, Any]
) -> Op[Outcome]:
    """Patch semantics: only named fields change; ``None`` deletes; identical is unchanged."""
    scope = ctx.owner.scope_id
    yield from lock_profile(scope)
    row = yield Query(
        "SELECT fields, revision, updated_at FROM mg_profiles WHERE scope_id = %s FOR UPDATE",
        (scope,),
        fetch="one",
    )
    fields: dict[str, str] = dict(row["fields"]) if row else {}
    current = int(row["revision"]) if row else 0
    patch: dict[str, str | None] = args["patch"]
    changed = sorted(k for k, v in patch.items() if fields.get(k) != v)
    unchanged = sorted(k for k in patch if k not in changed)
    details = {"changed": changed, "unchanged": unchanged}
    if not changed:
        return Outcome("approved", "UNCHANGED", None, current, "", details)
    if base_version is not None and current != base_version:
        return Outcome(
            "conflicted",
            None,
            None,
            current,
            f"profile changed since revision {base_version} (now {current}): the newer value stays",
            {**details, "reason": "version"},
        )
    new = dict(fields)
    for k in changed:
        if patch[k] is None:
            new.pop(k, None)
        else:
            new[k] = patch[k]  # type: ignore[assignment]
    version = current + 1
    updated_at = (
        ctx.updated_at
        if row is None or row["updated_at"] is None
        else max(ctx.updated_at, row["updated_at"])
    )
    yield Query(
        "INSERT INTO mg_profiles (scope_id, fields, revision, updated_at) "
        "VALUES (%s, %s, %s, %s) ON CONFLICT (scope_id) DO UPDATE SET fields = EXCLUDED.fields, "
        "revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at, recorded_at = now()",
        (scope, Jsonb(new), version, updated_at),
        fetch="none",
    )
    user = ctx.owner.identity("user")
    yield from audit(
        ctx, user, "profile", None, "patch", {"fields": fields}, {"fields": new}, version
    )
    return Outcome("approved", "CREATED" if row is None else "UPDATED", None, version, "", details)


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
