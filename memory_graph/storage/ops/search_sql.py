"""Recall SQL builders (no I/O): the browse statement of an empty query and the
disagreement statement, with the record columns they read (``CANDIDATE_COLS``).

Recall ranks in process over a per-owner pool (:mod:`~.recall_cache`); the server-side token
index and its statistics (``mg_record_tokens``, ``mg_postings``, ``mg_term_df``) were dropped
by migration v13 (issue 14), and with them the SQL candidate statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ...identity import Owner
from .rows import RECORD_COLS, visible

__all__ = [
    "CANDIDATE_COLS",
    "build_browse_query",
    "build_disagreement_query",
]

CANDIDATE_COLS = ", ".join(
    "r." + c.strip() for c in RECORD_COLS.split(",") if c.strip() != "tokens"
)
"""The record columns of candidate rows (the stored token array is not needed)."""

_TRUST_ORDER = (
    "CASE r.trust WHEN 'user-confirmed' THEN 0 WHEN 'agent-observed' THEN 1 ELSE 2 END, "
    "r.confidence DESC, r.id"
)


def _filters(alias: str) -> str:
    a = alias
    return (
        f"{a}.status = 'active' AND ({a}.expires_at IS NULL OR {a}.expires_at > %s) "
        f"AND {a}.kind = ANY(%s) AND {a}.trust = ANY(%s) AND {a}.sensitivity = ANY(%s)"
    )


def build_browse_query(
    owner: Owner,
    *,
    kinds: Sequence[str],
    trusts: Sequence[str],
    sensitivities: Sequence[str],
    as_of: datetime,
    depth: int,
) -> tuple[str, list[Any]]:
    """SQL for an empty query: everything visible, best priors first, at most ``depth`` rows.

    Args:
        owner: The owner; only its four identities are visible.
        kinds: Kinds to keep.
        trusts: Trust levels to keep.
        sensitivities: Sensitivities to keep.
        as_of: Rows must be unexpired at this instant.
        depth: How many rows to return.

    Returns:
        The SQL text and its parameters.
    """
    cond, params = visible(owner, "r")
    sql = (
        f"SELECT {CANDIDATE_COLS} FROM mg_records r WHERE {cond} AND {_filters('r')} "
        f"ORDER BY {_TRUST_ORDER} LIMIT %s"
    )
    return sql, [*params, as_of, list(kinds), list(trusts), list(sensitivities), depth]


def build_disagreement_query(
    owner: Owner, *, as_of: datetime, claim_keys: Sequence[str] | None = None
) -> tuple[str, list[Any]]:
    """SQL for every record in a disagreement group among the owner's visible records.

    A group is the visible, active, unexpired, non-sensitive records whose claims share a key
    with at least two distinct values.

    Args:
        owner: The owner.
        as_of: Activity instant.
        claim_keys: Only these keys' groups (a group depends on its own key only).

    Returns:
        The SQL text and its parameters; rows carry the record columns.
    """
    cond, params = visible(owner, "r")
    inner_cond, inner_params = visible(owner, "c")
    live = (
        "{a}.status = 'active' AND ({a}.expires_at IS NULL OR {a}.expires_at > %s) AND "
        "{a}.sensitivity = 'private' AND {a}.claim_key IS NOT NULL"
    )
    only = ""
    only_args: list[Any] = []
    if claim_keys is not None:
        only = "AND {a}.claim_key = ANY(%s)"
        only_args = [sorted(set(claim_keys))]
    sql = (
        f"SELECT {CANDIDATE_COLS} FROM mg_records r WHERE {cond} AND {live.format(a='r')} "
        f"{only.format(a='r')} "
        f"AND r.claim_key IN (SELECT c.claim_key FROM mg_records c WHERE {inner_cond} "
        f"AND {live.format(a='c')} {only.format(a='c')} GROUP BY c.claim_key "
        "HAVING count(DISTINCT c.claim_value) >= 2)"
    )
    return sql, [*params, as_of, *only_args, *inner_params, as_of, *only_args]
