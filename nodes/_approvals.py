"""Out-of-band approval: the inbox, and resuming a thread's pending review safely.

An approval may arrive minutes later, in another process. :func:`resume_review` checks that
the thread really has the expected pending review interrupt and that the decisions name
exactly its proposals, re-supplies the owner as ``context=`` (LangGraph does not checkpoint
it), and resumes by interrupt id. It never starts a graph from ``START``: an unknown or
finished thread is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.errors import UnknownInterruptError
from langgraph.types import Command, Interrupt, StateSnapshot

from ._context import owner_context
from ._core import (
    AnyStore,
    AsyncMemoryStore,
    ConfigurationError,
    MemoryStore,
    NoPendingReviewError,
    Owner,
    Proposal,
    ResumeError,
    ThreadOwnerError,
    UnknownThreadError,
    ValidationError,
)
from ._drive import Op, drive_async, drive_sync, is_async_store
from ._owner import check_thread_owner, saver_space, store_of
from ._payloads import (
    Decision,
    DecisionType,
    ReviewRequest,
    check_review_request,
    is_review_request,
    validate_decisions,
)
from ._state import ProposalJSON, proposal_to_json

__all__ = [
    "NoPendingReviewError",
    "UnknownThreadError",
    "alist_inbox",
    "apending_review",
    "aresume_review",
    "decide_all",
    "list_inbox",
    "pending_review",
    "resume_review",
]


def _group(proposals: Sequence[Proposal]) -> dict[str, list[ProposalJSON]]:
    out: dict[str, list[ProposalJSON]] = {}
    for p in proposals:
        thread = p.thread_id or p.evidence.get("thread_id")
        out.setdefault("" if thread is None else str(thread), []).append(proposal_to_json(p))
    return dict(sorted(out.items()))


def list_inbox(store: MemoryStore, owner: Owner) -> dict[str, list[ProposalJSON]]:
    """The owner's pending, unexpired proposals across threads, grouped by thread id.

    Args:
        store: a ``MemoryStore``.
        owner: whose inbox.

    Returns:
        ``{thread_id: [proposal, ...]}`` sorted by thread id, oldest proposal first;
        proposals made outside a thread are under ``""``.
    """
    return _group(store.list_pending(owner))


async def alist_inbox(store: AsyncMemoryStore, owner: Owner) -> dict[str, list[ProposalJSON]]:
    """Async twin of :func:`list_inbox`."""
    return _group(await store.list_pending(owner))


def decide_all(request: ReviewRequest, decision: DecisionType = "approve") -> list[Decision]:
    """One ``approve`` (or ``reject``) decision per request of a review, in order.

    >>> decide_all({"kind": "memory_review", "action_requests": [], "review_configs": []})
    []
    """
    if decision == "edit":
        raise ResumeError("decide_all cannot edit: build 'edit' decisions with their args")
    if decision not in ("approve", "reject"):
        raise ResumeError(f"decide_all decides 'approve' or 'reject', got {decision!r:.40}")
    request = check_review_request(request)
    return [{"type": decision, "proposal_id": r["proposal_id"]} for r in request["action_requests"]]


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def _thread_check(graph: Any, store: AnyStore | None, owner: Owner, thread_id: str) -> Op[None]:
    """The owner check of the helpers: the graph's own store, the same rule as the nodes."""
    if not isinstance(owner, Owner):
        raise ValidationError(f"owner must be an Owner, got {type(owner).__name__}")
    if not isinstance(thread_id, str):
        raise ValidationError(f"thread_id must be a string, got {type(thread_id).__name__}")
    # Read-only: a helper never claims a thread (the nodes do, on the first turn).
    space = saver_space(getattr(graph, "checkpointer", None))
    yield from check_thread_owner(owner, _config(thread_id), claim=False, space=space)


def _store_for(graph: Any, store: AnyStore | None) -> AnyStore:
    found = store if store is not None else store_of(graph)
    if found is None:
        raise ConfigurationError(
            "cannot check the thread's owner: the graph has no memory-graph node carrying a "
            "store; pass store= (the MemoryStore the graph's nodes use)"
        )
    return found


def _check_sync(graph: Any, store: AnyStore | None, owner: Owner, thread_id: str) -> None:
    found = _store_for(graph, store)
    if is_async_store(found):
        raise ConfigurationError(
            "the graph runs on an AsyncMemoryStore: use the async helper (apending_review, "
            "aresume_review)"
        )
    drive_sync(found, _thread_check(graph, found, owner, thread_id))


async def _check_async(graph: Any, store: AnyStore | None, owner: Owner, thread_id: str) -> None:
    found = _store_for(graph, store)
    op = _thread_check(graph, found, owner, thread_id)
    if is_async_store(found):
        await drive_async(found, op)
    else:
        drive_sync(found, op)


def _pending(snapshot: StateSnapshot, thread_id: str, owner: Owner | None = None) -> Interrupt:
    if snapshot.created_at is None and not snapshot.values:
        raise UnknownThreadError(
            f"thread {thread_id!r} has no checkpoint: there is nothing to resume "
            "(check the thread id; resuming would start a new run)"
        )
    if owner is not None:
        for item in snapshot.values.get("pending_proposals") or []:
            if not isinstance(item, Mapping) or item.get("scope_id") != owner.scope_id:
                # A thread from before the owner index: its proposals name the user.
                raise ThreadOwnerError(
                    "this thread was started by another user, workspace or agent: "
                    "use a new thread id"
                )
    reviews = [i for i in snapshot.interrupts if is_review_request(i.value)]
    if not reviews:
        state = "has finished" if not snapshot.next else f"is waiting at {list(snapshot.next)}"
        raise NoPendingReviewError(f"thread {thread_id!r} has no pending memory review: it {state}")
    if len(reviews) > 1:
        raise NoPendingReviewError(
            f"thread {thread_id!r} has {len(reviews)} pending memory reviews; resume each "
            "by its interrupt id with Command(resume={interrupt_id: ...})"
        )
    return reviews[0]


