"""Node factories: load the user context, recall per step, extract memories.

Each ``create_*`` factory binds a node to a store. It returns a sync node for a
``MemoryStore`` and an async node for an ``AsyncMemoryStore``; both run the same body
(see ``_drive``). Every node resolves the owner first and fails closed with
``IdentityMissingError`` before any read or write.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from time import perf_counter
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from memory_graph.recall.plan import RECENT_TURNS, recent_text

from ._basestore import governed_from_runtime
from ._context import resolve_owner
from ._core import (
    AnyStore,
    IdempotencyConflictError,
    NotFoundError,
    Owner,
    Proposal,
    ValidationError,
)
from ._drive import Call, Op, drive_async, drive_sync, is_async_store
from ._metrics import measured
from ._owner import STORE_ATTR, check_thread_owner, config_thread_id
from ._redact import REDACT_ATTR, count_masks, redact_messages
from ._state import ExtractionReportJSON, MemoryState, ProposalJSON, proposal_to_json

__all__ = [
    "create_extract_memories",
    "create_load_user_context",
    "create_recall",
    "latest_human_text",
    "new_human_messages",
    "turn_entry",
]

Node = Callable[..., Any]
MAX_BLOCKED = 1_000_000
"""The most a category counts in one report (``note_blocked`` takes counts up to this)."""


def _owned(
    body: Callable[[Owner, Mapping[str, Any], Any], Op[Any]],
    owner: Owner,
    state: Mapping[str, Any],
    config: Any,
) -> Op[Any]:
    yield from check_thread_owner(owner, config)
    return (yield from body(owner, state, config))


def _make_node(
    store: AnyStore | None, name: str, body: Callable[[Owner, Mapping[str, Any], Any], Op[Any]]
) -> Node:
    """Wrap ``body(owner, state, config)`` as a sync or async LangGraph node.

    The node resolves the owner, then checks the thread's owner (:func:`check_thread_owner`)
    before the body does any work: every node made here may be the first of a run. Without a
    store the node uses the graph's ``runtime.store`` (a ``GovernedStore``).

    The node's state parameter is annotated ``MemoryState``: LangGraph takes it as the node's
    input schema and adds the memory keys to any graph the node joins, so the nodes work in
    a ``StateGraph(MessagesState)`` too (a model node there reads ``user_context`` and
    ``recalled`` once it declares ``MemoryState`` as its own input).
    """
    if store is None:

        def rnode(
            state: MemoryState, runtime: Runtime[Any], config: RunnableConfig
        ) -> dict[str, Any]:
            owner = resolve_owner(runtime.context, config)
            governed = governed_from_runtime(runtime.store)
            started = perf_counter()
            result: dict[str, Any] = governed.drive(_owned(body, owner, state, config))
            return measured(name, state, result, started)

        rnode.__name__ = rnode.__qualname__ = name
        return rnode
    if is_async_store(store):

        async def anode(
            state: MemoryState, runtime: Runtime[Any], config: RunnableConfig
        ) -> dict[str, Any]:
            owner = resolve_owner(runtime.context, config)
            started = perf_counter()
            result: dict[str, Any] = await drive_async(store, _owned(body, owner, state, config))
            return measured(name, state, result, started)

        anode.__name__ = anode.__qualname__ = name
        setattr(anode, STORE_ATTR, store)
        return anode

    def node(
        state: MemoryState, runtime: Runtime[Any], config: RunnableConfig
    ) -> dict[str, Any]:
        owner = resolve_owner(runtime.context, config)
        started = perf_counter()
        result: dict[str, Any] = drive_sync(store, _owned(body, owner, state, config))
        return measured(name, state, result, started)

    node.__name__ = node.__qualname__ = name
    setattr(node, STORE_ATTR, store)
    return node


# -- load_user_context ---------------------------------------------------------------------


def _load_body(owner: Owner, state: Mapping[str, Any], config: Any) -> Op[dict[str, Any]]:
    block = yield Call("context_block", (owner,))
    return {"user_context": block}


def create_load_user_context(store: AnyStore | None = None) -> Node:
    """Create the entry node: ``{"user_context": store.context_block(owner)}``.

    Args:
        store: a ``MemoryStore`` (sync node) or ``AsyncMemoryStore`` (async node);
            ``None`` uses the graph's ``runtime.store`` (a ``GovernedStore``).

    Returns:
        The node function, named ``load_user_context``.
    """
    return _make_node(store, "load_user_context", _load_body)


# -- recall -------------------------------------------------------------------------------


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return " ".join(parts)


def latest_human_text(messages: Sequence[AnyMessage]) -> str | None:
    """The text of the newest human message, or ``None``."""
    for message in reversed(messages):
        if message.type == "human":
            return _text(message)
    return None


def _recent_turns(messages: Sequence[AnyMessage]) -> list[tuple[str, str]]:
    """The human and AI turns recall's latest input draws on, oldest first: back from the
    newest message to :data:`RECENT_TURNS` non-blank turns up to the newest human one."""
    turns: list[tuple[str, str]] = []
    human = False
    for message in reversed(messages):
        if message.type not in ("human", "ai") or not (text := _text(message)).strip():
            continue
        human = human or message.type == "human"
        if human:
            turns.append((message.type, text))
            if len(turns) >= RECENT_TURNS:
                break
    return turns[::-1]


def _recall_args(state: Mapping[str, Any], budgets: Mapping[str, Any]) -> dict[str, Any]:
    """``snapshot`` keyword arguments: the query plan's texts from the state, and budgets."""
    task = state.get("task") or {}
    goal = state.get("goal") or {}
    return {
        "task_step": task.get("query") or task.get("next_step") or None,
        "latest_input": recent_text(_recent_turns(state.get("messages") or [])),
        "goal": goal.get("objective") or None,
        **budgets,
    }


