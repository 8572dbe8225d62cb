"""memory-graph: governed long-term user memory for LangGraph agents.

The public API of the core. Everything else lives in private modules (``_name.py``) or in
pure helper modules (``tokenize``, ``guard``, ``validate``, ``proposals``, ...).

``memory_graph.create_memory_agent`` (from the LangGraph layer, ``nodes``) resolves lazily
and is deliberately left out of ``__all__``: importing ``memory_graph`` (even with ``*``)
never imports ``nodes``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ._identity import IDENTITY_LEVELS, Identity, IdentityLevel, Owner, loose_user_id
from ._time import Clock, system_clock
from ._types import (
    Claim,
    CommitResult,
    DecisionKind,
    Disagreement,
    Grant,
    Kind,
    Knowledge,
    Limits,
    Operation,
    Persona,
    Preference,
    PreferenceResult,
    Profile,
    ProfileResult,
    Proposal,
    ProposalStatus,
    Provenance,
    Record,
    SearchHit,
    Sensitivity,
    Status,
    Trust,
    WriteStatus,
)
from .errors import (
    ConfigurationError,
    ConflictError,
    IdempotencyConflictError,
    IdentityMissingError,
    LimitExceededError,
    MemoryGraphError,
    NoPendingReviewError,
    NotFoundError,
    ProposalExpiredError,
    ResumeError,
    ScopeError,
    StaleWriteError,
    StorageUnavailableError,
    ThreadOwnerError,
    UnknownFieldError,
    UnknownThreadError,
    ValidationError,
)
from .policy import ApprovalPolicy
from .storage import AsyncMemoryStore, MemoryStore
from .storage._ops_privacy import ForgetReport, SweepReport

try:
    __version__: str = version("langgraph-memory-graph")
    """The installed distribution's version (``pyproject.toml``)."""
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "ApprovalPolicy",
    "AsyncMemoryStore",
    "Claim",
    "Clock",
    "CommitResult",
    "ConfigurationError",
    "ConflictError",
    "DecisionKind",
    "Disagreement",
    "ForgetReport",
    "Grant",
    "IDENTITY_LEVELS",
    "IdempotencyConflictError",
    "Identity",
    "IdentityLevel",
    "IdentityMissingError",
    "Kind",
    "Knowledge",
    "LimitExceededError",
    "Limits",
    "MemoryGraphError",
    "MemoryStore",
    "NoPendingReviewError",
    "NotFoundError",
    "Operation",
    "Owner",
    "Persona",
    "Preference",
    "PreferenceResult",
    "Profile",
    "ProfileResult",
    "Proposal",
    "ProposalExpiredError",
    "ProposalStatus",
    "Provenance",
    "Record",
    "ResumeError",
    "ScopeError",
    "SearchHit",
    "Sensitivity",
    "StaleWriteError",
    "Status",
    "StorageUnavailableError",
    "SweepReport",
    "ThreadOwnerError",
    "Trust",
    "UnknownFieldError",
    "UnknownThreadError",
    "ValidationError",
    "WriteStatus",
    "loose_user_id",
    "system_clock",
]


def __getattr__(name: str) -> Any:
    # Lazy: the LangGraph layer depends on this package, never the other way round at import.
    if name == "create_memory_agent":
        import importlib

        return importlib.import_module("nodes").create_memory_agent
    raise AttributeError(f"module 'memory_graph' has no attribute {name!r}")
