"""Stage 10, rank: a parsed query and its candidates -> the deterministic lexical ranking
(DESIGN §6). Pure.

Takes a :class:`~.query.ParsedQuery` (its weighted terms, :mod:`.query`) and prepared
candidates (:func:`~.documents.prepare`, chosen by :mod:`.candidates`) with the pool's
statistics, and gives them ranked (:class:`~.model.Ranked`, best first): BM25 with coverage,
phrase, priors, feedback, the ranking's own multi-hop and context passes, the date and
"when" boosts. How a text's legs and passes are fused is the next stage, :mod:`.fuse`.

Tokens come from :func:`~memory_graph.recall.tokenize.tokenize`, tokenized once per query text
(:func:`~.query.parse_query`). The ranking layer maps each token to a *term*
(:func:`term_of`) identically for documents and queries: an ASCII word loses common English
inflection suffixes (a small, fixed suffix stripper), everything else is kept as is. Query
terms that are English function words or CJK function characters are ignored; they still
count towards the document length. So are the words that only say how the answer is to be
picked or presented ("以下哪个是最可能的描述", "有几个字";
:func:`~.terms.answer_form_stripped`). A "how many" question (:func:`~.terms.asks_count`)
takes no multi-hop pass: it wants every statement of a kind, not what else one of them says.

For a query with unique terms ``q`` (weight ``w_q``) and a document ``D`` of ``|D|`` terms in a
pool of ``N`` documents with mean length ``avgdl``::

    idf(q)  = ln(1 + (N - df(q) + 0.5) / (df(q) + 0.5))
    tf'     = tf(q, D) * (k1 + 1) / (tf(q, D) + k1 * (1 - b + b * |D| / avgdl))
              (b = b_cjk for a document whose tokens are mostly CJK, else b)
    bm25    = sum_q  w_q * idf(q) * tf'
    cover   = sum_{q in D} w_q * idf(q)  /  sum_q w_q * idf(q)          (0..1)
    phrase  = P_whole  if the whole normalised query occurs in D's normalised text
            + P_pair * mean over adjacent query-term pairs (both non-CJK) that occur adjacent
              in D of the pair's mean idf / max idf
    rel     = bm25 * (1 + gamma * cover^2) + phrase * max_q(w_q * idf(q))
    prior   = TRUST[trust] * (lambda + (1 - lambda) * confidence)
    score   = rel * prior

``w_q`` is 1 for words and CJK pairs, ``cjk_unigram_weight`` for single CJK characters (common
Han characters alone are noisy), ``cjk_function_pair_weight`` for a CJK pair with a particle
or pronoun in it (``的家`` of ``我用的家电``: a pair across two words;
:func:`~.terms.is_function_pair`) and ``number_weight`` for a number before a measure word or
unit ("26" of "26岁": a value the evidence states; :func:`~.terms.measured_numbers`) in a
document that writes it before the same unit (else 1: the "9" of "9:00" is not "9月"); the
terms of a condition's value ("专科" of "那个教育背景是专科的人") weigh ``condition_weight``
times as much (:func:`~.terms.condition_values`).
``TRUST`` is ``user-confirmed 1.0``, ``agent-observed 0.95``, ``external 0.9``. Scores are
rounded to 9 decimals, then ties break by identity precedence (user/workspace first), then by
id, so the order is fully deterministic.

Documents with the same dedup key (content hash plus knowledge) keep only their best-ranked
copy, and sensitive documents are dropped unless asked for; both happen before the limit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .dates import Window, asks_when
from .documents import Prepared, bridge_terms, corpus_stats, prepare
from .model import (
    DEFAULT_PARAMS,
    CorpusStats,
    Document,
    QueryTerms,
    Ranked,
    RankParams,
)
from .query import ParsedQuery, parse_query, query_terms
from .terms import asks_count

__all__ = ["TRUST_PRIOR", "rank", "rank_prepared"]
"""The ranking's own names; the data types, terms, parsed queries and prepared documents it
reads are imported from their stages (:mod:`.model`, :mod:`.terms`, :mod:`.query`,
:mod:`.documents`)."""

TRUST_PRIOR: Mapping[str, float] = {
    "user-confirmed": 1.0,
    "agent-observed": 0.95,
    "external": 0.9,
}

_CLAUSE_SPLIT = re.compile(r"[?？。!！;；\n]+")


class _QueryScorer:
    """Per-query constants of ``rel``: weighted idf per term, their sum and maximum."""

    __slots__ = ("items", "pair_idf", "pairs", "phrase", "top", "total", "units")

    def __init__(self, query: QueryTerms, idf: Mapping[str, float]) -> None:
        self.items = [(term, weight * idf[term]) for term, weight in query.weights.items()]
        total = 0.0
        top = 0.0
        for _term, wi in self.items:
            total += wi
            top = max(top, wi)
        self.total = total
        self.top = top
        self.phrase = query.phrase if query.phrase and " " in query.phrase else ""
        self.pairs = query.pairs
        self.pair_idf = [(f" {a} {c} ", (idf[a] + idf[c]) / 2.0) for a, c in query.pairs]
        spelled: dict[str, list[str]] = {}
        for number, unit in query.units:
            spelled.setdefault(number, []).append(f" {number} {unit} ")
        self.units = spelled


def _prior(doc: Document, params: RankParams) -> float:
    confidence = min(max(doc.confidence, 0.0), 1.0)
    return TRUST_PRIOR.get(doc.trust, 0.9) * (
        params.confidence_floor + (1.0 - params.confidence_floor) * confidence
    )


def _score_all(
    qt: QueryTerms, prepared: Sequence[Prepared], stats: CorpusStats, params: RankParams
) -> list[float]:
    """``rel`` of the module docstring for each document (0 when no query term matches).

    One loop with the per-query constants hoisted (this runs several times per recall);
    the arithmetic, and its order, is the formula's.
    """
    qs = _QueryScorer(qt, {t: stats.idf(t) for t in qt.weights})
    items, total, top = qs.items, qs.total, qs.top
    phrase_text, pairs, pair_idf = qs.phrase, qs.pairs, qs.pair_idf
    use_pairs = bool(pairs) and top > 0
    n_pairs = len(pairs)
    units, number_w = qs.units, params.number_weight
    k1, b, b_cjk, gamma = params.k1, params.b, params.b_cjk, params.gamma
    whole, pair_w = params.phrase_whole, params.phrase_pair
    k1p = k1 + 1.0
    avgdl = max(stats.avgdl, 1e-9)
    out: list[float] = []
    for p in prepared:
        bd = b_cjk if p.cjk else b
        norm = k1 * (1.0 - bd + bd * p.dl / avgdl)
        get = p.counts.get
        adjacent = p.adjacent
        bm25 = 0.0
        covered = 0.0
        for term, wi in items:
            tf = get(term, 0)
            if tf:
                if units and term in units and adjacent is not None:
                    if not any(u in adjacent for u in units[term]):
                        wi /= number_w  # the number, but not before its unit
                bm25 += wi * tf * k1p / (tf + norm)
                covered += wi
        if bm25 <= 0.0:
            out.append(0.0)
            continue
        cover = covered / total if total > 0 else 0.0
        phrase = 0.0
        if p.norm_text is not None and phrase_text and phrase_text in p.norm_text:
            phrase += whole
        adjacent = p.adjacent
        if adjacent is not None and use_pairs:
            hits = [m for pair, m in pair_idf if pair in adjacent]
            if hits:
                phrase += pair_w * sum(hits) / (n_pairs * top)
        out.append(bm25 * (1.0 + gamma * cover * cover) + phrase * top)
    return out


def _clauses(query: str) -> list[str]:
    parts = [p for p in _CLAUSE_SPLIT.split(query) if p.strip()]
    return parts if len(parts) > 1 else []


def _expand(
    qt: QueryTerms,
    prepared: Sequence[Prepared],
    rel: Sequence[float],
    stats: CorpusStats,
    params: RankParams,
) -> QueryTerms:
    """Pseudo-relevance feedback: add the top documents' rarest terms at a low weight."""
    order = sorted(range(len(prepared)), key=lambda i: (-rel[i], prepared[i].doc.id))
    top = [i for i in order[: params.prf_docs] if rel[i] > 0]
    if not top:
        return qt
    gain: dict[str, float] = {}
    for rank_pos, i in enumerate(top):
        share = 1.0 / (rank_pos + 1)
        for term in prepared[i].topic:
            if term in qt.weights:
                continue
            df = stats.df.get(term, 0)
            if df <= 1:
                continue
            gain[term] = gain.get(term, 0.0) + share * stats.idf(term)
    best = sorted(gain.items(), key=lambda kv: (-kv[1], kv[0]))[: params.prf_terms]
    if not best:
        return qt
    weights = dict(qt.weights)
    peak = best[0][1]
    for term, g in best:
        weights[term] = params.prf_weight * g / peak
    return QueryTerms(weights=weights, pairs=qt.pairs, phrase=qt.phrase, units=qt.units)


