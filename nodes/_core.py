"""The one place where ``nodes`` imports the ``memory_graph`` core.

Keeping every core import here makes the layering visible (``nodes`` depends on the core's
public API only) and keeps it a one-line change if a name moves.
"""

from __future__ import annotations

from typing import Union

from memory_graph import (
    AsyncMemoryStore,
    CommitResult,
    ConfigurationError,
    ConflictError,
    IdempotencyConflictError,
    IdentityMissingError,
    Limits,
    MemoryGraphError,
    MemoryStore,
    NoPendingReviewError,
    NotFoundError,
    Owner,
    Proposal,
    ProposalExpiredError,
    ResumeError,
    SearchHit,
    UnknownThreadError,
    ValidationError,
)
from memory_graph.projections import escape
from memory_graph.safetext import prompt_value, terminal_text

__all__ = [
    "DEFAULT_PROFILE_FIELDS",
    "AnyStore",
    "AsyncMemoryStore",
    "CommitResult",
    "ConfigurationError",
    "ConflictError",
    "IdempotencyConflictError",
    "IdentityMissingError",
    "MemoryGraphError",
    "MemoryStore",
    "NoPendingReviewError",
    "NotFoundError",
    "Owner",
    "Proposal",
    "ProposalExpiredError",
    "ResumeError",
    "SearchHit",
    "UnknownThreadError",
    "ValidationError",
    "escape",
    "prompt_value",
    "terminal_text",
]

AnyStore = Union[MemoryStore, AsyncMemoryStore]  # noqa: UP007 - a runtime alias on py3.10
"""A sync or an async memory store; node factories return matching sync or async nodes."""

DEFAULT_PROFILE_FIELDS: tuple[str, ...] = Limits().profile_fields
