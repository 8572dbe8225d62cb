"""Grounding: a candidate must quote a human message of the window, verbatim, and its
content must be supported by that quote.

Quotes and message texts are compared after NFKC normalisation and whitespace folding.
A candidate that cites an assistant, tool or system message is dropped. A keyed value must
itself be words of the quoted human message, and a fact's content must not borrow words
that only the assistant (or a tool) said. :func:`supported` then binds the content (or
value) to the quote with the support rule of :mod:`._support`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from ._patterns import message_text
from ._schema import CandidateModel
from ._support import clause_of, supports

__all__ = ["fold", "ground", "supported"]

_WORDS = re.compile(r"[^\W\d_]{3,}")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")


def fold(text: str) -> str:
    """NFKC-normalise ``text`` and fold every whitespace run into one space.

    >>> fold("call\\u00a0me   Ｓａｍ ")
    'call me Sam'
    """
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _tokens(text: str) -> set[str]:
    low = text.casefold()
    out = set(_WORDS.findall(low))
    for run in _CJK_RUN.findall(low):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


def _borrowed(text: str, human: str, others: str) -> bool:
    """True when ``text`` uses words absent from the human message but said by others."""
    missing = _tokens(text) - _tokens(human)
    return bool(missing & _tokens(others))


def ground(messages: Sequence[BaseMessage], candidate: CandidateModel) -> int | None:
    """Return the index of the human message that grounds ``candidate``, or ``None``.

    Args:
        messages: the extraction window.
        candidate: a validated candidate from an extractor.

    Returns:
        The index of the human message whose text contains the quote (the cited one if it
        does, else the latest human message that does); ``None`` when the candidate cites
        a non-human message, its quote is nowhere in a human message, its keyed value is
        not in that message, or its content borrows another speaker's words.
    """
    quote = fold(candidate.quote)
    if not quote:
        return None
    cited = candidate.message_index
    if 0 <= cited < len(messages) and not isinstance(messages[cited], HumanMessage):
        return None
    texts = [fold(message_text(m)) for m in messages]
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    if cited in humans and quote in texts[cited]:
        index = cited
    else:
        found = [i for i in reversed(humans) if quote in texts[i]]
        if not found:
            return None
        index = found[0]
    human = texts[index]
    others = " ".join(t for i, t in enumerate(texts) if i not in humans)
    if candidate.action == "set" and candidate.key is not None:
        value = fold(candidate.value or "").casefold()
        if not value or value not in human.casefold():
            return None
    if candidate.content and _borrowed(fold(candidate.content), human, others):
        return None
    return index


def supported(candidate: CandidateModel) -> bool:
    """Whether the candidate's content (or keyed value) is carried by its own quote.

    A statement (``set``) keeps the quote's polarity; a retraction's quote negates what it
    names, so only its terms are checked. A retraction that names nothing has nothing to
    support.
    """
    keyed = candidate.key is not None
    text = candidate.value if keyed else candidate.content
    if text is None or not text.strip():
        return candidate.action == "retract"
    scope = clause_of(fold(candidate.quote), fold(text)) if keyed else None
    return supports(
        candidate.quote,
        text,
        statement=candidate.action == "set",
        polarity_of=scope,
        keyed=keyed,
    )
