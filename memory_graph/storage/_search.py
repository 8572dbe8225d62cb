"""Recall in PostgreSQL: SQL builders (no I/O), ranking of fetched rows, and the search and
snapshot ops that the sync and async stores drive.

Candidates are the owner's visible, active, unexpired rows that pass the filters and share at
least one query token (looked up in ``mg_record_tokens`` by ``(scope_id, token)``, so other
users' rows are never touched). An empty query means everything visible. Query tokens that are
function words are not used for the lookup when the query has other tokens. Ranking happens in
Python with :mod:`memory_graph.rank` on the fetched candidates, with IDF over the owner's
visible pool (``pool_n``) and document frequencies over the candidates.

Disagreement is computed before matching and top-K over every visible, active, unexpired,
non-sensitive record with a claim, independent of the query and filters.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .._identity import Owner
from .._time import Clock
from .._types import Disagreement, Limits, Record, SearchHit
from ..budget import Budget, TokenCounter
from ..errors import LimitExceededError, ValidationError
from ..query import STANDING_KINDS, STANDING_TRUSTS, merge_hits, plan_queries
from ..rank import CorpusStats, Document, corpus_stats, is_stop_term, rank, term_of
from ..render import render_snapshot
from ..tokenize import index_text, index_tokens, tokenize
from ..validate import KINDS, SENSITIVITIES, TRUSTS, aware
from ._driver import Op, Query
from ._rows import RECORD_COLS, record_from_row, visible

__all__ = [
    "SearchArgs",
    "build_candidate_query",
    "build_disagreement_query",
    "disagreements_from_rows",
    "lookup_tokens",
    "rank_hits",
    "search_op",
    "snapshot_from_hits",
    "snapshot_op",
    "validate_search_args",
]

_R_COLS = ", ".join("r." + c.strip() for c in RECORD_COLS.split(","))
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
    if values is None:
        return list(allowed)
    if isinstance(values, str):
        values = [values]
    out = sorted(set(values))
    bad = [v for v in out if v not in allowed]
    if bad:
        raise ValidationError(f"unknown {field} {bad}: allowed are {', '.join(allowed)}")
    return out


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


def lookup_tokens(query: str) -> list[str]:
    """Query tokens used to find candidates: function words are left out when others remain.

    Args:
        query: The query text.

    Returns:
        Sorted distinct tokens (empty for a blank query).

    Examples:
        >>> lookup_tokens("What did Caroline paint?")
        ['caroline', 'paint']
    """
    tokens = sorted(set(tokenize(query)))
    kept = [t for t in tokens if not is_stop_term(term_of(t))]
    return kept or tokens


def build_candidate_query(
    owner: Owner,
    tokens: Sequence[str],
    *,
    kinds: Sequence[str],
    trusts: Sequence[str],
    sensitivities: Sequence[str],
    as_of: datetime,
    empty_limit: int = 400,
) -> tuple[str, list[Any]]:
    """SQL for the candidates of a search, with the owner's visible pool size (``pool_n``).

    Args:
        owner: The owner; only its four identities are visible.
        tokens: Lookup tokens (:func:`lookup_tokens`); empty means everything visible, best
            priors first, at most ``empty_limit`` rows.
        kinds: Kinds to keep.
        trusts: Trust levels to keep.
        sensitivities: Sensitivities to keep.
        as_of: Rows must be unexpired at this instant.
        empty_limit: Row cap for an empty query.

    Returns:
        The SQL text and its parameters.
    """
    cond, params = visible(owner, "r")
    pool_cond, pool_params = visible(owner, "p")
    filters = (
        "r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > %s) "
        "AND r.kind = ANY(%s) AND r.trust = ANY(%s) AND r.sensitivity = ANY(%s)"
    )
    pool = (
        f"(SELECT count(*) FROM mg_records p WHERE {pool_cond} AND p.status = 'active' "
        "AND p.sensitivity = ANY(%s)) AS pool_n"
    )
    args: list[Any] = [*pool_params, list(sensitivities), *params, as_of]
    args += [list(kinds), list(trusts), list(sensitivities)]
    sql = f"SELECT {_R_COLS}, {pool} FROM mg_records r WHERE {cond} AND {filters}"
    if tokens:
        sql += (
            " AND r.id IN (SELECT t.record_id FROM mg_record_tokens t "
            "WHERE t.scope_id = %s AND t.token = ANY(%s))"
        )
        args += [owner.scope_id, list(tokens)]
    else:
        sql += (
            " ORDER BY CASE r.trust WHEN 'user-confirmed' THEN 0 WHEN 'agent-observed' THEN 1 "
            "ELSE 2 END, r.confidence DESC, r.id LIMIT %s"
        )
        args.append(empty_limit)
    return sql, args


def build_disagreement_query(owner: Owner, *, as_of: datetime) -> tuple[str, list[Any]]:
    """SQL for every record in a disagreement group among the owner's visible records.

    A group is the visible, active, unexpired, non-sensitive records whose claims share a key
    with at least two distinct values.

    Args:
        owner: The owner.
        as_of: Activity instant.

    Returns:
        The SQL text and its parameters; rows carry the record columns.
    """
    cond, params = visible(owner, "r")
    inner_cond, inner_params = visible(owner, "c")
    live = (
        "{a}.status = 'active' AND ({a}.expires_at IS NULL OR {a}.expires_at > %s) AND "
        "{a}.sensitivity = 'private' AND {a}.claim_key IS NOT NULL"
    )
    sql = (
        f"SELECT {_R_COLS} FROM mg_records r WHERE {cond} AND {live.format(a='r')} "
        f"AND r.claim_key IN (SELECT c.claim_key FROM mg_records c WHERE {inner_cond} "
        f"AND {live.format(a='c')} GROUP BY c.claim_key "
        "HAVING count(DISTINCT c.claim_value) >= 2)"
    )
    return sql, [*params, as_of, *inner_params, as_of]


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


_TOKEN_CACHE: OrderedDict[tuple[str, str, int, str], tuple[str, ...]] = OrderedDict()
_TOKEN_CACHE_SIZE = 50_000


def _doc_tokens(record: Record) -> tuple[str, ...]:
    """Index tokens with repeats, cached per record version (the stored array is a set)."""
    key = (record.identity.scope_id, record.id, record.version, record.content_hash)
    cached = _TOKEN_CACHE.get(key)
    if cached is not None:
        _TOKEN_CACHE.move_to_end(key)
        return cached
    tokens = tuple(index_tokens(record.content, record.knowledge))
    _TOKEN_CACHE[key] = tokens
    if len(_TOKEN_CACHE) > _TOKEN_CACHE_SIZE:
        _TOKEN_CACHE.popitem(last=False)
    return tokens


def _document(record: Record) -> Document:
    return Document(
        id=record.id,
        tokens=_doc_tokens(record),
        text=index_text(record.content, record.knowledge),
        trust=record.trust,
        confidence=record.confidence,
        precedence=record.identity.precedence,
        dedup_key=f"{record.content_hash}|{record.knowledge!r}",
        sensitive=record.sensitivity == "sensitive",
    )


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
        rows: Rows from :func:`build_candidate_query` (record columns plus ``pool_n``).
        query: The query text.
        limit: Top-K.
        disagreements: Disagreement by record id (:func:`disagreements_from_rows`).
        include_sensitive: Keep sensitive rows (the SQL already applied the filter).

    Returns:
        At most ``limit`` hits, best first, duplicates dropped before the limit.
    """
    records = {}
    docs: list[Document] = []
    for row in rows:
        record = record_from_row(row)
        records[record.id] = record
        docs.append(_document(record))
    if not docs:
        return []
    pool_n = max(int(rows[0].get("pool_n") or 0), len(docs))
    stats: CorpusStats = corpus_stats(docs, n_docs=pool_n)
    ranked = rank(query, docs, limit=limit, stats=stats, include_sensitive=include_sensitive)
    dis = disagreements or {}
    return [
        SearchHit(record=records[r.doc.id], score=r.score, disagreement=dis.get(r.doc.id))
        for r in ranked
    ]


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

    Raises:
        ValidationError: bad filters or limit.
        LimitExceededError: the query is too long.
    """
    args = validate_search_args(
        query, limit=limit, kinds=kinds, trusts=trusts, sensitivities=sensitivities, limits=limits
    )
    at = _as_of(as_of, clock)
    tokens = lookup_tokens(args.query)
    if args.query.strip() and not tokens:
        return []
    sql, params = build_candidate_query(
        owner,
        tokens,
        kinds=args.kinds,
        trusts=args.trusts,
        sensitivities=args.sensitivities,
        as_of=at,
        empty_limit=max(4 * args.limit, 100),
    )
    rows = yield Query(sql, params)
    if not rows:
        return []
    dsql, dparams = build_disagreement_query(owner, as_of=at)
    drows = yield Query(dsql, dparams)
    by_id, _groups = disagreements_from_rows(drows)
    return rank_hits(rows, args.query, limit=args.limit, disagreements=by_id)


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
    """The framed recall block: query plan, then standing guidance, in budget."""
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
    groups_of_hits: list[list[SearchHit]] = []
    for q in plan_queries(task_step, latest_input, goal, max_chars=limits.max_query_chars):
        hits = yield from search_op(owner, q, limit=per_query, as_of=at, clock=clock, limits=limits)
        groups_of_hits.append(hits)
    standing = yield from search_op(
        owner,
        "",
        limit=limits.max_search_limit,
        kinds=list(STANDING_KINDS),
        trusts=list(STANDING_TRUSTS),
        as_of=at,
        clock=clock,
        limits=limits,
    )
    groups_of_hits.append(standing)
    merged = merge_hits(groups_of_hits)
    groups: dict[str, list[Record]] = {}
    if any(h.disagreement is not None for h in merged):
        dsql, dparams = build_disagreement_query(owner, as_of=at)
        drows = yield Query(dsql, dparams)
        _by_id, groups = disagreements_from_rows(drows)
    return snapshot_from_hits(
        merged,
        limit=k,
        max_bytes=budget_b,
        max_tokens=budget_t,
        groups=groups,
        tokenizer=tokenizer,
    )
