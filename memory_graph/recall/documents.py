"""Stage 8, documents: a candidate :class:`~.model.Document` -> its :class:`Prepared` form,
and a pool's statistics. Pure.

Takes documents (their index tokens, :func:`~.tokenize.index_tokens`) and gives what the
ranking computes from a document's tokens once (:func:`prepare`: term counts, length in
terms, adjacency, phrase text, CJK share, topic terms, whether it asks or says a time), the
pool statistics for IDF (:func:`corpus_stats`) and a bridge document's rare terms for the
multi-hop passes (:func:`bridge_terms`). An index keeps the prepared forms
(:class:`~.candidates.PoolIndex`), so a recall re-reads nothing per document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .dates import says_time
from .model import DEFAULT_PARAMS, CorpusStats, Document, QueryTerms, RankParams
from .terms import STOP_TERMS, phrase_text, ranking_terms
from .tokenize import is_cjk

__all__ = ["Prepared", "bridge_terms", "corpus_stats", "prepare"]


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

    Examples:
        >>> s = corpus_stats([Document("a", ["red", "teas"]), Document("b", ["tea"])])
        >>> s.n_docs, s.avgdl, sorted(s.df.items())
        (2, 1.5, [('red', 1), ('tea', 2)])
    """
    df: Counter[str] = Counter()
    total = 0
    for doc in docs:
        terms = ranking_terms(doc.tokens, params.stem)
        total += len(terms)
        df.update(set(terms))
    count = len(docs) if n_docs is None else max(n_docs, len(docs))
    return CorpusStats(n_docs=count, avgdl=(total / len(docs)) if docs else 1.0, df=df)


@dataclass(slots=True)
class Prepared:
    """A document with what ranking computes from its tokens: term counts, length in terms,
    adjacent term pairs, phrase text and whether it is mostly CJK (see :func:`prepare`)."""

    doc: Document
    counts: Counter[str]
    dl: int
    adjacent: str | None
    """The terms in order, each between single spaces (" a b c "): terms ``a`` and ``c`` are
    adjacent when " a c " occurs in it (terms hold no spaces). One string per document costs
    a tenth of a set of pairs, and a pool keeps one per record."""
    norm_text: str | None
    cjk: bool = False
    topic: tuple[str, ...] = ()
    """Its distinct terms that are neither function words nor single CJK characters (the
    terms feedback and the multi-hop pass may borrow), in order of first occurrence."""
    asks: bool = False
    """Its text asks a question (holds "?" or "？")."""
    timed: bool = False
    """It says a time (:func:`~memory_graph.recall.dates.says_time`)."""


def _topic_terms(counts: Mapping[str, int], ascii_only: bool) -> tuple[str, ...]:
    if ascii_only:
        return tuple(t for t in counts if t not in STOP_TERMS)
    return tuple(t for t in counts if t not in STOP_TERMS and not (len(t) == 1 and is_cjk(t)))


def prepare(
    doc: Document, params: RankParams = DEFAULT_PARAMS, *, pairs: bool = True, text: bool = True
) -> Prepared:
    """Compute what ranking needs from a document's tokens (no cache).

    An index computes this once per document (:class:`~.candidates.PoolIndex`) and passes it
    to :func:`~.rank.rank_prepared`, so a recall re-reads nothing per document.

    Args:
        doc: The document.
        params: Ranking constants (stemming).
        pairs: Compute the adjacent term pairs (the phrase-pair bonus needs them).
        text: Compute the phrase text (the whole-phrase bonus needs it).

    Examples:
        >>> p = prepare(Document("a", ["mel", "painted", "sunsets"], "Mel painted sunsets"))
        >>> p.dl, p.adjacent, p.norm_text
        (3, ' mel paint sunset ', 'mel painted sunsets')
    """
    tokens = doc.tokens
    terms = ranking_terms(tokens, params.stem)
    counts = Counter(terms)
    ascii_only = all(t.isascii() for t in tokens)  # no CJK: the common English case
    return Prepared(
        doc=doc,
        counts=counts,
        dl=len(terms),
        adjacent=f" {' '.join(terms)} " if pairs else None,
        norm_text=(
            (" ".join(tokens) if ascii_only else phrase_text(tokens)) or None
            if text and doc.text
            else None
        ),
        cjk=not ascii_only and 2 * sum(1 for t in tokens if is_cjk(t[0])) > len(tokens),
        topic=_topic_terms(counts, ascii_only),
        asks="?" in doc.text or "？" in doc.text,
        timed=says_time(tokens),
    )


def bridge_terms(
    qt: QueryTerms, doc: Prepared, stats: CorpusStats, params: RankParams
) -> list[str]:
    """A bridge document's terms for the second pass: absent from the query, not function
    words or single CJK characters, shared with another document but rare in the pool."""
    if stats.n_docs < params.hop_min_pool:
        return []
    limit = max(params.hop_min_df, params.hop_df_share * stats.n_docs)
    found = []
    for term in doc.topic:
        if term in qt.weights:
            continue
        df = stats.df.get(term, 0)
        if 1 < df <= limit:
            found.append((df, term))
    found.sort()
    return [t for _df, t in found[: params.hop_terms]]
