"""Apply ops for keyed preferences (seed semantics) and the profile (patch semantics).

Called only from the commit path in :mod:`~.proposals`, which holds the target's advisory
lock (:func:`lock_preference`, :func:`lock_profile`; re-entrant within the transaction) before
an op runs: a trusted write locks before it proposes, so the base version it reads is the one
it commits against.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from ...identity import Identity
from ...time import format_utc
from ...types import WriteStatus
from ...validate import expiry
from ..driver import Op, Query
from .commit import (
    CommitContext,
    Contended,
    Locked,
    Outcome,
    active_count_sql,
    audit_row,
    check_capacity,
    lock,
)
from .records import content_hash, record_tokens

__all__ = [
    "apply_delete_preference",
    "apply_patch_profile",
    "apply_set_preference",
    "lock_preference",
    "lock_profile",
    "pref_row",
    "profile_row",
]


_PREF_COLS = (
    "id::text AS id, status, version, content, source, source_event_id, expires_at, updated_at"
)
"""What a preference write reads of the key's row (the seed-semantics state, its version)."""


def pref_row(
    ident: Identity, key: str, now: datetime, *, count: bool, lock: bool = True
) -> Op[dict[str, Any]]:
    """The (identity, key) row locked, or all-``None`` columns; with ``count``, also the
    identity's active row count at ``now`` when the key is not active (for capacity).

    ``lock=False`` reads it without the row lock (an optimistic write, see
    :func:`apply_set_preference`)."""
    count_sql, count_params = active_count_sql(ident, now)
    for_update = " FOR UPDATE" if lock else ""
    row = yield Query(
        f"SELECT r.*, CASE WHEN %s AND r.status IS DISTINCT FROM 'active' THEN {count_sql} "
        "END AS active_n FROM (SELECT 1) one LEFT JOIN LATERAL "
        f"(SELECT {_PREF_COLS} FROM mg_records WHERE scope_id = %s AND agent_key = %s "
        f"AND workspace_key = %s AND kind = 'preference' AND key = %s{for_update}) r ON true",
        (count, *count_params, ident.scope_id, ident.agent_key, ident.workspace_key, key),
        fetch="one",
    )
    return row  # type: ignore[no-any-return]


