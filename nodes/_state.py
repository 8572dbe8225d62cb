"""The graph state: ``MessagesState`` plus memory fields, all plain JSON.

Store values (proposals, commit results) cross into the state only through the
converters here, so checkpoints never hold custom classes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from langgraph.graph import MessagesState
from typing_extensions import TypedDict

from ._core import CommitResult, Proposal
from ._metrics import TurnMetricsJSON, merge_metrics

__all__ = [
    "CommitResultJSON",
    "ExtractionReportJSON",
    "Goal",
    "MemoryState",
    "ProposalJSON",
    "Task",
    "commit_result_to_json",
    "merge_evidence",
    "proposal_to_json",
]


class Goal(TypedDict):
    """The session's goal; its objective is the last query of the recall plan."""

    objective: str


class Task(TypedDict, total=False):
    """The current task step; recall searches ``query`` (or ``next_step``) first."""

    next_step: str
    query: str


class ProposalJSON(TypedDict):
    """A proposal as it lives in the state and in interrupt payloads."""

    id: str
    scope_id: str
    level: str
    operation: str
    target_id: str | None
    base_version: int | None
    args: dict[str, Any]
    diff: str
    evidence: dict[str, Any]
    guard: dict[str, Any]
    status: str
    expires_at: str


class CommitResultJSON(TypedDict, total=False):
    """The outcome of one decision, as stored in ``commit_results``."""

    proposal_id: str
    status: str
    """``approved | rejected | expired | conflicted``, or ``invalid`` for a refused edit."""
    operation: str
    decision: str
    """``approve | edit | reject``; ``policy`` or ``grant`` when no human decided."""
    write_status: str | None
    record_id: str | None
    version: int | None
    message: str


class ExtractionReportJSON(TypedDict, total=False):
    """What the last extraction did. Counts only: blocked content is never kept."""

    last_message_id: str | None
    """The newest message already extracted; later human messages are new."""
    messages: int
    candidates: int
    blocked: int
    blocked_categories: dict[str, int]
    proposed: int
    unchanged: int
    dropped: int
    """Candidates dropped: ungrounded, invalid, unsupported by their quote, or a key conflict."""
    unsupported: int
    """Of ``dropped``: grounded candidates whose quote does not support their content."""


class MemoryState(MessagesState, total=False):
    """``MessagesState`` plus the memory fields (plain JSON only).

    Every memory field has a default, so graphs can be invoked with just ``messages``.
    """

    user_context: str
    """The framed context block (persona, profile, explicit preferences)."""
    recalled: str
    """The framed ``<memory_source>`` block, recomputed before every model step."""
    goal: Goal | None
    task: Task | None
    pending_proposals: list[ProposalJSON]
    """Proposals waiting for the review node."""
    commit_results: list[CommitResultJSON]
    """The results of the last review."""
    extraction: ExtractionReportJSON
    """Counts from the last extraction."""
    tool_evidence: Annotated[list[dict[str, Any]], merge_evidence]
    """Evidence references of indexed tool results (no result text), oldest first."""
    metrics: Annotated[TurnMetricsJSON, merge_metrics]
    """This turn's memory metrics, summed over its nodes (see ``nodes._metrics``)."""


EVIDENCE_STATE_CAP = 500
"""Evidence references kept in the state (the oldest are dropped past it)."""


def merge_evidence(
    left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Reducer of ``tool_evidence``: append new references (by ``ref``), keep the newest 500."""
    out = list(left or [])
    seen = {item.get("ref") for item in out}
    for item in right or []:
        if item.get("ref") not in seen:
            out.append(item)
            seen.add(item.get("ref"))
    return out[-EVIDENCE_STATE_CAP:]


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z")


def proposal_to_json(proposal: Proposal) -> ProposalJSON:
    """Convert a store proposal to its plain-JSON state form."""
    return {
        "id": proposal.id,
        "scope_id": proposal.scope_id,
        "level": proposal.level,
        "operation": proposal.operation,
        "target_id": proposal.target_id,
        "base_version": proposal.base_version,
        "args": dict(proposal.args),
        "diff": proposal.diff,
        "evidence": dict(proposal.evidence),
        "guard": dict(proposal.guard),
        "status": proposal.status,
        "expires_at": _iso(proposal.expires_at) or "",
    }


def commit_result_to_json(result: CommitResult, *, decision: str) -> CommitResultJSON:
    """Convert a store commit result to its plain-JSON state form."""
    return {
        "proposal_id": result.proposal_id,
        "status": result.status,
        "operation": result.operation,
        "decision": decision,
        "write_status": result.write_status,
        "record_id": result.record_id,
        "version": result.version,
        "message": result.message,
    }
