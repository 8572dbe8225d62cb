"""The pool index ranks prepared documents exactly as before, and reuses them safely.

The golden lists were computed by the ranking before the index kept prepared documents
(commit ab0832d): ids and scores of the store's in-process path (pre-score, candidate set,
full re-rank) on a fixed synthetic pool with English and CJK documents and threads.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from memory_graph.recall.candidates import EXTRA_CANDIDATES, PoolIndex
from memory_graph.recall.model import DEFAULT_PARAMS, Document
from memory_graph.recall.query import query_terms
from memory_graph.recall.rank import rank, rank_prepared
from memory_graph.recall.tokenize import tokenize

WORDS = (
    "tea coffee garden paint sunset portrait violin lesson doctor clinic tuesday "
    "uncle phone number paris trip museum bread oven recipe dog walk park river "
    "boat fishing camera lens photo sister wedding dress blue green red"
).split()
CJK = ["我表妹是警察", "我喜欢喝咖啡", "周末去公园散步", "我的医生在诊所", "妹妹的婚礼很漂亮"]


def corpus() -> list[Document]:
    rng = random.Random(3)
    docs = []
    for i in range(240):
        if i % 7 == 0:
            text = rng.choice(CJK) + rng.choice(CJK)[:3]
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
            if i % 5 == 0:
                text = "what did my " + text + "?"
        docs.append(
            Document(
                id=f"d{i:03d}",
                tokens=tokenize(text),
                text=text,
                trust=("user-confirmed", "agent-observed", "external")[i % 3],
                confidence=0.5 + (i % 5) / 10,
                thread=f"t{i % 9}" if i % 3 else None,
                seq=i // 9,
            )
        )
    return docs


GOLDEN: dict[str, list[tuple[str, float]]] = {
    "what did my uncle say about the phone number?": [
        ("d131", 8.470689492),
        ("d053", 7.883040843),
        ("d114", 5.958769482),
        ("d172", 5.578769048),
        ("d178", 5.190386905),
        ("d186", 5.179366563),
        ("d211", 5.167161309),
        ("d237", 4.92427993),
        ("d239", 4.691263439),
        ("d074", 4.470504929),
    ],
    "violin lesson on tuesday": [
        ("d188", 11.98436237),
        ("d229", 10.246556861),
        ("d072", 6.994926369),
        ("d051", 6.46257219),
        ("d208", 6.122239027),
        ("d179", 6.117018293),
        ("d194", 6.028103262),
        ("d082", 5.935999714),
        ("d197", 5.867344077),
        ("d149", 5.865117154),
    ],
    "blue dress for the wedding": [
        ("d181", 13.389430919),
        ("d228", 8.486348888),
        ("d172", 6.840252752),
        ("d190", 6.549178167),
        ("d037", 6.486923952),
        ("d090", 6.076963404),
        ("d214", 5.774688836),
        ("d144", 5.558068946),
        ("d162", 5.493928927),
        ("d164", 5.491817262),
    ],
    "我表妹是做什么的": [
        ("d126", 11.65621607),
        ("d028", 11.554857669),
        ("d182", 10.718650864),
        ("d168", 10.481548498),
        ("d035", 9.790134242),
        ("d019", 5.897791935),
        ("d037", 5.657065734),
        ("d173", 5.473353633),
        ("d021", 5.396227443),
        ("d044", 5.330184198),
    ],
    "walk the dog in the park": [
        ("d151", 10.884986481),
        ("d093", 9.74457802),
        ("d006", 8.381246385),
        ("d080", 7.638934035),
        ("d023", 6.497151868),
        ("d222", 5.83899085),
        ("d142", 5.560808311),
        ("d177", 5.549293361),
        ("d160", 5.32417817),
        ("d059", 5.216794108),
    ],
    "museum trip paris photo camera": [
        ("d123", 11.112376861),
        ("d192", 10.186430105),
        ("d097", 8.541735706),
        ("d128", 8.251486836),
        ("d055", 7.523845548),
        ("d074", 6.718813482),
        ("d089", 6.517013397),
        ("d223", 6.186600884),
        ("d085", 6.177816579),
        ("d177", 6.087891341),
    ],
    "bread recipe oven": [
        ("d146", 10.280969767),
        ("d053", 10.205665784),
        ("d151", 9.402535433),
        ("d092", 8.193038824),
        ("d131", 5.915781276),
        ("d216", 5.677766875),
        ("d023", 5.581532361),
        ("d136", 5.313240708),
        ("d162", 5.312219373),
        ("d137", 5.252234555),
    ],
}


def pool_ranking(index: PoolIndex, query: str) -> list[tuple[str, float]]:
    qt = query_terms(query)
    chosen = index.select(qt, depth=20)
    ranked = rank_prepared(
        query, [index.prepared[p] for p in chosen], limit=10, stats=index.stats, terms=qt
    )
    return [(r.doc.id, r.score) for r in ranked]


# The golden lists predate the answer link of the context pass (a neighbour that asks a
# question passes score on to the turn past it), the question words queries ignore
# ("什么", "how many") and the low weight of a query's CJK pairs with a function character
# ("的家"); tests/test_recall_quality.py and tests/test_recall_forms.py cover them.
GOLDEN_PARAMS = replace(
    DEFAULT_PARAMS, answer_weight=0.0, question_words=False, cjk_function_pair_weight=1.0
)


@pytest.mark.parametrize("query", sorted(GOLDEN))
def test_the_pool_ranking_is_unchanged(query: str) -> None:
    index = PoolIndex(corpus(), GOLDEN_PARAMS)
    qt = query_terms(query, GOLDEN_PARAMS)
    chosen = index.select(qt, depth=20)
    ranked = rank_prepared(
        query,
        [index.prepared[p] for p in chosen],
        limit=10,
        stats=index.stats,
        terms=qt,
        params=GOLDEN_PARAMS,
    )
    assert [(r.doc.id, r.score) for r in ranked] == GOLDEN[query]
    # rank() over the same candidates' documents agrees with the prepared path.
    docs = [index.docs[p] for p in chosen]
    plain = rank(query, docs, limit=10, stats=index.stats, params=GOLDEN_PARAMS)
    assert [(r.doc.id, r.score) for r in plain] == GOLDEN[query]


def test_the_candidate_set_is_bounded_whatever_the_hop_reach() -> None:
    index = PoolIndex(corpus())
    for query in GOLDEN:
        chosen = index.select(query_terms(query), depth=5)
        assert len(chosen) == len(set(chosen)) <= 5 + EXTRA_CANDIDATES


def edited(docs: list[Document]) -> list[Document]:
    """A later state of the pool: one record rewritten (new cache key), one removed, one
    added into a thread (the thread's later turns move one place), one reinforced."""
    out = [d for d in docs if d.id != "d010"]
    out = [
        replace(d, tokens=tokenize("uncle phone number changed"), cache_key=f"{d.id}|2")
        if d.id == "d053"
        else replace(d, seq=d.seq + 1)
        if d.thread == "t4" and d.seq >= 3
        else replace(d, confidence=1.0)
        if d.id == "d131"
        else d
        for d in out
    ]
    new = Document(id="d999", tokens=tokenize("uncle phone at the clinic"), thread="t4", seq=3)
    return sorted([*out, new], key=lambda d: d.id)


def test_an_updated_index_ranks_like_a_fresh_one() -> None:
    before = [replace(d, cache_key=f"{d.id}|1") for d in corpus()]
    old = PoolIndex(before)
    after = [d if d.cache_key else replace(d, cache_key=f"{d.id}|1") for d in edited(before)]
    updated = old.updated(after)
    fresh = PoolIndex(after)
    assert updated.stats == fresh.stats
    assert {d.id: updated.prepared[updated.position(d.id)] for d in after} == {
        d.id: fresh.prepared[fresh.position(d.id)] for d in after
    }  # documents (thread places, priors) are current; the rewritten one is re-prepared
    for query in GOLDEN:
        assert pool_ranking(updated, query) == pool_ranking(fresh, query)
    assert "chang" in updated.prepared[updated.position("d053")].counts
    with pytest.raises(KeyError):
        updated.position("d010")


def selected(index: PoolIndex, query: str, depth: int = 20) -> list[str]:
    return [index.prepared[p].doc.id for p in index.select(query_terms(query), depth=depth)]


def postings(index: PoolIndex, term: str) -> list[str]:
    return [index.prepared[p].doc.id for p in index.positions(term)]


def note(rid: str, text: str) -> Document:
    text = f"note {text}"  # "note" is in every document: a long postings list
    return Document(rid, tokenize(text), text=text, cache_key=f"{rid}|{text}")


def test_many_updates_rank_like_fresh_builds() -> None:
    rng = random.Random(11)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS[:12]) for _ in range(n))  # few words: many ties

    docs = sorted(
        (note(f"{rng.randrange(16**6):06x}", words(3)) for _ in range(300)), key=lambda d: d.id
    )
    index = PoolIndex(docs)
    queries = ["note tea", "garden paint note", "violin lesson", "tea coffee garden doctor"]
    for step in range(40):
        docs = list(docs)
        for _ in range(rng.randint(1, 4)):
            action = rng.random()
            if action < 0.3:  # remove
                docs.pop(rng.randrange(len(docs)))
            elif action < 0.6:  # add (ids interleave with the others)
                docs.append(note(f"{rng.randrange(16**6):06x}", words(rng.randint(1, 5))))
            else:  # rewrite one, move it in a thread, or reinforce it
                i = rng.randrange(len(docs))
                d = docs[i]
                docs[i] = rng.choice(
                    [
                        note(d.id, words(2)),
                        replace(d, thread="t", seq=step),
                        replace(d, confidence=0.9),
                    ]
                )
        docs.sort(key=lambda d: d.id)
        index = index.updated(docs)
        fresh = PoolIndex(docs)
        assert index.stats == fresh.stats
        for term in ("note", "tea", "garden", "violin"):  # read order, ties in id order
            assert postings(index, term) == postings(fresh, term), (step, term)
        for query in queries:
            assert selected(index, query, 400) == selected(fresh, query, 400), (step, query)
            assert pool_ranking(index, query) == pool_ranking(fresh, query), (step, query)
    kept = docs[::3]  # many removals at once: the positions are compacted
    index, fresh = index.updated(kept), PoolIndex(kept)
    assert len(index.prepared) == len(kept) and index.stats == fresh.stats
    for query in queries:
        assert selected(index, query) == selected(fresh, query)


def test_terms_doctests() -> None:
    import doctest

    from memory_graph.recall import terms

    result = doctest.testmod(terms)
    assert result.attempted > 0 and result.failed == 0
