"""memory-graph: governed long-term user memory for LangGraph agents.

The public API of the core: the stores, the record types, the identities and the error tree.
The pipeline's parts are subpackages (``recall``, ``guard``, ``extraction``, ``storage``); the
LangGraph layer is the separate package ``nodes`` (``from nodes import create_memory_agent``),
which depends on this one and never the other way round.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from .errors import (
    AuthIdentityError,
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
from .identity import IDENTITY_LEVELS, Identity, IdentityLevel, Owner, loose_user_id
from .policy import ApprovalPolicy
from .storage import AsyncMemoryStore, MemoryStore
from .storage.ops.privacy import ForgetReport, SweepReport
from .time import Clock, system_clock
from .types import (
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

try:
    __version__: str = version("langgraph-memory-graph")
    """The installed distribution's version (``pyproject.toml``)."""
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "ApprovalPolicy",
    "AsyncMemoryStore",
    "AuthIdentityError",
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

