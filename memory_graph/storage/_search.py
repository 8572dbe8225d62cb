"""Recall in PostgreSQL: SQL builders (no I/O), ranking of fetched rows, and the search and
snapshot ops that the sync and async stores drive.

A search is two stages. **In SQL**, the query's tokens (function words left out when others
remain, each expanded to the inflections that rank as the same term) are looked up in
``mg_postings`` by ``(scope_id, token)`` and the owner's four identities, so other users' and
identities' rows are never read. That gives every query term's document frequency over the
owner's visible, active, unexpired pool of the asked sensitivities, the pool size ``N``, and an
IDF-sum pre-score per candidate; the best :data:`RERANK_DEPTH` candidates that pass the filters
are fetched. **In Python**, :mod:`memory_graph.rank` re-ranks them with the full formula (BM25,
coverage, phrase bonus, priors, feedback), using ``N`` and the pool frequencies for the query
terms. An empty query means everything visible, best priors first.

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
from ..rank import (
    CorpusStats,
    Document,
    Ranked,
    corpus_stats,
    is_stop_term,
    query_terms,
    rank,
    term_of,
)
from ..render import render_snapshot
from ..tokenize import index_tokens, tokenize
from ..validate import KINDS, SENSITIVITIES, TRUSTS, aware
from ._driver import Op, Query
from ._rows import (
    RECORD_COLS,
    identity_from_row,
    knowledge_from_json,
    record_from_row,
    visible,
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
"""Candidates pre-scored in SQL that are re-ranked in Python (per search, at least)."""

_R_COLS = ", ".join("r." + c.strip() for c in RECORD_COLS.split(","))
_MAX_DISAGREEMENT_IDS = 4
_SLIM_COLS = (
    "r.scope_id, r.id::text AS id, r.level, r.agent_key, r.workspace_key, r.content, "
    "r.knowledge, r.trust, r.confidence, r.version, r.content_hash, r.sensitivity"
)


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


_INFLECTIONS = ("", "s", "es", "ed", "d", "ing", "ings", "ly")


def term_variants(token: str) -> list[str]:
    """Tokens that rank as the same term as ``token`` (its common English inflections).

    Ranking compares stemmed terms (:func:`memory_graph.rank.term_of`), so a stored
    ``painted`` matches a query ``painting``. The index holds tokens; these are the tokens
    looked up for one query token.

    Args:
        token: A query token.

    Returns:
        Sorted distinct tokens whose term equals the token's term (the token included).

    Examples:
        >>> term_variants("painting")[:5]
        ['paint', 'painted', 'paintes', 'painting', 'paintings']
    """
    term = term_of(token)
    out = {token}
    if term.isascii() and term.isalpha() and len(term) >= 3:
        cands = [term + suffix for suffix in _INFLECTIONS]
        cands += [term + "e" + suffix for suffix in ("", "s", "d")]
        cands += [term + term[-1] + suffix for suffix in ("ed", "ing")]
        if term.endswith("y"):
            cands += [term[:-1] + "ies", term[:-1] + "ied"]
        out.update(c for c in cands if term_of(c) == term)
    return sorted(out)


class LexicalPlan:
    """What a non-empty query looks up: index tokens, each with its ranking term and weight."""

    __slots__ = ("terms", "tokens", "weights")

    def __init__(self, query: str) -> None:
        qt = query_terms(query)
        lookup = lookup_tokens(query)
        tokens: list[str] = []
        terms: list[str] = []
        weights: list[float] = []
        seen: set[str] = set()
        for tok in lookup:
            term = term_of(tok)
            weight = qt.weights.get(term)
            if weight is None:  # a function word kept only because nothing else remained
                weight = 1.0
            for variant in term_variants(tok):
                if variant not in seen:
                    seen.add(variant)
                    tokens.append(variant)
                    terms.append(term)
                    weights.append(weight)
        self.tokens = tokens
        self.terms = terms
        self.weights = weights


def build_candidate_query(
    owner: Owner,
    plan: LexicalPlan | None,
    *,
    kinds: Sequence[str],
    trusts: Sequence[str],
    sensitivities: Sequence[str],
    as_of: datetime,
    depth: int = 200,
) -> tuple[str, list[Any]]:
    """SQL for the candidates of a search, scored in the database first.

    With a query, the owner's postings (``mg_postings``, by ``(scope_id, token)``, restricted
    to the owner's four identities, unexpired rows and the asked sensitivities) give each
    term's document frequency ``df`` over that pool, and each matching record a pre-score
    ``sum over its matched terms of w * ln(1 + (N - df + 0.5) / (df + 0.5))``. The ``depth``
    best (then by id) that pass the kind and trust filters are returned, re-checked against
    ``mg_records``, with ``pool_n`` (``N``, from an index-only count) and ``dfs`` (term ->
    ``df``). Without a query: everything visible, best priors first, at most ``depth`` rows.

    Args:
        owner: The owner; only its four identities are visible.
        plan: The lexical plan, ``None`` for an empty query.
        kinds: Kinds to keep.
        trusts: Trust levels to keep.
        sensitivities: Sensitivities to keep.
        as_of: Rows must be unexpired at this instant.
        depth: How many candidates to return.

    Returns:
        The SQL text and its parameters.
    """
    cond, params = visible(owner, "r")
    filters = (
        "r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > %s) "
        "AND r.kind = ANY(%s) AND r.trust = ANY(%s) AND r.sensitivity = ANY(%s)"
    )
    fargs: list[Any] = [as_of, list(kinds), list(trusts), list(sensitivities)]
    if plan is None:
        sql = (
            f"SELECT {_R_COLS} FROM mg_records r WHERE {cond} AND {filters} "
            "ORDER BY CASE r.trust WHEN 'user-confirmed' THEN 0 WHEN 'agent-observed' THEN 1 "
            "ELSE 2 END, r.confidence DESC, r.id LIMIT %s"
        )
        return sql, [*params, *fargs, depth]
    # The owner's identities are exactly {user, agent} x {global, workspace}, so two ANY
    # conditions select them and stay index conditions (a row IN list would not).
    agents = sorted({i.agent_key for i in owner.identities()})
    spaces = sorted({i.workspace_key for i in owner.identities()})
    uterms = sorted(set(plan.terms))
    uweights = [plan.weights[plan.terms.index(t)] for t in uterms]
    # Every CTE is MATERIALIZED and the record fetch is fenced (OFFSET 0) so the plan does not
    # depend on table statistics: postings by (scope_id, token, identity) in the primary key,
    # the pool size from the covering partial index, records by primary key.
    sql = f"""
