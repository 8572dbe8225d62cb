"""The search and snapshot ops that the sync and async stores drive.

Both read the owner's pool through :func:`~.recall_cache.pool_op`: one statement that reads
the owner's recall stamps and only the rows changed since the pool in the store's cache was
read (none, usually). Candidates, ranking (:mod:`memory_graph.recall`), standing guidance
and disagreement groups are then computed in process over that pool, so a recall costs one
round trip plus ranking of a small candidate set. An empty query means everything visible,
best priors first.

Disagreement is computed over every visible, active, unexpired, non-sensitive record with a
claim, independent of the query and filters, for the claim keys of the hits (a record
without a claim is in no group).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ...errors import LimitExceededError, ValidationError
from ...identity import IDENTITY_LEVELS, Owner
from ...recall.budget import Budget, TokenCounter
from ...recall.model import Ranked
from ...recall.plan import STANDING_KINDS, STANDING_TRUSTS, merge_hits, plan_queries
from ...recall.query import ParsedQuery, parse_query
from ...recall.render import record_lines, render_snapshot
from ...time import Clock
from ...types import Disagreement, Limits, Record, SearchHit
from ...validate import KINDS, SENSITIVITIES, TRUSTS, aware, text
from ...validate import members as _names_in
from ..driver import Op, Query
from .recall_cache import (
    OwnerPool,
    RecallCache,
    disagreements_of,
    hits_of,
    pool_disagreements,
    pool_op,
    rank_pool,
)
from .rows import RECORD_COLS, record_from_row
from .search_sql import build_disagreement_query

__all__ = [
    "RERANK_DEPTH",
    "SearchArgs",
    "build_disagreement_query",
    "disagreements_from_rows",
    "list_page_op",
    "search_op",
    "search_pool",
    "snapshot_from_hits",
    "snapshot_op",
    "validate_search_args",
]

RERANK_DEPTH = 20
"""Candidates kept by the pre-score and re-ranked (per query: at least this, or 2 x limit)."""


class SearchArgs:
    """Validated search arguments."""

    __slots__ = ("kinds", "limit", "query", "sensitivities", "trusts")

    def __init__(
        self,
        query: str,
        limit: int,
        kinds: list[str],
        trusts: list[str],
        sensitivities: list[str],
    ) -> None:
        self.query = query
        self.limit = limit
        self.kinds = kinds
        self.trusts = trusts
        self.sensitivities = sensitivities


def _members(field: str, values: Iterable[str] | None, allowed: Sequence[str]) -> list[str]:
    return _names_in(field, values, tuple(allowed))


def validate_search_args(
    query: Any,
    *,
    limit: Any,
    kinds: Iterable[str] | None,
    trusts: Iterable[str] | None,
    sensitivities: Iterable[str] | None,
    limits: Limits,
) -> SearchArgs:
    """Check search arguments.

    Args:
        query: The query text (``""`` means everything visible).
        limit: Top-K, ``None`` for the configured default.
        kinds: Kinds to keep (all when ``None``).
        trusts: Trust levels to keep (all when ``None``).
        sensitivities: Sensitivities to keep (``private`` only when ``None``).
        limits: The configured limits.

    Returns:
        The validated arguments.

    Raises:
        ValidationError: a filter value outside its closed set, a limit outside 1..max, or a
            query that is not text.
        LimitExceededError: a query longer than ``limits.max_query_chars`` characters.
    """
    if not isinstance(query, str):
        raise ValidationError(f"query must be a string, got {type(query).__name__}")
    if "\x00" in query:
        raise ValidationError("query contains a NUL character: remove it")
    text("query", query, max_bytes=4 * limits.max_query_chars + 4, min_bytes=0)
    if len(query) > limits.max_query_chars:
        raise LimitExceededError(
            f"query is {len(query)} characters, more than {limits.max_query_chars}: shorten it"
        )
    k = limits.search_limit if limit is None else limit
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limits.max_search_limit:
        raise ValidationError(f"limit must be an integer in 1..{limits.max_search_limit}")
    return SearchArgs(
        query=query,
        limit=k,
        kinds=_members("kinds", kinds, KINDS),
        trusts=_members("trusts", trusts, TRUSTS),
        sensitivities=_members(
            "sensitivities", sensitivities, ("private",) if sensitivities is None else SENSITIVITIES
        ),
    )


def disagreements_from_rows(
    rows: Iterable[Mapping[str, Any]],
) -> tuple[dict[str, Disagreement], dict[str, list[Record]]]:
    """Group disagreement rows by claim key.

    Args:
        rows: Rows from :func:`build_disagreement_query`.

    Returns:
        ``(by record id, records by claim key)``; ids are ordered by identity precedence then
        id, at most 4 per disagreement.
    """
    return disagreements_of(record_from_row(row) for row in rows)


def _as_of(as_of: datetime | None, clock: Clock) -> datetime:
    return clock() if as_of is None else aware(as_of, "as_of")


def search_op(
    owner: Owner,
    query: str,
    *,
    limit: int | None = None,
    kinds: Iterable[str] | None = None,
    trusts: Iterable[str] | None = None,
    sensitivities: Iterable[str] | None = None,
    as_of: datetime | None = None,
    clock: Clock,
    limits: Limits,
    cache: RecallCache | None = None,
) -> Op[list[SearchHit]]:
    """Lexical search over the owner's visible, active records (DESIGN §6). Reads only.

    One round trip when the owner's pool in ``cache`` is current (see
    :mod:`~.recall_cache`); ranking and disagreement groups are computed in process.

    Raises:
        ValidationError: bad filters or limit.
        LimitExceededError: the query is too long.
    """
    args = validate_search_args(
        query, limit=limit, kinds=kinds, trusts=trusts, sensitivities=sensitivities, limits=limits
    )
    at = _as_of(as_of, clock)
    parsed = parse_query(args.query, now=at)  # the query's one tokenization
    if args.query.strip() and not parsed.tokens:
        return []
    pool = yield from pool_op(owner, RecallCache(1) if cache is None else cache)
    return search_pool(pool, parsed, args, at)


def search_pool(
    pool: OwnerPool, parsed: ParsedQuery, args: SearchArgs, at: datetime
) -> list[SearchHit]:
    """The lexical search of ``parsed`` over a current pool (no I/O; see :func:`search_op`)."""
    ranked = rank_pool(
        pool,
        parsed,
        limit=args.limit,
        depth=max(2 * args.limit, RERANK_DEPTH),
        kinds=args.kinds,
        trusts=args.trusts,
        sensitivities=args.sensitivities,
        at=at,
    )
    by_dis, _groups = pool_disagreements(pool, at, (pool.entries[r.doc.id].record for r in ranked))
    return hits_of(pool, ranked, by_dis)


def _within_limit(
    hits: Sequence[SearchHit], limit: int, groups: Mapping[str, Sequence[Record]] | None
) -> tuple[list[SearchHit], dict[str, Sequence[Record]]]:
    """Hits (and groups) whose rendering shows at most ``limit`` records.

    A plain hit counts one record; a disagreement group counts all its members and, when
    they do not fit in what is left of the limit, is shown by its one marker line ("no value
    selected", counted as one) instead of its sides.
    """
    out: list[SearchHit] = []
    shown: dict[str, Sequence[Record]] = dict(groups or {})
    used = 0
    seen_ids: set[str] = set()
    seen_keys: set[str] = set()
    for hit in hits:
        if used >= limit:
            break
        if hit.record.id in seen_ids:
            continue
        dis = hit.disagreement
        if dis is None:
            seen_ids.add(hit.record.id)
            out.append(hit)
            used += 1
            continue
        if dis.key in seen_keys:
            continue
        seen_keys.add(dis.key)
        members = list(shown.get(dis.key, ())) or [
            h.record for h in hits if h.disagreement is not None and h.disagreement.key == dis.key
        ]
        size = len({m.id for m in members})
        seen_ids.update(m.id for m in members)
        out.append(hit)
        if used + size <= limit:
            used += size
        else:
            # No members: the renderer shows the group's marker (it is incomplete).
            shown[dis.key] = ()
            used += 1
    return out, shown


def snapshot_from_hits(
    hits: Sequence[SearchHit],
    *,
    limit: int,
    max_bytes: int,
    max_tokens: int,
    groups: Mapping[str, Sequence[Record]] | None = None,
    tokenizer: TokenCounter | None = None,
    lines_of: Callable[[Record], tuple[str, ...]] = record_lines,
) -> str:
    """Render merged hits into the framed ``<memory_source>`` block within budget.

    Args:
        hits: Hits in plan order.
        limit: At most this many records are shown; a disagreement group that does not fit
            shows its marker line instead of its sides.
        max_bytes: Byte budget of the whole frame.
        max_tokens: Token budget of the whole frame.
        groups: Disagreement groups by claim key.
        tokenizer: Optional token counter.
        lines_of: ``render.record_lines`` or a memo of it (the pool's
            :meth:`~.recall_cache.OwnerPool.record_lines`).

    Returns:
        The block, or ``""`` when nothing fits.
    """
    budget = Budget(max_bytes=max_bytes, max_tokens=max_tokens, tokenizer=tokenizer)
    chosen, shown = _within_limit(hits, limit, groups)
    return render_snapshot(chosen, budget, limit=len(chosen), groups=shown, lines_of=lines_of)


def snapshot_op(
    owner: Owner,
    *,
    task_step: str | None,
    latest_input: str | None,
    goal: str | None,
    as_of: datetime | None,
    limit: int | None,
    max_bytes: int | None,
    max_tokens: int | None,
    clock: Clock,
    limits: Limits,
    tokenizer: TokenCounter | None = None,
    cache: RecallCache | None = None,
    dense_ids: Sequence[str] = (),
    dense: Callable[[OwnerPool, datetime], Op[list[str]]] | None = None,
) -> Op[str]:
    """The framed recall block: query plan, then standing guidance, in budget.

    One round trip when the owner's pool in ``cache`` is current: the plan's queries,
    standing guidance and disagreement groups are all answered from the pool. ``dense_ids``
    (the dense leg of hybrid recall, best first) are merged after the plan's lexical hits and
    before standing guidance, so the lexical hits keep their places; ``dense``, when given,
    ranks them from the pool instead (``ops/dense.py``).
    """
    at = _as_of(as_of, clock)
    k = limits.snapshot_limit if limit is None else limit
    budget_b = limits.snapshot_bytes if max_bytes is None else max_bytes
    budget_t = limits.snapshot_tokens if max_tokens is None else max_tokens
    for name, val in (("limit", k), ("max_bytes", budget_b), ("max_tokens", budget_t)):
        if isinstance(val, bool) or not isinstance(val, int) or val < 1:
            raise ValidationError(f"{name} must be a positive integer")
    for name, part in (("task_step", task_step), ("latest_input", latest_input), ("goal", goal)):
        if part is not None and not isinstance(part, str):
            raise ValidationError(f"{name} must be a string or None")
    # Each plan query ranks more than ``k``: a disagreement group that collapses to its
    # marker leaves room that the next hits fill.
    per_query = min(k + 4, limits.max_search_limit)
    queries: list[ParsedQuery] = []
    for q in plan_queries(task_step, latest_input, goal, max_chars=limits.max_query_chars):
        validate_search_args(
            q, limit=per_query, kinds=None, trusts=None, sensitivities=None, limits=limits
        )
        planned = parse_query(q, now=at)  # each plan text's one tokenization
        if planned.tokens:
            queries.append(planned)
    pool = yield from pool_op(owner, RecallCache(1) if cache is None else cache)
    if dense is not None:
        dense_ids = yield from dense(pool, at)
    ranked_groups: list[list[Ranked]] = []
    for planned in queries:
        ranked_groups.append(
            rank_pool(
                pool,
                planned,
                limit=per_query,
                depth=max(2 * k, RERANK_DEPTH),
                kinds=KINDS,
                trusts=TRUSTS,
                sensitivities=["private"],
                at=at,
            )
        )
    standing = rank_pool(
        pool,
        "",
        limit=limits.max_search_limit,
        depth=limits.max_search_limit,
        kinds=STANDING_KINDS,
        trusts=STANDING_TRUSTS,
        sensitivities=["private"],
        at=at,
    )
    chosen = [pool.entries[r.doc.id].record for group in ranked_groups for r in group]
    extra = [
        SearchHit(record=pool.entries[i].record, score=0.0)
        for i in dense_ids[:per_query]
        if i in pool.entries and pool.entries[i].record.sensitivity == "private"
    ]
    chosen += [h.record for h in extra]
    chosen += [pool.entries[r.doc.id].record for r in standing]
    by_dis, groups = pool_disagreements(pool, at, chosen)
    extra_hits = [
        SearchHit(record=h.record, score=h.score, disagreement=by_dis.get(h.record.id))
        for h in extra
    ]
    merged = merge_hits(
        [
            *(hits_of(pool, group, by_dis) for group in ranked_groups),
            extra_hits,
            hits_of(pool, standing, by_dis),
        ]
    )
    return snapshot_from_hits(
        merged,
        limit=k,
        max_bytes=budget_b,
        max_tokens=budget_t,
        groups=groups,
        tokenizer=tokenizer,
        lines_of=pool.record_lines,
    )


MAX_PAGE = 10_000
"""The most records one page (``limit`` + ``offset``) may reach."""


def list_page_op(
    owner: Owner,
    *,
    limit: int,
    offset: int = 0,
    kinds: Iterable[str] | None = None,
    levels: Iterable[str] | None = None,
    include_sensitive: bool = False,
    at: datetime,
) -> Op[list[Record]]:
    """One page of the owner's visible, active records unexpired at ``at``, most recently
    changed first (``updated_at``, then id, descending): one statement on the owner's rows
    (the key's scope and identity), whatever the owner holds; no recall pool is loaded.

    ``levels``: only the identities at these levels (default: every visible one).

    Raises:
        ValidationError: a bad limit, offset, kind or level.
    """
    for name, value in (("limit", limit), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationError(f"{name} must be a non-negative integer")
    if limit + offset > MAX_PAGE:
        raise LimitExceededError(f"a page reaches at most {MAX_PAGE} records (limit + offset)")
    wanted = _names_in("kinds", kinds, KINDS)
    chosen = set(_names_in("levels", levels, IDENTITY_LEVELS))
    pairs = [(i.agent_key, i.workspace_key) for i in owner.identities() if i.level in chosen]
    if not pairs or limit == 0:
        return []
    params: list[Any] = [owner.scope_id]
    for a, w in pairs:
        params += [a, w]
    idents = ", ".join("(%s, %s)" for _ in pairs)
    sql = (
        f"SELECT {RECORD_COLS} FROM mg_records WHERE scope_id = %s "
        f"AND (agent_key, workspace_key) IN ({idents}) AND status = 'active' "
        "AND (expires_at IS NULL OR expires_at > %s) AND kind = ANY(%s)"
    )
    params += [aware(at, "as_of"), wanted]
    if not include_sensitive:
        sql += " AND sensitivity <> 'sensitive'"
    sql += " ORDER BY updated_at DESC, id DESC LIMIT %s OFFSET %s"
    params += [limit, offset]
    rows = yield Query(sql, params)
    return [record_from_row(r) for r in rows]
