"""The turn entry read: context block, recall snapshot and pending count in one statement.

The memory agent's entry node needs three reads before the model runs: the user context
block (:func:`~.views.context_block_op`), the recall snapshot (:func:`~.search.snapshot_op`)
and the thread's pending proposals (:func:`~.proposals.list_pending_op`). Run one after
the other they cost three round trips (and, on separate nodes, three pool checkouts).
:func:`turn_entry_op` drives those same ops and answers their first queries with **one**
statement, so no SQL is written twice:

- the context query's rows are joined in laterally (typed, as its op reads them);
- the snapshot's first query, when it is the one-row stamp check of a held recall pool, is
  joined in as one JSON value (its columns are text and integers, which JSON keeps); a
  hybrid snapshot ranked in process (``ops/hybrid.py``) starts with the same check;
- the pending query is joined in as a count; only when something is pending is the query
  itself run (a second round trip).

A snapshot whose first query reads the whole pool (the owner's first recall in this store)
or whose held pool changed runs its further queries after the combined statement, exactly
as :func:`~.recall_cache.pool_op` asks. Reads only: the store runs it in autocommit mode, so
each statement sees its own snapshot, as the three separate reads did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from ...types import Proposal
from ..driver import Op, Query

__all__ = ["TurnEntry", "turn_entry_op"]

_ONE = "mg_entry_one"
_PENDING = "mg_entry_pending"


class TurnEntry(NamedTuple):
    """What a turn's entry node reads."""

    context: str
    """The user context block (:meth:`MemoryStore.context_block`)."""
    recalled: str | None
    """The recall block (:meth:`MemoryStore.snapshot`); ``None`` when not asked for."""
    pending: list[Proposal] | None
    """The thread's pending proposals, oldest first; ``None`` without a thread."""


def _first(op: Op[Any]) -> tuple[Query | None, Any]:
    """Start ``op``: its first query, or ``(None, value)`` when it returned without one."""
    try:
        return next(op), None
    except StopIteration as stop:
        return None, stop.value


def _finish(op: Op[Any], result: Any) -> Op[Any]:
    """Send ``result`` for the op's pending query, then run its remaining queries."""
    try:
        query = op.send(result)
        while True:
            query = op.send((yield query))
    except StopIteration as stop:
        return stop.value


def _params(query: Query) -> list[Any]:
    if isinstance(query.params, Mapping):  # the ops combined here all use positional %s
        raise TypeError("turn_entry_op combines positional-parameter queries only")
    return list(query.params)


def turn_entry_op(
    context: Op[str], snapshot: Op[str] | None, pending: Op[list[Proposal]] | None
) -> Op[TurnEntry]:
    """Run the three entry ops with their first queries in one statement (see module doc).

    Args:
        context: a :func:`~.views.context_block_op`.
        snapshot: a :func:`~.search.snapshot_op`, or ``None`` (no recall block).
        pending: a :func:`~.proposals.list_pending_op` for the thread, or ``None``.

    Raises:
        ValidationError: from the ops' own argument checks, before any query is sent.
    """
    ctx_q, ctx_done = _first(context)
    snap_q, snap_done = _first(snapshot) if snapshot is not None else (None, None)
    pend_q, pend_done = _first(pending) if pending is not None else (None, None)
    one = snap_q if snap_q is not None and snap_q.fetch == "one" else None
    cols: list[str] = []
    sql = ""
    params: list[Any] = []
    if one is not None:
        sql += (
            f" LEFT JOIN LATERAL (SELECT to_jsonb(x)::text AS {_ONE} FROM ({one.sql}) x) o ON true"
        )
        params += _params(one)
        cols.append(f"o.{_ONE}")
    if pend_q is not None:
        sql += f" CROSS JOIN LATERAL (SELECT count(*) AS {_PENDING} FROM ({pend_q.sql}) y) n"
        params += _params(pend_q)
        cols.append(f"n.{_PENDING}")
    if ctx_q is not None:
        sql += f" LEFT JOIN LATERAL ({ctx_q.sql}) c ON true"
        params += _params(ctx_q)
        cols.append("c.*")
    rows: list[dict[str, Any]] = yield Query(
        f"SELECT {', '.join(cols) or '1'} FROM (SELECT 1) b{sql}", params
    )
    ctx_rows = [  # the context query tags each of its rows with its ``part``
        {k: v for k, v in row.items() if k not in (_ONE, _PENDING)}
        for row in rows
        if row.get("part") is not None
    ]
    block = ctx_done if ctx_q is None else (yield from _finish(context, ctx_rows))
    listed: list[Proposal] | None = pend_done
    if pend_q is not None and pending is not None:
        if rows and rows[0][_PENDING]:
            listed = yield from _finish(pending, (yield pend_q))
        else:
            listed = yield from _finish(pending, [])
    recalled: str | None = snap_done
    if snapshot is not None and snap_q is not None:
        if one is not None:
            raw = rows[0][_ONE] if rows else None
            answer = json.loads(raw) if raw is not None else None
        else:
            answer = yield snap_q  # the owner's first recall: the pool is read in full
        recalled = yield from _finish(snapshot, answer)
    return TurnEntry(block, recalled, listed)
