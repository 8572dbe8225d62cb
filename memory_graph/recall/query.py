"""Stage 7, query: one query text -> its :class:`ParsedQuery`, built once. Pure.

Takes a planned query text (:mod:`.plan`) and gives what every later stage reads of it,
computed from **one** tokenization of the text (:mod:`.tokenize`):

- its tokens, and the tokens of its answer-form-stripped text
  (:func:`~.terms.answer_form_stripped`: the words that say how the answer is to be worked
  out or presented; tokenized only when that text differs);
- its weighted ranking terms (:class:`~.model.QueryTerms`, :func:`query_terms`): stemmed
  terms without function words and question words, CJK unigrams and function pairs at a low
  weight, numbers before their unit and a condition's value weighed up, adjacent word pairs
  and the whole-phrase text;
- the date window it names and whether it asks "when" (:mod:`.dates`), whether it asks
  "how many" and whether it names its someone by a condition (:mod:`.terms`);
- its expansion pass (:func:`~.expand.expanded_text`: numerals in the other script and
  paraphrases), parsed once;
- its **legs** (:func:`query_legs`): the questions restated after a cue ("what I really want
  to ask is: ...", "我真正想问的是：..."), else the questions joined by "另外" / "also", else
  the whole text, each parsed once (the whole text's leg is this parse).

A text the later stages build (a kind or hop pass, an expansion, a leg) is parsed once with
:meth:`ParsedQuery.derived`, with the same ranking constants and recall time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from .dates import Window, asks_when, question_window
from .expand import expanded_text
from .model import DEFAULT_PARAMS, QueryTerms, RankParams
from .terms import (
    answer_form_stripped,
    asks_count,
    condition_values,
    is_function_pair,
    is_stop_term,
    measured_numbers,
    names_by_condition,
    number_units,
    phrase_text,
    question_terms,
    ranking_terms,
    term_of,
)
from .tokenize import is_cjk, tokenize

__all__ = ["Leg", "ParsedQuery", "parse_query", "query_legs", "query_terms"]


@dataclass(frozen=True, eq=False)
class ParsedQuery:
    """One query text as the later stages read it (see the module docstring); build it with
    :func:`parse_query`. The derived parts (window, legs, expansion) are computed when first
    read, from the tokens kept here."""

    text: str
    tokens: list[str]
    """``tokenize(text)``: the one tokenization of the text."""
    ranked: list[str]
    """The tokens the terms are weighed from: those of the answer-form-stripped text, or
    :attr:`tokens` when that has none."""
    conditions: tuple[list[str], ...]
    """The tokens of each condition's value (:func:`~.terms.condition_values`)."""
    params: RankParams
    now: datetime | None
    """The recall's time, for relative dates ("last week", "上周")."""
    terms: QueryTerms
    """The weighted terms under :attr:`params`."""

    def terms_for(self, params: RankParams) -> QueryTerms:
        """The weighted terms under ``params`` (no new tokenization)."""
        if params is self.params or params == self.params:
            return self.terms
        return _weigh(self.tokens, self.ranked, self.conditions, params)

    def derived(self, text: str) -> ParsedQuery:
        """Another text of the same recall (a leg, an expansion, a pass), parsed once."""
        if text == self.text:
            return self
        return parse_query(text, params=self.params, now=self.now)

    @cached_property
    def window(self) -> Window | None:
        """The time window the text names (:func:`~.dates.question_window`), if any."""
        return question_window(self.text, self.now)

    @cached_property
    def when(self) -> bool:
        """It asks for a time (:func:`~.dates.asks_when`)."""
        return asks_when(self.text)

    @cached_property
    def count(self) -> bool:
        """It asks how many (:func:`~.terms.asks_count`)."""
        return asks_count(self.text)

    @cached_property
    def by_condition(self) -> bool:
        """It names its someone by a condition (:func:`~.terms.names_by_condition`)."""
        return names_by_condition(self.text)

    @cached_property
    def expanded(self) -> ParsedQuery:
        """Its expansion pass (:func:`~.expand.expanded_text`), parsed; itself when none."""
        text = expanded_text(self.text)
        return self if text is None else self.derived(text)

    @cached_property
    def legs(self) -> tuple[Leg, ...]:
        """Its legs (:func:`query_legs`)."""
        return tuple(_legs(self))


def parse_query(
    text: str, *, params: RankParams = DEFAULT_PARAMS, now: datetime | None = None
) -> ParsedQuery:
    """Parse one query text: tokenize it once and weigh its terms.

    Args:
        text: The query text.
        params: Ranking constants (stemming, the weights of the query's terms).
        now: The recall's time (relative dates in the window); none when ``None``.

    Returns:
        The parsed query.

    Examples:
        >>> q = parse_query("When did Mel paint the sunsets?")
        >>> q.tokens[:3], sorted(q.terms.weights), q.when
        (['when', 'did', 'mel'], ['mel', 'paint', 'sunset'], True)
    """
    tokens = tokenize(text)
    stripped = answer_form_stripped(text)
    ranked = (tokens if stripped == text else tokenize(stripped)) or tokens
    conditions = (
        tuple(tokenize(value) for value in condition_values(text))
        if params.condition_weight != 1.0
        else ()
    )
    return ParsedQuery(
        text=text,
        tokens=tokens,
        ranked=ranked,
        conditions=conditions,
        params=params,
        now=now,
        terms=_weigh(tokens, ranked, conditions, params),
    )


