"""Privacy operations: erase a user everywhere, and the retention sweep (issue 12).

Erasure is generic: every ``mg_*`` table with a ``scope_id`` column is emptied of the user's
scope, so a table added by a later migration is covered without touching this module. The
audit table keeps one content-free tombstone (scope digest, time, row counts). LangGraph's
checkpoint tables (``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``), when they
live in the same database, lose the user's threads (found through ``mg_threads``: the claims in
the database space, see :mod:`.threads`) in the same transaction; the thread-owner rows go
with it, so an interrupted erasure is simply run again. A claim in another space (an
``InMemorySaver``'s) names no thread of this database: those rows go, no checkpoint does.

The sweep works in bounded batches, each its own short transaction that locks its rows with
``FOR UPDATE SKIP LOCKED``: rows a live transaction holds are left for the next run, so it is
safe next to traffic and from cron.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from ...errors import ValidationError
from ...identity import Owner
from ...validate import aware, text
from ..driver import Op, Query
from .rows import visible
from .threads import DATABASE_SPACE

__all__ = [
    "CHECKPOINT_TABLES",
    "MAX_RETENTION",
    "PERIODS",
    "ForgetReport",
    "SweepReport",
    "audit_summary_op",
    "expire_proposals_op",
    "forget_op",
    "note_blocked_op",
    "purge_proposals_op",
    "purge_records_op",
    "retention",
    "sweep_batch_size",
    "sweep_threads_op",
    "trim_audit_op",
]

CHECKPOINT_TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")
"""LangGraph's Postgres checkpoint tables (langgraph-checkpoint-postgres), children first."""

# Records (and their vectors) go first (their triggers maintain mg_pool_stats and
# mg_recall_stamp), the statistics last; the rest in name order. A second pass removes
# whatever a trigger re-created.
_FIRST = ("mg_embeddings", "mg_records")
_LAST = ("mg_pool_stats", "mg_threads")
_TOMBSTONE = "forget"


@dataclass(frozen=True)
class ForgetReport:
    """What :meth:`~memory_graph.MemoryStore.forget_user` erased.

    Attributes:
        scope_id: the user's scope digest (the tombstone's only identifier).
        rows: rows deleted per memory table (tables with nothing to delete are omitted).
        threads: LangGraph thread ids erased (checkpoints, blobs, writes, owner rows).
        checkpoint_rows: checkpoint rows deleted in this database.
    """

    scope_id: str
    rows: dict[str, int] = field(default_factory=dict)
    threads: int = 0
    checkpoint_rows: int = 0

    @property
    def total(self) -> int:
        """All rows deleted (memory tables and checkpoint tables)."""
        return sum(self.rows.values()) + self.checkpoint_rows


@dataclass(frozen=True)
class SweepReport:
    """What :meth:`~memory_graph.MemoryStore.sweep` did (counts of rows)."""

    expired_proposals: int = 0
    """Pending proposals past their expiry, finalized as ``expired``."""
    deleted_proposals: int = 0
    """Decided proposals older than the proposal retention, deleted."""
    deleted_records: int = 0
    """Removed or expired records older than the record retention, deleted."""
    trimmed_audit: int = 0
    """Audit rows older than the audit retention whose content was cleared."""
    deleted_threads: int = 0
    """Checkpoint threads idle longer than ``thread_idle``, deleted with their owner rows."""
    batches: int = 0
    """Transactions run."""


MAX_RETENTION = timedelta(days=36_600)
"""The longest retention period (about 100 years); ``None`` keeps content forever."""


def retention(name: str, value: object, *, optional: bool = False) -> timedelta | None:
    """Validate a retention period: a ``timedelta`` in ``0..MAX_RETENTION`` (or ``None`` if
    optional)."""
    if value is None and optional:
        return None
    if not isinstance(value, timedelta) or not timedelta(0) <= value <= MAX_RETENTION:
        raise ValidationError(
            f"{name} must be a datetime.timedelta from 0 to 36600 days"
            + (" (None keeps everything)" if optional else "")
        )
    return value


def sweep_batch_size(value: object) -> int:
    """Validate a batch size: an integer in 1..100000."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
        raise ValidationError("batch_size must be an integer in 1..100000")
    return value


def _ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (table names come from the catalog)."""
    return '"' + name.replace('"', '""') + '"'