def _hop(
    qt: QueryTerms,
    prepared: Sequence[Prepared],
    rel: Sequence[float],
    stats: CorpusStats,
    params: RankParams,
) -> list[float]:
    """Multi-hop: documents sharing a top document's rare terms (and the query's) score a
    share of that document's score."""
    order = sorted(range(len(rel)), key=lambda i: (-rel[i], prepared[i].doc.id))
    out = list(rel)
    for b in order[: params.hop_docs]:
        if rel[b] <= 0:
            break
        if prepared[b].doc.thread is not None:
            continue
        terms = bridge_terms(qt, prepared[b], stats, params)
        if not terms:
            continue
        weights = dict(qt.weights)
        weights.update({t: 1.0 for t in terms})
        reached = [
            j for j, p in enumerate(prepared) if j != b and not p.counts.keys().isdisjoint(terms)
        ]
        s2 = _score_all(QueryTerms(weights, (), ""), [prepared[j] for j in reached], stats, params)
        peak = max(s2, default=0.0)
        if peak <= 0:
            continue
        for j, v in zip(reached, s2, strict=True):
            out[j] = max(out[j], params.hop_weight * rel[b] * v / peak)
    return out


def _with_context(
    prepared: Sequence[Prepared], rel: Sequence[float], params: RankParams
) -> list[float]:
    """Lend a share of each top document's score to its thread neighbours (seq +- 1)."""
    where = {
        (p.doc.thread, p.doc.seq): i for i, p in enumerate(prepared) if p.doc.thread is not None
    }
    if not where:
        return list(rel)
    out = list(rel)
    order = sorted(range(len(rel)), key=lambda i: (-rel[i], prepared[i].doc.id))
    for i in order[: params.context_top]:
        doc = prepared[i].doc
        if rel[i] <= 0 or doc.thread is None:
            continue
        for step in (-1, 1):
            j = where.get((doc.thread, doc.seq + step))
            if j is not None:
                out[j] = max(out[j], params.context_weight * rel[i])
                if prepared[j].asks and params.answer_weight > 0:
                    # The neighbour asks a question: the turn past it answers it (after the
                    # hit) or is what it asks about (before the hit).
                    far = where.get((doc.thread, doc.seq + 2 * step))
                    if far is not None:
                        out[far] = max(out[far], params.answer_weight * rel[i])
    return out


