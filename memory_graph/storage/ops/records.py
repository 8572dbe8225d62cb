"""Generator ops that apply one approved record write (the commit path), with its audit rows.

Preferences and the profile have their own apply ops in :mod:`~.prefs`.

Only :mod:`~.proposals` calls these: nothing else writes memory. Each ``apply_*`` reads
its target under the lock it needs, re-checks the base version (compare-and-set) and returns
an :class:`Outcome`; a lost compare-and-set is the outcome ``conflicted``, never a partial
write. The writes an outcome still has to make (``Outcome.writes``, ``Outcome.audits``) are
sent by the commit path in the same statement as the proposal's final state
(:func:`~.commit.statement`), so a commit costs as few round trips as possible.
"""

from __future__ import annotations

import hashlib
import unicodedata
import uuid
from typing import Any

from psycopg.types.json import Jsonb

from ...errors import NotFoundError, ValidationError
from ...identity import Owner
from ...recall.tokenize import index_tokens
from ...types import Limits, Record
from ...validate import event_id, expiry, short
from ...validate import record_id as valid_record_id
from ..driver import Op, Query
from .commit import (
    AUDIT_INSERT,
    AUDIT_VALUES,
    CommitContext,
    Locked,
    Outcome,
    active_count_sql,
    audit_row,
    below_capacity_sql,
    check_capacity,
)
from .rows import RECORD_COLS, jsonb, knowledge_from_json, record_from_row, visible

__all__ = [
    "apply_add",
    "apply_remove",
    "apply_replace",
    "content_hash",
    "locked_record",
    "record_tokens",
    "reinforce_op",
    "reinforced_confidence",
]


def content_hash(content: str) -> str:
    """SHA-256 (hex) of the NFKC-normalised content."""
    return hashlib.sha256(unicodedata.normalize("NFKC", content).encode("utf-8")).hexdigest()


def reinforced_confidence(c: float) -> float:
    """A repeat mention raises confidence: ``c + (1 - c) * 0.25``, capped at 1."""
    return min(1.0, c + (1.0 - c) * 0.25)


def record_tokens(content: str, knowledge: Any, key: str | None = None) -> list[str]:
    """The sorted, distinct index tokens of a record (what ``mg_records.tokens`` holds)."""
    return sorted(set(index_tokens(content, knowledge_from_json(knowledge), key)))


def locked_record(owner: Owner, record_id: str) -> Op[Record]:
    """A record visible to the owner, locked ``FOR UPDATE`` (NotFoundError otherwise)."""
    cond, params = visible(owner)
    try:
        record_id = valid_record_id(record_id)
    except ValidationError:
        raise NotFoundError(f"record {short(record_id)} not found for this owner") from None
    row = yield Query(
        f"SELECT {RECORD_COLS} FROM mg_records WHERE {cond} AND id = %s FOR UPDATE",
        (*params, record_id),
        fetch="one",
    )
    if row is None:
        raise NotFoundError(f"record {short(record_id)} not found for this owner")
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


def _set_confidence(r: Record, conf: float) -> Query:
    return Query(
        "UPDATE mg_records SET confidence = %s WHERE scope_id = %s AND id = %s",
        (conf, r.identity.scope_id, r.id),
        fetch="none",
    )