def _checkpoint_tables() -> Op[list[str]]:
    row = yield Query(
        "SELECT " + ", ".join(f"to_regclass('{t}') IS NOT NULL AS {t}" for t in CHECKPOINT_TABLES),
        fetch="one",
    )
    return [t for t in CHECKPOINT_TABLES if row and row[t]]


def _scoped_tables() -> Op[list[str]]:
    """Every ``mg_*`` table with a ``scope_id`` column, in erasure order (no audit).

    A partitioned table is one table: its partitions (``setup(partitions=N)``) are left out,
    so each delete names the parent and touches the user's partition only.
    """
    rows = yield Query(
        "SELECT c.relname AS name FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
        "AND c.relkind IN ('r', 'p') "
        "AND NOT c.relispartition AND a.attname = 'scope_id' AND NOT a.attisdropped "
        "AND c.relname LIKE 'mg\\_%%' ORDER BY 1"
    )
    names = [r["name"] for r in rows if r["name"] != "mg_audit"]
    head = [n for n in _FIRST if n in names]
    tail = [n for n in _LAST if n in names]
    return head + [n for n in names if n not in head and n not in tail] + tail


def forget_op(scope: str, *, now: datetime) -> Op[ForgetReport]:
    """Erase every row of the user ``scope`` (see the module docstring), in one transaction."""
    # Serialise with other erasures and thread claims of this user: lock its thread rows.
    threads = yield Query(
        "SELECT space, thread_id FROM mg_threads WHERE scope_id = %s "
        "ORDER BY space, thread_id FOR UPDATE",
        (scope,),
    )
    tids = [r["thread_id"] for r in threads if r["space"] == DATABASE_SPACE]
    checkpoint_rows = 0
    if tids:
        for table in (yield from _checkpoint_tables()):
            checkpoint_rows += yield Query(
                f"DELETE FROM {table} WHERE thread_id = ANY(%s)", (tids,), fetch="rowcount"
            )
    counts: dict[str, int] = {}
    tables = yield from _scoped_tables()
    for _pass in range(2):
        for table in tables:
            n = yield Query(
                f"DELETE FROM {_ident(table)} WHERE scope_id = %s", (scope,), fetch="rowcount"
            )
            if n:
                counts[table] = counts.get(table, 0) + n
    audit = yield Query(
        "DELETE FROM mg_audit WHERE scope_id = %s AND NOT (target_kind = 'user' AND action = %s)",
        (scope, _TOMBSTONE),
        fetch="rowcount",
    )
    if audit:
        counts["mg_audit"] = audit
    report = ForgetReport(scope, counts, len(threads), checkpoint_rows)
    yield Query(
        "INSERT INTO mg_audit (scope_id, target_kind, target_id, action, before, after, "
        "version, proposal_id, actor, at) VALUES (%s, 'user', NULL, %s, NULL, %s, NULL, NULL, "
        "'forget', %s)",
        (
            scope,
            _TOMBSTONE,
            Jsonb(
                {
                    "rows": sum(counts.values()),
                    "threads": len(threads),
                    "checkpoint_rows": checkpoint_rows,
                }
            ),
            now,
        ),
        fetch="none",
    )
    return report


# --- sweep batches: each returns the number of rows it handled -----------------------------

# A batch joins its (at most batch_size) due rows back to the table by primary key. The
# planner tends to hash the whole table for that, which makes every batch cost a full scan;
# index nested loops keep a batch proportional to its size.
_BATCH_PLAN = Query(
    "SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off", fetch="none"
)


def expire_proposals_op(*, now: datetime, limit: int) -> Op[int]:
    """Finalize up to ``limit`` pending proposals past ``expires_at`` as ``expired``."""
    yield _BATCH_PLAN
    decision = Jsonb({"decision": "expire", "message": None, "args": None})
    row = yield Query(
        "WITH due AS (SELECT scope_id, id FROM mg_proposals WHERE status = 'pending' "
        "AND expires_at <= %(now)s ORDER BY expires_at LIMIT %(n)s FOR UPDATE SKIP LOCKED), "
        "upd AS (UPDATE mg_proposals p SET status = 'expired', decided_at = %(now)s, "
        "actor = 'sweep', decision = %(decision)s, result = jsonb_build_object("
        "'proposal_id', p.id, 'status', 'expired', 'operation', p.operation, "
        "'write_status', NULL, 'record_id', NULL, 'version', NULL, 'message', "
        "'proposal expired at ' || to_char(p.expires_at AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') || ': nothing was written', "
        "'details', '{}'::jsonb) FROM due WHERE p.scope_id = due.scope_id AND p.id = due.id "
        "RETURNING p.scope_id, p.agent_key, p.workspace_key, p.id), "
        "aud AS (INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, "
        "target_id, action, before, after, version, proposal_id, actor, at) "
        "SELECT scope_id, agent_key, workspace_key, 'proposal', id, 'expired', "
        "'{\"status\": \"pending\"}'::jsonb, jsonb_build_object('status', 'expired', "
        "'decision', %(decision)s::jsonb), NULL, id, 'sweep', %(now)s FROM upd) "
        "SELECT count(*) AS n FROM upd",
        {"now": now, "n": limit, "decision": decision},
        fetch="one",
    )
    return int(row["n"]) if row else 0


