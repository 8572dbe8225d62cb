"""The approval policy consulted by the review node (DESIGN §4).

The default policy makes every write wait for a human. Auto-approval is never a switch: it
is a bounded grant stored in the database (see ``MemoryStore.create_grant``), referenced
here by id, whose usage survives restarts and retries.

>>> ApprovalPolicy().grant_id is None
True
>>> ApprovalPolicy(auto_reject_operations=frozenset({"remove"})).rejects("remove")
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ValidationError
from .validate import OPERATIONS

__all__ = ["ApprovalPolicy"]


@dataclass(frozen=True)
class ApprovalPolicy:
    """Rules for deciding proposals without a human.

    Args:
        grant_id: a bounded grant that may auto-approve; ``None`` means a human decides.
        auto_reject_operations: operations rejected without asking.
    """

    grant_id: str | None = None
    auto_reject_operations: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        unknown = set(self.auto_reject_operations) - set(OPERATIONS)
        if unknown:
            raise ValidationError(
                f"unknown operations {sorted(unknown)} in auto_reject_operations: "
                f"allowed are {', '.join(OPERATIONS)}"
            )
        object.__setattr__(self, "auto_reject_operations", frozenset(self.auto_reject_operations))

    def rejects(self, operation: str) -> bool:
        """Whether proposals of ``operation`` are rejected automatically."""
        return operation in self.auto_reject_operations
