"""Recall in PostgreSQL: ranking of fetched rows, and the search and snapshot ops that the
sync and async stores drive (the SQL is built in :mod:`._search_sql`).

A search is two stages. **In SQL** (one statement), the pool size and each query term's
document frequency are read from the per-identity statistics tables, postings are read for
the query's selective terms only (by ``(scope_id, token)`` and the owner's four identities, so
other users' and identities' rows are never read), and the best :data:`RERANK_DEPTH`
candidates by an IDF-sum pre-score are fetched with their record columns. **In Python**,
:mod:`memory_graph.rank` re-ranks them with the full formula (BM25, coverage, phrase bonus,
priors, feedback), using ``N`` and the pool frequencies for the query terms. An empty query
means everything visible, best priors first. A snapshot answers all its plan queries with one
candidate statement.

Disagreement is computed over every visible, active, unexpired, non-sensitive record with a
claim, independent of the query and filters; it is read only for the claim keys of the hits
(a record without a claim is in no group), so a search whose hits carry no claim needs no
second round trip.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .._identity import Owner
from .._time import Clock
from .._types import Disagreement, Limits, Record, SearchHit
from ..recall.budget import Budget, TokenCounter
from ..errors import LimitExceededError, ValidationError
from ..recall.plan import STANDING_KINDS, STANDING_TRUSTS, merge_hits, plan_queries
from ..recall.rank import CorpusStats, Document, Ranked, corpus_stats, rank
from ..render import render_snapshot
from ..recall.tokenize import index_tokens
from ..validate import KINDS, SENSITIVITIES, TRUSTS, aware, text
from ..validate import members as _names_in
from ._driver import Op, Query
from ._rows import identity_from_row, knowledge_from_json, record_from_row
from ._search_sql import (
    LexicalPlan,
    build_browse_query,
    build_candidate_query,
    build_disagreement_query,
    lookup_tokens,
    term_variants,
)

__all__ = [
    "RERANK_DEPTH",
    "LexicalPlan",
    "SearchArgs",
    "build_candidate_query",
    "build_disagreement_query",
    "disagreements_from_rows",
    "lookup_tokens",
    "rank_hits",
    "search_op",
    "snapshot_from_hits",
    "snapshot_op",
    "term_variants",
    "validate_search_args",
]

RERANK_DEPTH = 200
"""Candidates pre-scored in SQL that are re-ranked in Python (per query, at least)."""

_MAX_DISAGREEMENT_IDS = 4


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
    groups: dict[str, list[Record]] = {}
    for row in rows:
        groups.setdefault(row["claim_key"], []).append(record_from_row(row))
    by_id: dict[str, Disagreement] = {}
    for key, members in groups.items():
        members.sort(key=lambda r: (r.identity.precedence, r.id))
        values = {m.knowledge.claim.value for m in members if m.knowledge and m.knowledge.claim}
        if len(values) < 2:
            continue
        dis = Disagreement(
            key=key,
            count=len(members),
            ids=tuple(m.id for m in members[:_MAX_DISAGREEMENT_IDS]),
        )
        for m in members:
            by_id[m.id] = dis
    return by_id, groups


_DOC_CACHE: OrderedDict[tuple[Any, ...], Document] = OrderedDict()
_DOC_CACHE_SIZE = 50_000


def _row_document(row: Mapping[str, Any]) -> Document:
    """A ranking document from a candidate row, cached per record version and ranking fields."""
    key = (
        row["scope_id"],
        str(row["id"]),
        int(row["version"]),
        row["content_hash"],
        row["trust"],
        row["confidence"],
        row["sensitivity"],
        row["level"],
        row["agent_key"],
        row["workspace_key"],
    )
    doc = _DOC_CACHE.get(key)
    if doc is not None:
        _DOC_CACHE.move_to_end(key)
        return doc
    knowledge = knowledge_from_json(row["knowledge"]) if row["knowledge"] else None
    doc = Document(
        id=key[1],
        # Index tokens with repeats (the stored array is a set).
        tokens=tuple(index_tokens(row["content"], knowledge)),
        text=row["content"],
        trust=row["trust"],
        confidence=float(row["confidence"]),
        precedence=identity_from_row(row).precedence,
        dedup_key=f"{row['content_hash']}|{knowledge!r}",
        sensitive=row["sensitivity"] == "sensitive",
        cache_key="|".join(map(str, key[:4])),
    )
    _DOC_CACHE[key] = doc
    if len(_DOC_CACHE) > _DOC_CACHE_SIZE:
        _DOC_CACHE.popitem(last=False)
    return doc


class _Stats:
    """Pool statistics of a candidate statement (its ``stats`` column, parsed once)."""

    __slots__ = ("df", "n")

    def __init__(self, raw: Any) -> None:
        data = json.loads(raw) if isinstance(raw, str) else (raw or {})
        self.n = int(data.get("n") or 0)
        self.df: dict[int, dict[str, int]] = {}
        for key, value in (data.get("df") or {}).items():
            q, _, term = str(key).partition("|")
            self.df.setdefault(int(q), {})[term] = int(value)


def _rank_rows(
    rows: Sequence[Mapping[str, Any]],
    query: str,
    *,
    limit: int,
    include_sensitive: bool,
    pool_n: int = 0,
    pool_df: Mapping[str, int] | None = None,
) -> list[Ranked]:
    docs = [_row_document(row) for row in rows]
    n = max(pool_n, len(docs))
    stats: CorpusStats = corpus_stats(docs, n_docs=n)
    if pool_df:
        # Query terms: frequencies over the whole visible pool (from SQL); other terms (used
        # by feedback) keep their frequency among the candidates.
        df = dict(stats.df)
        df.update(pool_df)
        stats = CorpusStats(n_docs=n, avgdl=stats.avgdl, df=df)
    return rank(query, docs, limit=limit, stats=stats, include_sensitive=include_sensitive)


def _hits(
    ranked: Sequence[Ranked],
    rows: Sequence[Mapping[str, Any]],
    disagreements: Mapping[str, Disagreement] | None,
) -> list[SearchHit]:
    by_id = {str(row["id"]): row for row in rows}
    dis = disagreements or {}
    return [
        SearchHit(
            record=record_from_row(by_id[r.doc.id]), score=r.score, disagreement=dis.get(r.doc.id)
        )
        for r in ranked
    ]


def rank_hits(
    rows: Sequence[Mapping[str, Any]],
    query: str,
    *,
    limit: int,
    disagreements: Mapping[str, Disagreement] | None = None,
    include_sensitive: bool = True,
) -> list[SearchHit]:
    """Rank candidate rows for a query.

    Args:
        rows: Rows from :func:`build_candidate_query` (one plan) or
            :func:`build_browse_query`.
        query: The query text.
        limit: Top-K.
        disagreements: Disagreement by record id (:func:`disagreements_from_rows`).
        include_sensitive: Keep sensitive rows (the SQL already applied the filter).

    Returns:
        At most ``limit`` hits, best first, duplicates dropped before the limit.
    """
    if not rows:
        return []
    stats = _Stats(rows[0].get("stats"))
    ranked = _rank_rows(
        rows,
        query,
        limit=limit,
        include_sensitive=include_sensitive,
        pool_n=stats.n,
        pool_df=stats.df.get(0),
    )
    return _hits(ranked, rows, disagreements)


def _claim_keys(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Claim keys of rows that can be in a disagreement group (private, with a claim)."""
    return sorted(
        {r["claim_key"] for r in rows if r["claim_key"] and r["sensitivity"] == "private"}
    )


