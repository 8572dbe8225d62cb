"""Stage 11, fuse: a parsed query's legs and passes, each ranked -> one ranking. Pure.

Takes a :class:`~.query.ParsedQuery` and ``rank_one`` (a parsed text -> its ranking: the
candidates of :mod:`.candidates` ranked by :mod:`.rank`), and gives the fused ranking of the
text. One text may hold several questions, or chatter around the question that matters: its
legs (:attr:`~.query.ParsedQuery.legs`) are ranked each on its own and fused by their
max-normalised scores (:func:`fuse_legs`), so one question's many matches cannot push
another question's evidence out of the top ``k``; a text with one leg ranks exactly as
``rank_one`` ranks it. Each leg also takes its expansion pass, a "how many" question its
kind pass, and a question its hop pass from its first hits (:func:`rank_legs`); every text
these passes rank is parsed once (:meth:`~.query.ParsedQuery.derived`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .expand import expanded_text, hop_terms, residual_text
from .model import CorpusStats, Ranked
from .query import Leg, ParsedQuery, parse_query
from .terms import is_function_pair, is_stop_term, term_of

__all__ = ["Leg", "RankOne", "fuse_legs", "interleave", "rank_legs"]

RankOne = Callable[[ParsedQuery], Sequence[Ranked]]
"""Ranks one parsed text (best first, at most the recall's limit)."""

_EXPAND_WEIGHT = 1.0
_KIND_HITS = 3
"""A "how many" question's kind is what its first this many hits all say beside it."""
_KIND_WEIGHT = 0.5
_SECOND_HIT_SHARE = 0.75
"""A leg's second hit hops too when it scores at least this share of the first."""


def fuse_legs(ranked: Sequence[tuple[Leg, Sequence[Ranked]]], *, limit: int) -> list[Ranked]:
    """Fuse the rankings of several legs: each leg's scores are divided by its best score
    and weighted, a document's fused score is the sum over the legs that found it (times the
    best leg's peak, so scores stay on the ranking's scale).

    Args:
        ranked: Each leg with its ranking (best first).
        limit: Maximum number of results.

    Returns:
        At most ``limit`` results by fused score (ties: first leg's order, then id).
    """
    score: dict[str, float] = {}
    first: dict[str, tuple[int, int]] = {}
    docs: dict[str, Ranked] = {}
    scale = 0.0
    for li, (leg, hits) in enumerate(ranked):
        peak = max((h.score for h in hits), default=0.0)
        if peak <= 0:
            continue
        scale = max(scale, peak)
        for pos, hit in enumerate(hits):
            key = hit.doc.id
            score[key] = score.get(key, 0.0) + leg.weight * hit.score / peak
            first.setdefault(key, (pos, li))
            docs.setdefault(key, hit)
    order = sorted(score, key=lambda k: (-round(score[k], 9), first[k], k))
    out: list[Ranked] = []
    seen: set[str] = set()
    for key in order:
        doc = docs[key].doc
        if doc.dedup_key is not None:
            if doc.dedup_key in seen:
                continue
            seen.add(doc.dedup_key)
        out.append(Ranked(doc=doc, score=round(score[key] * scale, 9)))
        if len(out) >= limit:
            break
    return out


def rank_legs(
    query: str | ParsedQuery,
    rank_one: RankOne,
    *,
    limit: int,
    stats: CorpusStats | None = None,
) -> list[Ranked]:
    """Rank a query text by its legs (:func:`~.query.query_legs`) and fuse them
    (:func:`fuse_legs`).

    Each leg is ranked as written and with its expansion terms
    (:func:`~memory_graph.recall.expand.expanded_text`), fused; a "how many" question's
    fusion takes in, at :data:`_KIND_WEIGHT`, the ranking of what its first hits all say
    beside it (:func:`_kind_pass`: its kind of statement, whatever the value); then, with
    ``stats``, its hop pass (:func:`_hop_pass`: the words the first hit of that fusion adds
    with what the question still asks; the paraphrases may find the statement the question
    words as written miss) takes every other place after the first. For a question naming its
    someone by a condition (:func:`~.terms.names_by_condition`), the second hit hops as well
    when it scores at least :data:`_SECOND_HIT_SHARE` of the first (the hops take turns). The
    whole text beside its questions (a leg of weight below 1) is ranked as written only: it
    contributes to the fused best document alone.

    Args:
        query: One planned query text, or its parse (:func:`~.query.parse_query`).
        rank_one: Ranks one parsed text (best first, at most ``limit``).
        limit: Maximum number of results.
        stats: The pool statistics (for the hop pass; none without them).

    Returns:
        ``rank_one(query)`` itself when nothing is split, expanded or hopped, else the fused
        ranking.
    """
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    groups: list[tuple[Leg, Sequence[Ranked]]] = []
    for leg in parsed.legs:
        asked = leg.query if leg.query is not None else parsed.derived(leg.text)
        first = rank_one(asked)
        passes: list[tuple[Leg, Sequence[Ranked]]] = [(Leg(leg.text), first)]
        if leg.weight < 1.0:
            # The whole text beside its questions only helps pick the fused best; its
            # expansion and hop passes changed no top-10 on the eval suites (19% of passes).
            groups.append((leg, first))
            continue
        expanded = asked.expanded
        text = expanded.text
        if text != leg.text and _EXPAND_WEIGHT > 0:
            passes.append((Leg(text, _EXPAND_WEIGHT), rank_one(expanded)))
        merged = passes[0][1] if len(passes) == 1 else fuse_legs(passes, limit=limit)
        kind = _kind_pass(asked, expanded, merged, rank_one)
        if kind:
            merged = fuse_legs([(Leg(text), merged), (Leg(text, _KIND_WEIGHT), kind)], limit=limit)
        # The hop from the first hit, and, for a question naming its someone by a condition,
        # from the second when it scores nearly as well (the condition may be what either
        # says of its someone).
        top = merged[0].score if merged else 0.0
        second = asked.by_condition
        hops = [
            found
            for i, hit in enumerate(merged[:2])
            if (i == 0 or (second and hit.score >= _SECOND_HIT_SHARE * top))
            and (found := _hop_pass(asked, expanded, hit, rank_one, stats))
        ]
        hopped = interleave(hops, limit=limit) if len(hops) > 1 else (hops[0] if hops else [])
        if hopped:
            # The hop pass answers what the question asks of the someone its first hit
            # found: its results take every other place after that hit.
            merged = interleave([merged, hopped], limit=limit)
        groups.append((leg, merged))
    if len(groups) == 1:
        return list(groups[0][1])
    # The fused ranking's best first (the document that answers most of the message), then
    # the questions' rankings in turn.
    fused = fuse_legs(groups, limit=1)
    return interleave([fused, *[hits for leg, hits in groups if leg.weight >= 1.0]], limit=limit)


def _kind_pass(
    question: ParsedQuery,
    expanded: ParsedQuery,
    merged: Sequence[Ranked],
    rank_one: RankOne,
) -> list[Ranked]:
    """What a "how many" question's first hits say beside it: the words all of its first
    :data:`_KIND_HITS` hits hold and the question does not ("家乡" of "有几个人和我一样是
    湖南长沙的" when each hit reads "…其家乡是…"), ranked. They name the kind of statement
    the count is checked against, whatever its value; empty for other questions.
    """
    if not question.count or len(merged) < _KIND_HITS:
        return []
    asked = set(map(term_of, expanded.tokens))
    shared: set[str] | None = None
    for hit in merged[:_KIND_HITS]:
        if hit.doc.thread is not None:
            return []
        terms = {
            t
            for t in map(term_of, hit.doc.tokens)
            if len(t) > 1 and not is_stop_term(t) and not is_function_pair(t) and t not in asked
        }
        shared = terms if shared is None else shared & terms
    if not shared:
        return []
    return list(rank_one(question.derived(" ".join(sorted(shared)))))


def _hop_pass(
    question: ParsedQuery,
    expanded: ParsedQuery,
    found: Ranked,
    rank_one: RankOne,
    stats: CorpusStats | None,
) -> list[Ranked]:
    """The second hop of one leg from one of its hits: the hit's own words
    (:func:`hop_terms`) with what the question still asks (:func:`residual_text`), ranked;
    only results holding a hop term count (the others are not about the someone the hit
    found), and not the hit itself (placed already: a hop pass repeating it first gives up
    a place to no one). Empty without statistics, for a conversation turn (as in the
    ranking's own hop pass, its second hop is its thread neighbours), and for a "how many"
    question (it wants every statement of a kind: a hop to what else one of them says would
    only crowd the others out).
    """
    if stats is None or found.doc.thread is not None or question.count:
        return []
    hit = found.doc.text or " ".join(found.doc.tokens)
    hop = hop_terms(expanded.text, hit, stats)
    if not hop:
        return []
    rest = residual_text(question.text, hit)
    want = set(hop)
    hop_query = question.derived(f"{' '.join(hop)} {expanded_text(rest) or rest}")
    return [
        r
        for r in rank_one(hop_query)
        if r.doc.id != found.doc.id and not want.isdisjoint(map(term_of, r.doc.tokens))
    ]


def interleave(rankings: Sequence[Sequence[Ranked]], *, limit: int) -> list[Ranked]:
    """Take the rankings' results in turn (first of each, then second of each, ...),
    skipping repeats, so every question of a message gets its share of the ``limit``.

    Examples:
        >>> from memory_graph.recall.model import Document
        >>> a, b, c = (Ranked(Document(x, [x]), 1.0) for x in "abc")
        >>> [r.doc.id for r in interleave([[a, b], [a, c]], limit=3)]
        ['a', 'b', 'c']
    """
    out: list[Ranked] = []
    seen: set[str] = set()
    for i in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if i < len(ranking) and ranking[i].doc.id not in seen:
                key = ranking[i].doc.dedup_key
                if key is not None and key in seen:
                    continue
                seen.add(ranking[i].doc.id)
                if key is not None:
                    seen.add(key)
                out.append(ranking[i])
                if len(out) >= limit:
                    return out
    return out
