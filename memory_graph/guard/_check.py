"""The deterministic guard: every detector over every sentence of a normalized text."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ValidationError
from . import address, finance, health, ids, politics, religion, third_party
from ._cues import Sentence, sentences, straddles
from ._normalize import normalize
from ._score import judge
from ._types import Cue, GuardCategory, GuardVerdict

__all__ = ["check", "check_many"]

_ALLOWED = GuardVerdict(allowed=True)
_Detector = tuple[Callable[[Sentence], bool], Callable[[Sentence], list[Cue]]]
_DETECTORS: tuple[_Detector, ...] = tuple(
    (module.possible, module.detect)
    for module in (ids, finance, address, health, religion, politics, third_party)
)
"""Each detector with its pre-filter: ``possible(sent)`` is ``False`` only when
``detect(sent)`` finds nothing, and is much cheaper on ordinary text."""


def _merge(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


_CLEAR_MAX = 4096
_clear: dict[str, None] = {}
"""Normalized sentences on which no rule fired and the id rules cannot fire (at most
:data:`_CLEAR_MAX`, then emptied). A sentence's verdict is a function of its text alone
(everything is sentence-local) except through the id rules, which read today's date (a
resident id's birth date) and need four digits or more (:func:`.ids.possible`), so a sentence
kept here is clear on any day. A write repeats most of its text (the preference key, the
source), so its next check runs the detectors only on what changed. Blocked sentences are
never kept."""


def _keep_clear(sentence: str) -> None:
    if len(_clear) >= _CLEAR_MAX:
        _clear.clear()
    _clear[sentence] = None


def check(text: str) -> GuardVerdict:
    """Decide whether ``text`` may be stored.

    Args:
        text: any text field: a candidate's quote plus value, a record's content, a
            source, a URI, a profile value. Chinese and English are covered.

    Returns:
        A :class:`GuardVerdict`. ``allowed`` is ``False`` with a category, a reason and
        the blocked spans (original offsets) when a sensitive rule fires; otherwise it
        is ``True`` with ``None`` and no spans.

    Raises:
        ValidationError: ``text`` is not a string.

    >>> check("我月薪两万五").category
    'finance'
    >>> check("叫我小王就行").allowed
    True
    >>> v = check("ok. my SSN is 123-45-6789")
    >>> v.spans
    ((14, 25),)
    """
    if not isinstance(text, str):
        raise ValidationError(f"guard text must be a string, got {type(text).__name__}")
    if not text.strip():
        return _ALLOWED
    norm = normalize(text)
    first: tuple[GuardCategory, str] | None = None
    spans: list[tuple[int, int]] = []
    for sent in sentences(norm.text):
        if sent.text in _clear:
            continue
        fired = False
        for possible, detect in _DETECTORS:
            if not possible(sent):
                continue
            for cue in detect(sent):
                if cue.kind != "number" and straddles(sent.text, cue.start, cue.end):
                    continue
                category = judge(sent, cue)
                if category is None:
                    continue
                fired = True
                if first is None:
                    reason = cue.reason
                    if category == "third_party" and cue.category is not None:
                        reason = f"another person's data: {reason}"
                    first = (category, reason)
                if cue.span_is_token:
                    a, b = sent.start + cue.start, sent.start + cue.end
                else:
                    a, b = sent.start, sent.start + len(sent.text)
                spans.append(norm.original_span(a, b))
        if not fired and not ids.possible(sent):
            _keep_clear(sent.text)
    if first is None:
        return _ALLOWED
    return GuardVerdict(False, first[0], first[1], _merge(spans))


def check_many(texts: list[str]) -> GuardVerdict:
    """Check the texts of one turn as one text (a number split across messages is caught).

    Args:
        texts: the texts, in order; they are joined with a newline.

    Returns:
        The verdict on the joined text; ``spans`` are offsets into
        ``"\\n".join(texts)``.

    Raises:
        ValidationError: an item is not a string.
    """
    for item in texts:
        if not isinstance(item, str):
            raise ValidationError(f"guard text must be a string, got {type(item).__name__}")
    return check("\n".join(texts))