def apply_add(ctx: CommitContext, args: dict[str, Any], *, optimistic: bool = False) -> Op[Outcome]:
    """Insert a record, or reinforce an active duplicate (same hash + knowledge + identity).

    The caller holds the identity's ``records`` advisory lock (adds are serialised per
    identity), so the capacity count and the duplicate check stay exact. ``optimistic``
    reads nothing: the insert is guarded by "no duplicate and below capacity", checked in
    the commit statement itself; when the guard fails the caller applies again without it.
    """
    ident = ctx.identity
    updated_at = ctx.updated_at
    exp = expiry(args.get("expires_at"), max(updated_at, ctx.now))
    knowledge = args.get("knowledge")
    chash = content_hash(args["content"])
    count_sql, count_params = active_count_sql(ident, ctx.now)
    dup_where = (
        "FROM mg_records WHERE scope_id = %s AND agent_key = %s AND workspace_key = %s "
        "AND content_hash = %s AND status = 'active' AND (expires_at IS NULL OR expires_at > %s) "
        "AND knowledge IS NOT DISTINCT FROM %s::jsonb"
    )
    dup_params = (
        ident.scope_id,
        ident.agent_key,
        ident.workspace_key,
        chash,
        ctx.now,
        Jsonb(knowledge) if knowledge is not None else None,
    )
    guard: Query | None = None
    if optimistic:
        below, below_params = below_capacity_sql(
            ident, ctx.now, ctx.limits.max_records_per_identity
        )
        guard = Query(
            f"NOT EXISTS (SELECT 1 {dup_where}) AND {below}", (*dup_params, *below_params)
        )
    else:
        row = yield Query(
            f"SELECT c.active_n, d.* FROM (SELECT {count_sql} AS active_n) c LEFT JOIN LATERAL "
            f"(SELECT {RECORD_COLS} {dup_where} ORDER BY created_at, id LIMIT 1 FOR UPDATE) d "
            "ON true",
            (*count_params, *dup_params),
            fetch="one",
        )
        if row["id"] is not None:
            r = record_from_row(row)
            conf = reinforced_confidence(r.confidence)
            return Outcome(
                "approved",
                "UNCHANGED",
                r.id,
                r.version,
                "duplicate: confidence raised",
                {"confidence": conf},
                writes=(_set_confidence(r, conf),),
                audits=(
                    audit_row(
                        ctx,
                        ident,
                        "record",
                        r.id,
                        "reinforce",
                        {"confidence": r.confidence},
                        {"confidence": conf},
                        r.version,
                    ),
                ),
            )
        yield from check_capacity(ctx, ident, row["active_n"])
    rid = str(uuid.uuid4())
    ev = ctx.evidence
    conf = args.get("confidence", 1.0 if ctx.trust == "user-confirmed" else 0.7)
    claim = (knowledge or {}).get("claim") or {}
    tokens = record_tokens(args["content"], knowledge, args.get("key"))
    # One jsonb parameter for the row (see _AUDIT_RECORDSET): the commit statement of an
    # approval stays within psycopg's query cache.
    row_json = {
        "scope_id": ident.scope_id,
        "id": rid,
        "level": ident.level,
        "agent_key": ident.agent_key,
        "workspace_key": ident.workspace_key,
        "kind": args["kind"],
        "key": args.get("key"),
        "content": args["content"],
        "trust": ctx.trust,
        "sensitivity": args.get("sensitivity", "private"),
        "confidence": conf,
        "source": ctx.source,
        "source_event_id": ev.get("source_event_id"),
        "observed_at": ev.get("observed_at"),
        "quote": ev.get("quote"),
        "thread_id": ev.get("thread_id"),
        "uri": ev.get("uri"),
        "knowledge": knowledge or None,
        "claim_key": claim.get("key"),
        "claim_value": claim.get("value"),
        "expires_at": exp,
        "content_hash": chash,
        "tokens": tokens,
        "created_at": updated_at,
        "updated_at": updated_at,
    }
    cols = ", ".join(row_json)
    insert = Query(
        f"INSERT INTO mg_records ({cols}) SELECT {cols} "
        "FROM jsonb_populate_record(NULL::mg_records, %s) WHERE {ok}",
        (jsonb(row_json),),
        fetch="none",
    )
    writes = (insert,)
    after = {**args, "trust": ctx.trust, "confidence": conf, "status": "active"}
    return Outcome(
        "approved",
        "CREATED",
        rid,
        1,
        writes=writes,
        audits=(audit_row(ctx, ident, "record", rid, "create", None, after, 1),),
        guard=guard,
    )


def _stale(r: Record, base_version: int | None) -> Outcome | None:
    if r.status == "active" and r.version == base_version:
        return None
    return Outcome(
        "conflicted",
        None,
        r.id,
        r.version,
        f"record changed since version {base_version} (now {r.version}, "
        f"{r.status}): the newer value stays",
        {"reason": "version"},
    )


