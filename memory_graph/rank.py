"""Deterministic lexical ranking of recall candidates (DESIGN §6).

Tokens come from :func:`memory_graph.tokenize.tokenize`. The ranking layer maps each token to a
*term* (:func:`term_of`) identically for documents and queries: an ASCII word loses common
English inflection suffixes (a small, fixed suffix stripper), everything else is kept as is.
Query terms that are English function words or CJK function characters are ignored; they still
count towards the document length.

For a query with unique terms ``q`` (weight ``w_q``) and a document ``D`` of ``|D|`` terms in a
pool of ``N`` documents with mean length ``avgdl``::

    idf(q)  = ln(1 + (N - df(q) + 0.5) / (df(q) + 0.5))
    tf'     = tf(q, D) * (k1 + 1) / (tf(q, D) + k1 * (1 - b + b * |D| / avgdl))
    bm25    = sum_q  w_q * idf(q) * tf'
    cover   = sum_{q in D} w_q * idf(q)  /  sum_q w_q * idf(q)          (0..1)
    phrase  = P_whole  if the whole normalised query occurs in D's normalised text
            + P_pair * mean over adjacent query-term pairs (both non-CJK) that occur adjacent
              in D of the pair's mean idf / max idf
    rel     = bm25 * (1 + gamma * cover^2) + phrase * max_q(w_q * idf(q))
    prior   = TRUST[trust] * (lambda + (1 - lambda) * confidence)
    score   = rel * prior

``w_q`` is 1 for words and CJK pairs, ``cjk_unigram_weight`` for single CJK characters (common
Han characters alone are noisy). ``TRUST`` is ``user-confirmed 1.0``, ``agent-observed 0.95``,
``external 0.9``. Scores are rounded to 9 decimals, then ties break by identity precedence
(user/workspace first), then by id, so the order is fully deterministic.

Documents with the same dedup key (content hash plus knowledge) keep only their best-ranked
copy, and sensitive documents are dropped unless asked for; both happen before the limit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ._types import Trust
from .tokenize import is_cjk, tokenize

__all__ = [
    "DEFAULT_PARAMS",
    "TRUST_PRIOR",
    "CorpusStats",
    "Document",
    "RankParams",
    "Ranked",
    "QueryTerms",
    "corpus_stats",
    "doc_terms",
    "query_terms",
    "rank",
    "term_of",
]

TRUST_PRIOR: Mapping[str, float] = {
    "user-confirmed": 1.0,
    "agent-observed": 0.95,
    "external": 0.9,
}

# English function words and question words: they carry no topic, and in questions they
# dominate the token count ("what did ... do with her ...").
_EN_STOP = frozenset(
    """a about above after again all also am an and any are as at be been being but by can
    could did do does doing done during each for from had has have having he her here hers
    herself him himself his how i if in into is it its itself just me my myself no nor not of
    off on once only or other our ours out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom whose why will with would you your
    yours yourself""".split()
)
# Single CJK function characters (particles, pronouns, question words, copulas).
_CJK_STOP = frozenset("的了是我你他她它们在有和与及或吗呢吧啊呀么什哪谁几个这那就也都还很")

_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("ization", "ize"),
    ("ingly", ""),
    ("edly", ""),
    ("ments", "ment"),
    ("ness", ""),
    ("ings", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ing", ""),
    ("ed", ""),
    ("ly", ""),
    ("es", ""),
    ("s", ""),
)


@lru_cache(maxsize=200_000)
def term_of(token: str) -> str:
    """Map one token to its ranking term (light English suffix stripping).

    Args:
        token: A token from :func:`~memory_graph.tokenize.tokenize`.

    Returns:
        The term. Non-ASCII tokens and short words are returned unchanged.

    Examples:
        >>> [term_of(t) for t in ("painting", "painted", "paints", "hobbies", "is", "咖啡")]
        ['paint', 'paint', 'paint', 'hobby', 'is', '咖啡']
    """
    if not token.isascii() or not token.isalpha() or len(token) <= 3:
        return token
    for suffix, repl in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) + len(repl) >= 3:
            if suffix == "s" and token.endswith(("ss", "us", "is")):
                return token
            stem = token[: len(token) - len(suffix)] + repl
            if suffix in ("ing", "ed", "ings", "edly", "ingly") and len(stem) >= 2:
                if stem[-1] == stem[-2] and stem[-1] not in "lsz":
                    stem = stem[:-1]  # running -> run, stopped -> stop
            return stem
    return token


def doc_terms(tokens: Iterable[str]) -> list[str]:
    """Map a document's tokens to ranking terms, keeping order and repeats."""
    return [term_of(t) for t in tokens]


