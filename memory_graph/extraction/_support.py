"""The support rule: a candidate's content must be carried by its quote (issue 8 §3). Pure.

A verbatim quote proves only that the user said *something*; the content is what would be
stored. A candidate is kept only when its quote supports its text (the content, or the value
of a keyed candidate):

1. **Terms.** Both texts are cut with the recall tokenizer (:func:`memory_graph.recall.tokenize
   .tokenize`: NFKC, lower case, CJK split per character). English contractions are expanded
   first (``don't`` → ``do not``) and Latin words are stemmed (Snowball English:
   ``prefers`` = ``prefer``). A CJK term is one character (pairs are ignored).
2. **Meaning-bearing terms** are all terms except (a) the subject, which a paraphrase may
   add: ``User``/``the user``/``用户``/``该用户`` and first/third-person pronouns (``I``,
   ``my``, ``they``, ``their``, ``我``); (b) a short closed list of function words
   (articles, copulas, auxiliaries ``do/have``, prepositions, conjunctions; in Chinese
   ``是 的 了 着 地 得 和 与 及 也 都 一 个 位 名 种``); (c) acknowledgements (``ok``, ``sure``,
   ``yes``, ``right``, ``好``, ``嗯``, ``对``, ``行`` ...). Negations (``not``, ``no``,
   ``never``, ``不``, ``没``, ``别`` ...), quantifiers (``all``, ``every``), modals
   (``must``, ``can``) and numbers always bear meaning.
3. **Supported** when the text has at least one meaning-bearing term, every one of them is
   a term of the quote, and the text adds at most :data:`MAX_FREE_TERMS` subject/function
   terms the quote does not have. A keyed value (preference or profile value) is stricter:
   every term of it but acknowledgements comes from the quote (``they/them`` is a value).
4. **The claim is the quote's own.** Acknowledgements bear no meaning, so a quote that only
   acknowledges (``ok sure``, ``好的``, ``yes``) supports nothing: it cannot ground what an
   assistant said before it. And a statement (``set``) keeps the quote's polarity: a quote
   with a negation supports only a text with a negation (``I don't eat meat`` cannot become
   ``User eats meat``).

Paraphrase is not support: ``I had a long day at work`` does not support ``User feels
depressed``; an extractor must restate the user's own words (its prompt says so).

>>> supports("I had a long day at work", "User feels depressed and hopeless lately")
False
>>> supports("ok sure", "User is an administrator with full access")
False
>>> supports("I prefer dark mode in every editor", "User prefers dark mode in every editor")
True
>>> supports("我不吃香菜", "用户不吃香菜")
True
>>> supports("我不喜欢吃辣", "用户喜欢吃辣")
False
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

import snowballstemmer

from ..recall.tokenize import is_cjk, tokenize

__all__ = ["MAX_FREE_TERMS", "clause_of", "meaning_terms", "supports"]

MAX_FREE_TERMS = 6
"""Subject and function terms a text may add beyond its quote."""

_SUBJECT_PHRASE = re.compile(r"\b(?:the\s+)?users?(?:['’]s)?\b|该用户|用户", re.IGNORECASE)
_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bcan['’]t\b", re.I), "can not"),
    (re.compile(r"\bwon['’]t\b", re.I), "will not"),
    (re.compile(r"\bshan['’]t\b", re.I), "shall not"),
    (re.compile(r"n['’]t\b", re.I), " not"),
    (re.compile(r"['’]m\b", re.I), " am"),
    (re.compile(r"['’]re\b", re.I), " are"),
    (re.compile(r"['’]ve\b", re.I), " have"),
    (re.compile(r"['’]ll\b", re.I), " will"),
    (re.compile(r"['’]d\b", re.I), " would"),
    (re.compile(r"['’]s\b", re.I), ""),
)
_SUBJECT = frozenset(
    "i me my mine myself we us our you your they them their theirs themselves he him his "
    "she her hers user users 我 们".split()
)
_FUNCTION = frozenset(
    "a an the is am are was were be been being do does did doing have has had having "
    "to of in on at for with by from as into onto about than that this these those it its "
    "and or but so also too very just really "
    "是 的 了 着 地 得 和 与 及 也 都 一 个 位 名 种".split()
)
_ACK = frozenset(
    "ok okay k sure yes yeah yep yup right fine agreed agree correct exactly alright cool "
    "great thanks thank please 好 嗯 对 行 哦 噢 嗯嗯 谢".split()
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|cannot|no longer)\b|"
    r"[不没别無无非未勿莫]"
)
# Words that contain a negation character but do not negate ("very", "especially", "not bad").
_NOT_NEGATION = re.compile(r"非常|特别|不错|没错|不客气|不过|差不多")
_FREE = _SUBJECT | _FUNCTION | _ACK
_CLAUSE_MARKS = tuple(",;.!?，；。！？、\n")


_LOCAL = threading.local()


def _stemmer() -> Any:
    """This thread's Snowball stemmer: it keeps the word being stemmed in its own fields,
    so one instance shared by threads stems their words into each other."""
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=16384)
def _stem(word: str) -> str:
    """The Snowball stem of one word, memoised: the pure-Python stemmer costs tens of
    microseconds a word, and a user's words repeat from turn to turn."""
    return str(_stemmer().stemWord(word))


