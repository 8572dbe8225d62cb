"""Stage 1, plan: one recall step -> its query texts, in plan order; and, at the end, the
merge of their hit lists in that order. Pure.

The plan is the current task step, then the latest human message, then the goal's objective,
each cut to ``max_query_chars`` characters, with blanks and repeats dropped
(:func:`plan_queries`). Standing guidance (active, user-confirmed preferences and
instructions) is fetched after them by the store, and all results are merged in that order
without repeats (:func:`merge_hits`). Each text is then parsed once (:mod:`.query`), its
candidates chosen (:mod:`.candidates`), ranked (:mod:`.rank`) and its legs and passes fused
(:mod:`.fuse`), then rendered (:mod:`.render`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..types import SearchHit

__all__ = [
    "STANDING_KINDS",
    "STANDING_TRUSTS",
    "merge_hits",
    "plan_queries",
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
