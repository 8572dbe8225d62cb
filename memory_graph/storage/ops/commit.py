"""The commit path's shared pieces: context, outcome, locks, capacity and the commit statement.

An apply op (:mod:`~.records`, :mod:`~.prefs`) decides an :class:`Outcome`; the commit
path (:mod:`~.proposals`) sends its writes, the proposal's final state and the audit rows
as one statement (:func:`statement`), optionally guarded or gated so that it writes nothing
when what the op read has changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from ...errors import LimitExceededError
from ...identity import Identity, Owner
from ...types import Limits, Trust, WriteStatus
from ..driver import Op, Query
from .rows import jsonb

__all__ = [
    "AUDIT_INSERT",
    "AUDIT_VALUES",
    "CommitContext",
    "Contended",
    "Locked",
    "Outcome",
    "active_count_sql",
    "audit_row",
    "below_capacity_sql",
    "check_capacity",
    "exact_count_sql",
    "lock",
    "statement",
]


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
    """What an apply op decided: ``approved`` with a write status, or ``conflicted``.

    ``writes`` (data-modifying statements) and ``audits`` (:func:`audit_row` tuples) are
    still to be sent; the commit path sends them in one statement with the proposal update.
    With ``guard`` or ``gate``, that statement writes nothing unless the guard holds or the
    gate wrote its row (see :func:`statement`); the commit path then re-applies without the
    optimism.
    """

    status: str
    write_status: WriteStatus | None = None
    record_id: str | None = None
    version: int | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    writes: tuple[Query, ...] = ()
    audits: tuple[tuple[Any, ...], ...] = ()
    guard: Query | None = None
    gate: Query | None = None


class Contended(Exception):
    """An optimistic write gave way (its target changed, or the write needs the lock).

    Nothing was written; the caller retries the write under its lock. Internal: it never
    reaches a caller of the store.
    """


@dataclass
class Locked:
    """A target already read under its lock in this transaction (``row`` may be ``None``).

    A trusted write reads its target once, when it proposes, and hands it to the apply op.
    An optimistic preference write reads it without the lock (or takes it from
    :class:`~.known.KnownPrefs`), and its apply op sets ``written``: the row as the write
    leaves it once its gated statement commits.
    """

    row: Any
    written: Any = None


def lock(*parts: str) -> Op[None]:
    """A transaction-scoped advisory lock on ``parts`` (re-entrant within a transaction)."""
    yield Query(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        ("\x1f".join(parts),),
        fetch="none",
    )


AUDIT_INSERT = (
    "INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, target_id, "
    "action, before, after, version, proposal_id, actor, at) VALUES "
)
AUDIT_VALUES = "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"


def audit_row(
    ctx: CommitContext,
    ident: Identity,
    target_kind: str,
    target_id: str | None,
    action: str,
    before: Any,
    after: Any,
    version: int | None,
) -> tuple[Any, ...]:
    """The parameters of one audit row (see :func:`statement`)."""
    return (
        ident.scope_id,
        ident.agent_key,
        ident.workspace_key,
        target_kind,
        target_id,
        action,
        jsonb(before) if before is not None else None,
        jsonb(after) if after is not None else None,
        version,
        ctx.proposal_id,
        ctx.actor,
        ctx.now,
    )


_OK = "{ok}"
"""Placeholder a guardable write puts in its ``WHERE`` (see :func:`statement`)."""

# The audit rows of a statement go as one jsonb array (one parameter, whatever their number:
# psycopg re-parses a statement of more than 50 parameters on every call).
_AUDIT_COLS = (
    "scope_id, agent_key, workspace_key, target_kind, target_id, action, before, after, "
    "version, proposal_id, actor, at"
)
_AUDIT_RECORDSET = (
    f"INSERT INTO mg_audit ({_AUDIT_COLS}) SELECT {_AUDIT_COLS} FROM jsonb_to_recordset(%s) "
    "AS a(scope_id text, agent_key text, workspace_key text, target_kind text, "
    "target_id text, action text, before jsonb, after jsonb, version integer, "
    "proposal_id text, actor text, at timestamptz) WHERE {ok}"
)
_AUDIT_NAMES = _AUDIT_COLS.split(", ")


def _audit_json(row: tuple[Any, ...]) -> dict[str, Any]:
    """One audit row as an element of the statement's jsonb array (dumped by
    :func:`.rows.dump_json`, which writes datetimes and UUIDs as the audit log stores them)."""
    out = dict(zip(_AUDIT_NAMES, row, strict=True))
    for name in ("before", "after"):  # audit_row wrapped them
        value = out[name]
        if isinstance(value, Jsonb):
            out[name] = value.obj
    return out


def statement(
    writes: Sequence[Query],
    audits: Sequence[tuple[Any, ...]] = (),
    guard: Query | None = None,
    gate: Query | None = None,
) -> Query:
    """One statement making ``writes`` and appending ``audits`` (in order), atomically.

    All but the last part become data-modifying ``WITH`` items; PostgreSQL runs every one of
    them to completion. The parts must touch different rows (a row changed twice in one
    statement is undefined). Audit rows go in one ``INSERT`` from one jsonb array, so their
    ``seq`` follows the order given.

    With ``guard`` (a boolean SQL expression), every write happens only if the guard holds
    in the statement's snapshot: each write must carry ``{ok}`` in its ``WHERE``, and the
    statement returns one row ``{"ok": bool}``. With ``gate`` (an ``UPDATE`` of at most one
    row, without ``RETURNING``), the writes happen only if the gate changed its row, and the
    statement returns ``{"ok": true}`` then, no row otherwise.
    """
    parts = list(writes)
    if audits:
        rows = jsonb([_audit_json(row) for row in audits])
        parts.append(Query(_AUDIT_RECORDSET, (rows,), fetch="none"))
    if not parts and gate is None:
        raise ValueError("statement() needs at least one write")
    params = [p for q in parts for p in q.params]  # type: ignore[union-attr]
    if guard is not None or gate is not None:
        if guard is not None and gate is not None:
            raise ValueError("a statement has a guard or a gate, not both")
        if not all(_OK in q.sql for q in parts):
            raise ValueError("every write of a guarded statement needs {ok} in its WHERE")
        body = "".join(
            f", w{i} AS ({q.sql.replace(_OK, '(SELECT ok FROM g)')})" for i, q in enumerate(parts)
        )
        if gate is not None:
            head, head_params = f"g AS ({gate.sql} RETURNING true AS ok)", gate.params
        else:
            assert guard is not None
            head, head_params = f"g AS MATERIALIZED (SELECT ({guard.sql}) AS ok)", guard.params
        return Query(
            f"WITH {head}{body} SELECT ok FROM g",
            [*head_params, *params],  # type: ignore[misc]
            fetch="one",
        )
    sqls = [q.sql.replace(_OK, "true") for q in parts]
    if len(parts) == 1:
        return Query(sqls[0], params, fetch="none")
    head = ", ".join(f"w{i} AS ({sql})" for i, sql in enumerate(sqls[:-1]))
    return Query(f"WITH {head} {sqls[-1]}", params, fetch="none")


def active_count_sql(ident: Identity, now: datetime) -> tuple[str, tuple[Any, ...]]:
    """A scalar subquery bounding the identity's active, unexpired rows from above (capacity).

    It reads the identity's active-row counts kept in ``mg_pool_stats`` (migration v6, in step
    with ``mg_records`` in every transaction), so its cost does not grow with the identity's
    records. The count includes active rows that have expired since their last write: when
    it reaches the limit, :func:`check_capacity` counts exactly. ``now`` is kept for that.
    """
    del now
    return (
        "(SELECT coalesce(sum(n), 0) FROM mg_pool_stats WHERE scope_id = %s AND agent_key = %s "
        "AND workspace_key = %s)",
        (ident.scope_id, ident.agent_key, ident.workspace_key),
    )


def exact_count_sql(ident: Identity, now: datetime) -> tuple[str, tuple[Any, ...]]:
    """A scalar subquery counting the identity's active, unexpired rows (``mg_records_pool``)."""
    return (
        "(SELECT count(*) FROM mg_records WHERE scope_id = %s AND agent_key = %s "
        "AND workspace_key = %s AND status = 'active' "
        "AND (expires_at IS NULL OR expires_at > %s))",
        (ident.scope_id, ident.agent_key, ident.workspace_key, now),
    )


