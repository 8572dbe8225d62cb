"""Recall SQL builders (no I/O): the lexical plan of a query, the candidate statement, the
browse statement of an empty query, and the disagreement statement.

The candidate statement answers one or several queries (a snapshot's query plan) in one round
trip. Statistics are read, not counted: ``mg_pool_stats`` gives the pool size ``N`` and
``mg_term_df`` each query token's document frequency, both for the owner's four identities
and the asked sensitivities only (schema v6; they count active rows regardless of expiry).
Postings are then read only for a query's *selective* terms (``df <= max(RARE_MIN,
RARE_FRACTION * N)``; the rarest term when none is), so a common word never makes the
statement read a large share of the pool. Each query keeps its ``depth`` best candidates by
an IDF-sum pre-score over those terms; common terms still count in the Python re-rank, which
scores every query term on the fetched text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .._identity import Owner
from ..recall.rank import is_stop_term, query_terms, term_of
from ..recall.tokenize import tokenize
from ._rows import RECORD_COLS, visible

__all__ = [
    "CANDIDATE_COLS",
    "RARE_FRACTION",
    "RARE_MIN",
    "LexicalPlan",
    "build_browse_query",
    "build_candidate_query",
    "build_disagreement_query",
    "lookup_tokens",
    "term_variants",
]

RARE_MIN = 1000
"""A term whose document frequency is at most this is always read from the postings."""
RARE_FRACTION = 0.1
"""... and so is one whose document frequency is at most this share of the pool."""

CANDIDATE_COLS = ", ".join(
    "r." + c.strip() for c in RECORD_COLS.split(",") if c.strip() != "tokens"
)
"""The record columns of candidate rows (the stored token array is not needed)."""

_TRUST_ORDER = (
    "CASE r.trust WHEN 'user-confirmed' THEN 0 WHEN 'agent-observed' THEN 1 ELSE 2 END, "
    "r.confidence DESC, r.id"
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
        tokens: list[str] = []
        terms: list[str] = []
        weights: list[float] = []
        seen: set[str] = set()
        for tok in lookup_tokens(query):
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


def build_candidate_query(
    owner: Owner,
    plans: LexicalPlan | Sequence[LexicalPlan] | None,
    *,
    kinds: Sequence[str],
    trusts: Sequence[str],
    sensitivities: Sequence[str],
    as_of: datetime,
    depth: int = 100,
) -> tuple[str, list[Any]]:
    """SQL for the candidates of one or several queries, pre-scored in the database.

    Rows carry ``q`` (the plan's index), ``pre`` (the pre-score), the record columns
    (:data:`CANDIDATE_COLS`) and ``stats``: JSON text ``{"n": N, "df": {"q|term": df}}``
    with the pool size and every query term's document frequency over the owner's pool of
    the asked sensitivities. Candidates are re-checked against ``mg_records`` (visibility,
    status, expiry and filters). ``None`` gives :func:`build_browse_query`.

    Args:
        owner: The owner; only its four identities are visible.
        plans: One lexical plan, or a list of them (a snapshot's queries).
        kinds: Kinds to keep.
        trusts: Trust levels to keep.
        sensitivities: Sensitivities to keep.
        as_of: Rows must be unexpired at this instant.
        depth: How many candidates to return per plan.

    Returns:
        The SQL text and its parameters.
    """
    if plans is None:
        return build_browse_query(
            owner,
            kinds=kinds,
            trusts=trusts,
            sensitivities=sensitivities,
            as_of=as_of,
            depth=depth,
        )
    plan_list = [plans] if isinstance(plans, LexicalPlan) else list(plans)
    qs: list[int] = []
    toks: list[str] = []
    terms: list[str] = []
    weights: list[float] = []
    for i, plan in enumerate(plan_list):
        qs += [i] * len(plan.tokens)
        toks += plan.tokens
        terms += plan.terms
        weights += plan.weights
    all_tokens = sorted(set(toks))
    # The owner's identities are exactly {user, agent} x {global, workspace}, so two ANY
    # conditions select them and stay index conditions (a row IN list would not).
    agents = sorted({i.agent_key for i in owner.identities()})
    spaces = sorted({i.workspace_key for i in owner.identities()})
    sens = list(sensitivities)
    cond, params = visible(owner, "r")
    # Every CTE is MATERIALIZED and the record fetch is fenced (OFFSET 0) so that the plan
    # does not depend on table statistics: statistics and postings by primary key prefix,
    # records by primary key.
    sql = f"""
WITH qt AS MATERIALIZED (
    SELECT * FROM unnest(%s::int[], %s::text[], %s::text[], %s::float8[]) AS t(q, token, term, w)
), pool AS MATERIALIZED (
    SELECT coalesce(sum(s.n), 0)::float8 AS n FROM mg_pool_stats s
    WHERE s.scope_id = %s AND s.agent_key = ANY(%s) AND s.workspace_key = ANY(%s)
      AND s.sensitivity = ANY(%s)
), sdf AS MATERIALIZED (
    SELECT s.token, sum(s.df)::float8 AS df FROM mg_term_df s
    WHERE s.scope_id = %s AND s.token = ANY(%s) AND s.agent_key = ANY(%s)
      AND s.workspace_key = ANY(%s) AND s.sensitivity = ANY(%s)
    GROUP BY s.token
), tdf AS MATERIALIZED (
    SELECT qt.q, qt.term, max(qt.w) AS w,
           least(coalesce(sum(sdf.df), 0), (SELECT n FROM pool)) AS df
    FROM qt LEFT JOIN sdf USING (token) GROUP BY qt.q, qt.term
), rare AS MATERIALIZED (
    SELECT q, term, w, df FROM (
        SELECT tdf.*, min(tdf.df) OVER (PARTITION BY tdf.q) AS lo FROM tdf WHERE tdf.df > 0
    ) x
    WHERE df <= greatest(%s, %s * (SELECT n FROM pool)) OR df = lo
), hits AS MATERIALIZED (
    SELECT p.token, p.record_id, p.kind, p.trust FROM mg_postings p
    WHERE p.scope_id = %s
      AND p.token = ANY(ARRAY(SELECT DISTINCT qt.token FROM qt JOIN rare USING (q, term)))
      AND p.agent_key = ANY(%s) AND p.workspace_key = ANY(%s) AND p.sensitivity = ANY(%s)
      AND (p.expires_at IS NULL OR p.expires_at > %s)
), m AS MATERIALIZED (
    SELECT DISTINCT qt.q, qt.term, h.record_id, h.kind, h.trust
    FROM hits h JOIN qt USING (token) JOIN rare USING (q, term)
), rdf AS MATERIALIZED (
    -- a selective term's exact frequency over the unexpired pool (its postings are read)
    SELECT m.q, m.term, count(*)::float8 AS df FROM m GROUP BY m.q, m.term
), scored AS MATERIALIZED (
    SELECT m.q, m.record_id,
           sum(rare.w * ln(1.0 + (pool.n - rdf.df + 0.5) / (rdf.df + 0.5))) AS pre
    FROM m JOIN rare USING (q, term) JOIN rdf USING (q, term) CROSS JOIN pool
    WHERE m.kind = ANY(%s) AND m.trust = ANY(%s)
    GROUP BY m.q, m.record_id
), top AS MATERIALIZED (
    SELECT q, record_id, pre FROM (
        SELECT scored.*,
               row_number() OVER (PARTITION BY scored.q ORDER BY scored.pre DESC,
                                  scored.record_id) AS rn
        FROM scored
    ) x
    WHERE rn <= %s
)
SELECT top.q, top.pre, {CANDIDATE_COLS},
       (SELECT json_build_object(
            'n', (SELECT n FROM pool),
            'df', (SELECT json_object_agg(tdf.q || '|' || tdf.term, coalesce(rdf.df, tdf.df))
                   FROM tdf LEFT JOIN rdf USING (q, term)))::text
       ) AS stats
FROM top CROSS JOIN LATERAL (
    SELECT * FROM mg_records r0 WHERE r0.scope_id = %s AND r0.id = top.record_id OFFSET 0
) r
WHERE {cond} AND {_filters("r")}
ORDER BY top.q, top.pre DESC, r.id
"""
    args: list[Any] = [qs, toks, terms, weights]
    args += [owner.scope_id, agents, spaces, sens]
    args += [owner.scope_id, all_tokens, agents, spaces, sens]
    args += [RARE_MIN, RARE_FRACTION]
    args += [owner.scope_id, agents, spaces, sens, as_of, list(kinds), list(trusts)]
    args += [depth, owner.scope_id]
    args += [*params, as_of, list(kinds), list(trusts), sens]
    return sql, args


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