def create_recall(
    store: AnyStore | None = None,
    *,
    limit: int | None = None,
    max_bytes: int | None = None,
    max_tokens: int | None = None,
) -> Node:
    """Create the per-step recall node: ``{"recalled": store.snapshot(owner, ...)}``.

    The query plan is the task step (``task.query``, else ``task.next_step``), the recent
    conversation (:func:`memory_graph.recall.plan.recent_text`: the newest human message, then
    the few turns before it in smaller shares) and the goal's objective; the store adds
    standing guidance. Run it before every model step, so a removal or an expiry takes effect
    at the next step.

    Args:
        store: a ``MemoryStore`` or ``AsyncMemoryStore``; ``None`` uses ``runtime.store``.
        limit: records at most (store default when ``None``).
        max_bytes: byte budget of the block (store default when ``None``).
        max_tokens: token budget of the block (store default when ``None``).

    Returns:
        The node function, named ``recall``.
    """
    budgets = {"limit": limit, "max_bytes": max_bytes, "max_tokens": max_tokens}

    def body(owner: Owner, state: Mapping[str, Any], config: Any) -> Op[dict[str, Any]]:
        block = yield Call("snapshot", (owner,), _recall_args(state, budgets))
        return {"recalled": block}

    return _make_node(store, "recall", body)


# -- extract_memories ---------------------------------------------------------------------


def new_human_messages(
    messages: Sequence[AnyMessage], last_message_id: str | None
) -> list[AnyMessage]:
    """Human messages after the message ``last_message_id`` (all of them if not found)."""
    start = 0
    if last_message_id is not None:
        for index, message in enumerate(messages):
            if message.id == last_message_id:
                start = index + 1
    return [m for m in messages[start:] if m.type == "human"]


def _extract(
    owner: Owner,
    state: Mapping[str, Any],
    config: Any,
    *,
    extractor: Any,
    redact_blocked: bool,
    listed: list[Proposal] | None = None,
) -> Op[dict[str, Any]]:
    """The extraction body (see :func:`create_extract_memories`).

    ``listed``: the thread's pending proposals when the caller read them already (the
    entry node reads them with the context); ``None`` reads them here.
    """
    from memory_graph.extraction import plan_writes

    messages: list[AnyMessage] = list(state.get("messages") or [])
    previous: Mapping[str, Any] = state.get("extraction") or {}
    humans = new_human_messages(messages, previous.get("last_message_id"))
    thread_id = config_thread_id(config)
    report: ExtractionReportJSON = {
        "last_message_id": messages[-1].id if messages else previous.get("last_message_id"),
        "messages": len(humans),
        "candidates": 0,
        "blocked": 0,
        "blocked_categories": {},
        "proposed": 0,
        "unchanged": 0,
        "dropped": 0,
        "unsupported": 0,
    }
    created: list[Proposal] = []
    if humans:
        extracted = yield Call(
            "extract_candidates",
            (humans,),
            {"extractor": extractor, "thread_id": thread_id},
            target="extract",
        )
        candidates = list(extracted.candidates)
        categories: Counter[str] = Counter(dict(extracted.blocked_categories))
        if redact_blocked:  # what the run's input masking blocked: the masks, by category
            categories.update(count_masks(humans))
        uncategorised = extracted.blocked_count - sum(categories.values())
        if uncategorised > 0:
            categories["other"] += uncategorised
        report["candidates"] = len(candidates)
        report["unsupported"] = extracted.dropped_unsupported_count
        report["dropped"] = (
            extracted.dropped_ungrounded_count
            + extracted.dropped_invalid_count
            + extracted.dropped_unsupported_count
        )
        if candidates:
            limits = yield Call("limits", target="attr")
            profile_fields = limits.profile_fields
            preferences = yield Call("get_preferences", (owner,))
            profile = yield Call("get_profile", (owner,))
            records = yield Call("list_records", (owner,))
            plan = plan_writes(
                candidates,
                preferences=[p for p in preferences if p.identity.level == "user"],
                profile=profile,
                records=records,
                profile_fields=profile_fields,
            )
            report["unchanged"] = len(plan.unchanged) + len(plan.reinforced)
            for again in plan.reinforced:
                # A repeat mention raises the stored record's confidence, once per
                # source message (so a node re-run cannot count it twice).
                event_id = again.evidence.get("source_event_id")
                if again.target_id is None or event_id is None:
                    continue
                try:
                    yield Call(
                        "reinforce",
                        (owner, again.target_id),
                        {"source_event_id": str(event_id)},
                    )
                except (NotFoundError, ValidationError):
                    pass  # removed or expired meanwhile: nothing to reinforce
            for write in plan.writes:
                try:
                    proposal = yield Call(
                        "propose",
                        (owner, write.operation, write.args),
                        {
                            "target_id": write.target_id,
                            "base_version": write.base_version,
                            "idempotency_key": write.idempotency_key,
                            "evidence": {**write.evidence, "thread_id": thread_id},
                            "thread_id": thread_id,
                            # new writes at the user level; replace/remove at the target's
                            **({} if write.target_id and write.operation in (
                                "replace", "remove") else {"level": "user"}),
                        },
                    )
                except IdempotencyConflictError:
                    report["dropped"] += 1
                except ValidationError:
                    # The store's guard or validation refused it: count it, keep nothing.
                    categories["refused"] += 1
                else:
                    if proposal.status == "pending":  # not one the owner rejected before
                        created.append(proposal)
        # content-free counts, for `memory-graph stats` (typed masks can only inflate them)
        categories = Counter({k: min(n, MAX_BLOCKED) for k, n in categories.items() if n > 0})
        if categories:
            yield Call("note_blocked", (owner, dict(categories)), {"thread_id": thread_id})
        report["blocked"] = sum(categories.values())
        report["blocked_categories"] = dict(sorted(categories.items()))
        report["proposed"] = len(created)
    pending: list[ProposalJSON] = [proposal_to_json(p) for p in created]
    if thread_id is not None:
        if listed is None:
            listed = yield Call("list_pending", (owner,), {"thread_id": thread_id})
        seen = {p["id"] for p in pending}
        pending += [proposal_to_json(p) for p in listed if p.id not in seen]
    if not humans:
        # Nothing was extracted: keep the turn's report (this is the post-tools collect).
        return {"pending_proposals": pending, "commit_results": []}
    out: dict[str, Any] = {
        "pending_proposals": pending, "commit_results": [], "extraction": report
    }
    if redact_blocked and (masked := redact_messages(humans)):
        out["messages"] = masked  # same ids: add_messages replaces them
    return out


