"""Redaction of what the guard blocks, in the human messages kept in the thread's state.

With ``redact_blocked=True`` on the extraction node (``create_memory_agent(...,
redact_blocked=True)``), each new human message is checked sentence by sentence with the
sensitive-data guard after extraction; a blocked sentence is replaced, in the state, by
``[redacted: <category>]`` (the message keeps its id, so ``add_messages`` replaces it). When
the guard's verdict carries spans (``GuardVerdict.spans``, offsets in the checked text), only
those spans are masked; otherwise the whole sentence is.

Trade-off: extraction runs before the model answers, so the model never sees the masked text,
neither in this turn's answer nor later. Earlier checkpoints of the thread still hold the
message as sent until they are pruned (``saver.prune([thread_id], strategy="keep_latest")``)
or the thread is swept; combine with checkpoint encryption for data at rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AnyMessage

__all__ = ["redact_messages", "redact_text"]

# A sentence: text up to and including its terminator(s) (Western and CJK) or a line break.
_SENTENCE = re.compile(r"[^.!?。！？;；\n]+(?:[.!?。！？;；]+|\n|$)")
MASK = "[redacted: {}]"


def _guard() -> Callable[[str], Any]:
    from memory_graph.guard import check

    return check


def _bounds(span: Any) -> tuple[int, int]:
    """``(start, end)`` of a span given as a pair or as an object with ``start``/``end``."""
    if hasattr(span, "start") and hasattr(span, "end"):
        return int(span.start), int(span.end)
    start, end = span
    return int(start), int(end)


def _merged(spans: Any, size: int) -> list[tuple[int, int]]:
    """Spans clamped to ``0..size``, sorted, overlapping or touching ones merged."""
    out: list[tuple[int, int]] = []
    pairs = (_bounds(span) for span in spans)
    for s, e in sorted((max(0, a), min(size, b)) for a, b in pairs):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def redact_text(text: str, guard: Callable[[str], Any] | None = None) -> tuple[str, int]:
    """``text`` with every span the guard blocks masked, and how many spans were masked."""
    check = guard or _guard()
    pieces: list[str] = []
    last = masked = 0
    for m in _SENTENCE.finditer(text):
        core = m.group(0).strip()
        if not core:
            continue
        verdict = check(core)
        if getattr(verdict, "allowed", True):
            continue
        base = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
        label = MASK.format(getattr(verdict, "category", None) or "sensitive")
        spans = getattr(verdict, "spans", None) or [(0, len(core))]
        if isinstance(spans, tuple) and len(spans) == 2 and isinstance(spans[0], int):
            spans = [spans]  # one (start, end) pair
        for start, end in _merged(spans, len(core)):
            pieces.append(text[last : base + start])
            pieces.append(label)
            last = base + end
            masked += 1
    pieces.append(text[last:])
    return "".join(pieces), masked


def _content(content: Any, guard: Callable[[str], Any] | None) -> tuple[Any, int]:
    if isinstance(content, str):
        return redact_text(content, guard)
    out: list[Any] = []
    total = 0
    for block in content:
        if isinstance(block, str):
            new, n = redact_text(block, guard)
            out.append(new)
            total += n
        elif isinstance(block, Mapping) and block.get("type") == "text":
            new, n = redact_text(str(block.get("text", "")), guard)
            out.append({**block, "text": new})
            total += n
        else:
            out.append(block)
    return out, total


def redact_messages(
    messages: Sequence[AnyMessage], guard: Callable[[str], Any] | None = None
) -> list[AnyMessage]:
    """Copies (same ids) of the messages that had something masked; the others are omitted."""
    changed: list[AnyMessage] = []
    for message in messages:
        content, n = _content(message.content, guard)
        if n:
            changed.append(message.model_copy(update={"content": content}))
    return changed
