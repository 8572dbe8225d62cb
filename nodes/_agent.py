"""The prebuilt memory agent and the Postgres checkpointer helpers.

``build_memory_graph`` returns the uncompiled ``StateGraph`` (for ``langgraph dev`` and for
adding nodes); ``create_memory_agent`` compiles it. The graph runs::

    START -> agent -+-> review_memories -> END          (proposals pending)
              ^     +-> END                             (nothing to review)
              |     +-> collect_proposals -> review_memories | END
              |     |                                   (after a turn that ran tools)
           recall <- tools

The model node (``agent``) runs the turn's **entry** before its first model call of a turn
(:func:`._nodes.turn_entry`: the user context, the first recall and extraction, with the
context block, the recall snapshot and the thread's pending proposals read in one statement),
so a turn without tools and without proposals is one superstep (one checkpoint, one task
write), exactly as many as a bare model graph. Extraction reads only the human messages of
the turn, which are all there before the model answers; its proposals are created before
the model runs and reviewed after it. After tools, ``recall`` runs before the next model
step, so a removal or an expiry made by a tool or another session takes effect at the next
step; a turn whose model ran tools gets one ``collect_proposals`` step (the extraction node,
which finds no new human message and only gathers the thread's pending proposals, e.g. the
tools' own), so the review batch is in the checkpointed state before the interrupt.

Durability: LangGraph 1.2 takes ``durability`` at invoke time, not in ``compile()``. The
compiled agent passes ``durability="sync"`` to ``stream``/``astream`` (LangGraph's public
argument, which ``invoke`` goes through) when the caller gives none, so every turn's
checkpoint is written before the turn returns; an explicit ``durability=`` still overrides
it. It also binds strict resume, so a resume naming an interrupt id that is not pending
raises ``UnknownInterruptError`` instead of answering another one: LangGraph has no public
argument for that, so it is the one private configurable key the agent sets
(``__pregel_strict_resume``, in :data:`AGENT_CONFIG`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from time import perf_counter
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import TAG_NOSTREAM
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolInvocationError
from langgraph.runtime import Runtime
from langgraph.types import Durability

from memory_graph import ApprovalPolicy

from ._basestore import GovernedStore, governed_from_runtime
from ._context import MemoryContext, resolve_owner
from ._core import AnyStore, ConfigurationError, MemoryGraphError, Owner
from ._drive import Op, drive_async, drive_sync, is_async_store
from ._evidence import (
    EvidencePolicy,
    create_evidence_tool_node,
    create_read_evidence_tool,
    evidence_manifest,
)
from ._metrics import ends_turn, measured
from ._nodes import create_extract_memories, create_recall, turn_entry
from ._owner import check_thread_owner, saver_check
from ._prompt import DEFAULT_INSTRUCTIONS, build_system_prompt
from ._redact import REDACT_ATTR, redacts_input
from ._review import create_review_memories
from ._runs import CheckedRuns
from ._state import MemoryState
from ._tools import create_memory_tools

__all__ = [
    "AGENT_CONFIG",
    "MemoryGraphBuilder",
    "build_memory_graph",
    "create_memory_agent",
    "open_async_checkpointer",
    "open_checkpointer",
    "resolve_extractor",
]

AGENT_CONFIG: dict[str, Any] = {"configurable": {"__pregel_strict_resume": True}}
"""Config bound into the compiled agent: strict resume (LangGraph has no public argument)."""


def _structured_output(model: Any) -> bool:
    """Whether ``model`` is a chat model that supports structured output (tool calling).

    ``BaseChatModel.with_structured_output`` goes through ``bind_tools``, which the base
    class does not implement: a model class that overrides either supports it. A model
    that sets ``extracts_with_patterns`` (the offline model, the scripted test model) asks
    for the offline extractor instead.
    """
    if not isinstance(model, BaseChatModel) or getattr(model, "extracts_with_patterns", False):
        return False
    cls = type(model)
    return (
        cls.with_structured_output is not BaseChatModel.with_structured_output
        or cls.bind_tools is not BaseChatModel.bind_tools
    )


def resolve_extractor(model: Any, extractor: Any = None) -> Any:
    """The extractor a graph on ``model`` uses; ``None`` stands for the offline patterns.

    - ``extractor`` given: it is used; ``create_pattern_extractor()`` is the explicit
      choice of the offline extractor.
    - otherwise a chat model that supports structured output extracts with itself
      (``create_extractor(model, method=structured_method_from_env())``);
    - otherwise (the offline model, a model without tool calling) the offline patterns.

    A model extractor runs tagged ``nostream`` (LangGraph's ``TAG_NOSTREAM``), so its
    structured output never reaches a ``stream_mode="messages"`` client.

    >>> from nodes import OfflineChatModel
    >>> resolve_extractor(OfflineChatModel()) is None
    True
    """
    from memory_graph.extraction import create_extractor, extract_patterns

    if extractor is None:
        if not _structured_output(model):
            return None
        from ._models import structured_method_from_env

        method: Any = structured_method_from_env()
        extractor = create_extractor(model, method=method)
    if getattr(extractor, "func", None) is extract_patterns:
        return None  # the offline extractor: called directly, without a child run
    if isinstance(extractor, Runnable):
        return extractor.with_config(tags=[TAG_NOSTREAM])
    return extractor


def _ran_tools(messages: Sequence[AnyMessage]) -> bool:
    """Whether a tool ran since the newest human message (this turn)."""
    for message in reversed(messages):
        if message.type == "human":
            return False
        if message.type == "tool":
            return True
    return False


def _tool_error(exc: Exception) -> str:
    """Tool errors the model can act on become tool messages; anything else is raised.

    A memory refusal (e.g. the guard blocking a ``GovernedStore.put`` from LangMem's tool)
    is reported to the model like a bad argument, instead of failing the whole turn.
    """
    if isinstance(exc, ToolInvocationError):
        return exc.message
    if isinstance(exc, MemoryGraphError):
        return f"Error: {type(exc).__name__}: {exc}"
    raise exc


def _route_after_model(state: Mapping[str, Any]) -> str:
    messages: Sequence[AnyMessage] = state.get("messages") or []
    last = messages[-1] if messages else None
    if last is not None and getattr(last, "tool_calls", None):
        return "tools"
    if _ran_tools(messages):
        return "collect_proposals"
    return _route_to_review(state)


def _route_to_review(state: Mapping[str, Any]) -> str:
    return "review_memories" if state.get("pending_proposals") else END


MessageWindow = Callable[[list[AnyMessage]], list[AnyMessage]]


Entry = Callable[[Owner, Mapping[str, Any], Any], Op[dict[str, Any]]]
"""The turn's entry body (``_nodes.turn_entry`` with the graph's options bound)."""


def _model_step(
    owner: Owner, state: Mapping[str, Any], config: Any, entry: Entry
) -> Op[dict[str, Any]]:
    """The model node's store work: the owner check, then the entry on a turn's first step.

    A turn's first model step is the one with no tool result since the newest human
    message; the later steps follow ``tools -> recall``, which recalled already.
    """
    yield from check_thread_owner(owner, config)
    if _ran_tools(state.get("messages") or []):
        return {}
    started = perf_counter()
    result = yield from entry(owner, state, config)
    return measured("load_memory", state, result, started)


def _seen_by_model(state: Mapping[str, Any], updates: Mapping[str, Any]) -> dict[str, Any]:
    """The state the model step sees: ``state`` with the entry's ``updates`` applied."""
    view = {**state, **updates}
    if "messages" in updates:  # masked human messages replace theirs (same ids)
        view["messages"] = add_messages(
            list(state.get("messages") or []), list(updates["messages"])
        )
    return view


def _create_model_node(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    store: AnyStore | None,
    entry: Entry,
    *,
    instructions: str | None,
    evidence: EvidencePolicy | None = None,
    message_window: MessageWindow | None = None,
) -> Any:
    """The model node: the turn's entry (first step only), then one model call.

    The entry (context, first recall, extraction) runs in this node instead of a superstep
    of its own, so a plain turn checkpoints as often as a bare model graph; its results are
    in the node's update and in the prompt of this very step.
    """
    bound: Any = model.bind_tools(list(tools)) if tools else model

    def prompt(state: Mapping[str, Any]) -> list[Any]:
        visible = list(state.get("messages") or [])
        if message_window is not None:
            visible = list(message_window(visible))
        system = build_system_prompt(state, instructions=instructions)
        if evidence is not None:
            manifest = evidence_manifest(state, visible, evidence)
            system = f"{system}\n\n{manifest}" if manifest else system
        return [SystemMessage(system), *visible]

    def answered(updates: dict[str, Any], message: Any) -> dict[str, Any]:
        return {**updates, "messages": [*updates.get("messages", ()), message]}

    # The model node checks the thread's owner first: whatever the graph's shape, the model
    # never sees a thread's messages on behalf of another principal.
    if is_async_store(store):

        async def aagent(
            state: MemoryState, runtime: Runtime[Any], config: RunnableConfig
        ) -> dict[str, Any]:
            owner = resolve_owner(runtime.context, config)
            updates = await drive_async(store, _model_step(owner, state, config, entry))
            view = _seen_by_model(state, updates)
            return answered(updates, await bound.ainvoke(prompt(view)))

        aagent.__name__ = "agent"
        return aagent

    def agent(state: MemoryState, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
        owner = resolve_owner(runtime.context, config)
        step = _model_step(owner, state, config, entry)
        if store is None:  # the graph's runtime.store (a GovernedStore)
            updates = governed_from_runtime(runtime.store).drive(step)
        else:
            updates = drive_sync(store, step)
        return answered(updates, bound.invoke(prompt(_seen_by_model(state, updates))))

    return agent


def build_memory_graph(
    model: BaseChatModel,
    store: AnyStore | GovernedStore | None = None,
    *,
    extractor: Any = None,
    policy: ApprovalPolicy | None = None,
    tools: Sequence[BaseTool] = (),
    memory_tools: bool = True,
    instructions: str | None = DEFAULT_INSTRUCTIONS,
    recall_limit: int | None = None,
    recall_max_bytes: int | None = None,
    recall_max_tokens: int | None = None,
    evidence: EvidencePolicy | None = None,
    message_window: MessageWindow | None = None,
    redact_blocked: bool = False,
) -> StateGraph[MemoryState, MemoryContext, MemoryState, MemoryState]:
    """Build the uncompiled memory agent graph.

    Args:
        model: any LangChain chat model that supports ``bind_tools``.
        store: a ``MemoryStore`` (sync nodes) or ``AsyncMemoryStore`` (async nodes);
            ``None``: the nodes and tools use the graph's ``runtime.store``, so compile with
            ``store=GovernedStore(memory_store)`` (or let a LangGraph server supply it).
        extractor: the extraction runnable: ``None`` (default) extracts with ``model``
            itself when it supports structured output (see :func:`resolve_extractor`),
            else with the offline patterns; ``create_pattern_extractor()`` chooses the
            offline extractor explicitly; any other runnable
            (``memory_graph.extraction.create_extractor(...)``) is used as it is.
        policy: an ``ApprovalPolicy``; ``None`` means every write waits for a human.
        tools: extra tools for the model, besides the memory tools.
        memory_tools: include the five memory tools.
        instructions: the leading system instructions (``None`` for none).
        recall_limit: recall record limit (store default when ``None``).
        recall_max_bytes: recall byte budget (store default when ``None``).
        recall_max_tokens: recall token budget (store default when ``None``).
        evidence: an ``EvidencePolicy``: index the results of its tools, list trimmed ones
            in a ``<tool_evidence>`` manifest and give the model ``read_evidence``.
        message_window: maps the state's messages to the ones the model sees (e.g. a
            ``trim_messages`` partial); ``None`` shows them all.
        redact_blocked: mask what the guard blocks in the human messages before they are
            first saved: the compiled graph masks each run's input (``nodes._redact``), so
            no checkpoint holds the text and the model never sees it (off by default).

    Returns:
        The ``StateGraph`` (a :class:`MemoryGraphBuilder`); compile it with a checkpointer
        (``interrupt`` needs one). Its ``compile()`` gives a :class:`MemoryAgentGraph`, which
        checks the thread's owner before a run starts, whoever compiles it (the Agent
        Server does).
    """
    if isinstance(store, GovernedStore):
        store = None  # the nodes read runtime.store: compile(store=governed)
    extractor = resolve_extractor(model, extractor)
    if store is None and evidence is not None:
        raise ConfigurationError(
            "tool evidence needs the memory store at build time: pass a MemoryStore or "
            "AsyncMemoryStore as store= (not a GovernedStore or None) when evidence= is set"
        )
    ev_store: Any = store  # not None whenever evidence is set (checked above)
    all_tools = [*(create_memory_tools(store) if memory_tools else []), *tools]
    if evidence is not None:
        all_tools.append(create_read_evidence_tool(ev_store, evidence, tools=tools))
    builder: StateGraph[MemoryState, MemoryContext, MemoryState, MemoryState] = (
        MemoryGraphBuilder(MemoryState, context_schema=MemoryContext)
    )
    budgets = {
        "limit": recall_limit,
        "max_bytes": recall_max_bytes,
        "max_tokens": recall_max_tokens,
    }
    entry = functools.partial(
        turn_entry, extractor=extractor, redact_blocked=redact_blocked, budgets=budgets
    )
    builder.add_node("recall", create_recall(store, **budgets))
    model_node = _create_model_node(
        model,
        all_tools,
        store,
        entry,
        instructions=instructions,
        evidence=evidence,
        message_window=message_window,
    )
    if redact_blocked:  # the compiled graph masks its runs' input (MemoryAgentGraph)
        setattr(model_node, REDACT_ATTR, True)
    builder.add_node("agent", model_node)
    builder.add_node("review_memories", create_review_memories(store, policy=policy))
    # The turn's entry (context, first recall, extraction) runs in the model node: a plain
    # turn is one superstep, like a bare model graph.
    builder.add_edge(START, "agent")
    builder.add_edge("recall", "agent")
    if all_tools:
        if evidence is not None:
            builder.add_node("tools", create_evidence_tool_node(all_tools, ev_store, evidence))
        else:
            builder.add_node("tools", ToolNode(all_tools, handle_tool_errors=_tool_error))
        builder.add_node("collect_proposals", create_extract_memories(store, extractor=extractor))
        builder.add_conditional_edges(
            "agent",
            ends_turn(_route_after_model),
            ["tools", "collect_proposals", "review_memories", END],
        )
        builder.add_edge("tools", "recall")
        builder.add_conditional_edges(
            "collect_proposals", ends_turn(_route_to_review), ["review_memories", END]
        )
    else:
        # A turn that leaves nothing to review skips the review superstep.
        builder.add_conditional_edges(
            "agent", ends_turn(_route_to_review), ["review_memories", END]
        )
    builder.add_edge("review_memories", END)
    return builder


class MemoryGraphBuilder(StateGraph[MemoryState, MemoryContext, MemoryState, MemoryState]):
    """A ``StateGraph`` whose ``compile()`` gives a :class:`MemoryAgentGraph`.

    ``build_memory_graph`` returns one. Build your own graph of the node factories on it
    (``MemoryGraphBuilder(MemoryState, context_schema=MemoryContext)`` in place of
    ``StateGraph(...)``) and its runs check the thread's owner before LangGraph loads the
    thread, on any checkpointer (an ``InMemorySaver`` too). The check needs a node made by
    this package (it finds the memory store there) or a ``GovernedStore`` compiled in.
    """

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        """``StateGraph.compile``, as the owner-checking :class:`MemoryAgentGraph`."""
        graph = super().compile(*args, **kwargs)
        graph.__class__ = MemoryAgentGraph  # same fields; adds the owner check before a run
        return graph


class MemoryAgentGraph(
    CheckedRuns, CompiledStateGraph[MemoryState, MemoryContext, MemoryState, MemoryState]
):
    """The compiled memory agent: checks the thread's owner before a run writes anything.

    ``invoke``/``stream`` (and their async twins, which run through them, as do
    ``astream_events`` and the Agent Server) check the owner of
    ``config["configurable"]["thread_id"]`` before LangGraph loads the thread, applies the
    run's input or emits a chunk: another principal gets ``ThreadOwnerError``, whatever the
    input (a message, ``Command(resume=...)``, ``Command(update=...)``) or stream mode, and
    the thread and its pending review are unchanged. ``copy``/``with_config`` keep the class.
    A graph holding a node made with ``redact_blocked=True`` masks the human messages of the
    run's input (and of ``update_state`` values) before LangGraph saves them
    (:func:`~nodes._redact.redact_input`).
    """

    default_durability: Durability | None = None
    """The ``durability`` a run gets when its caller passes none (LangGraph's default: none)."""

    def _masks_input(self) -> bool:
        return redacts_input(self)

    def _run_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        if kwargs.get("durability") is None and self.default_durability is not None:
            kwargs["durability"] = self.default_durability
        return kwargs


class _PrebuiltAgentGraph(MemoryAgentGraph):
    """What :func:`create_memory_agent` returns: sync durability unless a run says otherwise."""

    default_durability: Durability | None = "sync"


def create_memory_agent(
    model: BaseChatModel,
    store: AnyStore | GovernedStore | None = None,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    extractor: Any = None,
    policy: ApprovalPolicy | None = None,
    tools: Sequence[BaseTool] = (),
    memory_tools: bool = True,
    instructions: str | None = DEFAULT_INSTRUCTIONS,
    recall_limit: int | None = None,
    recall_max_bytes: int | None = None,
    recall_max_tokens: int | None = None,
    evidence: EvidencePolicy | None = None,
    message_window: MessageWindow | None = None,
    redact_blocked: bool = False,
    name: str = "memory_agent",
) -> CompiledStateGraph[MemoryState, MemoryContext, MemoryState, MemoryState]:
    """Build and compile the memory agent with sync durability and strict resume.

    Invoke it with ``context={"user_id": ...}`` and a ``thread_id``; pass the same context
    again when resuming the review interrupt (LangGraph does not checkpoint it).

    Args:
        model: any LangChain chat model that supports ``bind_tools``.
        store: a ``MemoryStore`` or ``AsyncMemoryStore`` (bound to the nodes), or a
            ``GovernedStore``: then the graph is compiled with it as its LangGraph store
            and the nodes use ``runtime.store``. ``None``: the nodes use the store the
            graph runs with (a parent graph's or a LangGraph server's).
        checkpointer: e.g. from :func:`open_checkpointer` on the store's database, or an
            ``InMemorySaver`` for throwaway use. Without one the review interrupt cannot
            pause.
        extractor: see :func:`build_memory_graph`.
        policy: see :func:`build_memory_graph`.
        tools: see :func:`build_memory_graph`.
        memory_tools: see :func:`build_memory_graph`.
        instructions: see :func:`build_memory_graph`.
        recall_limit: see :func:`build_memory_graph`.
        recall_max_bytes: see :func:`build_memory_graph`.
        recall_max_tokens: see :func:`build_memory_graph`.
        evidence: see :func:`build_memory_graph`.
        message_window: see :func:`build_memory_graph`.
        redact_blocked: see :func:`build_memory_graph`.
        name: the compiled graph's name.

    Returns:
        The compiled graph.
    """
    governed = store if isinstance(store, GovernedStore) else None
    builder = build_memory_graph(
        model,
        store,
        extractor=extractor,
        policy=policy,
        tools=tools,
        memory_tools=memory_tools,
        instructions=instructions,
        recall_limit=recall_limit,
        recall_max_bytes=recall_max_bytes,
        recall_max_tokens=recall_max_tokens,
        evidence=evidence,
        message_window=message_window,
        redact_blocked=redact_blocked,
    )
    graph = builder.compile(checkpointer=checkpointer, store=governed, name=name)
    graph.__class__ = _PrebuiltAgentGraph  # the owner check, and sync durability by default
    return graph.with_config(AGENT_CONFIG)  # type: ignore[no-any-return, arg-type]


@contextmanager
def open_checkpointer(
    store: AnyStore, *, setup: bool = True, encryption_key: str | bytes | None = None
) -> Iterator[Any]:
    """Open a ``PostgresSaver`` on the store's database (``store.dsn``), on a connection pool.

    The pool is sized and configured like the store's (``max_size``, ``connect_timeout``,
    ``pool_timeout``) and checks connections on checkout, so concurrent threads do not
    serialise on one connection and the saver recovers by itself after a server restart;
    while the server is down, calls raise ``StorageUnavailableError``.

    Args:
        store: an open ``MemoryStore``; its resolved DSN and pool options are used.
        setup: run the checkpointer's idempotent ``setup()`` (creates its tables).
        encryption_key: AES key for checkpoints at rest (base64/hex of 16, 24 or 32 bytes),
            else ``$MEMORY_GRAPH_CHECKPOINT_KEY``; none: plain checkpoints (see ``_encryption``).

    The saver checks the thread's owner when a run starts (before LangGraph applies the
    run's input or emits a chunk), whatever graph it is compiled into: a run of another
    principal raises ``ThreadOwnerError`` and leaves the thread as it was (``nodes._owner``).

    Yields:
        The ``PostgresSaver``.
    """
    from memory_graph.storage.checkpoint import open_saver

    from ._encryption import seal_checkpointer

    check, _ = saver_check(store)
    with open_saver(store.dsn, store._pool_options, setup=setup, check=check) as saver:
        yield seal_checkpointer(saver, encryption_key)


@asynccontextmanager
async def open_async_checkpointer(
    store: AnyStore, *, setup: bool = True, encryption_key: str | bytes | None = None
) -> AsyncIterator[Any]:
    """Open an ``AsyncPostgresSaver`` on the store's database, on an async connection pool.

    Args:
        store: an open ``AsyncMemoryStore`` (or ``MemoryStore``); its DSN and pool options
            are used (see :func:`open_checkpointer`).
        setup: run the checkpointer's idempotent ``setup()``.
        encryption_key: as for :func:`open_checkpointer`.

    Like :func:`open_checkpointer`'s, the saver checks the thread's owner when a run starts.

    Yields:
        The ``AsyncPostgresSaver``.
    """
    from memory_graph.storage.checkpoint import open_async_saver

    from ._encryption import seal_checkpointer

    _, acheck = saver_check(store)
    async with open_async_saver(
        store.dsn, store._pool_options, setup=setup, acheck=acheck
    ) as saver:
        yield seal_checkpointer(saver, encryption_key)
