"""Stage 9, candidates: a pool's documents -> its index; a query's terms -> its candidates.

Takes one owner's documents (prepared by :mod:`.documents`) and a parsed query's terms
(:mod:`.query`) and gives the small candidate set :mod:`.rank` re-ranks. Pure.

A :class:`PoolIndex` holds, for the documents of one owner's pool, each document's prepared
form (:func:`~memory_graph.recall.documents.prepare`: term counts, length, adjacency, phrase
text), each ranking term's postings ``(position, tf)`` and the pool statistics (``N``, mean
length, document frequencies). :meth:`PoolIndex.candidates` scores the documents that share a
term with the query by BM25 with the coverage factor of :mod:`memory_graph.recall.rank`
(no phrase bonus, no feedback) and keeps the best ``depth`` with a heap;
:func:`~memory_graph.recall.rank.rank_prepared` then re-ranks only those, from their
prepared forms, with the full formula and the pool statistics, so the cost of a query
depends on its terms' postings, not on the pool size. In a pool larger than
:data:`EXACT_POOL` documents, only the query's *selective* terms (document frequency at most
``max(RARE_MIN, RARE_FRACTION * N)``, or the rarest one) are read for the pre-score; common
terms still count in the re-rank.

A write does not rebuild the index: :meth:`PoolIndex.updated` re-prepares only the changed
documents and rebuilds only their terms' postings, and :meth:`PoolIndex.changed` does the
same from the changed documents alone (no walk over the pool: tie keys leave gaps, so a new
document takes a key between its neighbours'); a term's read form (its postings by
impact, with their BM25 denominators, as flat arrays) is built when a query first reads it.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from ._delta import _GAP, Base, Tally, apply_delta
from .dates import Window
from .documents import Prepared, bridge_terms, prepare
from .model import DEFAULT_PARAMS, CorpusStats, Document, QueryTerms, RankParams

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
        >>> from memory_graph.recall.model import Document
        >>> from memory_graph.recall.query import query_terms
        >>> from memory_graph.recall.tokenize import tokenize
        >>> docs = [Document(str(i), tokenize(t)) for i, t in enumerate(["red tea", "green tea"])]
        >>> index = PoolIndex(docs)
        >>> index.stats.n_docs, index.stats.df["tea"]
        (2, 2)
        >>> [docs[i].id for i in index.candidates(query_terms("green tea?"), depth=1)]
        ['1']
    """

    __slots__ = (
        "_dated",
        "_docs",
        "_filter",
        "_ids",
        "_key",
        "_live",
        "_mean",
        "_place",
        "_raw",
        "_read",
        "_removed",
        "_total",
        "_where",
        "params",
        "prepared",
        "stats",
    )

    def __init__(
        self,
        docs: Sequence[Document],
        params: RankParams = DEFAULT_PARAMS,
        *,
        stats_filter: Callable[[Document], bool] | None = None,
        reuse: Mapping[str, Prepared] | None = None,
    ) -> None:
        prepared = [_prepared(doc, params, reuse) for doc in docs]
        raw: dict[str, tuple[list[int], list[int]]] = {}
        df: dict[str, int] = {}
        total = 0
        counted = 0
        for pos, prep in enumerate(prepared):
            counts_in_stats = stats_filter is None or stats_filter(prep.doc)
            if counts_in_stats:
                total += prep.dl
                counted += 1
            for term, tf in prep.counts.items():
                have = raw.get(term)
                if have is None:
                    raw[term] = ([pos], [tf])
                else:
                    have[0].append(pos)
                    have[1].append(tf)
            if stats_filter is not None and counts_in_stats:
                for term in prep.counts:
                    df[term] = df.get(term, 0) + 1
        if stats_filter is None:
            df = {term: len(entry[0]) for term, entry in raw.items()}
        self._filter = stats_filter
        where = {p.doc.id: pos for pos, p in enumerate(prepared)}
        every = range(len(prepared))
        self._removed = 0
        self._ids: list[str] | None = None
        key = list(range(0, len(prepared) * _GAP, _GAP))
        self._finish(params, prepared, key, where, every, raw, df, total, counted)

    def _finish(
        self,
        params: RankParams,
        prepared: Sequence[Prepared],
        key: list[int],
        where: dict[str, int],
        live: Iterable[int],
        raw: dict[str, tuple[list[int], list[int]]],
        df: dict[str, int],
        total: int,
        counted: int,
        place: dict[tuple[str, int], int] | None = None,
    ) -> None:
        self.params = params
        self.prepared = tuple(prepared)
        self._docs: tuple[Document, ...] | None = None
        self._key = key  # a position's place in the order of the documents given (ties)
        self._where = where  # a live document's position, by id
        self._raw = raw  # each term's (positions, tfs), in ``key`` order
        self._total = total
        avgdl = total / counted if counted else 1.0
        self.stats = CorpusStats(n_docs=counted, avgdl=avgdl, df=df)
        self._mean = max(avgdl, 1e-9)
        if place is None:
            place = {
                (doc.thread, doc.seq): pos for pos in live if (doc := self.prepared[pos].doc).thread
            }
        self._place = place  # a thread place's position
        self._read: dict[str, _Posting] = {}  # read forms, built when a query reads a term
        self._live = live if isinstance(live, range) else tuple(live)
        self._dated: tuple[list[float], list[int]] | None = None  # built on a dated query

    def updated(self, docs: Sequence[Document]) -> PoolIndex:
        """This index after its pool changed to ``docs``, ranking exactly as
        ``PoolIndex(docs, params)`` would.

        Documents that stay keep their positions (so a write does not rebuild every term's
        postings): only the terms of added, removed and rewritten documents (another
        cache key) are rebuilt, and the statistics are adjusted by them. ``docs`` must list
        the documents that stay in the same relative order as before (the store's pool
        lists them by id); ties between documents still follow that order. A document
        without a cache key, many removed positions or a statistics filter rebuild in full.
        """
        params = self.params
        where = self._where
        if self._filter is not None or len(where) + self._removed != len(self.prepared):
            # A statistics filter, or a first build that repeated an id: build afresh.
            return PoolIndex(docs, params, stats_filter=self._filter)
        prepared = list(self.prepared)
        key = list(self._key)
        tally = Tally(self.stats.df, self._total, self.stats.n_docs)
        drop, put = tally.drop, tally.add
        seen: dict[str, int] = {}

        for k, doc in enumerate(docs):
            if doc.id in seen:
                return PoolIndex(docs, params)
            pos = where.get(doc.id)
            if pos is None:
                pos = len(prepared)
                prepared.append(prepare(doc, params))
                key.append(k * _GAP)
                put(pos, prepared[pos])
            else:
                old = prepared[pos]
                if old.doc is not doc:
                    if doc.cache_key is not None and doc.cache_key == old.doc.cache_key:
                        prepared[pos] = old if old.doc == doc else replace(old, doc=doc)
                    else:
                        drop(pos, old)
                        prepared[pos] = prepare(doc, params)
                        put(pos, prepared[pos])
                key[pos] = k * _GAP
            seen[doc.id] = pos
        for rid, pos in where.items():
            if rid not in seen:
                drop(pos, prepared[pos])
        if len(prepared) - len(seen) > max(64, len(seen) // 4):  # compact the positions
            return PoolIndex(docs, params, reuse=self.prepared_by_key())
        raw = dict(self._raw)
        for term in tally.terms():
            out = set(tally.gone.get(term, ()))
            plist, flist = raw.get(term, ([], []))
            pairs = [(q, f) for q, f in zip(plist, flist, strict=True) if q not in out]
            pairs += tally.came.get(term, ())
            if not pairs:
                raw.pop(term, None)
                continue
            pairs.sort(key=lambda qf: key[qf[0]])
            raw[term] = ([q for q, _f in pairs], [f for _q, f in pairs])
        index = PoolIndex.__new__(PoolIndex)
        index._filter = None
        index._ids = None
        index._removed = len(prepared) - len(seen)
        index._finish(
            params, prepared, key, seen, seen.values(), raw, tally.df, tally.total, tally.counted
        )
        return index

    def _sorted_ids(self) -> list[str] | None:
        """The live ids in order, when the documents were given in id order (else ``None``)."""
        ids = self._ids
        if ids is None:
            where, key = self._where, self._key
            ids = sorted(where)
            if any(key[where[a]] >= key[where[b]] for a, b in zip(ids, ids[1:], strict=False)):
                return None
            self._ids = ids
        return ids

    def changed(self, put: Sequence[Document], removed: Iterable[str]) -> PoolIndex | None:
        """This index after the documents ``put`` (new, or replacing the one with their id)
        and the removal of the ``removed`` ids, ranking exactly as ``PoolIndex(docs, params)``
        over the resulting documents in id order would; the cost follows the changed
        documents and their terms' postings, not the pool (see :mod:`._delta`).

        Returns ``None`` (build afresh) when this index's documents were not given in id
        order, has a statistics filter, would leave many removed positions, or a new
        document finds no free tie key between its neighbours.
        """
        if self._filter is not None or len(self._where) + self._removed != len(self.prepared):
            return None  # a statistics filter, or a build that repeated an id
        ids = self._sorted_ids()
        if ids is None:
            return None
        parts = apply_delta(
            Base(
                self.params,
                self.prepared,
                self._key,
                self._where,
                ids,
                self._raw,
                self.stats.df,
                self._place,
                self._total,
                self.stats.n_docs,
                self._removed,
            ),
            put,
            removed,
        )
        if parts is None:
            return None
        index = PoolIndex.__new__(PoolIndex)
        index._filter = None
        index._ids = parts.ids
        index._removed = parts.removed
        live = tuple(parts.where.values())
        index._finish(
            self.params,
            parts.prepared,
            parts.key,
            parts.where,
            live,
            parts.raw,
            parts.df,
            parts.total,
            parts.counted,
            parts.place,
        )
        return index

    @property
    def docs(self) -> tuple[Document, ...]:
        """The documents by position (built when first asked)."""
        docs = self._docs
        if docs is None:
            docs = self._docs = tuple(p.doc for p in self.prepared)
        return docs

    def position(self, doc_id: str) -> int:
        """The position of a live document."""
        return self._where[doc_id]

    def find(self, doc_id: str) -> int | None:
        """The position of a live document, ``None`` when it is not in the index."""
        return self._where.get(doc_id)

    def _norms(self, positions: Iterable[int]) -> list[float]:
        """The BM25 length normalisations ``k1 * (1 - b + b * |D| / avgdl)`` of documents
        (computed when read: ``avgdl`` moves with every write, the documents do not)."""
        prepared, params, mean = self.prepared, self.params, self._mean
        k1, b, b_cjk = params.k1, params.b, params.b_cjk
        return [
            k1 * (1.0 - bd + bd * p.dl / mean)
            for q in positions
            for p in (prepared[q],)
            for bd in (b_cjk if p.cjk else b,)
        ]

    def prepared_by_key(self) -> dict[str, Prepared]:
        """The prepared documents that have a cache key, by key (for ``reuse``)."""
        return {p.doc.cache_key: p for p in self.prepared if p.doc.cache_key is not None}

    def _posting(self, term: str) -> _Posting | None:
        """A term's postings as a query reads them (built once per index and term)."""
        found = self._read.get(term)
        if found is not None:
            return found
        entry = self._raw.get(term)
        if entry is None:
            return None
        plist, flist = entry
        norm = self._norms(plist)  # by index in plist
        if len(plist) > POSTINGS_READ:  # by descending impact tf / (tf + norm), then order
            order = sorted(range(len(plist)), key=lambda i: (-flist[i] / (flist[i] + norm[i]), i))
            plist = [plist[i] for i in order]
            flist = [flist[i] for i in order]
            norm = [norm[i] for i in order]
        head = zip(norm[:POSTINGS_READ], flist[:POSTINGS_READ], strict=True)
        found = self._read[term] = _Posting(
            array("l", plist),
            array("l", flist[:POSTINGS_READ]),
            array("d", [f + nq for nq, f in head]),
        )
        return found

    def select(
        self,
        query: QueryTerms,
        *,
        depth: int,
        allow: Callable[[int], bool] | None = None,
        window: Window | None = None,
        when: bool = False,
    ) -> list[int]:
        """The candidate set of a query: the best ``depth`` by the pre-score
        (:meth:`candidates`), with ``window`` the best documents observed in it
        (:meth:`in_window`), the thread neighbours of the first ``context_top`` of them,
        and up to ``hop_reach`` documents sharing each first bridge's rare terms (what the
        context and multi-hop passes of the ranking can reach), at most
        :data:`EXTRA_CANDIDATES` of those.

        Args:
            query: The weighted query terms.
            depth: How many candidates the pre-score keeps.
            allow: Keeps a position (filters); all when ``None``.
            window: The time window the query names, if any.
            when: The query asks for a time: the best ``when_candidates`` documents that
                say one join too.

        Returns:
            Allowed positions, pre-score order first.
        """
        params = self.params
        chosen = self.candidates(query, depth=depth, allow=allow)
        if window is not None:
            have = set(chosen)
            chosen += [pos for pos in self.in_window(query, window, allow) if pos not in have]
        if when and params.when_candidates > 0:
            prepared = self.prepared

            def timed(pos: int) -> bool:
                return prepared[pos].timed and (allow is None or allow(pos))

            have = set(chosen)
            more = self.candidates(query, depth=params.when_candidates, allow=timed)
            chosen += [pos for pos in more if pos not in have]
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
                doc = self.prepared[pos].doc
                if doc.thread is not None:
                    for step in (-1, 1):
                        near = self._place.get((doc.thread, doc.seq + step))
                        if near is not None:
                            add(near)
                            if params.answer_weight > 0 and self.prepared[near].asks:
                                far = self._place.get((doc.thread, doc.seq + 2 * step))
                                if far is not None:
                                    add(far)
        if params.hop_docs > 0:
            for pos in chosen[: params.hop_docs]:
                if self.prepared[pos].doc.thread is not None:
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

    def dated(self) -> tuple[list[float], list[int]]:
        """The live documents with a time: their times ascending, and their positions."""
        found = self._dated
        if found is None:
            pairs = sorted(
                (t, pos) for pos in self._live if (t := self.prepared[pos].doc.time) is not None
            )
            found = self._dated = ([t for t, _p in pairs], [p for _t, p in pairs])
        return found

    def in_window(
        self, query: QueryTerms, window: Window, allow: Callable[[int], bool] | None = None
    ) -> list[int]:
        """The best ``date_candidates`` documents observed in ``window`` that share a term with
        the query, by the pre-score; none when the window holds more than ``date_pool``."""
        params = self.params
        times, where = self.dated()
        if not times or params.date_candidates <= 0:
            return []
        first = datetime.fromtimestamp(times[0], timezone.utc).year
        last = datetime.fromtimestamp(times[-1], timezone.utc).year
        inside: list[int] = []
        for a, b in window.intervals(first, last):
            inside.extend(where[bisect_left(times, a) : bisect_left(times, b)])
            if len(inside) > params.date_pool:
                return []
        if not inside:
            return []
        idf = self.stats.idf
        items = [(t, w * idf(t)) for t, w in query.weights.items()]
        total = sum(wi for _t, wi in items) or 1.0
        k1p, gamma, key = params.k1 + 1.0, params.gamma, self._key
        scored = []
        for pos in set(inside):
            if allow is not None and not allow(pos):
                continue
            get = self.prepared[pos].counts.get
            norm = self._norms((pos,))[0]
            bm = cov = 0.0
            for term, wi in items:
                tf = get(term, 0)
                if tf:
                    bm += wi * tf * k1p / (tf + norm)
                    cov += wi
            if bm > 0:
                scored.append((bm * (1.0 + gamma * (cov / total) ** 2), -key[pos], pos))
        return [pos for _s, _k, pos in heapq.nlargest(params.date_candidates, scored)]

    def positions(self, term: str) -> Sequence[int]:
        """Positions of the documents containing ``term`` (by impact in a long list)."""
        posting = self._posting(term)
        return posting.pos if posting is not None else ()

    def counts(self, pos: int) -> Mapping[str, int]:
        """Term counts of the document at ``pos``."""
        return self.prepared[pos].counts

    def _read_terms(self, weights: Mapping[str, float]) -> list[str]:
        raw = self._raw
        present = [t for t in weights if t in raw]
        n = self.stats.n_docs
        if len(self._where) <= EXACT_POOL or not present:
            return present
        limit = max(RARE_MIN, RARE_FRACTION * n)
        rare = [t for t in present if len(raw[t][0]) <= limit]
        return rare or [min(present, key=lambda t: (len(raw[t][0]), t))]

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
            Positions of documents sharing a read term with the query (ties in the order
            the documents were given).
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
            posting = self._posting(term)
            assert posting is not None
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
        key = self._key
        scored = (
            (bm * (1.0 + gamma * (cov[pos] * scale) ** 2), -key[pos], pos)
            for pos, bm in acc.items()
            if allow is None or allow(pos)
        )
        return [pos for _s, _k, pos in heapq.nlargest(depth, scored)]
