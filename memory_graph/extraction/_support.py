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
   a term of the quote (widened to its whole sentence, see 5), and the text adds at most
   :data:`MAX_FREE_TERMS` subject/function terms the quote does not have. A keyed value
   (preference or profile value) is stricter: every term of it but acknowledgements comes
   from the quote (``they/them`` is a value).
4. **The claim is the quote's own.** Acknowledgements bear no meaning, so a quote that only
   acknowledges (``ok sure``, ``好的``, ``yes``) supports nothing: it cannot ground what an
   assistant said before it.
5. **Faithful to the whole clause** (issue 26 §1, :mod:`._clause`). The quote is widened to
   the whole sentence(s) of the message it sits in, and the text must restate that in
   order, keeping the negation that governs its words, their modality, time, numbers and
   mood (``I don't eat meat`` cannot become ``User eats meat``, nor ``I use vim, not
   emacs`` ``User uses emacs``; ``No, I prefer tea`` still gives ``User prefers tea``).

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

from functools import lru_cache

from ..recall.tokenize import is_cjk, tokenize
from ._clause import faithful, faithful_value
from ._lexicon import ACK, FREE, SUBJECT_PHRASE, prepare, stem

__all__ = ["MAX_FREE_TERMS", "meaning_terms", "supports"]

MAX_FREE_TERMS = 6
"""Subject and function terms a text may add beyond its quote."""

_SUBJECT_PHRASE = SUBJECT_PHRASE
_ACK = ACK
_FREE = FREE
_stem = stem
_prepare = prepare


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


def supports(
    quote: str,
    text: str,
    *,
    statement: bool = True,
    keyed: bool = False,
    widened: str | None = None,
) -> bool:
    """Whether ``quote`` supports ``text`` under the rule in this module's docstring.

    Args:
        quote: the candidate's verbatim quote of a human message.
        text: the candidate's content, or its value for a keyed candidate.
        statement: ``True`` for a ``set`` candidate (polarity, modality, time and numbers
            must be kept); ``False`` for a retraction, whose quote negates what the text
            names.
        keyed: ``text`` is a keyed value (a preference or profile value): every term of it
            but acknowledgements must be in the quote, subject and function words included
            (a value such as ``they/them`` is all pronouns), and no free terms are allowed.
        widened: the quote widened to its whole sentence(s) of the message
            (:func:`~._clause.widen`): the text's terms must be its terms, and the text
            faithful to it. The quote itself when ``None``.

    Returns:
        ``True`` when the candidate may be proposed.
    """
    context = quote if widened is None else widened
    quoted = set(_terms(context))
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
    if keyed:
        return faithful_value(context, text, statement=statement)
    return faithful(context, text, statement=statement)