WITH hits AS MATERIALIZED (
    SELECT p.token, p.record_id, p.kind, p.trust FROM mg_postings p
    WHERE p.scope_id = %s AND p.token = ANY(%s) AND p.agent_key = ANY(%s)
      AND p.workspace_key = ANY(%s) AND p.sensitivity = ANY(%s)
      AND (p.expires_at IS NULL OR p.expires_at > %s)
), th AS MATERIALIZED (
    SELECT DISTINCT (%s::text[])[array_position(%s::text[], h.token)] AS term,
           h.record_id, h.kind, h.trust
    FROM hits h
), df AS MATERIALIZED (
    SELECT term, count(*) AS df FROM th GROUP BY term
), pool AS MATERIALIZED (
    SELECT count(*) AS n FROM mg_records x
    WHERE x.scope_id = %s AND x.agent_key = ANY(%s) AND x.workspace_key = ANY(%s)
      AND x.sensitivity = ANY(%s) AND x.status = 'active'
      AND (x.expires_at IS NULL OR x.expires_at > %s)
), top AS MATERIALIZED (
    SELECT th.record_id,
           sum(qw.w * ln(1.0 + (pool.n - df.df + 0.5) / (df.df + 0.5))) AS pre
    FROM th JOIN df USING (term)
    JOIN (SELECT unnest(%s::text[]) AS term, unnest(%s::float8[]) AS w) qw USING (term)
    CROSS JOIN pool
    WHERE th.kind = ANY(%s) AND th.trust = ANY(%s)
    GROUP BY th.record_id
    ORDER BY pre DESC, th.record_id
    LIMIT %s
)
SELECT {_SLIM_COLS}, top.pre, (SELECT n FROM pool) AS pool_n,
       (SELECT json_object_agg(term, df) FROM df) AS dfs