def _prepare(text: str) -> str:
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return text


@lru_cache(maxsize=4096)
def _terms(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for token in tokenize(_prepare(text)):
        if len(token) > 1 and all(is_cjk(ch) for ch in token):
            continue  # CJK pairs: the characters are the terms
        out.append(token if is_cjk(token[0]) or token in _FREE else _stem(token))
    return tuple(out)


def meaning_terms(text: str) -> set[str]:
    """The meaning-bearing terms of ``text`` (the subject phrase removed first).

    >>> sorted(meaning_terms("The user doesn't like cilantro"))
    ['cilantro', 'like', 'not']
    """
    return {t for t in _terms(_SUBJECT_PHRASE.sub(" ", text)) if t not in _FREE}


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(_NOT_NEGATION.sub(" ", _prepare(text).casefold())))


def clause_of(quote: str, value: str) -> str:
    """The clause of ``quote`` (between ``, ; . ! ?`` and their CJK forms) holding ``value``.

    The whole quote when ``value`` is not in it verbatim (case-folded).

    >>> clause_of("我在东八区，晚上十点以后别安排会议。", "东八区")
    '我在东八区'
    """
    low, needle = quote.casefold(), value.casefold().strip()
    at = low.find(needle) if needle else -1
    if at < 0:
        return quote
    start = max((low.rfind(p, 0, at) for p in _CLAUSE_MARKS), default=-1) + 1
    ends = [i for i in (low.find(p, at + len(needle)) for p in _CLAUSE_MARKS) if i >= 0]
    return quote[start : min(ends, default=len(quote))].strip()


def supports(
    quote: str,
    text: str,
    *,
    statement: bool = True,
    polarity_of: str | None = None,
    keyed: bool = False,
) -> bool:
    """Whether ``quote`` supports ``text`` under the rule in this module's docstring.

    Args:
        quote: the candidate's verbatim quote of a human message.
        text: the candidate's content, or its value for a keyed candidate.
        statement: ``True`` for a ``set`` candidate (polarity must match); ``False`` for a
            retraction, whose quote negates what the text names.
        polarity_of: the part of the quote whose polarity the text must keep (a keyed
            value's clause, see :func:`clause_of`); the whole quote when ``None``.
        keyed: ``text`` is a keyed value (a preference or profile value): every term of it
            but acknowledgements must be in the quote, subject and function words included
            (a value such as ``they/them`` is all pronouns), and no free terms are allowed.

    Returns:
        ``True`` when the candidate may be proposed.
    """
    quoted = set(_terms(quote))
    if keyed:
        needed = {t for t in _terms(text) if t not in _ACK}
        if not needed or not needed <= quoted:
            return False
    else:
        needed = meaning_terms(text)
        if not needed:
            return False  # nothing but subject, function words or acknowledgements
        if not needed <= quoted:
            return False
        free = {t for t in _terms(_SUBJECT_PHRASE.sub(" ", text)) if t in _FREE} - quoted
        if len(free) > MAX_FREE_TERMS:
            return False
    scope = quote if polarity_of is None else polarity_of
    return not (statement and _negated(scope) and not _negated(text))
