"""The words the support rule and the clause reader share: contractions, the subject,
function words, acknowledgements and the Snowball stemmer. Pure."""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

import snowballstemmer

__all__ = ["ACK", "FREE", "SUBJECT_PHRASE", "prepare", "stem"]

SUBJECT_PHRASE = re.compile(r"\b(?:the\s+)?users?(?:['’]s)?\b|该用户|用户", re.IGNORECASE)
"""How a restatement names the user (removed before its terms are read)."""
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
ACK = frozenset(
    "ok okay k sure yes yeah yep yup right fine agreed agree correct exactly alright cool "
    "great thanks thank please 好 嗯 对 行 哦 噢 嗯嗯 谢".split()
)
"""Acknowledgements: they bear no meaning."""
FREE = _SUBJECT | _FUNCTION | ACK
"""Subject words, function words and acknowledgements: a restatement may add them."""

_IRREGULAR = {"goes": "go"}
"""Forms Snowball leaves apart from their verb (``goes`` -> ``goe``)."""

_LOCAL = threading.local()


def _stemmer() -> Any:
    """This thread's Snowball stemmer: it keeps the word being stemmed in its own fields,
    so one instance shared by threads stems their words into each other."""
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """The Snowball stem of one word, memoised: the pure-Python stemmer costs tens of
    microseconds a word, and a user's words repeat from turn to turn."""
    return str(_stemmer().stemWord(_IRREGULAR.get(word, word)))


def prepare(text: str) -> str:
    """``text`` with English contractions expanded (``don't`` -> ``do not``)."""
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return text