def pending_review(
    graph: Any, thread_id: str, *, owner: Owner, store: MemoryStore | None = None
) -> tuple[str, ReviewRequest]:
    """Return ``(interrupt_id, request)`` of the thread's pending memory review.

    Args:
        graph: the compiled graph.
        thread_id: the thread.
        owner: who reads it; only the principal that started the thread may.
        store: the graph's store; found in the graph's nodes when ``None``.

    Raises:
        ThreadOwnerError: another principal started the thread; nothing is read.
        UnknownThreadError: the thread has no checkpoint.
        NoPendingReviewError: the thread has no (or more than one) pending review.
    """
    _check_sync(graph, store, owner, thread_id)
    interrupt = _pending(graph.get_state(_config(thread_id)), thread_id, owner)
    return interrupt.id, interrupt.value


async def apending_review(
    graph: Any, thread_id: str, *, owner: Owner, store: AnyStore | None = None
) -> tuple[str, ReviewRequest]:
    """Async twin of :func:`pending_review` (required with ``AsyncPostgresSaver``).

    ``AsyncPostgresSaver`` refuses synchronous reads from its own event loop, so a graph
    compiled on it needs this twin there.
    """
    await _check_async(graph, store, owner, thread_id)
    interrupt = _pending(await graph.aget_state(_config(thread_id)), thread_id, owner)
    return interrupt.id, interrupt.value


def _prepare(
    snapshot: StateSnapshot,
    *,
    owner: Owner,
    thread_id: str,
    decisions: Sequence[Mapping[str, Any]],
    store: AnyStore,
) -> tuple[Command[Any], RunnableConfig]:
    interrupt = _pending(snapshot, thread_id, owner)
    if isinstance(decisions, (str, bytes, Mapping)) or not isinstance(decisions, Sequence):
        raise ResumeError(
            "malformed resume: decisions must be a list, one decision per proposal of the "
            f"review in order, not {type(decisions).__name__}"
        )
    checked = validate_decisions(
        {"decisions": list(decisions)}, interrupt.value, limits=getattr(store, "limits", None)
    )
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id, "__pregel_strict_resume": True}
    }
    return Command(resume={interrupt.id: {"decisions": checked}}), config


def _lost_race(thread_id: str) -> NoPendingReviewError:
    return NoPendingReviewError(
        f"thread {thread_id!r} has no pending memory review any more: another resume "
        "decided it first (read commit_results from the thread's state)"
    )


def resume_review(
    graph: Any,
    *,
    owner: Owner,
    thread_id: str,
    decisions: Sequence[Mapping[str, Any]],
    store: MemoryStore | None = None,
) -> dict[str, Any]:
    """Resume a thread's pending memory review with decisions, from any process.

    The thread's owner is checked first, then the whole resume value is validated against
    the pending review (see :func:`~nodes.validate_decisions`); any refusal leaves the
    review pending and commits nothing.

    Args:
        graph: the compiled graph, on the same (Postgres) checkpointer as the thread.
        owner: the thread's owner; passed again as ``context=``.
        thread_id: the thread to resume.
        decisions: one per proposal of the pending review, in order, each
            ``{"type": "approve" | "edit" | "reject", "proposal_id": ..., "args"?, "message"?}``.
        store: the graph's store; found in the graph's nodes when ``None``.

    Returns:
        The thread's state after the run (``commit_results`` holds the outcomes).

    Raises:
        ThreadOwnerError: another principal started the thread; nothing is read.
        UnknownThreadError: no such thread; nothing is started.
        NoPendingReviewError: the thread has finished or waits for something else, or
            another resume decided the review first (a lost race).
        ResumeError: the decisions are malformed, stale (another review's proposal ids),
            too large or deep, or would be refused at commit; nothing is committed.
    """
    _check_sync(graph, store, owner, thread_id)
    found = _store_for(graph, store)
    command, config = _prepare(
        graph.get_state(_config(thread_id)),
        owner=owner,
        thread_id=thread_id,
        decisions=decisions,
        store=found,
    )
    try:
        result: dict[str, Any] = graph.invoke(
            command, config, context=owner_context(owner), durability="sync"
        )
    except UnknownInterruptError as exc:
        raise _lost_race(thread_id) from exc
    return result


async def aresume_review(
    graph: Any,
    *,
    owner: Owner,
    thread_id: str,
    decisions: Sequence[Mapping[str, Any]],
    store: AnyStore | None = None,
) -> dict[str, Any]:
    """Async twin of :func:`resume_review`."""
    await _check_async(graph, store, owner, thread_id)
    found = _store_for(graph, store)
    command, config = _prepare(
        await graph.aget_state(_config(thread_id)),
        owner=owner,
        thread_id=thread_id,
        decisions=decisions,
        store=found,
    )
    try:
        result: dict[str, Any] = await graph.ainvoke(
            command, config, context=owner_context(owner), durability="sync"
        )
    except UnknownInterruptError as exc:
        raise _lost_race(thread_id) from exc
    return result