def _is_stop(term: str) -> bool:
    return term in _EN_STOP or term in _CJK_STOP


def _normalise_text(text: str) -> str:
    """Text used for whole-phrase matching: NFKC, lower-case, tokens joined by single spaces."""
    return " ".join(t for t in tokenize(text) if not (len(t) == 2 and is_cjk(t[0])))


@dataclass(frozen=True)
class RankParams:
    """Tunable constants of the ranking formula (see the module docstring)."""

    k1: float = 1.2
    b: float = 0.75
    cjk_unigram_weight: float = 0.3
    gamma: float = 1.0
    phrase_whole: float = 1.0
    phrase_pair: float = 0.5
    confidence_floor: float = 0.8
    """``lambda``: the share of the prior that does not depend on confidence."""
    stopwords: bool = True
    stem: bool = True


DEFAULT_PARAMS = RankParams()


@dataclass(frozen=True)
class Document:
    """What ranking needs to know about one candidate record."""

    id: str
    tokens: Sequence[str]
    """Index tokens, in order, with repeats (:func:`~memory_graph.tokenize.index_tokens`)."""
    text: str = ""
    """Index text, for the whole-phrase bonus."""
    trust: Trust = "user-confirmed"
    confidence: float = 1.0
    precedence: int = 0
    """Identity precedence, 0 highest."""
    dedup_key: str | None = None
    sensitive: bool = False


@dataclass(frozen=True)
class CorpusStats:
    """Pool statistics for IDF: document count, mean length, and document frequencies."""

    n_docs: int
    avgdl: float
    df: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class QueryTerms:
    """A tokenised query: unique weighted terms, adjacent word pairs and the phrase text."""

    weights: Mapping[str, float]
    pairs: tuple[tuple[str, str], ...]
    phrase: str


@dataclass(frozen=True)
class Ranked:
    """One ranked document."""

    doc: Document
    score: float


def _terms(tokens: Iterable[str], params: RankParams) -> list[str]:
    return [term_of(t) for t in tokens] if params.stem else list(tokens)


def query_terms(query: str, params: RankParams = DEFAULT_PARAMS) -> QueryTerms:
    """Tokenise and weigh a query.

    Args:
        query: The query text.
        params: Ranking constants.

    Returns:
        The weighted unique terms (stopwords dropped unless the query has nothing else).
    """
    terms = _terms(tokenize(query), params)
    weights: dict[str, float] = {}
    for term in terms:
        if term in weights:
            continue
        weights[term] = params.cjk_unigram_weight if len(term) == 1 and is_cjk(term) else 1.0
    if params.stopwords:
        kept = {t: w for t, w in weights.items() if not _is_stop(t)}
        if kept:
            weights = kept
    words = [t for t in terms if not is_cjk(t[0])]
    pairs = tuple(
        (a, c) for a, c in zip(words, words[1:]) if a in weights and c in weights and a != c
    )
    return QueryTerms(weights=weights, pairs=pairs, phrase=_normalise_text(query))


