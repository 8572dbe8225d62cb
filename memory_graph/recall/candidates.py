"""Candidates: an in-process index of one owner's pool, and the small candidate set of a query.

Step two of the recall pipeline (plan -> **candidates** -> rank -> render within budget). Pure.

A :class:`PoolIndex` holds, for the documents of one owner's pool, each ranking term's
postings ``(position, tf)``, each document's length and the pool statistics (``N``, mean
length, document frequencies). :meth:`PoolIndex.candidates` scores the documents that share a
term with the query by BM25 with the coverage factor of :mod:`memory_graph.recall.rank`
(no phrase bonus, no feedback) and keeps the best ``depth``; :func:`~memory_graph.recall.rank.rank`
then re-ranks only those with the full formula and the pool statistics, so the cost of a query
depends on its terms' postings, not on the pool size. In a pool larger than
:data:`EXACT_POOL` documents, only the query's *selective* terms (document frequency at most
``max(RARE_MIN, RARE_FRACTION * N)``, or the rarest one) are read for the pre-score; common
terms still count in the re-rank.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from .rank import (
    DEFAULT_PARAMS,
    CorpusStats,
    Document,
    Prepared,
    QueryTerms,
    RankParams,
    bridge_terms,
    prepare,
)

__all__ = [
    "EXACT_POOL",
    "EXTRA_CANDIDATES",
    "POSTINGS_READ",
    "RARE_FRACTION",
    "RARE_MIN",
    "PoolIndex",
]

EXACT_POOL = 2000
"""Pools up to this size read every query term's postings for the pre-score."""
EXTRA_CANDIDATES = 6
"""At most this many thread neighbours and multi-hop documents join a query's candidates, so
the re-ranked set stays small whatever the pool size."""
POSTINGS_READ = 200
"""At most this many postings of one term are read for the pre-score: its highest-impact
ones (postings are stored by descending BM25 term impact), so a query's cost does not grow
with the pool."""
RARE_MIN = 1000
"""In larger pools, a term with at most this document frequency is always read ..."""
RARE_FRACTION = 0.1
"""... and so is one whose document frequency is at most this share of the pool."""


@dataclass(frozen=True)
class _Posting:
    """One term's postings, as flat arrays: a query reads them in sequence, and an array
    keeps them in one block of memory (a tuple points at an object per number)."""

    pos: array[int]
    tf: array[int]
    """The term frequency of the first :data:`POSTINGS_READ` postings (the ones read)."""
    den: array[float]
    """Their BM25 denominator ``tf + k1 * (1 - b + b * |D| / avgdl)``."""


def _prepared(doc: Document, params: RankParams, reuse: Mapping[str, Prepared] | None) -> Prepared:
    """``prepare(doc)``, or the reused form of an unchanged document (same cache key)."""
    if reuse is not None and doc.cache_key is not None:
        found = reuse.get(doc.cache_key)
        if found is not None:
            return found if found.doc is doc or found.doc == doc else replace(found, doc=doc)
    return prepare(doc, params)


