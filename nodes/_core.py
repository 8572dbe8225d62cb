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
    ScopeError,
    SearchHit,
    ThreadOwnerError,
    UnknownThreadError,
    ValidationError,
)
from memory_graph.guard import check as guard_check
from memory_graph.projections import escape
from memory_graph.safetext import prompt_value, terminal_text
from memory_graph.validate import EVENT_ID_PATTERN, guard_text, operation_args

__all__ = [
    "DEFAULT_PROFILE_FIELDS",
    "EVENT_ID_PATTERN",
    "AnyStore",
    "AsyncMemoryStore",
    "CommitResult",
    "ConfigurationError",
    "ConflictError",
    "IdempotencyConflictError",
    "ConfigurationError",
    "IdentityMissingError",
    "Limits",
    "MemoryGraphError",
    "MemoryStore",
    "NoPendingReviewError",
    "NotFoundError",
    "Owner",
    "Proposal",
    "ProposalExpiredError",
    "ResumeError",
    "ScopeError",
    "SearchHit",
    "ThreadOwnerError",
    "UnknownThreadError",
    "ValidationError",
    "escape",
    "guard_check",
    "guard_text",
    "operation_args",
    "prompt_value",
    "terminal_text",
]

AnyStore = Union[MemoryStore, AsyncMemoryStore]  # noqa: UP007 - a runtime alias on py3.10
"""A sync or an async memory store; node factories return matching sync or async nodes."""

DEFAULT_PROFILE_FIELDS: tuple[str, ...] = Limits().profile_fields