def purge_proposals_op(*, before: datetime, limit: int) -> Op[int]:
    """Delete up to ``limit`` decided proposals decided (or expired) before ``before``."""
    yield _BATCH_PLAN
    n = yield Query(
        "DELETE FROM mg_proposals p USING (SELECT scope_id, id FROM mg_proposals "
        "WHERE status <> 'pending' AND coalesce(decided_at, expires_at) < %s "
        "LIMIT %s FOR UPDATE SKIP LOCKED) d WHERE p.scope_id = d.scope_id AND p.id = d.id",
        (before, limit),
        fetch="rowcount",
    )
    return int(n)


def purge_records_op(*, before: datetime, limit: int) -> Op[int]:
    """Delete up to ``limit`` records removed, or expired, before ``before``.

    Their vectors go first (when ``mg_embeddings`` exists), then the rows (the pool
    statistics and recall stamp triggers follow).
    """
    yield _BATCH_PLAN
    emb = yield Query("SELECT to_regclass('mg_embeddings') IS NOT NULL AS e", fetch="one")
    doomed = yield Query(
        "SELECT scope_id, id FROM mg_records WHERE status <> 'active' AND recorded_at < %s "
        "LIMIT %s FOR UPDATE SKIP LOCKED",
        (before, limit),
    )
    if len(doomed) < limit:
        doomed += yield Query(
            "SELECT scope_id, id FROM mg_records WHERE expires_at < %s AND status = 'active' "
            "LIMIT %s FOR UPDATE SKIP LOCKED",
            (before, limit - len(doomed)),
        )
    if not doomed:
        return 0
    scopes = [r["scope_id"] for r in doomed]
    ids = [r["id"] for r in doomed]
    pairs = "SELECT * FROM unnest(%s::text[], %s::uuid[]) AS d(scope_id, id)"
    if emb and emb["e"]:
        yield Query(
            f"DELETE FROM mg_embeddings e USING ({pairs}) d "
            "WHERE e.scope_id = d.scope_id AND e.record_id = d.id",
            (scopes, ids),
            fetch="none",
        )
    n = yield Query(
        f"DELETE FROM mg_records r USING ({pairs}) d WHERE r.scope_id = d.scope_id AND r.id = d.id",
        (scopes, ids),
        fetch="rowcount",
    )
    return int(n)


def trim_audit_op(*, before: datetime, limit: int) -> Op[int]:
    """Clear the content (``before``/``after``) of up to ``limit`` audit rows older than ``before``.

    The row itself stays (who, what kind, which action, when). A reinforcement's source event id
    (a message id, not content) is kept, so a re-run of an old turn still cannot count twice.
    """
    yield _BATCH_PLAN
    n = yield Query(
        "UPDATE mg_audit a SET before = NULL, after = CASE WHEN a.after ? 'source_event_id' "
        "THEN jsonb_build_object('source_event_id', a.after->'source_event_id') END "
        "FROM (SELECT scope_id, seq FROM mg_audit WHERE at < %s "
        "AND target_kind NOT IN ('user', 'guard') "
        "AND (before IS NOT NULL OR after IS NOT NULL) AND (before IS NOT NULL OR "
        "(after IS NOT NULL AND after - 'source_event_id' <> '{}'::jsonb)) "
        "LIMIT %s FOR UPDATE SKIP LOCKED) d WHERE a.scope_id = d.scope_id AND a.seq = d.seq",
        (before, limit),
        fetch="rowcount",
    )
    return int(n)


