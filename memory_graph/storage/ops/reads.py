"""Read ops: profile, preferences, records and the audit log. Reads never write.

Search and the recall snapshot live in :mod:`~.search`.

Every query is restricted to the owner's visible identities with :func:`~.rows.visible`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ...errors import NotFoundError, ValidationError
from ...identity import IDENTITY_LEVELS, Owner
from ...time import Clock
from ...types import Preference, Profile, Record
from ...validate import KINDS, aware, members, short, text
from ...validate import record_id as record_id_
from ..driver import Op, Query
from .recall_cache import RecallCache, held_pool_op
from .rows import RECORD_COLS, preference_from_row, profile_from_row, record_from_row, visible

__all__ = [
    "audit_log_op",
    "get_preferences_op",
    "get_profile_op",
    "get_record_op",
    "list_records_op",
    "preferences_from_rows",
    "preferences_sql",
]


def _as_of(as_of: datetime | None, clock: Clock) -> datetime:
    return clock() if as_of is None else aware(as_of, "as_of")


def _members(field: str, values: Iterable[str] | None, allowed: tuple[str, ...]) -> list[str]:
    return members(field, values, allowed)


def get_profile_op(owner: Owner) -> Op[Profile]:
    """The owner's profile (empty with revision 0 when none is stored)."""
    row = yield Query(
        "SELECT fields, revision, updated_at FROM mg_profiles WHERE scope_id = %s",
        (owner.scope_id,),
        fetch="one",
    )
    return profile_from_row(row)


def preferences_sql(owner: Owner, at: datetime, cols: str = RECORD_COLS) -> tuple[str, list[Any]]:
    """The owner's active keyed preferences at ``at`` (``cols``), and the params."""
    cond, params = visible(owner)
    return (
        f"SELECT {cols} FROM mg_records WHERE {cond} AND kind = 'preference' "
        "AND key IS NOT NULL AND status = 'active' AND (expires_at IS NULL OR expires_at > %s)",
        [*params, at],
    )


def preferences_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Preference]:
    """Preferences sorted by key then precedence; shadowed ones are ``overridden``."""
    ordered = sorted(rows, key=lambda r: (r["key"], IDENTITY_LEVELS.index(r["level"])))
    out: list[Preference] = []
    seen: set[str] = set()
    for r in ordered:
        out.append(preference_from_row(r, overridden=r["key"] in seen))
        seen.add(r["key"])
    return out


def get_preferences_op(
    owner: Owner, *, as_of: datetime | None = None, clock: Clock
) -> Op[list[Preference]]:
    """Active, unexpired keyed preferences, sorted by key then precedence.

    The first entry of a key is its effective value; shadowed ones are ``overridden``.
    """
    sql, params = preferences_sql(owner, _as_of(as_of, clock))
    rows = yield Query(sql, params)
    return preferences_from_rows(rows)


def get_record_op(owner: Owner, record_id: str) -> Op[Record]:
    """One record visible to the owner, whatever its status.

    Raises:
        ValidationError: ``record_id`` is neither a string nor a UUID.
        NotFoundError: no such record among the owner's identities.
    """
    record_id = record_id_(record_id)  # canonical form: no spelling reaches SQL raw
    cond, params = visible(owner)
    row = yield Query(
        f"SELECT {RECORD_COLS} FROM mg_records WHERE {cond} AND id = %s",
        (*params, str(record_id)),
        fetch="one",
    )
    if row is None:
        raise NotFoundError(f"record {short(record_id)} not found for this owner")
    return record_from_row(row)


def list_records_op(
    owner: Owner,
    *,
    kinds: Iterable[str] | None = None,
    include_inactive: bool = False,
    as_of: datetime | None = None,
    key: str | None = None,
    clock: Clock,
    cache: RecallCache | None = None,
) -> Op[list[Record]]:
    """Visible records (active and unexpired unless ``include_inactive``), oldest first.

    ``key`` keeps only the records with that key (e.g. a LangGraph store item's key).
    When ``cache`` already holds the owner's recall pool (a recall ran in this process) and
    only active records are asked for, they are taken from the pool, brought up to date by
    its stamp check (one small round trip when nothing changed, instead of reading every
    row again: an extraction turn lists the records after the turn's recall).
    """
    at = _as_of(as_of, clock)
    wanted = _members("kinds", kinds, KINDS)
    if cache is not None and not include_inactive and key is None:
        pool = yield from held_pool_op(owner, cache)
        if pool is not None:
            chosen = set(wanted)
            found = [
                e.record
                for e in pool.entries.values()
                if e.record.kind in chosen
                and (e.record.expires_at is None or e.record.expires_at > at)
            ]
            return sorted(found, key=lambda r: (r.created_at, r.id))
    cond, params = visible(owner)
    sql = f"SELECT {RECORD_COLS} FROM mg_records WHERE {cond} AND kind = ANY(%s)"
    args: list[Any] = [*params, wanted]
    if key is not None:
        if not isinstance(key, str):
            raise ValidationError("key must be a string")
        text("key", key, max_bytes=1024, min_bytes=0)  # no NUL or lone surrogate reaches SQL
        sql += " AND key = %s"
        args.append(key)
    if not include_inactive:
        sql += " AND status = 'active' AND (expires_at IS NULL OR expires_at > %s)"
        args.append(at)
    rows = yield Query(sql + " ORDER BY created_at, id", args)
    return [record_from_row(r) for r in rows]


def audit_log_op(owner: Owner, *, limit: int = 100) -> Op[list[dict[str, Any]]]:
    """The newest audit rows of the owner's visible identities, newest first."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ValidationError("limit must be an integer in 1..10000")
    cond, params = visible(owner)
    rows = yield Query(
        "SELECT seq, target_kind, target_id, action, before, after, version, proposal_id, "
        f"actor, at, recorded_at FROM mg_audit WHERE {cond} ORDER BY seq DESC LIMIT %s",
        (*params, limit),
    )
    return [dict(r) for r in rows]
