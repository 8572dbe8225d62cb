"""Compatibility alias: the public names of :mod:`memory_graph.recall.rank` (moved there)."""

from __future__ import annotations

from .recall.rank import (
    DEFAULT_PARAMS,
    TRUST_PRIOR,
    CorpusStats,
    Document,
    QueryTerms,
    Ranked,
    RankParams,
    corpus_stats,
    doc_terms,
    is_stop_term,
    query_terms,
    rank,
    term_of,
)

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
    "is_stop_term",
    "query_terms",
    "rank",
    "term_of",
]