class PoolIndex:
    """Postings and statistics of one pool of documents (immutable once built).

    Args:
        docs: The pool's documents (their positions are their order here).
        params: Ranking constants (stemming, ``k1``, ``b``).
        stats_filter: Which documents count in the statistics (all when ``None``).
        reuse: Prepared documents of an earlier index with the same ``params``, by cache
            key: a document with the same key is not prepared again (an index is rebuilt
            after every write, and the pool's other documents have not changed).

    Examples:
        >>> from memory_graph.recall.rank import Document, query_terms
        >>> from memory_graph.recall.tokenize import tokenize
        >>> docs = [Document(str(i), tokenize(t)) for i, t in enumerate(["red tea", "green tea"])]
        >>> index = PoolIndex(docs)
        >>> index.stats.n_docs, index.stats.df["tea"]
        (2, 2)
        >>> [docs[i].id for i in index.candidates(query_terms("green tea?"), depth=1)]
        ['1']
    """

    __slots__ = ("_place", "_postings", "docs", "params", "prepared", "stats")

    def __init__(
        self,
        docs: Sequence[Document],
        params: RankParams = DEFAULT_PARAMS,
        *,
        stats_filter: Callable[[Document], bool] | None = None,
        reuse: Mapping[str, Prepared] | None = None,
    ) -> None:
        self.docs = tuple(docs)
        self.params = params
        self.prepared = tuple(_prepared(doc, params, reuse) for doc in self.docs)
        pos_lists: dict[str, list[int]] = {}
        tf_lists: dict[str, list[int]] = {}
        df: dict[str, int] = {}
        lengths: list[int] = []
        cjk: list[bool] = []
        total = 0
        counted = 0
        for pos, prep in enumerate(self.prepared):
            counts = prep.counts
            lengths.append(prep.dl)
            cjk.append(prep.cjk)
            counts_in_stats = stats_filter is None or stats_filter(prep.doc)
            if counts_in_stats:
                total += prep.dl
                counted += 1
            for term, tf in counts.items():
                have = pos_lists.get(term)
                if have is None:
                    pos_lists[term] = [pos]
                    tf_lists[term] = [tf]
                else:
                    have.append(pos)
                    tf_lists[term].append(tf)
            if stats_filter is not None and counts_in_stats:
                for term in counts:
                    df[term] = df.get(term, 0) + 1
        if stats_filter is None:
            df = {term: len(plist) for term, plist in pos_lists.items()}
        self._place = {
            (doc.thread, doc.seq): pos for pos, doc in enumerate(self.docs) if doc.thread
        }
        avgdl = total / counted if counted else 1.0
        self.stats = CorpusStats(n_docs=counted, avgdl=avgdl, df=df)
        k1 = params.k1
        norm = tuple(
            k1 * (1.0 - b + b * dl / max(avgdl, 1e-9))
            for dl, b in zip(lengths, (params.b_cjk if c else params.b for c in cjk), strict=True)
        )
        postings: dict[str, _Posting] = {}
        for term, plist in pos_lists.items():
            flist = tf_lists[term]
            if len(plist) > POSTINGS_READ:  # by descending impact tf / (tf + norm), then position
                order = sorted(
                    range(len(plist)),
                    key=lambda i: (-flist[i] / (flist[i] + norm[plist[i]]), plist[i]),
                )
                plist = [plist[i] for i in order]
                flist = [flist[i] for i in order]
            read = zip(plist[:POSTINGS_READ], flist[:POSTINGS_READ], strict=True)
            postings[term] = _Posting(
                array("l", plist),
                array("l", flist[:POSTINGS_READ]),
                array("d", [f + norm[q] for q, f in read]),
            )
        self._postings = postings

    def prepared_by_key(self) -> dict[str, Prepared]:
        """The prepared documents that have a cache key, by key (for ``reuse``)."""
        return {p.doc.cache_key: p for p in self.prepared if p.doc.cache_key is not None}

    def select(
        self,
        query: QueryTerms,
        *,
        depth: int,
        allow: Callable[[int], bool] | None = None,
    ) -> list[int]:
        """The candidate set of a query: the best ``depth`` by the pre-score
        (:meth:`candidates`), the thread neighbours of the first ``context_top`` of them,
        and up to ``hop_reach`` documents sharing each first bridge's rare terms (what the
        context and multi-hop passes of the ranking can reach), at most
        :data:`EXTRA_CANDIDATES` of those.

        Args:
            query: The weighted query terms.
            depth: How many candidates the pre-score keeps.
            allow: Keeps a position (filters); all when ``None``.

        Returns:
            Allowed positions, pre-score order first.
        """
        params = self.params
        chosen = self.candidates(query, depth=depth, allow=allow)
        have = set(chosen)
        out = list(chosen)

        cap = len(chosen) + EXTRA_CANDIDATES

        def add(pos: int) -> bool:
            if len(out) >= cap or pos in have or (allow is not None and not allow(pos)):
                return False
            have.add(pos)
            out.append(pos)
            return True

        if params.context_weight > 0 and self._place:
            for pos in chosen[: params.context_top]:
                if len(out) >= cap:
                    break
                doc = self.docs[pos]
                if doc.thread is not None:
                    for step in (-1, 1):
                        near = self._place.get((doc.thread, doc.seq + step))
                        if near is not None:
                            add(near)
        if params.hop_docs > 0:
            for pos in chosen[: params.hop_docs]:
                if self.docs[pos].thread is not None:
                    continue
                if len(out) >= cap:
                    break  # full: nothing more can be added
                budget = params.hop_reach
                for term in bridge_terms(query, self.prepared[pos], self.stats, params):
                    if budget <= 0 or len(out) >= cap:
                        break
                    for near in self.positions(term):
                        if budget <= 0 or len(out) >= cap:
                            break
                        if add(near):
                            budget -= 1
        return out

    def positions(self, term: str) -> Sequence[int]:
        """Positions of the documents containing ``term``."""
        posting = self._postings.get(term)
        return posting.pos if posting is not None else ()

    def counts(self, pos: int) -> Mapping[str, int]:
        """Term counts of the document at ``pos``."""
        return self.prepared[pos].counts

    def _read_terms(self, weights: Mapping[str, float]) -> list[str]:
        present = [t for t in weights if t in self._postings]
        n = self.stats.n_docs
        if len(self.docs) <= EXACT_POOL or not present:
            return present
        limit = max(RARE_MIN, RARE_FRACTION * n)
        rare = [t for t in present if len(self._postings[t].pos) <= limit]
        return rare or [min(present, key=lambda t: (len(self._postings[t].pos), t))]

    def candidates(
        self,
        query: QueryTerms,
        *,
        depth: int,
        allow: Callable[[int], bool] | None = None,
    ) -> list[int]:
        """Positions of the best ``depth`` documents by the pre-score, best first.

        Args:
            query: The weighted query terms.
            depth: How many candidates to keep.
            allow: Keeps a position (filters such as kind, trust or expiry); all when ``None``.

        Returns:
            Positions of documents sharing a read term with the query (ties by position).
        """
        params = self.params
        idf = self.stats.idf
        k1p = params.k1 + 1.0
        acc: dict[int, float] = {}
        cov: dict[int, float] = {}
        total = 0.0
        for term, weight in query.weights.items():
            total += weight * idf(term)
        get, cget = acc.get, cov.get
        for term in self._read_terms(query.weights):
            posting = self._postings[term]
            wi = query.weights[term] * idf(term)
            read = zip(posting.pos, posting.tf, posting.den, strict=False)
            if not acc:  # the first term: every position is new (0.0 + x is x)
                acc = {pos: wi * tf * k1p / den for pos, tf, den in read}
                cov = dict.fromkeys(acc, wi)
                get, cget = acc.get, cov.get
                continue
            for pos, tf, den in read:
                acc[pos] = get(pos, 0.0) + wi * tf * k1p / den
                cov[pos] = cget(pos, 0.0) + wi
        gamma = params.gamma
        scale = 1.0 / total if total > 0 else 0.0
        scored = (
            (bm * (1.0 + gamma * (cov[pos] * scale) ** 2), -pos)
            for pos, bm in acc.items()
            if allow is None or allow(pos)
        )
        return [-neg for _s, neg in heapq.nlargest(depth, scored)]
