"""The one place where ``nodes`` imports the ``memory_graph`` core.

Keeping every core import here makes the layering visible (``nodes`` depends on the core's
public API only) and keeps it a one-line change if a name moves.
"""

from __future__ import annotations

from memory_graph._identity import Owner
from memory_graph._types import CommitResult, Proposal, SearchHit
from memory_graph.errors import (
    ConflictError,
    IdentityMissingError,
    MemoryGraphError,
    NotFoundError,
    ProposalExpiredError,
    ResumeError,
    ValidationError,
)
from memory_graph.projections import escape

__all__ = [
    "CommitResult",
    "ConflictError",
    "IdentityMissingError",
    "MemoryGraphError",
    "NotFoundError",
    "Owner",
    "Proposal",
    "ProposalExpiredError",
    "ResumeError",
    "SearchHit",
    "ValidationError",
    "escape",
]