def _disagreements(
    owner: Owner, at: datetime, rows: Sequence[Mapping[str, Any]]
) -> Op[tuple[dict[str, Disagreement], dict[str, list[Record]]]]:
    """Disagreement groups of the claim keys among ``rows`` (no round trip without any)."""
    keys = _claim_keys(rows)
    if not keys:
        return {}, {}
    dsql, dparams = build_disagreement_query(owner, as_of=at, claim_keys=keys)
    drows = yield Query(dsql, dparams)
    return disagreements_from_rows(drows)


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
) -> Op[list[SearchHit]]:
    """Lexical search over the owner's visible, active records (DESIGN §6). Reads only.

    One round trip, plus one for disagreement groups when a hit has a claim.

    Raises:
        ValidationError: bad filters or limit.
        LimitExceededError: the query is too long.
    """
    args = validate_search_args(
        query, limit=limit, kinds=kinds, trusts=trusts, sensitivities=sensitivities, limits=limits
    )
    at = _as_of(as_of, clock)
    plan: LexicalPlan | None = None
    if args.query.strip():
        plan = LexicalPlan(args.query)
        if not plan.tokens:
            return []
    sql, params = build_candidate_query(
        owner,
        plan,
        kinds=args.kinds,
        trusts=args.trusts,
        sensitivities=args.sensitivities,
        as_of=at,
        depth=max(4 * args.limit, 100) if plan is None else max(5 * args.limit, RERANK_DEPTH),
    )
    rows = yield Query(sql, params)
    if not rows:
        return []
    if plan is None:
        ranked = _rank_rows(rows, "", limit=args.limit, include_sensitive=True)
    else:
        stats = _Stats(rows[0]["stats"])
        ranked = _rank_rows(
            rows,
            args.query,
            limit=args.limit,
            include_sensitive=True,
            pool_n=stats.n,
            pool_df=stats.df.get(0),
        )
    by_id = {str(row["id"]): row for row in rows}
    by_dis, _groups = yield from _disagreements(owner, at, [by_id[r.doc.id] for r in ranked])
    return _hits(ranked, rows, by_dis)


