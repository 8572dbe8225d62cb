"""Digit groups in a normalized sentence, read the way people type numbers.

A *number* is a run of digit groups joined by at most one separator character (space,
``-``, ``.``, ``/``, ``·``, ``_``) or by `` - ``; the detectors read its compact digits
and validate them. Letters glued to the digits (``G3002704``, ``RJ552622D``) are kept as
``prefix``/``suffix`` so id schemes with letters can be checked too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Number", "numbers"]

_NUMBER = re.compile(
    r"(?<![0-9A-Za-z])([A-Z]{0,2})[ ]?"
    r"(\d(?:\d|[ \-./·_](?=\d)| - (?=\d)|\((?=\d\)))*\d?\)?)"
    r"[ ]?(?:\(([0-9A-Z])\)|([A-Z]?))(?![0-9A-Za-z])"
)


@dataclass(frozen=True)
class Number:
    """One number candidate.

    Attributes:
        digits: the digits only.
        start: start offset in the sentence (including a letter prefix).
        end: end offset in the sentence.
        prefix: letters glued before the digits (upper case), may be empty.
        suffix: one letter or check character after the digits, may be empty.
        raw: the text as written (normalized).
        groups: the digit groups as written.
    """

    digits: str
    start: int
    end: int
    prefix: str
    suffix: str
    raw: str
    groups: tuple[str, ...]


def numbers(text: str) -> list[Number]:
    """Every number candidate in ``text``.

    >>> [n.digits for n in numbers("card 4111-1111 1111.1111, id G300270(4)")]
    ['4111111111111111', '3002704']
    """
    out: list[Number] = []
    for m in _NUMBER.finditer(text):
        body = m.group(2)
        digits = re.sub(r"\D", "", body)
        if not digits:
            continue
        suffix = (m.group(3) or m.group(4) or "").upper()
        groups = tuple(g for g in re.split(r"\D+", body) if g)
        out.append(
            Number(digits, m.start(), m.end(), m.group(1).upper(), suffix, m.group(0), groups)
        )
    return out