def _weigh(
    tokens: list[str],
    ranked: list[str],
    conditions: tuple[list[str], ...],
    params: RankParams,
) -> QueryTerms:
    """The weighted unique terms of a query's tokens (see :func:`query_terms`)."""
    terms = ranking_terms(ranked, params.stem)
    weights: dict[str, float] = {}
    measured = measured_numbers(ranked) if params.number_weight != 1.0 else set()
    for term in terms:
        if term in weights:
            continue
        if len(term) == 1 and is_cjk(term):
            weights[term] = params.cjk_unigram_weight
        elif is_function_pair(term):
            weights[term] = params.cjk_function_pair_weight
        else:
            weights[term] = params.number_weight if term in measured else 1.0
    if params.condition_weight != 1.0:
        for value in conditions:
            for term in ranking_terms(value, params.stem):
                if term in weights and term not in measured and not is_stop_term(term):
                    weights[term] *= params.condition_weight
    if params.stopwords:
        asked = {term_of(t) for t in question_terms(ranked)} if params.question_words else set()
        kept = {t: w for t, w in weights.items() if not is_stop_term(t) and t not in asked}
        if kept:
            weights = kept
    words = [t for t in terms if not is_cjk(t[0])]
    pairs = tuple(
        (a, c)
        for a, c in zip(words, words[1:], strict=False)
        if a in weights and c in weights and a != c
    )
    # A stated value's number counts only before its unit (not the "9" of "9:00").
    units = tuple(u for u in number_units(ranked) if weights.get(u[0], 0.0) > 1.0)
    return QueryTerms(weights=weights, pairs=pairs, phrase=phrase_text(tokens), units=units)


def query_terms(query: str, params: RankParams = DEFAULT_PARAMS) -> QueryTerms:
    """Tokenise and weigh a query (:func:`parse_query`'s terms).

    Args:
        query: The query text.
        params: Ranking constants.

    Returns:
        The weighted unique terms (stopwords dropped unless the query has nothing else).

    Examples:
        >>> sorted(query_terms("When did Mel paint the sunsets?").weights)
        ['mel', 'paint', 'sunset']
    """
    return parse_query(query, params=params).terms


@dataclass(frozen=True)
class Leg:
    """One part of a query text that is ranked on its own, and its share in the fusion."""

    text: str
    weight: float = 1.0
    query: ParsedQuery | None = field(default=None, compare=False, repr=False)
    """The part parsed (set by :func:`query_legs`)."""


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


def _after_cues(query: ParsedQuery, parsed: dict[str, ParsedQuery]) -> list[str]:
    """The questions restated after a cue, each parsed into ``parsed`` (a part with no
    token is left out)."""
    text = query.text
    out: list[str] = []
    for cue in (_CUE_ZH, _CUE_EN):
        for m in cue.finditer(text):
            rest = text[m.end() :]
            end = _QUESTION_END.search(rest)
            part = (rest[: end.end()] if end else rest).strip()
            found = parsed.get(part)
            if found is None:
                found = parsed[part] = query.derived(part)
            if found.tokens:
                out.append(part)
    return out


def _legs(query: ParsedQuery) -> list[Leg]:
    text = query.text
    parsed: dict[str, ParsedQuery] = {text: query}
    parts = _after_cues(query, parsed)
    restated = bool(parts)
    if not parts:
        cuts = [m for m in _ALSO.finditer(text) if m.end() > m.start()]
        starts = [0, *[m.end() for m in cuts if m.start() > 0]]
        ends = [*[m.start() + 1 for m in cuts if m.start() > 0], len(text)]
        if len(starts) == 1:
            # One part, the whole text (its tokens are the text's: blanks are no tokens).
            parts = [text.strip()] if query.tokens else []
        else:
            parts = [text[a:b].strip() for a, b in zip(starts, ends, strict=True)]
            for part in parts:
                if part not in parsed:
                    parsed[part] = query.derived(part)
            parts = [p for p in parts if parsed[p].tokens]
    unique = list(dict.fromkeys(parts))[:_MAX_LEGS]
    if len(unique) <= 1 and not restated:
        return [Leg(text, query=query)]
    legs = [Leg(p, query=parsed[p]) for p in unique]
    weight = _CHATTER_WEIGHT if restated else _WHOLE_WEIGHT
    if weight > 0:
        legs.append(Leg(text, weight, query=query))
    return legs


def query_legs(query: str | ParsedQuery) -> list[Leg]:
    """The legs of one query text: its restated or joined questions, else the whole text.

    Args:
        query: One planned query text, or its parse.

    Returns:
        The whole text alone when it has no parts; else each part (at most four) at weight
        1 and the whole text at a lower weight (lower still when the parts are restated
        questions: the rest is chatter). Each leg carries its parse (:attr:`Leg.query`).

    Examples:
        >>> [(l.text, l.weight) for l in query_legs("手机是什么？另外，表哥在哪？")]
        [('手机是什么？', 1.0), ('表哥在哪？', 1.0), ('手机是什么？另外，表哥在哪？', 0.3)]
        >>> [l.text for l in query_legs("天气真好。不对，我真正想问的是：鞋怎么样？")][0]
        '鞋怎么样？'
        >>> [l.text for l in query_legs("When did Mel paint a sunrise?")]
        ['When did Mel paint a sunrise?']
    """
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query)
    return list(parsed.legs)
