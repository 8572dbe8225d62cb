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
- no graph thread waits for it (an import, a finished or unknown thread, or a thread of another
  principal named by imported provenance): ``store.decide``.

A review waiting in a thread that LangGraph Server runs (``langgraph dev``, the Agent
Server) is **refused** (``ResumeError``, nothing decided): resumed here, the server's own
record would keep the thread ``interrupted``. Decide it through the server with
``langgraph-sdk`` (README, deployment section).

Resuming never starts a graph from ``START``: ``nodes.resume_review`` refuses unknown and
finished threads. An edit is validated and guarded *before* the thread is resumed, so a
refused edit leaves the whole review pending (the command fails, nothing is decided).

A decision is **refused** (the command exits 1) when its result is not what was asked:
an edit or approval that ends ``invalid``, ``conflicted`` or ``expired``, or a decision on
a proposal already decided otherwise (rejecting an approved proposal, approving a rejected
one). Repeating the same decision replays the stored result and succeeds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console
from rich.text import Text

from .. import validate as v
from ..errors import ResumeError, ThreadOwnerError, ValidationError
from ..identity import Owner
from ..safetext import terminal_text
from ..types import CommitResult, Proposal

if TYPE_CHECKING:
    from ..storage import MemoryStore

__all__ = ["Outcome", "commit_dict", "decide_one"]

DecisionName = Literal["approve", "edit", "reject"]

_WANTED = {"approve": "approved", "edit": "approved", "reject": "rejected"}


@dataclass(frozen=True)
class Outcome:
    """What ``inbox decide`` did: the commit results, and why the decision was refused."""

    results: list[dict[str, Any]]
    refused: str | None = None


def _refusal(proposal_id: str, decision: str, results: list[dict[str, Any]]) -> str | None:
    mine = next((r for r in results if r.get("proposal_id") == proposal_id), None)
    status = None if mine is None else mine.get("status")
    if status == _WANTED.get(decision):
        return None
    return (
        f"the {decision} decision on proposal {terminal_text(proposal_id)} was refused: "
        f"the proposal is {terminal_text(status or 'not decided')}"
    )


def _check_edit(store: MemoryStore, proposal: Proposal, args: Mapping[str, Any] | None) -> None:
    # The same validation and guard as the store's decide, run before anything is resumed.
    from ..storage.ops.propose import guard_args

    new_args = v.operation_args(proposal.operation, args, store.limits)
    if (
        proposal.operation in ("set_preference", "delete_preference")
        and new_args.get("key") != proposal.target_id
    ):
        raise ValidationError("an edit cannot change the preference key: propose a new write")
    guard_args(proposal.operation, new_args)


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
) -> Outcome:
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
        The commit results as plain JSON (the resumed thread's ``commit_results``, or the
        one result of a store decision) and, when the decision was refused, why.

    Raises:
        NotFoundError: no such proposal for this owner.
        ValidationError: the edited args are invalid or blocked by the guard (nothing is
            decided and a waiting review stays pending).
    """
    proposal = store.get_proposal(owner, proposal_id)
    if proposal.status != "pending":
        console.print(
            Text(
                f"proposal {terminal_text(proposal_id)} was already "
                f"{terminal_text(proposal.status)}: its stored result"
            )
        )
        stored = dict(proposal.result or {})
        keys = ("proposal_id", "status", "operation", "write_status", "record_id", "version")
        out = {key: stored.get(key) for key in keys}
        out["status"] = out["status"] or proposal.status
        results = [{**out, "decision": "-", "message": str(stored.get("message") or "")}]
        return Outcome(results, _refusal(proposal.id, decision, results))
    if decision == "edit":
        _check_edit(store, proposal, args)
    thread_id = proposal.evidence.get("thread_id")
    if thread_id:
        resumed = _resume_thread(
            console, store, owner, str(thread_id), proposal_id, decision, args, message
        )
        if resumed is not None:
            return Outcome(resumed, _refusal(proposal.id, decision, resumed))
    kind: Any = decision
    result = store.decide(owner, proposal_id, kind, args=args, message=message)
    results = [commit_dict(result, decision=decision)]
    return Outcome(results, _refusal(proposal.id, decision, results))


_SERVED_MARKERS = ("langgraph_api_version", "langgraph_host", "langgraph_api_url")
"""Checkpoint metadata keys LangGraph Server (``langgraph dev``, Agent Server) writes."""


def _refuse_served(graph: Any, thread_id: str, proposal_id: str) -> None:
    """Refuse a review waiting in a thread LangGraph Server runs (decided here, the server
    would keep showing the thread ``interrupted``): it is resumed through the server."""
    metadata = graph.get_state({"configurable": {"thread_id": thread_id}}).metadata or {}
    if not any(key in metadata for key in _SERVED_MARKERS):
        return
    url = metadata.get("langgraph_api_url")
    where = f" at {terminal_text(str(url))}" if isinstance(url, str) and url else ""
    raise ResumeError(
        f"proposal {terminal_text(proposal_id)} waits in thread {terminal_text(thread_id)}, "
        f"which LangGraph Server{where} runs: decide it through the server (langgraph-sdk: "
        "client.runs.wait(thread_id, assistant_id, command={'resume': {interrupt_id: "
        "{'decisions': [...]}}}), see the README's deployment section); nothing was decided"
    )


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
            _iid, request = pending_review(graph, thread_id, owner=owner)
        except (UnknownThreadError, NoPendingReviewError):
            return None
        except ThreadOwnerError:
            # The thread id is provenance from another principal (an import of another user's
            # export, say): that thread's review cannot hold this owner's proposal.
            return None
        ids = [r["proposal_id"] for r in request["action_requests"]]
        if proposal_id not in ids:
            return None
        _refuse_served(graph, thread_id, proposal_id)
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
                    f"thread {terminal_text(thread_id)}: {len(waiting)} other proposal(s) of "
                    "its review are "
                    "still pending; it resumes when the last one is decided",
                    style="yellow",
                ),
                soft_wrap=True,  # one line, whatever the width: scripts read it whole
            )
            return None
        state = resume_review(graph, owner=owner, thread_id=thread_id, decisions=decisions)
        console.print(
            Text(f"resumed thread {terminal_text(thread_id)}", style="green"), soft_wrap=True
        )
        return [dict(r) for r in state.get("commit_results") or []]
