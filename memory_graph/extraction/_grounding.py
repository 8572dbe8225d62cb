"""Grounding: a candidate must quote a human message of the window, verbatim, and its
content must be supported by that quote, widened to its whole sentence.

Quotes and message texts are compared after NFKC normalisation and whitespace folding.
A candidate that cites an assistant, tool or system message is dropped. A keyed value must
itself be words of the quoted human message, and a fact's content must not borrow words
that only the assistant (or a tool) said. :func:`evidence_quote` then widens the quote to
the whole sentence(s) of the message around it (a substring or mid-word quote cannot cut
off a negation, modal or question) and keeps the first widening that supports the content
(or value) under the support rule of :mod:`._support`: that widened quote is the one stored
as the candidate's evidence and shown for review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage

from ._clause import fold, widen
from ._patterns import message_text
from ._schema import CandidateModel
from ._support import supports

__all__ = ["evidence_quote", "fold", "ground", "supported"]

_WORDS = re.compile(r"[^\W\d_]{3,}")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")


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


def supported(candidate: CandidateModel, widened: str | None = None) -> bool:
    """Whether the candidate's content (or keyed value) is carried by its quote.

    Args:
        candidate: a validated candidate.
        widened: its quote widened to the whole sentence(s) of the message (see
            :func:`evidence_quote`); the quote itself when ``None``.

    A statement (``set``) keeps the polarity, modality, time, numbers, mood and actor of
    the clause its words come from; a retraction's quote negates what it names, so only
    its terms, their order, the actor and the mood are checked. A retraction that names
    nothing has nothing to support.
    """
    keyed = candidate.key is not None
    text = candidate.value if keyed else candidate.content
    if text is None or not text.strip():
        return candidate.action == "retract"
    return supports(
        candidate.quote,
        text,
        statement=candidate.action == "set",
        keyed=keyed,
        widened=widened,
    )


def evidence_quote(message: BaseMessage, candidate: CandidateModel) -> str | None:
    """The candidate's quote widened to the whole sentence(s) of ``message`` around it.

    Args:
        message: the human message :func:`ground` found for the candidate.
        candidate: the candidate.

    Returns:
        The first widening (in the message's order) that supports the candidate, folded
        (:func:`fold`); ``None`` when none does.

    >>> from langchain_core.messages import HumanMessage
    >>> c = CandidateModel(kind="fact", content="User eats meat", quote="eat meat",
    ...                    message_index=0)
    >>> evidence_quote(HumanMessage("I don't eat meat."), c) is None
    True
    >>> c = CandidateModel(kind="fact", content="User prefers tea", quote="prefer tea",
    ...                    message_index=0)
    >>> evidence_quote(HumanMessage("No, I prefer tea. Thanks!"), c)
    'No, I prefer tea.'
    """
    for widened in widen(message_text(message), candidate.quote):
        if supported(candidate, widened):
            return widened
    return None
