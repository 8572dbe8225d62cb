"""Stage 1, plan: one recall step -> its query texts, in plan order; and, at the end, the
merge of their hit lists in that order. Pure.

The plan is the current task step, then the latest input, then the goal's objective, each cut
to ``max_query_chars`` characters, with blanks and repeats dropped (:func:`plan_queries`). The
agent's latest input is the recent conversation (:func:`recent_text`): the latest human turn
in full, then the turns before it, newest first, each in a smaller share, so the topic a
conversation named a few turns back still reaches recall when the last turn does not name
it ("Should I say yes?"). Standing guidance (active, user-confirmed preferences and
instructions) is fetched after them by the store, and all results are merged in that order
without repeats (:func:`merge_hits`). Each text is then parsed once (:mod:`.query`), its
candidates chosen (:mod:`.candidates`), ranked (:mod:`.rank`) and its legs and passes fused
(:mod:`.fuse`), then rendered (:mod:`.render`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..types import SearchHit

__all__ = [
    "RECENT_TURNS",
    "STANDING_KINDS",
    "STANDING_TRUSTS",
    "merge_hits",
    "plan_queries",
    "recent_text",
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


RECENT_TURNS = 6
"""How many conversation turns (human and AI, the latest human turn included) the latest
input draws on: about three exchanges."""
_TURN_SHARE = (0.2, 0.12, 0.08, 0.05, 0.05)
"""The share of the text budget each earlier turn gets, newest first (the nearer a turn, the
more of it counts); the latest human turn gets what they leave, at least half."""
_AI_SHARE = 0.5
"""An AI turn counts half of a human one of the same distance (its words are the agent's,
and a long answer would swamp the query)."""
_CONVERSATION_ROLES = frozenset({"human", "ai"})


def recent_text(
    turns: Sequence[tuple[str, str]],
    *,
    max_turns: int = RECENT_TURNS,
    max_chars: int = 2048,
) -> str | None:
    """The latest input of a recall step drawn from the recent conversation.

    The latest human turn comes first, then the turns before it (at most ``max_turns`` in
    all, human and AI, newest first), each earlier one cut to its share of ``max_chars``
    (:data:`_TURN_SHARE`, whitespace folded; AI turns half of it) and the latest one to what
    they leave, one per line, so the text stays within ``max_chars``. Turns after the latest human
    turn (the agent's tool round) and turns of other roles are left out; blank turns are
    skipped.

    Args:
        turns: ``(role, text)`` pairs, oldest first; role ``"human"``, ``"ai"`` or another
            (ignored).
        max_turns: The window, in turns (at least 1).
        max_chars: The text's budget.

    Returns:
        The text, or ``None`` when there is no human turn.

    Examples:
        >>> print(recent_text([("human", "We're baking peanut cookies."), ("ai", "Nice!"),
        ...                    ("human", "Any ideas?")]))
        Any ideas?
        Nice!
        We're baking peanut cookies.
        >>> recent_text([("ai", "Hello")]) is None
        True
    """
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError("max_turns must be a positive integer")
    kept = [
        (r, t) for r, t in turns if r in _CONVERSATION_ROLES and isinstance(t, str) and t.strip()
    ]
    last = next((i for i in range(len(kept) - 1, -1, -1) if kept[i][0] == "human"), None)
    if last is None:
        return None
    earlier: list[str] = []
    for back, (role, text) in enumerate(reversed(kept[:last])):
        if back + 1 >= max_turns:
            break
        share = _TURN_SHARE[min(back, len(_TURN_SHARE) - 1)]
        room = int(max_chars * share * (1.0 if role == "human" else _AI_SHARE))
        cut = " ".join(text.split())[:room]
        if cut:
            earlier.append(cut)
    used = sum(len(t) + 1 for t in earlier)
    out = [kept[last][1].strip()[: max(1, max_chars - used)], *earlier]
    return "\n".join(out)[:max_chars]


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
