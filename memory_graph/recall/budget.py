"""Stage 12, budget: rendered blocks -> the frame that fits the byte and token budgets
(DESIGN §3, §6). Pure.

Text is measured after escaping. Tokens are ``ceil(bytes / 4)`` unless a tokenizer callable
(text -> token count) is configured.

Blocks are added greedily in order while the *whole* frame (head, chosen blocks, tail) fits
both budgets; a block that does not fit is skipped (or replaced by its fallback, when it has
one) and the next is tried. When no block fits, the result is ``""``, never an empty frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Block", "Budget", "TokenCounter", "fill_frame"]

TokenCounter = Callable[[str], int]
"""Counts the tokens of a text."""


@dataclass(frozen=True)
class Budget:
    """Size limits of one rendered frame.

    Args:
        max_bytes: UTF-8 bytes of the whole frame.
        max_tokens: Tokens of the whole frame.
        tokenizer: Optional token counter; ``ceil(bytes / 4)`` when ``None``.
    """

    max_bytes: int
    max_tokens: int
    tokenizer: TokenCounter | None = None

    def tokens(self, text: str) -> int:
        """Token count of ``text``.

        Examples:
            >>> Budget(100, 100).tokens("abcde")
            2
        """
        if self.tokenizer is not None:
            return int(self.tokenizer(text))
        return math.ceil(len(text.encode("utf-8")) / 4)

    def fits(self, text: str) -> bool:
        """Whether ``text`` is within both budgets."""
        return len(text.encode("utf-8")) <= self.max_bytes and self.tokens(text) <= self.max_tokens


@dataclass(frozen=True)
class Block:
    """Lines that appear together or not at all, with an optional one-line fallback."""

    lines: tuple[str, ...]
    fallback: str | None = None
    """Shown instead of ``lines`` when they do not fit (a disagreement marker)."""


def fill_frame(head: str, tail: str, blocks: Sequence[Block], budget: Budget) -> str:
    """Greedily fit blocks between ``head`` and ``tail``.

    Args:
        head: The frame's opening text (already escaped where needed).
        tail: The frame's closing text.
        blocks: Candidate blocks in priority order; every line ends with a newline.
        budget: The limits for the whole frame.

    Returns:
        The frame with every block that fit, or ``""`` when none did.

    Examples:
        >>> b = Budget(max_bytes=20, max_tokens=100)
        >>> fill_frame("<f>\\n", "</f>", [Block(("a" * 30 + "\\n",)), Block(("ok\\n",))], b)
        '<f>\\nok\\n</f>'
        >>> fill_frame("<f>\\n", "</f>", [Block(("a" * 30 + "\\n",))], b)
        ''
    """
    body: list[str] = []
    for block in blocks:
        for option in (("".join(block.lines)), block.fallback):
            if not option:
                continue
            if budget.fits(head + "".join(body) + option + tail):
                body.append(option)
                break
    if not body:
        return ""
    return head + "".join(body) + tail
