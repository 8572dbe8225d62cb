"""Pre-filters: one regex search that proves a group of regexes cannot match.

Most texts the guard sees are short and harmless, and for them the cost of a detector is
the number of regex calls it makes, not the scanning. :func:`any_match` joins a group of
compiled patterns into one alternation that matches a string exactly when one of the
patterns would; a detector (or a normalization step) whose every finding comes from one
of those patterns can return at once when the joined pattern finds nothing.

The join is built from the patterns themselves, never from a hand-written copy:
each pattern keeps its own flags (``re.IGNORECASE`` becomes a scoped ``(?i:...)``),
named groups are renamed so that two patterns can use the same name, and a pattern with
a flag the join cannot scope, or a numbered back-reference, is refused.

>>> import re
>>> gate = any_match(re.compile(r"(?P<x>a)(?P=x)"), re.compile("B", re.IGNORECASE))
>>> [bool(gate.search(s)) for s in ("aa", "xb", "ac")]
[True, True, False]
"""

from __future__ import annotations

import re

__all__ = ["any_match"]

_NAMED = re.compile(r"\(\?P<(\w+)>")
_NAMED_REF = re.compile(r"\(\?P=(\w+)\)")
_NUMBERED_REF = re.compile(r"\\[1-9]")
_SCOPABLE = re.IGNORECASE | re.UNICODE


def _branch(n: int, pattern: re.Pattern[str]) -> str:
    if pattern.flags & ~_SCOPABLE:
        raise ValueError(f"cannot join a pattern with flags {pattern.flags!r}")
    source = pattern.pattern
    if _NUMBERED_REF.search(source):
        raise ValueError("cannot join a pattern with a numbered back-reference")
    source = _NAMED.sub(lambda m: f"(?P<g{n}_{m.group(1)}>", source)
    source = _NAMED_REF.sub(lambda m: f"(?P=g{n}_{m.group(1)})", source)
    if pattern.flags & re.IGNORECASE:
        return f"(?i:{source})"
    return f"(?:{source})"


def any_match(*patterns: re.Pattern[str]) -> re.Pattern[str]:
    """Join ``patterns`` into one pattern that matches where any of them matches.

    ``any_match(p, q).search(s)`` is ``None`` exactly when both ``p.search(s)`` and
    ``q.search(s)`` are; use it only as a yes/no pre-filter (its groups and spans are
    not those of the parts).

    Args:
        patterns: compiled ``str`` patterns, without flags other than
            ``re.IGNORECASE`` and without numbered back-references.

    Returns:
        The joined, compiled pattern.

    Raises:
        ValueError: no pattern was given, or one cannot be joined safely.
    """
    if not patterns:
        raise ValueError("any_match needs at least one pattern")
    return re.compile("|".join(_branch(n, p) for n, p in enumerate(patterns)))
