"""Redaction of what the guard blocks in the human messages of a thread, before they are saved.

With ``redact_blocked=True`` (``create_memory_agent`` / ``build_memory_graph``, or
``MemoryMiddleware`` on an agent passed to its ``protect``), a run's input is masked before
LangGraph saves it: :func:`redact_input` checks each human message of the input (every form
``add_messages`` accepts, and ``Command(update=...)``; ``update_state`` values through
:func:`redact_supersteps`) sentence by sentence with the sensitive-data guard and replaces a
blocked sentence by ``[redacted: <category>]``. When the guard's verdict carries spans
(``GuardVerdict.spans``, offsets in the checked text), only those spans are masked;
otherwise the whole sentence is. A masked message keeps its id, so no checkpoint, write or
blob of the thread ever holds the blocked text, and neither the model nor the extractor
sees it.

Extraction counts what was blocked from the masks (:func:`count_masks`): only the guard's
category names are counted, so a mask the user types can only raise a content-free counter.
The extraction node also masks the new human messages of the state after it ran
(:func:`redact_messages`): that covers a graph whose runs do not go through a masking entry
point (a plain ``StateGraph`` of this package's nodes, a ``create_agent`` graph not passed to
``protect``), where the run's input checkpoint keeps the text until pruned
(``saver.prune([thread_id], strategy="keep_latest")``) or swept. Not covered: a parent graph
that runs the memory graph as a subgraph saves its own input first; only human messages'
text (content strings and ``text`` blocks) is masked, not other message types or fields.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, convert_to_messages
from langgraph.types import Command

__all__ = [
    "REDACT_ATTR",
    "count_masks",
    "redact_input",
    "redact_messages",
    "redact_supersteps",
    "redact_text",
    "redacts_input",
]

# A sentence: text up to and including its terminator(s) (Western and CJK) or a line break.
_SENTENCE = re.compile(r"[^.!?。！？;；\n]+(?:[.!?。！？;；]+|\n|$)")
MASK = "[redacted: {}]"
_MASKED = re.compile(r"\[redacted: ([a-z_]{1,32})\]")
REDACT_ATTR = "__memory_graph_redacts__"
"""Set on a node made with ``redact_blocked=True``: a graph holding one masks its runs' input."""


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


def _is_human(message: BaseMessage) -> bool:
    if message.type == "chat":
        return getattr(message, "role", None) in ("user", "human")
    return message.type == "human"


def _redact_item(item: Any, guard: Callable[[str], Any] | None) -> tuple[Any, int]:
    """One item of a ``messages`` input: unchanged, or its masked ``HumanMessage`` (same id).

    The item is read with ``convert_to_messages``, the function ``add_messages`` parses its
    input with, so every form it accepts is read as LangGraph will read it. An item it
    cannot read is left for LangGraph to refuse.
    """
    try:
        (message,) = convert_to_messages([item])
    except Exception:  # noqa: BLE001  # not a message: LangGraph raises its own error
        return item, 0
    if not _is_human(message):
        return item, 0
    content, n = _content(message.content, guard)
    if not n:
        return item, 0
    return message.model_copy(update={"content": content}), n


def _redact_messages_value(value: Any, guard: Callable[[str], Any] | None) -> tuple[Any, int]:
    items = value if isinstance(value, list) else [value]  # as add_messages reads it
    out: list[Any] = []
    total = 0
    for item in items:
        new, n = _redact_item(item, guard)
        out.append(new)
        total += n
    return (out, total) if total else (value, 0)


def _redact_update(update: Any, guard: Callable[[str], Any] | None) -> tuple[Any, int]:
    """A state update (a mapping, or ``(key, value)`` pairs) with its messages masked."""
    if isinstance(update, Mapping):
        if "messages" not in update:
            return update, 0
        value, n = _redact_messages_value(update["messages"], guard)
        return ({**update, "messages": value}, n) if n else (update, 0)
    if isinstance(update, (list, tuple)) and all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)
        for pair in update
    ):
        pairs: list[tuple[str, Any]] = []
        total = 0
        for key, value in update:
            if key == "messages":
                value, n = _redact_messages_value(value, guard)
                total += n
            pairs.append((key, value))
        return (pairs, total) if total else (update, 0)
    return update, 0


def redact_input(value: Any, guard: Callable[[str], Any] | None = None) -> tuple[Any, int]:
    """A run's input with what the guard blocks masked in its human messages, and the count.

    ``value`` is what ``invoke``/``stream`` take: ``{"messages": ...}`` (message objects,
    ``(role, text)`` pairs, ``{"role": ..., "content": ...}`` dicts, plain strings, content
    block lists; one item or a list) or ``Command(update=...)``. A masked message becomes a
    ``HumanMessage`` with the same id (``add_messages`` gives an id-less one a new id, as it
    would have); the other items and keys are passed through unchanged, and an input with
    nothing to mask is returned as it is.

    >>> redact_input({"messages": [("user", "Hi. my ssn is 512-43-7789")]})
    ... # doctest: +ELLIPSIS
    ({'messages': [HumanMessage(content='Hi. my ssn is [redacted: gov_id]', ...)]}, 1)
    """
    if isinstance(value, Command):
        update, n = _redact_update(value.update, guard)
        return (dataclasses.replace(value, update=update), n) if n else (value, 0)
    if isinstance(value, Mapping):
        return _redact_update(value, guard)
    return value, 0


def redact_supersteps(supersteps: Any) -> Any:
    """``bulk_update_state``'s supersteps with each update's values masked (:func:`redact_input`).

    An update is a ``StateUpdate`` or a plain ``(values, as_node[, task_id])`` tuple; its
    shape is kept.
    """
    out: list[list[Any]] = []
    for step in supersteps:
        updates: list[Any] = []
        for update in step:
            values, n = redact_input(update[0])
            if n and hasattr(update, "_replace"):  # a StateUpdate
                update = update._replace(values=values)
            elif n:
                update = (values, *update[1:])
            updates.append(update)
        out.append(updates)
    return out


def count_masks(messages: Sequence[AnyMessage]) -> Counter[str]:
    """The masks in ``messages`` by category; only the guard's categories are counted.

    A mask the user typed counts like a real one: the count is content-free, and a label
    that is not a category name (``[redacted: anything else]``) is not counted at all.
    """
    from memory_graph.guard import CATEGORIES

    known = {*CATEGORIES, "sensitive"}
    counts: Counter[str] = Counter()
    for message in messages:
        content = message.content
        blocks = [content] if isinstance(content, str) else content
        for block in blocks:
            text: Any = block
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text")
            if isinstance(text, str):
                counts.update(m for m in _MASKED.findall(text) if m in known)
    return counts


def redacts_input(graph: Any) -> bool:
    """Whether ``graph`` holds a node made with ``redact_blocked=True`` (:data:`REDACT_ATTR`)."""
    builder = getattr(graph, "builder", None)
    for spec in (getattr(builder, "nodes", None) or {}).values():
        runnable = getattr(spec, "runnable", None)
        for fn in (getattr(runnable, "func", None), getattr(runnable, "afunc", None), runnable):
            if getattr(fn, REDACT_ATTR, False):
                return True
    return False