def apply_replace(
    ctx: CommitContext,
    record_id: str,
    base_version: int | None,
    args: dict[str, Any],
    locked: Locked | None = None,
) -> Op[Outcome]:
    """Compare-and-set replace of a record's content, knowledge and expiry."""
    r = locked.row if locked else (yield from locked_record(ctx.owner, record_id))
    conflict = _stale(r, base_version)
    if conflict is not None:
        return conflict
    updated_at = max(ctx.updated_at, r.updated_at)
    exp = expiry(args.get("expires_at"), max(updated_at, ctx.now))
    knowledge = args.get("knowledge")
    claim = (knowledge or {}).get("claim") or {}
    version = r.version + 1
    scope = r.identity.scope_id
    tokens = record_tokens(args["content"], knowledge, r.key)
    update = Query(
        "UPDATE mg_records SET content = %s, knowledge = %s, claim_key = %s, "
        "claim_value = %s, expires_at = %s, content_hash = %s, tokens = %s, "
        "version = %s, updated_at = %s, recorded_at = now() "
        "WHERE scope_id = %s AND id = %s",
        (
            args["content"],
            Jsonb(knowledge) if knowledge else None,
            claim.get("key"),
            claim.get("value"),
            exp,
            content_hash(args["content"]),
            tokens,
            version,
            updated_at,
            scope,
            r.id,
        ),
    )
    return Outcome(
        "approved",
        "UPDATED",
        r.id,
        version,
        writes=(update,),
        audits=(
            audit_row(
                ctx,
                r.identity,
                "record",
                r.id,
                "replace",
                _record_state(r),
                {**args, "version": version},
                version,
            ),
        ),
    )


def apply_remove(
    ctx: CommitContext, record_id: str, base_version: int | None, locked: Locked | None = None
) -> Op[Outcome]:
    """Compare-and-set removal: a status change, never a hard delete."""
    r = locked.row if locked else (yield from locked_record(ctx.owner, record_id))
    conflict = _stale(r, base_version)
    if conflict is not None:
        return conflict
    version = r.version + 1
    scope = r.identity.scope_id
    return Outcome(
        "approved",
        "DELETED",
        r.id,
        version,
        writes=(
            Query(
                "UPDATE mg_records SET status = 'removed', version = %s, recorded_at = now() "
                "WHERE scope_id = %s AND id = %s",
                (version, scope, r.id),
            ),
        ),
        audits=(
            audit_row(
                ctx,
                r.identity,
                "record",
                r.id,
                "remove",
                _record_state(r),
                {"status": "removed", "version": version},
                version,
            ),
        ),
    )


def reinforce_op(
    owner: Owner,
    record_id: str,
    *,
    source_event_id: str | None = None,
    clock: Any,
    limits: Limits,
) -> Op[Record]:
    """Raise an active record's confidence (a repeat mention), audited as actor ``api``.

    With ``source_event_id`` it is idempotent per event: the same mention (a node re-run,
    a retried turn) raises confidence once; the audit row records the event id.
    """
    r = yield from locked_record(owner, record_id)
    now = clock()
    if not r.is_active(now):
        raise ValidationError(f"record {record_id} is not active: only active records reinforce")
    after: dict[str, Any] = {}
    if source_event_id is not None:
        source_event_id = event_id("source_event_id", source_event_id)
        seen = yield Query(
            "SELECT 1 FROM mg_audit WHERE scope_id = %s AND target_id = %s "
            "AND action = 'reinforce' AND after->>'source_event_id' = %s LIMIT 1",
            (r.identity.scope_id, r.id, source_event_id),
            fetch="one",
        )
        if seen is not None:
            return r
        after["source_event_id"] = source_event_id
    ctx = CommitContext(owner, r.identity, now, "api", None, r.trust, {}, limits)
    conf = reinforced_confidence(r.confidence)
    row = yield Query(
        f"WITH w0 AS ({AUDIT_INSERT}{AUDIT_VALUES}) UPDATE mg_records SET confidence = %s "
        f"WHERE scope_id = %s AND id = %s RETURNING {RECORD_COLS}",
        (
            *audit_row(
                ctx,
                r.identity,
                "record",
                r.id,
                "reinforce",
                {"confidence": r.confidence},
                {"confidence": conf, **after},
                r.version,
            ),
            conf,
            r.identity.scope_id,
            r.id,
        ),
        fetch="one",
    )
    return record_from_row(row)