FROM top CROSS JOIN LATERAL (
    SELECT * FROM mg_records r0 WHERE r0.scope_id = %s AND r0.id = top.record_id OFFSET 0
) r
WHERE {cond} AND {filters}
ORDER BY top.pre DESC, r.id
"""
    sens = list(sensitivities)
    args: list[Any] = [owner.scope_id, plan.tokens, agents, spaces, sens, as_of]
    args += [plan.terms, plan.tokens]
    args += [owner.scope_id, agents, spaces, sens, as_of]
    args += [uterms, uweights, list(kinds), list(trusts), depth, owner.scope_id]
    args += [*params, *fargs]
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


def _row_document(row: Mapping[str, Any]) -> Document:
    """A ranking document from a candidate row (:data:`_SLIM_COLS` or the record columns)."""
    key = (row["scope_id"], str(row["id"]), int(row["version"]), row["content_hash"])
    knowledge = knowledge_from_json(row["knowledge"]) if row["knowledge"] else None
    tokens = _TOKEN_CACHE.get(key)
    if tokens is not None:
        _TOKEN_CACHE.move_to_end(key)
    else:
        # Index tokens with repeats, cached per record version (the stored array is a set).
        tokens = tuple(index_tokens(row["content"], knowledge))
        _TOKEN_CACHE[key] = tokens
        if len(_TOKEN_CACHE) > _TOKEN_CACHE_SIZE:
            _TOKEN_CACHE.popitem(last=False)
    return Document(
        id=key[1],
        tokens=tokens,
        text=row["content"],
        trust=row["trust"],
        confidence=float(row["confidence"]),
        precedence=identity_from_row(row).precedence,
        dedup_key=f"{row['content_hash']}|{knowledge!r}",
        sensitive=row["sensitivity"] == "sensitive",
        cache_key="|".join(map(str, key)),
    )


def _rank_rows(
    rows: Sequence[Mapping[str, Any]], query: str, *, limit: int, include_sensitive: bool
) -> list[Ranked]:
    docs = [_row_document(row) for row in rows]
    pool_n = max(int(rows[0].get("pool_n") or 0), len(docs))
    stats: CorpusStats = corpus_stats(docs, n_docs=pool_n)
    pool_df = rows[0].get("dfs")
    if pool_df:
        # Query terms: frequencies over the whole visible pool (from SQL); other terms (used
        # by feedback) keep their frequency among the candidates.
        df = dict(stats.df)
        df.update({str(t): int(v) for t, v in pool_df.items()})
        stats = CorpusStats(n_docs=pool_n, avgdl=stats.avgdl, df=df)
    return rank(query, docs, limit=limit, stats=stats, include_sensitive=include_sensitive)


def rank_hits(
    rows: Sequence[Mapping[str, Any]],
    query: str,
    *,
    limit: int,
    disagreements: Mapping[str, Disagreement] | None = None,
    include_sensitive: bool = True,
    records: Mapping[str, Record] | None = None,
) -> list[SearchHit]:
    """Rank candidate rows for a query.

    Args:
        rows: Rows from :func:`build_candidate_query`.
        query: The query text.
        limit: Top-K.
        disagreements: Disagreement by record id (:func:`disagreements_from_rows`).
        include_sensitive: Keep sensitive rows (the SQL already applied the filter).
        records: Full records by id, when ``rows`` carry only the ranking columns.

    Returns:
        At most ``limit`` hits, best first, duplicates dropped before the limit.
    """
    if not rows:
        return []
    ranked = _rank_rows(rows, query, limit=limit, include_sensitive=include_sensitive)
    by_id = {str(row["id"]): row for row in rows}
    dis = disagreements or {}
    hits = []
    for r in ranked:
        if records is not None:
            if r.doc.id not in records:  # changed visibility since the first statement
                continue
            record = records[r.doc.id]
        else:
            record = record_from_row(by_id[r.doc.id])
        hits.append(SearchHit(record=record, score=r.score, disagreement=dis.get(r.doc.id)))
    return hits


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
    dsql, dparams = build_disagreement_query(owner, as_of=at)
    drows = yield Query(dsql, dparams)
    by_id, _groups = disagreements_from_rows(drows)
    if plan is None:
        return rank_hits(rows, args.query, limit=args.limit, disagreements=by_id)
    # Candidates carry only the ranking columns; the full records are read for the top-K.
    ranked = _rank_rows(rows, args.query, limit=args.limit, include_sensitive=True)
    if not ranked:
        return []
    cond, cparams = visible(owner, "r")
    full = yield Query(
        f"SELECT {_R_COLS} FROM mg_records r WHERE {cond} AND r.id = ANY(%s::uuid[])",
        [*cparams, [r.doc.id for r in ranked]],
    )
    records = {str(row["id"]): record_from_row(row) for row in full}
    return rank_hits(rows, args.query, limit=args.limit, disagreements=by_id, records=records)


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
