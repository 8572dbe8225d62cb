"""``memory-graph inbox decide``: decide one proposal, resuming its graph thread if it waits.

A proposal made inside a graph thread (by extraction or a memory tool) also waits in that
thread's review interrupt, which carries the whole batch and must be answered for every
proposal at once. Deciding one proposal from the inbox therefore works like this:

- the proposal waits in the thread's pending review, and every *other* proposal of that
  review is already decided: the thread is resumed through ``nodes.resume_review`` with
  this decision, and the others replay their stored results;
- other proposals of the review are still pending: this one is decided in the store now
  (the commit path is the same, row-locked and idempotent), and the thread is resumed by
  whichever decision comes last;
- no graph thread waits for it (an import, a finished or unknown thread): ``store.decide``.

Resuming never starts a graph from ``START``: ``nodes.resume_review`` refuses unknown and
finished threads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console
from rich.text import Text

from ._identity import Owner
from ._types import CommitResult

if TYPE_CHECKING:
    from .storage import MemoryStore

__all__ = ["commit_dict", "decide_one"]

DecisionName = Literal["approve", "edit", "reject"]


def commit_dict(result: CommitResult, *, decision: str) -> dict[str, Any]:
    """A store commit result as the plain JSON the CLI prints."""
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


def _replay(status: str) -> dict[str, str]:
    # A decided proposal returns its stored result whatever the decision; mirror its
    # status so the thread's commit_results read naturally.
    return {"type": "reject" if status == "rejected" else "approve"}


def decide_one(
    console: Console,
    store: MemoryStore,
    owner: Owner,
    proposal_id: str,
    decision: str,
    *,
    args: Mapping[str, Any] | None = None,
    message: str | None = None,
) -> list[dict[str, Any]]:
    """Decide ``proposal_id`` for ``owner``, resuming its graph thread when that is due.

    Args:
        console: where progress notes go.
        store: the open store.
        owner: the proposal's owner.
        proposal_id: the proposal to decide.
        decision: ``approve``, ``edit`` or ``reject``.
        args: the edited args (``edit`` only).
        message: an optional reason.

    Returns:
        Commit results as plain JSON: the resumed thread's ``commit_results``, or the one
        result of a store decision.

    Raises:
        NotFoundError: no such proposal for this owner.
        ValidationError: the edited args are invalid or blocked by the guard.
    """
    proposal = store.get_proposal(owner, proposal_id)
    if proposal.status != "pending":
        console.print(
            Text(f"proposal {proposal_id} was already {proposal.status}: its stored result")
        )
        stored = dict(proposal.result or {})
        keys = ("proposal_id", "status", "operation", "write_status", "record_id", "version")
        out = {key: stored.get(key) for key in keys}
        return [{**out, "decision": "-", "message": str(stored.get("message") or "")}]
    thread_id = proposal.evidence.get("thread_id")
    if proposal.status == "pending" and thread_id:
        resumed = _resume_thread(
            console, store, owner, str(thread_id), proposal_id, decision, args, message
        )
        if resumed is not None:
            return resumed
    kind: Any = decision
    result = store.decide(owner, proposal_id, kind, args=args, message=message)
    return [commit_dict(result, decision=decision)]


def _resume_thread(
    console: Console,
    store: MemoryStore,
    owner: Owner,
    thread_id: str,
    proposal_id: str,
    decision: str,
    args: Mapping[str, Any] | None,
    message: str | None,
) -> list[dict[str, Any]] | None:
    """Resume the thread if its review waits only for this decision; else ``None``."""
    from nodes import (
        NoPendingReviewError,
        OfflineChatModel,
        UnknownThreadError,
        create_memory_agent,
        open_checkpointer,
        pending_review,
        resume_review,
    )

    with open_checkpointer(store) as saver:
        # The model never runs on resume (review -> END); any chat model builds the graph.
        graph = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
        try:
            _iid, request = pending_review(graph, thread_id)
        except (UnknownThreadError, NoPendingReviewError):
            return None
        ids = [r["proposal_id"] for r in request["action_requests"]]
        if proposal_id not in ids:
            return None
        decisions: list[dict[str, Any]] = []
        waiting: list[str] = []
        for pid in ids:
            if pid == proposal_id:
                mine: dict[str, Any] = {"type": decision, "proposal_id": pid}
                if args is not None:
                    mine["args"] = dict(args)
                if message is not None:
                    mine["message"] = message
                decisions.append(mine)
                continue
            other = store.get_proposal(owner, pid)
            if other.status == "pending":
                waiting.append(pid)
            decisions.append({**_replay(other.status), "proposal_id": pid})
        if waiting:
            console.print(
                Text(
                    f"thread {thread_id}: {len(waiting)} other proposal(s) of its review are "
                    "still pending; it resumes when the last one is decided",
                    style="yellow",
                )
            )
            return None
        state = resume_review(graph, owner=owner, thread_id=thread_id, decisions=decisions)
        console.print(Text(f"resumed thread {thread_id}", style="green"))
        return [dict(r) for r in state.get("commit_results") or []]
