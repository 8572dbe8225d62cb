"""Stage 3 (a leaf every later stage reads), model: the ranking's data types. Pure.

Its constants (:class:`RankParams`), documents, pool statistics, query terms and results;
no logic but :func:`idf`. :mod:`memory_graph.recall.rank` re-exports every name here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..types import Trust

__all__ = ["DEFAULT_PARAMS", "CorpusStats", "Document", "QueryTerms", "RankParams", "Ranked", "idf"]


@dataclass(frozen=True)
class RankParams:
    """Tunable constants of the ranking formula (see the module docstring)."""

    k1: float = 1.2
    b: float = 0.75
    b_cjk: float = 1.0
    """``b`` for documents whose tokens are mostly CJK (CJK unigrams and pairs inflate ``|D|``,
    and short CJK statements should not lose to long ones that mention a character)."""
    cjk_unigram_weight: float = 0.3
    cjk_function_pair_weight: float = 0.3
    """Weight of a CJK pair of a query with a particle or pronoun in it ("的家" of "我用的家电",
    "电都" of "家电都是啥", :func:`~.terms.is_function_pair`): a pair across two words, which
    matches by accident."""
    condition_weight: float = 2.0
    """Weight factor of the value of a question's condition ("专科" of "那个教育背景是专科的人",
    :func:`~.terms.condition_values`): every statement of the kind says the attribute, the
    value tells the one asked about apart (a number there has ``number_weight`` already)."""
    number_weight: float = 3.0
    """Weight of a number before a measure word or unit in a query ("26" of "26岁",
    :func:`~.terms.measured_numbers`): a value the evidence states exactly."""
    gamma: float = 1.0
    phrase_whole: float = 1.0
    phrase_pair: float = 0.5
    confidence_floor: float = 0.8
    """``lambda``: the share of the prior that does not depend on confidence."""
    stopwords: bool = True
    stem: bool = True
    question_words: bool = True
    """Queries also ignore the words that only ask (:func:`~.terms.question_terms`)."""
    clause_weight: float = 0.0
    """Weight of each sentence of a multi-sentence query, scored alone and max-normalised."""
    prf_docs: int = 5
    """Pseudo-relevance feedback: how many top documents lend expansion terms (0 = off)."""
    prf_terms: int = 20
    prf_weight: float = 0.3
    hop_docs: int = 3
    """Multi-hop second pass: how many top documents act as bridges (0 = off). Only a
    document outside any conversation thread is a bridge: a turn's second hop is its thread
    neighbours (``context_weight``), and a chatty turn's rare words are seldom entities."""
    hop_terms: int = 8
    """A bridge's rarest terms (absent from the query) that the second pass searches for."""
    hop_weight: float = 0.5
    """A document reached through a bridge scores at most this share of the bridge's score."""
    hop_df_share: float = 0.05
    """A bridge term occurs in at most this share of the pool (or ``hop_min_df`` documents)."""
    hop_min_df: int = 3
    hop_min_pool: int = 20
    """No multi-hop pass in a pool smaller than this (every term is "rare" in a tiny pool)."""
    hop_reach: int = 6
    """At most this many documents per bridge are added to a pool's candidate set."""
    context_weight: float = 0.5
    """Conversation context: a document next to a top document in the same thread scores at
    least this share of that document's score (0 = off)."""
    context_top: int = 5
    """How many top documents lend their score to their thread neighbours."""
    answer_weight: float = 0.4
    """A thread neighbour that asks a question passes this share of the top document's score
    on to the turn past it, two turns from the top document (0 = off)."""
    date_boost: float = 2.0
    """A question naming a date (:mod:`~memory_graph.recall.dates`): a document observed in
    its window scores ``1 + date_boost`` times as much (0 = off)."""
    when_boost: float = 1.0
    """A question asking for a time (:func:`~memory_graph.recall.dates.asks_when`): a
    document that says one (:func:`~memory_graph.recall.dates.says_time`) scores
    ``1 + when_boost`` times as much (0 = off)."""
    when_candidates: int = 10
    """At most this many documents that say a time join a "when" question's candidates."""
    date_candidates: int = 10
    """At most this many documents observed in the window join the candidates (best first by
    the pre-score) ..."""
    date_pool: int = 2000
    """... when the window holds at most this many documents (else it is not selective)."""


DEFAULT_PARAMS = RankParams()


@dataclass(frozen=True, slots=True)
class Document:
    """What ranking needs to know about one candidate record."""

    id: str
    tokens: Sequence[str]
    """Index tokens, in order, with repeats (:func:`~memory_graph.recall.tokenize.index_tokens`)."""
    text: str = ""
    """Index text, for the whole-phrase bonus."""
    trust: Trust = "user-confirmed"
    confidence: float = 1.0
    precedence: int = 0
    """Identity precedence, 0 highest."""
    dedup_key: str | None = None
    sensitive: bool = False
    cache_key: str | None = None
    """When set, names the document's tokens: a :class:`~.candidates.PoolIndex` update keeps
    the prepared form of a document whose key is unchanged (it must change whenever the
    tokens do, e.g. ``scope|id|version|hash``)."""
    thread: str | None = None
    """The conversation the document was said in (neighbours share it), if known."""
    seq: int = 0
    """The document's position in its thread."""
    time: float | None = None
    """When it was observed (POSIX seconds), if known: a question naming a date prefers
    documents from then (:mod:`~memory_graph.recall.dates`)."""


@dataclass(frozen=True)
class CorpusStats:
    """Pool statistics for IDF: document count, mean length, and document frequencies."""

    n_docs: int
    avgdl: float
    df: Mapping[str, int] = field(default_factory=dict)
    _idf: dict[str, float] = field(default_factory=dict, compare=False, repr=False)

    def idf(self, term: str) -> float:
        """:func:`idf` of ``term`` in this pool (memoised: a pool's statistics are fixed)."""
        found = self._idf.get(term)
        if found is None:
            found = self._idf[term] = idf(self.n_docs, self.df.get(term, 0))
        return found


@dataclass(frozen=True)
class QueryTerms:
    """A tokenised query: unique weighted terms, adjacent word pairs and the phrase text."""

    weights: Mapping[str, float]
    pairs: tuple[tuple[str, str], ...]
    phrase: str
    units: tuple[tuple[str, str], ...] = ()
    """Each number written before a measure word or unit, with that unit ("26", "岁"): it
    weighs ``number_weight`` only where a document writes it before the same unit."""


@dataclass(frozen=True)
class Ranked:
    """One ranked document."""

    doc: Document
    score: float


def idf(n_docs: int, df: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` (never negative).

    Examples:
        >>> round(idf(10, 1), 3)
        1.992
    """
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