def create_extract_memories(
    store: AnyStore | None = None, *, extractor: Any = None, redact_blocked: bool = False
) -> Node:
    """Create the extraction node: new human messages → guarded candidates → proposals.

    Runs ``memory_graph.extraction.extract_candidates`` over the human messages that arrived
    since the last extraction, plans writes against what is stored, and creates one
    proposal per planned write with the planned idempotency key, so a re-run creates
    nothing new. Then it collects every pending proposal of this thread (including those
    made by the memory tools) into ``pending_proposals`` for the review node. Blocked
    candidates are counted, never kept. Without new human messages it only collects, and
    leaves the previous ``extraction`` report in place.

    Args:
        store: a ``MemoryStore`` or ``AsyncMemoryStore``; ``None`` uses ``runtime.store``.
        extractor: a runnable from ``memory_graph.extraction.create_extractor``; ``None`` uses
            the offline pattern extractor.
        redact_blocked: mask what the guard blocks in the new human messages (off by
            default; see ``nodes._redact``). A graph compiled from ``MemoryGraphBuilder``
            that holds this node masks each run's input before it is saved, and the report
            counts those masks; in any other graph the node masks the state after
            extraction, and the run's input checkpoint keeps the text until pruned.

    Returns:
        The node function, named ``extract_memories``.
    """

    def body(owner: Owner, state: Mapping[str, Any], config: Any) -> Op[dict[str, Any]]:
        return (
            yield from _extract(
                owner, state, config, extractor=extractor, redact_blocked=redact_blocked
            )
        )

    node = _make_node(store, "extract_memories", body)
    if redact_blocked:
        setattr(node, REDACT_ATTR, True)
    return node


# -- the turn's entry (run by the prebuilt agent's model node) ------------------------------


def turn_entry(
    owner: Owner,
    state: Mapping[str, Any],
    config: Any,
    *,
    extractor: Any,
    redact_blocked: bool,
    budgets: Mapping[str, Any],
) -> Op[dict[str, Any]]:
    """The turn's entry: what the context, recall and extraction nodes do, in one body.

    The results land in the same state keys (``user_context``, ``recalled``,
    ``pending_proposals``, ``extraction``, masked ``messages``), but the context block, the
    recall snapshot and the thread's pending proposals are read in one statement (the
    store's ``_turn_entry``, ``storage/ops/entry.py``). Extraction's own reads and
    proposals follow only when it found candidates. The caller checks the thread's owner
    first.
    """
    recall = _recall_args(state, budgets)
    entry = yield Call(
        "_turn_entry", (owner,), {"thread_id": config_thread_id(config), "recall": recall}
    )
    recalled = entry.recalled
    out = yield from _extract(
        owner, state, config, extractor=extractor, redact_blocked=redact_blocked,
        listed=entry.pending,
    )
    return {"user_context": entry.context, "recalled": recalled, **out}
