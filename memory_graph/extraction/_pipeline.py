"""The extraction pipeline: extract, validate, ground, attach provenance, guard.

:func:`extract_candidates` and :func:`aextract_candidates` differ only in how they call the
extractor; everything after that is the shared pure function :func:`finish_extraction`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pydantic
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable

from ..errors import ValidationError
from ..guard import GuardVerdict, check, with_declared
from ..time import Clock, ensure_aware, system_clock
from ._grounding import evidence_quote, ground
from ._patterns import extract_patterns
from ._schema import Candidate, CandidateModel

__all__ = ["ExtractionReport", "aextract_candidates", "extract_candidates", "finish_extraction"]

Guard = Callable[[str], GuardVerdict]


@dataclass(frozen=True)
class ExtractionReport:
    """What extraction kept and how much it dropped. Blocked content is never kept."""

    candidates: tuple[Candidate, ...]
    blocked_count: int = 0
    """Candidates the sensitive-data guard blocked."""
    dropped_ungrounded_count: int = 0
    """Candidates whose quote or value is not the words of a human message in the window."""
    dropped_invalid_count: int = 0
    """Model outputs that did not validate against the candidate schema."""
    blocked_categories: Mapping[str, int] = field(default_factory=dict)
    """Blocked counts per guard category (counts only, no content)."""
    dropped_unsupported_count: int = 0
    """Grounded candidates whose content (or value) their quote does not support."""

    @property
    def blocked(self) -> tuple[dict[str, str], ...]:
        """One ``{"category": ...}`` per blocked candidate (categories only, no content)."""
        return tuple(
            {"category": name}
            for name, count in sorted(self.blocked_categories.items())
            for _ in range(count)
        )

    def to_json(self) -> dict[str, Any]:
        """Return the report as a plain JSON dict."""
        return {
            "candidates": [c.to_json() for c in self.candidates],
            "blocked_count": self.blocked_count,
            "dropped_ungrounded_count": self.dropped_ungrounded_count,
            "dropped_invalid_count": self.dropped_invalid_count,
            "dropped_unsupported_count": self.dropped_unsupported_count,
            "blocked_categories": dict(sorted(self.blocked_categories.items())),
        }


def _window(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValidationError("messages must be a sequence of LangChain messages")
    window = list(messages)
    for position, message in enumerate(window):
        if not isinstance(message, BaseMessage):
            raise ValidationError(
                f"messages[{position}] is {type(message).__name__}, not a LangChain message"
            )
    return window


def _validate(item: Any) -> CandidateModel | None:
    try:
        if isinstance(item, CandidateModel):
            return CandidateModel.model_validate(item.model_dump())
        return CandidateModel.model_validate(item)
    except pydantic.ValidationError:
        return None


def finish_extraction(
    messages: Sequence[BaseMessage],
    raw: Sequence[Any],
    *,
    thread_id: str | None = None,
    clock: Clock = system_clock,
    guard: Guard = check,
) -> ExtractionReport:
    """Turn an extractor's raw output into a report (pure; shared by both twins).

    Args:
        messages: the window the extractor saw.
        raw: candidate models or dicts, as returned by the extractor.
        thread_id: the conversation thread, attached to every candidate.
        clock: returns the tz-aware ``observed_at``.
        guard: the sensitive-data guard, :func:`memory_graph.guard.check` by default.

    Returns:
        The kept candidates (provenance attached) and the drop counts.

    Raises:
        ValidationError: ``messages`` is not a sequence of messages, or the clock returns
            a naive datetime.
    """
    window = _window(messages)
    observed_at = ensure_aware(clock(), "observed_at")
    kept: list[Candidate] = []
    seen: set[tuple[Any, ...]] = set()
    blocked = ungrounded = invalid = unsupported = 0
    categories: dict[str, int] = {}
    for item in raw if isinstance(raw, Sequence) else []:
        model = _validate(item)
        if model is None:
            invalid += 1
            continue
        index = ground(window, model)
        if index is None:
            ungrounded += 1
            continue
        quote = evidence_quote(window[index], model)
        if quote is None:
            unsupported += 1
            continue
        # The guard reads what would be stored: the widened quote, value and content; the
        # model's own sensitivity category can only add a block.
        text = " ".join(p for p in (quote, model.value, model.content) if p)
        verdict = with_declared(guard(text), model.sensitivity)
        if not verdict.allowed:
            blocked += 1
            name = verdict.category or "unknown"
            categories[name] = categories.get(name, 0) + 1
            continue
        slot = (model.kind, model.action, model.key, model.value, model.content, index)
        if slot in seen:
            continue
        seen.add(slot)
        kept.append(
            Candidate(
                kind=model.kind,
                action=model.action,
                key=model.key,
                value=model.value,
                content=model.content,
                quote=quote,  # widened to its whole sentence(s)
                message_index=index,
                source_event_id=window[index].id,
                thread_id=thread_id,
                observed_at=observed_at,
                # A model's lifetime and confidence are ignored (issue 8 §4): lifetimes
                # come from policy and confidence from evidence, in the store.
                expires_at=None,
                confidence=None,
            )
        )
    return ExtractionReport(
        tuple(kept),
        blocked,
        ungrounded,
        invalid,
        categories,
        dropped_unsupported_count=unsupported,
    )


def _has_human(window: Sequence[BaseMessage]) -> bool:
    return any(isinstance(m, HumanMessage) for m in window)


def extract_candidates(
    messages: Sequence[BaseMessage],
    *,
    extractor: Runnable[Sequence[BaseMessage], Any] | None = None,
    thread_id: str | None = None,
    clock: Clock = system_clock,
    guard: Guard = check,
) -> ExtractionReport:
    """Extract guarded, grounded memory candidates from a window of messages.

    Args:
        messages: the window (human, assistant, tool and system messages in order). Only
            human messages can be sources.
        extractor: a runnable from :func:`create_extractor`, or ``None`` for the offline
            pattern extractor.
        thread_id: the thread id to attach as provenance.
        clock: the clock for ``observed_at``.
        guard: the sensitive-data guard.

    Returns:
        An :class:`ExtractionReport`.

    Raises:
        ValidationError: ``messages`` is not a sequence of LangChain messages.

    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> report = extract_candidates(
    ...     [AIMessage("Shall I call you Boss?"), HumanMessage("Call me Sam.", id="m1")],
    ...     thread_id="t1",
    ... )
    >>> [(c.key, c.value, c.source_event_id) for c in report.candidates]
    [('profile.call_them', 'Sam', 'm1')]
    """
    window = _window(messages)
    if not _has_human(window):
        return ExtractionReport(())
    # The offline extractor is a plain function: called directly, it skips the Runnable's
    # callback and config set-up (a child run per turn inside a graph node).
    raw = extract_patterns(window) if extractor is None else extractor.invoke(window)
    return finish_extraction(window, raw, thread_id=thread_id, clock=clock, guard=guard)


async def aextract_candidates(
    messages: Sequence[BaseMessage],
    *,
    extractor: Runnable[Sequence[BaseMessage], Any] | None = None,
    thread_id: str | None = None,
    clock: Clock = system_clock,
    guard: Guard = check,
) -> ExtractionReport:
    """Async twin of :func:`extract_candidates`; calls the extractor with ``ainvoke``.

    Args:
        messages: the window.
        extractor: a runnable, or ``None`` for the offline pattern extractor.
        thread_id: the thread id to attach as provenance.
        clock: the clock for ``observed_at``.
        guard: the sensitive-data guard.

    Returns:
        An :class:`ExtractionReport`.

    Raises:
        ValidationError: ``messages`` is not a sequence of LangChain messages.
    """
    window = _window(messages)
    if not _has_human(window):
        return ExtractionReport(())
    # Pure CPU: no executor hop for the offline extractor (see extract_candidates).
    raw = extract_patterns(window) if extractor is None else await extractor.ainvoke(window)
    return finish_extraction(window, raw, thread_id=thread_id, clock=clock, guard=guard)