def rank(
    query: str | ParsedQuery,
    docs: Sequence[Document],
    *,
    limit: int,
    stats: CorpusStats | None = None,
    include_sensitive: bool = False,
    params: RankParams = DEFAULT_PARAMS,
    window: Window | None = None,
) -> list[Ranked]:
    """Rank documents for a query.

    Args:
        query: The query text, or its parse (:func:`~.query.parse_query`; not tokenized
            again). A blank query (no terms) ranks every document by its prior.
        docs: Candidate documents.
        limit: Maximum number of results.
        stats: Pool statistics; computed from ``docs`` when omitted.
        include_sensitive: Keep sensitive documents (excluded by default, before top-K).
        params: Ranking constants.
        window: The time window the query names (:func:`~.dates.question_window`), if any.

    Returns:
        At most ``limit`` results, best first, without duplicates and without documents that
        share no term with a non-blank query.

    Examples:
        >>> from memory_graph.recall.tokenize import tokenize
        >>> texts = ["Mel painted a sunset", "Tim ran a marathon", "Mel ran"]
        >>> docs = [Document(str(i), tokenize(t), t) for i, t in enumerate(texts)]
        >>> [r.doc.id for r in rank("What did Mel paint?", docs, limit=5)]
        ['0', '2']
    """
    pool = [d for d in docs if include_sensitive or not d.sensitive]
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query, params=params)
    qt = parsed.terms_for(params)
    if not qt.weights:
        return _by_prior(pool, limit, params)
    if stats is None:
        stats = corpus_stats(pool, params)
    need_pairs, need_text = bool(qt.pairs or qt.units), params.phrase_whole > 0
    prepared = [prepare(d, params, pairs=need_pairs, text=need_text) for d in pool]
    return rank_prepared(
        parsed,
        prepared,
        limit=limit,
        stats=stats,
        terms=qt,
        include_sensitive=True,
        params=params,
        window=window,
    )