def snapshot_from_hits(
    hits: Sequence[SearchHit],
    *,
    limit: int,
    max_bytes: int,
    max_tokens: int,
    groups: Mapping[str, Sequence[Record]] | None = None,
    tokenizer: TokenCounter | None = None,
) -> str:
    """Render merged hits into the framed ``<memory_source>`` block within budget.

    Args:
        hits: Hits in plan order.
        limit: At most this many record blocks.
        max_bytes: Byte budget of the whole frame.
        max_tokens: Token budget of the whole frame.
        groups: Disagreement groups by claim key.
        tokenizer: Optional token counter.

    Returns:
        The block, or ``""`` when nothing fits.
    """
    budget = Budget(max_bytes=max_bytes, max_tokens=max_tokens, tokenizer=tokenizer)
    return render_snapshot(hits, budget, limit=limit, groups=groups)


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
) -> Op[str]:
    """The framed recall block: query plan, then standing guidance, in budget.

    Every plan query's candidates come from one statement, standing guidance from a second,
    and disagreement groups from a third only when a hit has a claim.
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
    per_query = min(k, limits.max_search_limit)
    queries: list[str] = []
    plans: list[LexicalPlan] = []
    for q in plan_queries(task_step, latest_input, goal, max_chars=limits.max_query_chars):
        validate_search_args(
            q, limit=per_query, kinds=None, trusts=None, sensitivities=None, limits=limits
        )
        plan = LexicalPlan(q)
        if plan.tokens:
            queries.append(q)
            plans.append(plan)
    ranked_groups: list[list[Ranked]] = []
    all_rows: dict[str, Mapping[str, Any]] = {}
    if plans:
        sql, params = build_candidate_query(
            owner,
            plans,
            kinds=KINDS,
            trusts=TRUSTS,
            sensitivities=["private"],
            as_of=at,
            depth=max(5 * per_query, RERANK_DEPTH),
        )
        rows = yield Query(sql, params)
        stats = _Stats(rows[0]["stats"]) if rows else None
        for i, q in enumerate(queries):
            mine = [row for row in rows if row["q"] == i]
            if not mine or stats is None:
                ranked_groups.append([])
                continue
            ranked_groups.append(
                _rank_rows(
                    mine,
                    q,
                    limit=per_query,
                    include_sensitive=True,
                    pool_n=stats.n,
                    pool_df=stats.df.get(i),
                )
            )
            for row in mine:
                all_rows.setdefault(str(row["id"]), row)
    ssql, sparams = build_browse_query(
        owner,
        kinds=STANDING_KINDS,
        trusts=STANDING_TRUSTS,
        sensitivities=["private"],
        as_of=at,
        depth=max(4 * limits.max_search_limit, 100),
    )
    srows = yield Query(ssql, sparams)
    if srows:
        ranked_groups.append(
            _rank_rows(srows, "", limit=limits.max_search_limit, include_sensitive=True)
        )
        for row in srows:
            all_rows.setdefault(str(row["id"]), row)
    chosen = [all_rows[r.doc.id] for group in ranked_groups for r in group]
    by_dis, groups = yield from _disagreements(owner, at, chosen)
    merged = merge_hits(_hits(group, chosen, by_dis) for group in ranked_groups)
    return snapshot_from_hits(
        merged,
        limit=k,
        max_bytes=budget_b,
        max_tokens=budget_t,
        groups=groups,
        tokenizer=tokenizer,
    )
