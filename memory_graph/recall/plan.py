"""The recall query plan (DESIGN §6): which texts to search, in which order. Pure.

The plan is the current task step, then the latest human message, then the goal's objective,
each cut to ``max_query_chars`` characters, with blanks and repeats dropped. Standing guidance
(active, user-confirmed preferences and instructions) is fetched after them by the store, and
all results are merged in that order without repeats (:func:`merge_hits`).

One text may hold several questions, or chatter around the question that matters. Its
**legs** (:func:`query_legs`) are what is ranked: the questions restated after a cue ("what
I really want to ask is: ...", "我真正想问的是：..."), else the questions joined by "另外" /
"also", else the whole text. :func:`rank_legs` ranks each leg on its own and fuses them by
their max-normalised scores, so one question's many matches cannot push another question's
evidence out of the top ``k``; a text with one leg ranks exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..types import SearchHit
from .expand import expanded_text, hop_terms, residual_text
from .rank import CorpusStats, Ranked
from .terms import asks_count, is_function_pair, is_stop_term, names_by_condition, term_of
from .tokenize import tokenize

__all__ = [
    "STANDING_KINDS",
    "STANDING_TRUSTS",
    "Leg",
    "fuse_legs",
    "interleave",
    "merge_hits",
    "plan_queries",
    "query_legs",
    "rank_legs",
]

STANDING_KINDS: tuple[str, ...] = ("preference", "instruction")
"""Kinds of standing guidance."""
STANDING_TRUSTS: tuple[str, ...] = ("user-confirmed",)
"""Trust of standing guidance."""


def plan_queries(
    task_step: str | None,
    latest_input: str | None,
    goal: str | None,
    *,
    max_chars: int = 2048,
) -> list[str]:
    """The ordered, de-duplicated query texts of one recall step.

    Args:
        task_step: The current task step, if any.
        latest_input: The latest human message, if any.
        goal: The goal's objective, if any.
        max_chars: Each text is cut to this many characters.

    Returns:
        At most three non-blank, distinct texts, in plan order.

    Examples:
        >>> plan_queries("book a table", "  ", "book a table")
        ['book a table']
        >>> plan_queries(None, "x" * 5, "y", max_chars=3)
        ['xxx', 'y']
    """
    out: list[str] = []
    for part in (task_step, latest_input, goal):
        if part is None:
            continue
        cut = part[:max_chars]
        if cut.strip() and cut not in out:
            out.append(cut)
    return out


def merge_hits(groups: Iterable[Sequence[SearchHit]]) -> list[SearchHit]:
    """Concatenate hit lists in order, keeping the first occurrence of each record id.

    Args:
        groups: Hit lists in plan order (query results, then standing guidance).

    Returns:
        The merged hits.
    """
    seen: set[str] = set()
    out: list[SearchHit] = []
    for hits in groups:
        for hit in hits:
            if hit.record.id not in seen:
                seen.add(hit.record.id)
                out.append(hit)
    return out


@dataclass(frozen=True)
class Leg:
    """One part of a query text that is ranked on its own, and its share in the fusion."""

    text: str
    weight: float = 1.0


# "What I really want to ask is: ..." — a restated question after chatter. The cue is a verb
# of asking / knowing after 想 (want) or a "the question is" noun phrase, then up to 8 more
# characters before the delimiter that introduces the question.
_CUE_ZH = re.compile(
    r"(?:想(?:要)?(?:问|说|了解|知道|搞清楚|弄清楚|弄明白|确认)|问题是|等等，诶，等等)"
    r"[^。！？!?：:，,]{0,8}[：:，,]"
)
_CUE_EN = re.compile(
    r"\b(?:what i (?:really |actually )?(?:want|wanted|meant|mean) to (?:ask|know|say)"
    r"|my (?:real |actual )?question is)\b[^.?!:,]{0,20}[:,]?",
    re.IGNORECASE,
)
_QUESTION_END = re.compile(r"[？?]")
# Questions joined by "also": "X？另外，Y？" / "X? Also, Y?"
_ALSO = re.compile(
    r"(?:[？?。.!！]\s*|^)(?:另外|此外|还有|also|and also)\s*[，,:：]?\s*", re.IGNORECASE
)
_MAX_LEGS = 4
_WHOLE_WEIGHT = 0.3
_CHATTER_WEIGHT = 0.1
_EXPAND_WEIGHT = 1.0
_KIND_HITS = 3
"""A "how many" question's kind is what its first this many hits all say beside it."""
_KIND_WEIGHT = 0.5
_SECOND_HIT_SHARE = 0.75
"""A leg's second hit hops too when it scores at least this share of the first."""


def _after_cues(text: str) -> list[str]:
    out: list[str] = []
    for cue in (_CUE_ZH, _CUE_EN):
        for m in cue.finditer(text):
            rest = text[m.end() :]
            end = _QUESTION_END.search(rest)
            part = rest[: end.end()] if end else rest
            if tokenize(part):
                out.append(part.strip())
    return out