def _pref_state(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None or row["id"] is None or row["status"] != "active":
        return None
    return {
        "value": row["content"],
        "source": row["source"],
        "source_event_id": row["source_event_id"],
        "expires_at": row["expires_at"],
        "updated_at": row["updated_at"],
        "revision": row["version"],
    }


_PREF_INSERT = (
    "INSERT INTO mg_records (content, trust, source, source_event_id, observed_at, quote, "
    "thread_id, uri, expires_at, content_hash, tokens, updated_at, scope_id, id, level, "
    "agent_key, workspace_key, kind, key, sensitivity, confidence, created_at)"
)
_PREF_VALUES = (
    "%s::text, %s::text, %s::text, %s::text, %s::timestamptz, %s::text, %s::text, %s::text, "
    "%s::timestamptz, %s::text, %s::text[], %s::timestamptz, %s::text, %s::uuid, %s::text, "
    "%s::text, %s::text, 'preference', %s::text, 'private', 1.0, %s::timestamptz"
)


def _same_row(ident: Identity, key: str, row: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """A ``WHERE`` condition: the key's row is still ``row`` in everything a write decides on."""
    return (
        "scope_id = %s AND id = %s AND agent_key = %s AND workspace_key = %s "
        "AND kind = 'preference' AND key = %s AND version = %s AND status = 'active' "
        "AND content = %s AND source IS NOT DISTINCT FROM %s::text "
        "AND source_event_id IS NOT DISTINCT FROM %s::text "
        "AND expires_at IS NOT DISTINCT FROM %s::timestamptz AND updated_at = %s",
        (
            ident.scope_id,
            str(row["id"]),
            ident.agent_key,
            ident.workspace_key,
            key,
            int(row["version"]),
            row["content"],
            row["source"],
            row["source_event_id"],
            row["expires_at"],
            row["updated_at"],
        ),
    )


def lock_preference(ident: Identity, key: str) -> Op[None]:
    """The advisory lock serialising writes of one (identity, preference key)."""
    yield from lock("pref", ident.scope_id, ident.agent_key, ident.workspace_key, key)


def apply_set_preference(
    ctx: CommitContext,
    base_version: int | None,
    args: dict[str, Any],
    locked: Locked | None = None,
    *,
    optimistic: bool = False,
) -> Op[Outcome]:
    """Seed semantics (DESIGN §3): UNCHANGED / CREATED / UPDATED, stale writes conflicted.

    The caller holds :func:`lock_preference` for the key, unless ``optimistic``: then
    ``locked`` holds the row as read without a lock, in autocommit, and the outcome's
    statement is gated on that row being unchanged (an UPDATED write is the compare-and-set
    ``UPDATE`` itself, which re-checks the version on the row's newest copy; an UNCHANGED one
    is guarded by the version). A write that would create the key (capacity) or conflict
    raises :class:`Contended` instead, and the caller retries under the lock.
    """
    ident, key, value = ctx.identity, args["key"], args["value"]
    found = locked.row if locked else (yield from pref_row(ident, key, ctx.now, count=True))
    row = found if found["id"] is not None else None
    current = 0 if row is None else int(row["version"])
    updated_at = ctx.updated_at
    exp = expiry(args.get("expires_at"), updated_at)
    state = _pref_state(row)
    ev = ctx.evidence
    if (
        optimistic
        and state is None
        and (row is not None or found["active_n"] >= ctx.limits.max_records_per_identity)
    ):
        # A removed key, or an identity near its capacity (counted exactly under the lock).
        raise Contended("this write needs the lock")
    # The optimistic compare-and-set: the row still exactly as read (or as remembered by
    # KnownPrefs): every field the decision below uses, not only the version, so a stale
    # remembered row never decides a write.
    same, same_params = _same_row(ident, key, row) if optimistic and row else ("", ())
    if state is not None and (
        state["value"] == value
        and state["source"] == ctx.source
        and state["expires_at"] == exp
        and state["source_event_id"] == ev.get("source_event_id")
    ):
        if locked is not None:
            locked.written = row
        return Outcome(
            "approved",
            "UNCHANGED",
            str(row["id"]) if row else None,
            current,
            "same value, source, expiry and event: nothing written",
            {"key": key, "value": value},
            guard=Query(f"EXISTS (SELECT 1 FROM mg_records WHERE {same})", same_params)
            if optimistic
            else None,
        )
    stale = row is not None and updated_at <= row["updated_at"]
    if optimistic and (stale or base_version not in (None, current)):
        raise Contended("a conflicted write is decided, and rolled back, under the lock")
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
    if stale and row is not None:
        return Outcome(
            "conflicted",
            None,
            str(row["id"]),
            current,
            f"stale write: updated_at {format_utc(updated_at)} is not later than the "
            f"stored {format_utc(row['updated_at'])} for preference {key}",
            {"reason": "stale", "key": key},
        )
    if state is None and not optimistic:
        yield from check_capacity(ctx, ident, found["active_n"])
    tokens = record_tokens(value, None, key)
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
        tokens,
        updated_at,
    )
    status: WriteStatus
    writes: list[Query] = []
    gate: Query | None = None
    if row is None:
        rid = str(uuid.uuid4())
        params = (
            *common,
            ident.scope_id,
            rid,
            ident.level,
            ident.agent_key,
            ident.workspace_key,
            key,
            updated_at,
        )
        if optimistic:
            # Under the key's lock, taken in the statement (a locked writer of the key that
            # read no row waits for it, then sees this row); a concurrent insert of the key
            # makes this one insert nothing, and the write is retried under the lock.
            lock_key = "\x1f".join(("pref", ident.scope_id, ident.agent_key, ident.workspace_key))
            gate = Query(
                f"{_PREF_INSERT} SELECT {_PREF_VALUES} WHERE pg_advisory_xact_lock("
                "hashtextextended(%s, 0)) IS NOT NULL ON CONFLICT (scope_id, agent_key, "
                "workspace_key, key) WHERE kind = 'preference' DO NOTHING",
                (*params, f"{lock_key}\x1f{key}"),
            )
        else:
            writes.append(Query(f"{_PREF_INSERT} VALUES ({_PREF_VALUES})", params))
        version, status = 1, "CREATED"
    else:
        rid, version = str(row["id"]), current + 1
        update = (
            "UPDATE mg_records SET content = %s, trust = %s, source = %s, "
            "source_event_id = %s, observed_at = %s, quote = %s, thread_id = %s, "
            "uri = %s, expires_at = %s, content_hash = %s, tokens = %s, "
            "updated_at = %s, status = 'active', version = %s, recorded_at = now() WHERE "
        )
        if optimistic:
            gate = Query(update + same, (*common, version, *same_params))
        else:
            writes.append(
                Query(update + "scope_id = %s AND id = %s", (*common, version, ident.scope_id, rid))
            )
        status = "CREATED" if state is None else "UPDATED"
    after = {
        "value": value,
        "source": ctx.source,
        "source_event_id": ev.get("source_event_id"),
        "expires_at": exp,
        "updated_at": updated_at,
        "revision": version,
    }
    if locked is not None:
        locked.written = {
            "id": rid,
            "status": "active",
            "version": version,
            "content": value,
            "source": ctx.source,
            "source_event_id": ev.get("source_event_id"),
            "expires_at": exp,
            "updated_at": updated_at,
            "active_n": None,
        }
    return Outcome(
        "approved",
        status,
        rid,
        version,
        "",
        {"key": key, "value": value, "previous_value": state["value"] if state else None},
        writes=tuple(writes),
        audits=(audit_row(ctx, ident, "preference", key, "set", state, after, version),),
        gate=gate,
    )


def apply_delete_preference(
    ctx: CommitContext,
    base_version: int | None,
    args: dict[str, Any],
    locked: Locked | None = None,
) -> Op[Outcome]:
    """Delete a key: DELETED with the previous value, or UNCHANGED (revision 0) if missing.

    The caller holds :func:`lock_preference` for the key.
    """
    ident, key = ctx.identity, args["key"]
    row = locked.row if locked else (yield from pref_row(ident, key, ctx.now, count=False))
    state = _pref_state(row)
    if state is None:
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
    rid = str(row["id"])
    return Outcome(
        "approved",
        "DELETED",
        rid,
        version,
        "",
        {"key": key, "previous_value": state["value"]},
        writes=(
            Query(
                "UPDATE mg_records SET status = 'removed', version = %s, updated_at = %s, "
                "recorded_at = now() WHERE scope_id = %s AND id = %s",
                (version, updated_at, ident.scope_id, rid),
            ),
        ),
        audits=(audit_row(ctx, ident, "preference", key, "delete", state, None, version),),
    )


def lock_profile(scope: str) -> Op[None]:
    """The advisory lock serialising profile patches of one user."""
    yield from lock("profile", scope)


def profile_row(scope: str) -> Op[dict[str, Any] | None]:
    """The user's profile row locked ``FOR UPDATE`` (``None`` when there is none)."""
    row = yield Query(
        "SELECT fields, revision, updated_at FROM mg_profiles WHERE scope_id = %s FOR UPDATE",
        (scope,),
        fetch="one",
    )
    return row  # type: ignore[no-any-return]


def apply_patch_profile(
    ctx: CommitContext,
    base_version: int | None,
    args: dict[str, Any],
    locked: Locked | None = None,
) -> Op[Outcome]:
    """Patch semantics: only named fields change; ``None`` deletes; identical is unchanged.

    The caller holds :func:`lock_profile`.
    """
    scope = ctx.owner.scope_id
    row = locked.row if locked else (yield from profile_row(scope))
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
    user = ctx.owner.identity("user")
    return Outcome(
        "approved",
        "CREATED" if row is None else "UPDATED",
        None,
        version,
        "",
        details,
        writes=(
            Query(
                "INSERT INTO mg_profiles (scope_id, fields, revision, updated_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (scope_id) DO UPDATE SET "
                "fields = EXCLUDED.fields, revision = EXCLUDED.revision, "
                "updated_at = EXCLUDED.updated_at, recorded_at = now()",
                (scope, Jsonb(new), version, updated_at),
            ),
        ),
        audits=(
            audit_row(
                ctx, user, "profile", None, "patch", {"fields": fields}, {"fields": new}, version
            ),
        ),
    )