def rank_prepared(
    query: str | ParsedQuery,
    docs: Sequence[Prepared],
    *,
    limit: int,
    stats: CorpusStats,
    terms: QueryTerms | None = None,
    include_sensitive: bool = False,
    params: RankParams = DEFAULT_PARAMS,
    window: Window | None = None,
) -> list[Ranked]:
    """:func:`rank` over prepared documents (:func:`prepare`) with the pool's statistics.

    Args:
        query: The query text, or its parse (not tokenized again).
        docs: Prepared candidates.
        limit: Maximum number of results.
        stats: Pool statistics.
        terms: The query's terms under ``params`` when the caller has them already.
        include_sensitive: Keep sensitive documents.
        params: Ranking constants.
        window: The time window the query names, if any.

    Returns:
        As :func:`rank`.
    """
    prepared = [p for p in docs if include_sensitive or not p.doc.sensitive]
    parsed, text = (query, query.text) if isinstance(query, ParsedQuery) else (None, query)
    if terms is not None:
        qt = terms
    else:
        qt = parsed.terms_for(params) if parsed is not None else query_terms(text, params)
    if not qt.weights:
        return _by_prior([p.doc for p in prepared], limit, params)
    rel = _score_all(qt, prepared, stats, params)
    clauses = _clauses(text) if params.clause_weight > 0 else []
    if clauses:
        peak = max(rel, default=0.0) or 1.0
        combined = [r / peak for r in rel]
        for clause in clauses:
            cq = query_terms(clause, params)
            if not cq.weights:
                continue
            crel = _score_all(cq, prepared, stats, params)
            cpeak = max(crel, default=0.0)
            if cpeak > 0:
                combined = [
                    c + params.clause_weight * r / cpeak
                    for c, r in zip(combined, crel, strict=True)
                ]
        rel = combined
    if params.prf_docs > 0:
        expanded = _expand(qt, prepared, rel, stats, params)
        if expanded is not qt:
            extra = _score_all(expanded, prepared, stats, params)
            base = rel if not clauses else _score_all(qt, prepared, stats, params)
            peak = max(base, default=0.0) or 1.0
            rel = [
                r + (e - b0) / peak * (max(rel, default=0.0) or 1.0) if r > 0 else 0.0
                for r, e, b0 in zip(rel, extra, base, strict=True)
            ]
    if params.hop_docs > 0 and not (parsed.count if parsed is not None else asks_count(text)):
        # A "how many" question wants every statement of a kind; a hop to what else its
        # top statements say about their someone only crowds the others out.
        rel = _hop(qt, prepared, rel, stats, params)
    if params.context_weight > 0:
        rel = _with_context(prepared, rel, params)
    if params.when_boost > 0 and (parsed.when if parsed is not None else asks_when(text)):
        up = 1.0 + params.when_boost
        rel = [r * up if r > 0 and p.timed else r for p, r in zip(prepared, rel, strict=True)]
    if window is not None and params.date_boost > 0:
        up = 1.0 + params.date_boost
        rel = [
            r * up if r > 0 and window.holds(p.doc.time) else r
            for p, r in zip(prepared, rel, strict=True)
        ]
    scored: list[tuple[float, int, str, Document]] = []
    for p, r in zip(prepared, rel, strict=True):
        if r > 0.0:
            score = r * _prior(p.doc, params)
            scored.append((-round(score, 9), p.doc.precedence, p.doc.id, p.doc))
    return _best(scored, limit)


def _by_prior(docs: Sequence[Document], limit: int, params: RankParams) -> list[Ranked]:
    """A blank query's ranking: every document by its prior."""
    scored = [(-round(_prior(d, params), 9), d.precedence, d.id, d) for d in docs]
    return _best(scored, limit)


def _best(scored: list[tuple[float, int, str, Document]], limit: int) -> list[Ranked]:
    """The first ``limit`` by (score, precedence, id), one per dedup key."""
    scored.sort(key=lambda item: item[:3])
    out: list[Ranked] = []
    seen: set[str] = set()
    for neg, _prec, _id, doc in scored:
        if doc.dedup_key is not None:
            if doc.dedup_key in seen:
                continue
            seen.add(doc.dedup_key)
        out.append(Ranked(doc=doc, score=-neg))
        if len(out) >= limit:
            break
    return out