def below_capacity_sql(ident: Identity, now: datetime, cap: int) -> tuple[str, tuple[Any, ...]]:
    """A boolean SQL expression: the identity holds fewer than ``cap`` active, unexpired rows.

    Exact, and flat in the identity's size below the limit: the row count is read only when
    the kept count (an upper bound) has reached ``cap``.
    """
    upper, upper_params = active_count_sql(ident, now)
    exact, exact_params = exact_count_sql(ident, now)
    return (
        f"(SELECT {upper} < cap OR {exact} < cap FROM (SELECT %s::bigint AS cap) c)",
        (*upper_params, *exact_params, cap),
    )


def check_capacity(ctx: CommitContext, ident: Identity, active: int) -> Op[None]:
    """Raise when the identity already holds ``max_records_per_identity`` active rows.

    ``active`` is the bound from :func:`active_count_sql`; only when it reaches the limit are
    the rows counted exactly (one more statement, near the limit only).
    """
    cap = ctx.limits.max_records_per_identity
    if active < cap:
        return
    sql, params = exact_count_sql(ident, ctx.now)
    row = yield Query(f"SELECT {sql} AS n", params, fetch="one")
    if row["n"] >= cap:
        raise LimitExceededError(
            f"identity {ident.level!r} already holds {cap} active records, the limit: "
            "remove some records first or raise Limits.max_records_per_identity"
        )