def sweep_threads_op(*, before: datetime, limit: int) -> Op[int]:
    """Delete up to ``limit`` threads idle since before ``before``, with their owner rows.

    Only what the sweep can prove idle goes: a thread whose checkpoints are in this database
    and whose newest checkpoint (its ``ts``) is older than ``before`` loses its checkpoints
    and its claim in the database space (see :mod:`.threads`). A claim without checkpoints
    here is kept: its checkpoints may live in another saver (another database, an
    ``InMemorySaver``) and the thread may be in use, and without its claim another principal
    could take it over; :meth:`~memory_graph.MemoryStore.forget_user` removes it. The swept
    claims' tool-evidence rows (``mg_evidence``) go with them.
    """
    tables = yield from _checkpoint_tables()
    rows: list[dict[str, Any]] = []
    if "checkpoints" in tables:
        rows = yield Query(
            "SELECT thread_id FROM checkpoints GROUP BY thread_id "
            "HAVING max((checkpoint->>'ts')::timestamptz) < %s LIMIT %s",
            (before, limit),
        )
    tids = [r["thread_id"] for r in rows]
    if not tids:
        return 0
    for table in tables:
        yield Query(f"DELETE FROM {table} WHERE thread_id = ANY(%s)", (tids,), fetch="none")
    owners = yield Query(
        "DELETE FROM mg_threads WHERE space = '' AND thread_id = ANY(%s) "
        "RETURNING scope_id, thread_id",
        (tids,),
    )
    evidence = yield Query("SELECT to_regclass('mg_evidence') IS NOT NULL AS e", fetch="one")
    if owners and evidence and evidence["e"]:  # their tool-evidence index points nowhere
        yield Query(
            "DELETE FROM mg_evidence e USING unnest(%s::text[], %s::text[]) AS d(scope_id, tid) "
            "WHERE e.scope_id = d.scope_id AND e.thread_id = d.tid",
            ([r["scope_id"] for r in owners], [r["thread_id"] for r in owners]),
            fetch="none",
        )
    return len(tids)


# --- the audit summary and guard blocks ------------------------------------------------------

_CATEGORY = re.compile(r"[a-z][a-z0-9_:.-]{0,63}")
PERIODS = ("day", "week", "month")


def note_blocked_op(
    owner: Owner, categories: object, *, thread_id: object, now: datetime
) -> Op[bool]:
    """Record how many candidates the guard blocked, by category: one content-free audit row.

    Returns ``False`` (nothing written) when every count is zero.
    """
    if not isinstance(categories, Mapping) or len(categories) > 64:
        raise ValidationError("categories must be a mapping of at most 64 category names")
    counts: dict[str, int] = {}
    for key, n in categories.items():
        if not isinstance(key, str) or not _CATEGORY.fullmatch(key):
            raise ValidationError("a category name is lowercase ASCII, at most 64 characters")
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 1_000_000:
            raise ValidationError("a category count is an integer in 0..1000000")
        if n:
            counts[key] = n
    tid = None if thread_id is None else text("thread_id", thread_id, max_bytes=512)
    if not counts:
        return False
    yield Query(
        "INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, target_id, "
        "action, before, after, version, proposal_id, actor, at) "
        "VALUES (%s, %s, %s, 'guard', %s, 'block', NULL, %s, NULL, NULL, 'extraction', %s)",
        (
            owner.scope_id,
            owner.agent_key,
            owner.workspace_key,
            tid,
            Jsonb({"categories": counts}),
            now,
        ),
        fetch="none",
    )
    return True


def audit_summary_op(owner: Owner, *, since: object, by: object) -> Op[list[dict[str, Any]]]:
    """Audit rows of the owner's visible identities since ``since``, counted per period,
    target kind and action; guard blocks are expanded per category (``block:<category>``)."""
    if by not in PERIODS:
        raise ValidationError("by must be day, week or month")
    start = aware(since, "since")
    cond, params = visible(owner)
    period = "date_trunc(%s, at AT TIME ZONE 'UTC')::date"
    rows = yield Query(
        f"SELECT {period} AS period, target_kind, action, count(*) AS n FROM mg_audit "
        f"WHERE {cond} AND at >= %s AND target_kind <> 'guard' GROUP BY 1, 2, 3 "
        f"UNION ALL SELECT {period}, 'guard', 'block:' || c.key, sum(c.value::bigint) "
        f"FROM mg_audit, jsonb_each_text(coalesce(after->'categories', '{{}}'::jsonb)) c "
        f"WHERE {cond} AND at >= %s AND target_kind = 'guard' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        (by, *params, start, by, *params, start),
    )
    return [{**r, "n": int(r["n"])} for r in rows]
