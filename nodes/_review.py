"""The review node: one ``interrupt()`` per review, decisions bound to proposal ids.

Order of work, chosen so a re-run (LangGraph re-runs the node from its first line on
resume, in whichever process resumes) is safe:

1. Resolve the owner (fail closed) and read each pending proposal of the state. A proposal
   not visible to this owner means a foreign resume: refused before anything is written.
2. Apply the approval policy (auto-reject by operation, or a bounded grant). These are
   store decisions, which are idempotent per proposal: a re-run gets the stored result.
3. ``interrupt()`` with the remaining batch. The resume value is validated against the batch
   by ``response_schema`` *inside* ``interrupt()``, so a stale, foreign or malformed resume
   is refused before LangGraph saves it and the interrupt stays pending.
4. Commit each decision through ``store.decide``, which row-locks the proposal: concurrent
   resumes produce one commit, the others read the stored result. A refused edit, an
   expiry or a conflict is reported as data; nothing raised after ``interrupt()`` returned
   can leave the thread holding a bad resume value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic
from langgraph.types import interrupt

from memory_graph import ApprovalPolicy

from ._core import (
    AnyStore,
    ConflictError,
    NotFoundError,
    Owner,
    Proposal,
    ProposalExpiredError,
    ResumeError,
    ValidationError,
    terminal_text,
)
from ._drive import Call, Op
from ._nodes import Node, _make_node
from ._payloads import bound_response_schema, build_review_request
from ._state import CommitResultJSON, ProposalJSON, commit_result_to_json, proposal_to_json

__all__ = ["create_review_memories"]

_AUTO_ACTORS = ("policy", "grant:")


def _stored_result(proposal: Proposal) -> CommitResultJSON:
    result = dict(proposal.result or {})
    actor = proposal.actor or ""
    return {
        "proposal_id": proposal.id,
        "status": proposal.status,
        "operation": proposal.operation,
        "decision": "grant" if actor.startswith("grant:") else "policy",
        "write_status": result.get("write_status"),
        "record_id": result.get("record_id"),
        "version": result.get("version"),
        "message": str(result.get("message") or ""),
    }


def create_review_memories(
    store: AnyStore | None = None, *, policy: ApprovalPolicy | None = None
) -> Node:
    """Create the approval node: one interrupt carrying the batch of pending proposals.

    The interrupt value is a :class:`~nodes.ReviewRequest`; resume with
    ``Command(resume={interrupt_id: {"decisions": [...]}})``, one decision per request in
    order, each naming its ``proposal_id`` (or use :func:`~nodes.resume_review`).

    Args:
        store: a ``MemoryStore`` or ``AsyncMemoryStore``; ``None`` uses ``runtime.store``.
        policy: a ``memory_graph.policy.ApprovalPolicy``; ``None`` means every write waits
            for a human. With a ``grant_id``, proposals the grant covers are approved
            through ``store.decide_with_grant`` (recorded as ``agent-observed``).

    Returns:
        The node function, named ``review_memories``. It writes ``commit_results`` and
        clears ``pending_proposals``.

    Raises:
        IdentityMissingError: no owner in the runtime context (pass ``context=`` again on
            resume); nothing is read or written.
        ResumeError: a stale, foreign or malformed resume; nothing is committed and the
            interrupt stays pending.
    """
    grant_id: str | None = getattr(policy, "grant_id", None)
    rejects = frozenset(getattr(policy, "auto_reject_operations", ()) or ())

    def body(owner: Owner, state: Mapping[str, Any], config: Any) -> Op[dict[str, Any]]:
        pending: list[ProposalJSON] = list(state.get("pending_proposals") or [])
        if not pending:
            return {"pending_proposals": [], "commit_results": []}
        results: dict[str, CommitResultJSON] = {}
        batch: list[ProposalJSON] = []
        for item in pending:
            if item.get("scope_id") != owner.scope_id:
                raise ResumeError(
                    f"foreign review: proposal {item['id']} belongs to another owner; "
                    "resume with the context of the user who owns this thread"
                )
            try:
                current: Proposal = yield Call("get_proposal", (owner, item["id"]))
            except NotFoundError as exc:
                raise ResumeError(
                    f"foreign review: proposal {item['id']} is not visible to this owner"
                ) from exc
            if current.status != "pending" and (current.actor or "").startswith(_AUTO_ACTORS):
                results[current.id] = _stored_result(current)
            elif current.status == "pending" and current.operation in rejects:
                done = yield Call(
                    "decide",
                    (owner, current.id, "reject"),
                    {"message": "rejected by the approval policy", "actor": "policy"},
                )
                results[current.id] = commit_result_to_json(done, decision="policy")
            elif current.status == "pending" and grant_id is not None:
                granted = yield Call("decide_with_grant", (owner, current.id, grant_id))
                if granted is None:
                    batch.append(proposal_to_json(current))
                else:
                    results[current.id] = commit_result_to_json(granted, decision="grant")
            else:
                batch.append(proposal_to_json(current))

        if batch:
            request = build_review_request(batch)
            limits = yield Call("limits", target="attr")  # the store's, also via runtime.store
            try:
                with bound_response_schema(request, limits=limits) as schema:
                    response = interrupt(request, response_schema=schema)
            except pydantic.ValidationError as exc:
                # Raised before LangGraph saves the resume value: the interrupt stays pending.
                raise ResumeError(_resume_message(exc)) from exc
            for decision in response.decisions:
                kwargs: dict[str, Any] = {}
                if decision.args is not None:
                    kwargs["args"] = dict(decision.args)
                if decision.message is not None:
                    kwargs["message"] = decision.message
                try:
                    done = yield Call(
                        "decide", (owner, decision.proposal_id, decision.type), kwargs
                    )
                except (ValidationError, ConflictError, ProposalExpiredError) as exc:
                    # A refused edit, a lost compare-and-set or an expiry is data: raising
                    # here would keep the resume value and fail every retry the same way.
                    results[decision.proposal_id] = _failed(decision, batch, exc)
                else:
                    results[decision.proposal_id] = commit_result_to_json(
                        done, decision=decision.type
                    )
        ordered = [results[p["id"]] for p in pending if p["id"] in results]
        return {"pending_proposals": [], "commit_results": ordered}

    return _make_node(store, "review_memories", body)


def _failed(decision: Any, batch: list[ProposalJSON], exc: Exception) -> CommitResultJSON:
    proposal_id: str = decision.proposal_id
    operation = next((p["operation"] for p in batch if p["id"] == proposal_id), "")
    status = "invalid"
    if isinstance(exc, ProposalExpiredError):
        status = "expired"
    elif isinstance(exc, ConflictError):
        status = "conflicted"
    return {
        "proposal_id": proposal_id,
        "status": status,
        "operation": operation,
        "decision": str(decision.type),
        "write_status": None,
        "record_id": None,
        "version": None,
        "message": f"{type(exc).__name__}: {terminal_text(exc)}",
    }


def _resume_message(exc: pydantic.ValidationError) -> str:
    for error in exc.errors():
        ctx = error.get("ctx") or {}
        inner = ctx.get("error")
        if isinstance(inner, ResumeError):
            return str(inner)
    return (
        "malformed resume: expected {'decisions': [{'type': 'approve'|'edit'|'reject', "
        f"'proposal_id': ...}}, ...]}}: {exc}"
    )