def corpus_stats(
    docs: Sequence[Document], params: RankParams = DEFAULT_PARAMS, *, n_docs: int | None = None
) -> CorpusStats:
    """Compute pool statistics from documents.

    Args:
        docs: The documents (the whole visible pool, or the candidates of a query).
        params: Ranking constants.
        n_docs: The pool size when ``docs`` are only the candidates.

    Returns:
        The statistics.
    """
    df: Counter[str] = Counter()
    total = 0
    for doc in docs:
        terms = _terms(doc.tokens, params)
        total += len(terms)
        df.update(set(terms))
    count = len(docs) if n_docs is None else max(n_docs, len(docs))
    return CorpusStats(n_docs=count, avgdl=(total / len(docs)) if docs else 1.0, df=df)


def _idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _score(
    doc: Document,
    terms: Sequence[str],
    query: QueryTerms,
    idf: Mapping[str, float],
    total_idf: float,
    max_idf: float,
    stats: CorpusStats,
    params: RankParams,
) -> float:
    counts = Counter(terms)
    dl = len(terms)
    norm = params.k1 * (1.0 - params.b + params.b * dl / max(stats.avgdl, 1e-9))
    bm25 = 0.0
    covered = 0.0
    for term, weight in query.weights.items():
        tf = counts.get(term, 0)
        if tf:
            wi = weight * idf[term]
            bm25 += wi * tf * (params.k1 + 1.0) / (tf + norm)
            covered += wi
    if bm25 <= 0.0:
        return 0.0
    cover = covered / total_idf if total_idf > 0 else 0.0
    phrase = 0.0
    if query.phrase and " " in query.phrase and doc.text:
        if query.phrase in _normalise_text(doc.text):
            phrase += params.phrase_whole
    if query.pairs and params.phrase_pair:
        adjacent = set(zip(terms, terms[1:]))
        hits = [
            (idf[a] + idf[c]) / 2.0 for a, c in query.pairs if (a, c) in adjacent and max_idf > 0
        ]
        if hits:
            phrase += params.phrase_pair * sum(hits) / (len(query.pairs) * max_idf)
    rel = bm25 * (1.0 + params.gamma * cover * cover) + phrase * max_idf
    confidence = min(max(doc.confidence, 0.0), 1.0)
    prior = TRUST_PRIOR.get(doc.trust, 0.9) * (
        params.confidence_floor + (1.0 - params.confidence_floor) * confidence
    )
    return rel * prior


def rank(
    query: str,
    docs: Sequence[Document],
    *,
    limit: int,
    stats: CorpusStats | None = None,
    include_sensitive: bool = False,
    params: RankParams = DEFAULT_PARAMS,
) -> list[Ranked]:
    """Rank documents for a query.

    Args:
        query: The query text. A blank query (no terms) ranks every document by its prior.
        docs: Candidate documents.
        limit: Maximum number of results.
        stats: Pool statistics; computed from ``docs`` when omitted.
        include_sensitive: Keep sensitive documents (excluded by default, before top-K).
        params: Ranking constants.

    Returns:
        At most ``limit`` results, best first, without duplicates and without documents that
        share no term with a non-blank query.
    """
    pool = [d for d in docs if include_sensitive or not d.sensitive]
    if stats is None:
        stats = corpus_stats(pool, params)
    qt = query_terms(query, params)
    idf = {t: _idf(stats.n_docs, stats.df.get(t, 0)) for t in qt.weights}
    total_idf = sum(w * idf[t] for t, w in qt.weights.items())
    max_idf = max((w * idf[t] for t, w in qt.weights.items()), default=0.0)
    scored: list[tuple[float, int, str, Document]] = []
    for doc in pool:
        if qt.weights:
            score = _score(
                doc, _terms(doc.tokens, params), qt, idf, total_idf, max_idf, stats, params
            )
            if score <= 0.0:
                continue
        else:
            confidence = min(max(doc.confidence, 0.0), 1.0)
            score = TRUST_PRIOR.get(doc.trust, 0.9) * (
                params.confidence_floor + (1.0 - params.confidence_floor) * confidence
            )
        scored.append((-round(score, 9), doc.precedence, doc.id, doc))
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
