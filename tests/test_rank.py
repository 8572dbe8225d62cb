"""Ranking: determinism, IDF, phrase bonus, priors, ties, duplicates, sensitivity."""

from __future__ import annotations

import doctest

import memory_graph.recall.rank as rank_module
from memory_graph.recall.model import Document
from memory_graph.recall.query import query_terms
from memory_graph.recall.rank import rank
from memory_graph.recall.terms import term_of
from memory_graph.recall.tokenize import tokenize


def doc(id_: str, text: str, **kw: object) -> Document:
    return Document(id=id_, tokens=tokenize(text), text=text, **kw)  # type: ignore[arg-type]


POOL = [
    doc("a", "The user likes green tea in the morning"),
    doc("b", "The user plays the violin on weekends"),
    doc("c", "The user drinks coffee"),
    doc("d", "Coffee beans from Kenya"),
]


def test_rare_term_wins_and_nonmatching_dropped() -> None:
    ids = [r.doc.id for r in rank("violin", POOL, limit=10)]
    assert ids == ["b"]


def test_stopwords_do_not_match() -> None:
    assert [r.doc.id for r in rank("what is the", POOL, limit=10)] != []  # only stopwords: kept
    assert [r.doc.id for r in rank("what does the user play?", POOL, limit=10)][0] == "b"


def test_deterministic_and_ties_by_precedence_then_id() -> None:
    docs = [
        doc("z", "likes tea", precedence=1),
        doc("y", "likes tea", precedence=1),
        doc("x", "likes tea", precedence=3),
        doc("w", "likes tea", precedence=0),
    ]
    first = [r.doc.id for r in rank("tea", docs, limit=10)]
    assert first == ["w", "y", "z", "x"]
    assert first == [r.doc.id for r in rank("tea", list(reversed(docs)), limit=10)]


def test_trust_and_confidence_priors() -> None:
    docs = [
        doc("a", "likes tea", trust="external"),
        doc("b", "likes tea", trust="user-confirmed", confidence=0.8),
        doc("c", "likes tea", trust="user-confirmed", confidence=1.0),
    ]
    assert [r.doc.id for r in rank("tea", docs, limit=10)] == ["c", "b", "a"]


def test_phrase_bonus() -> None:
    docs = [doc("a", "support group for the community"), doc("b", "group support and more")]
    assert rank("support group", docs, limit=2)[0].doc.id == "a"


def test_duplicates_dropped_before_limit() -> None:
    docs = [
        doc("a", "likes tea", dedup_key="h1"),
        doc("b", "likes tea", dedup_key="h1"),
        doc("c", "tea time", dedup_key="h2"),
    ]
    ids = [r.doc.id for r in rank("tea", docs, limit=2)]
    assert ids[0] == "a" and "b" not in ids and len(ids) == 2


def test_sensitive_excluded_before_top_k() -> None:
    docs = [doc("s", "violin violin", sensitive=True), doc("p", "violin teacher")]
    assert [r.doc.id for r in rank("violin", docs, limit=1)] == ["p"]
    assert len(rank("violin", docs, limit=2, include_sensitive=True)) == 2


def test_empty_query_ranks_everything_by_prior() -> None:
    assert len(rank("", POOL, limit=10)) == 4


def test_cjk_bigram_beats_unigram_noise() -> None:
    docs = [doc("a", "我喜欢喝咖啡"), doc("b", "咖喱饭和啡色"), doc("c", "今天天气好")]
    ids = [r.doc.id for r in rank("咖啡", docs, limit=10)]
    assert ids[0] == "a" and "c" not in ids


def test_term_of_and_query_terms() -> None:
    assert term_of("08") == term_of("8") == "8"
    assert term_of("running") == "run"
    qt = query_terms("what did Caroline paint?")
    assert set(qt.weights) == {"caroline", "paint"}


def test_doctests() -> None:
    result = doctest.testmod(rank_module)
    assert result.failed == 0 and result.attempted > 0