def query_legs(query: str) -> list[Leg]:
    """The legs of one query text: its restated or joined questions, else the whole text.

    Args:
        query: One planned query text.

    Returns:
        The whole text alone when it has no parts; else each part (at most four) at weight
        1 and the whole text at a lower weight (lower still when the parts are restated
        questions: the rest is chatter).

    Examples:
        >>> [(l.text, l.weight) for l in query_legs("手机是什么？另外，表哥在哪？")]
        [('手机是什么？', 1.0), ('表哥在哪？', 1.0), ('手机是什么？另外，表哥在哪？', 0.3)]
        >>> [l.text for l in query_legs("天气真好。不对，我真正想问的是：鞋怎么样？")][0]
        '鞋怎么样？'
        >>> [l.text for l in query_legs("When did Mel paint a sunrise?")]
        ['When did Mel paint a sunrise?']
    """
    parts = _after_cues(query)
    restated = bool(parts)
    if not parts:
        cuts = [m for m in _ALSO.finditer(query) if m.end() > m.start()]
        starts = [0, *[m.end() for m in cuts if m.start() > 0]]
        ends = [*[m.start() + 1 for m in cuts if m.start() > 0], len(query)]
        parts = [query[a:b].strip() for a, b in zip(starts, ends, strict=True)]
        parts = [p for p in parts if tokenize(p)]
    unique = list(dict.fromkeys(parts))[:_MAX_LEGS]
    if len(unique) <= 1 and not restated:
        return [Leg(query)]
    legs = [Leg(p) for p in unique]
    weight = _CHATTER_WEIGHT if restated else _WHOLE_WEIGHT
    if weight > 0:
        legs.append(Leg(query, weight))
    return legs


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
    query: str,
    rank_one: Callable[[str], Sequence[Ranked]],
    *,
    limit: int,
    stats: CorpusStats | None = None,
) -> list[Ranked]:
    """Rank a query text by its legs (:func:`query_legs`) and fuse them (:func:`fuse_legs`).

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
        query: One planned query text.
        rank_one: Ranks one text (best first, at most ``limit``).
        limit: Maximum number of results.
        stats: The pool statistics (for the hop pass; none without them).

    Returns:
        ``rank_one(query)`` itself when nothing is split, expanded or hopped, else the fused
        ranking.
    """
    legs = query_legs(query)
    groups: list[tuple[Leg, Sequence[Ranked]]] = []
    for leg in legs:
        first = rank_one(leg.text)
        passes: list[tuple[Leg, Sequence[Ranked]]] = [(Leg(leg.text), first)]
        if leg.weight < 1.0:
            # The whole text beside its questions only helps pick the fused best; its
            # expansion and hop passes changed no top-10 on the eval suites (19% of passes).
            groups.append((leg, first))
            continue
        text = expanded_text(leg.text) or leg.text
        if text != leg.text and _EXPAND_WEIGHT > 0:
            passes.append((Leg(text, _EXPAND_WEIGHT), rank_one(text)))
        merged = passes[0][1] if len(passes) == 1 else fuse_legs(passes, limit=limit)
        kind = _kind_pass(leg.text, text, merged, rank_one)
        if kind:
            merged = fuse_legs([(Leg(text), merged), (Leg(text, _KIND_WEIGHT), kind)], limit=limit)
        # The hop from the first hit, and, for a question naming its someone by a condition,
        # from the second when it scores nearly as well (the condition may be what either
        # says of its someone).
        top = merged[0].score if merged else 0.0
        second = names_by_condition(leg.text)
        hops = [
            found
            for i, hit in enumerate(merged[:2])
            if (i == 0 or (second and hit.score >= _SECOND_HIT_SHARE * top))
            and (found := _hop_pass(leg.text, text, hit, rank_one, stats))
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
    question: str,
    expanded: str,
    merged: Sequence[Ranked],
    rank_one: Callable[[str], Sequence[Ranked]],
) -> list[Ranked]:
    """What a "how many" question's first hits say beside it: the words all of its first
    :data:`_KIND_HITS` hits hold and the question does not ("家乡" of "有几个人和我一样是
    湖南长沙的" when each hit reads "…其家乡是…"), ranked. They name the kind of statement
    the count is checked against, whatever its value; empty for other questions.
    """
    if not asks_count(question) or len(merged) < _KIND_HITS:
        return []
    asked = set(map(term_of, tokenize(expanded)))
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
    return list(rank_one(" ".join(sorted(shared))))


def _hop_pass(
    question: str,
    expanded: str,
    found: Ranked,
    rank_one: Callable[[str], Sequence[Ranked]],
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
    if stats is None or found.doc.thread is not None or asks_count(question):
        return []
    hit = found.doc.text or " ".join(found.doc.tokens)
    hop = hop_terms(expanded, hit, stats)
    if not hop:
        return []
    rest = residual_text(question, hit)
    want = set(hop)
    return [
        r
        for r in rank_one(f"{' '.join(hop)} {expanded_text(rest) or rest}")
        if r.doc.id != found.doc.id and not want.isdisjoint(map(term_of, r.doc.tokens))
    ]


def interleave(rankings: Sequence[Sequence[Ranked]], *, limit: int) -> list[Ranked]:
    """Take the rankings' results in turn (first of each, then second of each, ...),
    skipping repeats, so every question of a message gets its share of the ``limit``.

    Examples:
        >>> from memory_graph.recall.rank import Document
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
