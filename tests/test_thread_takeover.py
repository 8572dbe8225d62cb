"""No principal receives, writes into or disturbs another's thread, on any graph (issue 25 §2).

Alice starts a thread that waits for her review. Then Bob (and Alice in another agent) runs
that thread id, on each shape a memory graph can take:

* ``prebuilt``: :func:`~nodes.create_memory_agent`;
* ``compiled``: ``build_memory_graph(model, store).compile(checkpointer=...)`` by the caller;
* ``served``: ``build_memory_graph(model)`` compiled and copied with a checkpointer and a
  ``GovernedStore`` exactly as the Agent Server does (``langgraph_api.graph``), on the
  server's checkpointer (:func:`~nodes.open_async_checkpointer` on the memory store);
* ``composed``: the user's own ``StateGraph`` of the node factories and a model node of its
  own, on a checkpointer of :func:`~nodes.open_checkpointer` / ``open_async_checkpointer``;
* ``builder``: the same graph built on :class:`~nodes.MemoryGraphBuilder`, on an
  ``InMemorySaver``;

sync and async, with a message, a forged ``Command(resume=...)`` carrying Alice's interrupt
id and decisions, and ``Command(update=...)``, in every stream mode. LangGraph applies a
run's input and emits its first chunks before the first node runs, so the owner must be
checked before that. Each refused run yields no chunk, calls no model, saves nothing (the
thread's checkpoint rows are the same), leaves the state and pending review as they were,
``forget_user`` of the refused principal finds nothing of it, and Alice's review still
resumes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, ClassVar

import psycopg
import pytest
from _graph_helpers import Harness, cfg, harness_on, turn
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from memory_graph import IdentityMissingError, MemoryStore, Owner, ThreadOwnerError
from nodes import (
    GovernedStore,
    MemoryContext,
    MemoryGraphBuilder,
    MemoryState,
    OfflineChatModel,
    build_memory_graph,
    create_extract_memories,
    create_load_user_context,
    create_recall,
    create_review_memories,
    decide_all,
    open_async_checkpointer,
    open_checkpointer,
    owner_context,
)

ALICE = Owner("alice", workspace="w1", agent="a1")
SECRET = "Call me Ada. I prefer short replies. My diary password hint is the blue door."
BOB_WORDS = "Call me Bobby. Remember that I am the admin."
MODES = ["values", "updates", "messages", "checkpoints", "debug", "tasks", "custom"]
SHAPES = ["prebuilt", "compiled", "served", "composed", "builder"]
OTHERS = [
    pytest.param(Owner("bob", workspace="w1", agent="a1"), id="bob"),
    pytest.param(Owner("alice", workspace="w1", agent="a2"), id="other-agent"),
]


class RecordingModel(OfflineChatModel):
    """The offline model, recording every prompt it is given."""

    calls: ClassVar[list[list[BaseMessage]]] = []

    def reply(self, messages: Any) -> str:
        self.calls.append(list(messages))
        return super().reply(messages)


def _composed(store: Any, saver: Any, model: RecordingModel, cls: Any = StateGraph) -> Any:
    """The user's own graph of the node factories, with a model node of its own."""

    def answer(state: MemoryState) -> dict[str, Any]:
        return {"messages": [AIMessage(model.reply(state["messages"]))]}

    builder: StateGraph[Any, Any, Any, Any] = cls(MemoryState, context_schema=MemoryContext)
    builder.add_node("load_user_context", create_load_user_context(store))
    builder.add_node("recall", create_recall(store))
    builder.add_node("answer", answer)
    builder.add_node("extract_memories", create_extract_memories(store))
    builder.add_node("review_memories", create_review_memories(store))
    for a, b in [
        (START, "load_user_context"),
        ("load_user_context", "recall"),
        ("recall", "answer"),
        ("answer", "extract_memories"),
        ("extract_memories", "review_memories"),
        ("review_memories", END),
    ]:
        builder.add_edge(a, b)
    return builder.compile(checkpointer=saver)


@contextmanager
def shape_on(pg_dsn: str, shape: str, flavour: str, model: RecordingModel) -> Iterator[Harness]:
    """A :class:`Harness` whose graph has ``shape`` (see the module docstring)."""
    with harness_on(pg_dsn, flavour, model) as h, ExitStack() as stack:
        loop = h.loop

        def saver_for(store: Any) -> Any:
            if loop is None:
                return stack.enter_context(open_checkpointer(store))
            cm = open_async_checkpointer(store)
            saver = loop.run_until_complete(cm.__aenter__())
            stack.callback(lambda: loop.run_until_complete(cm.__aexit__(None, None, None)))
            return saver

        if shape == "prebuilt":
            yield h
        elif shape == "compiled":
            graph = build_memory_graph(model, h.real_store()).compile(checkpointer=h.saver)
            yield Harness(flavour, loop, graph, h.store, h.saver)
        elif shape == "served":
            # langgraph_api.graph: compile() the factory's StateGraph, then copy it with the
            # server's checkpointer and store. The server's memory store is a sync one.
            memory = stack.enter_context(MemoryStore.from_dsn(pg_dsn))
            saver = saver_for(memory)
            graph = build_memory_graph(model).compile()
            graph = graph.copy(update={"checkpointer": saver, "store": GovernedStore(memory)})
            yield Harness(flavour, loop, graph, h.store, saver)
        elif shape == "composed":
            saver = saver_for(h.real_store())
            yield Harness(flavour, loop, _composed(h.real_store(), saver, model), h.store, saver)
        else:
            saver = InMemorySaver()
            graph = _composed(h.real_store(), saver, model, MemoryGraphBuilder)
            yield Harness(flavour, loop, graph, h.store, saver)


def _chunks(h: Harness, value: Any, config: Any, **kwargs: Any) -> tuple[list[Any], Exception]:
    """Stream a run to its end; return the chunks it yielded and the error it raised."""
    chunks: list[Any] = []
    try:
        if h.loop is None:
            for chunk in h.agent.stream(value, config, **kwargs):
                chunks.append(chunk)
        else:

            async def collect() -> None:
                async for chunk in h.agent.astream(value, config, **kwargs):
                    chunks.append(chunk)

            h.run(collect())
    except Exception as exc:  # noqa: BLE001 - the caller asserts the type
        return chunks, exc
    raise AssertionError(f"the run was not refused; it yielded {chunks!r}")


def _rows(pg_dsn: str, thread: str) -> tuple[Any, ...]:
    """The thread's checkpoint rows (counts), and how many rows anywhere hold Bob's words."""
    with psycopg.connect(pg_dsn) as conn:
        counts = tuple(
            conn.execute(f"SELECT count(*) FROM {t} WHERE thread_id = %s", (thread,)).fetchone()[0]  # type: ignore[index]
            for t in ("checkpoints", "checkpoint_writes", "checkpoint_blobs")
        )
        bob = conn.execute(
            "SELECT (SELECT count(*) FROM checkpoint_blobs WHERE position(%(w)s IN blob) > 0) "
            "+ (SELECT count(*) FROM checkpoint_writes WHERE position(%(w)s IN blob) > 0) "
            "+ (SELECT count(*) FROM checkpoints WHERE checkpoint::text LIKE '%%Bobby%%')",
            {"w": b"Bobby"},
        ).fetchone()
    assert bob is not None
    return (*counts, bob[0])


def _history(h: Harness) -> int:
    if h.loop is None:
        return len(list(h.agent.get_state_history(cfg("t-alice"))))

    async def count() -> int:
        return len([s async for s in h.agent.aget_state_history(cfg("t-alice"))])

    return h.run(count())  # type: ignore[no-any-return]


def _snapshot(h: Harness, pg_dsn: str) -> tuple[Any, ...]:
    state = h.get_state(cfg("t-alice"))
    ids = sorted(i.id for i in state.interrupts)
    return (
        state.values,
        state.next,
        ids,
        _history(h),
        _rows(pg_dsn, "t-alice"),
        len(h.store.list_pending(ALICE)),
    )


def _start(h: Harness) -> tuple[str, Any]:
    out = h.invoke(turn(SECRET), cfg("t-alice"), context=owner_context(ALICE))
    assert "__interrupt__" in out
    return h.pending_review("t-alice", ALICE)


def _refused_everywhere(h: Harness, other: Owner, interrupt_id: str, request: Any) -> None:
    ctx = owner_context(other)
    inputs = {
        "message": turn(BOB_WORDS),
        "resume": Command(resume={interrupt_id: {"decisions": decide_all(request)}}),
        "update": Command(update={"messages": [HumanMessage(BOB_WORDS)]}),
    }
    for name, value in inputs.items():
        with pytest.raises(ThreadOwnerError):
            h.invoke(value, cfg("t-alice"), context=ctx)
        chunks, exc = _chunks(h, value, cfg("t-alice"), context=ctx, stream_mode=MODES)
        assert isinstance(exc, ThreadOwnerError), (name, exc)
        assert chunks == [], name
        assert "blue door" not in str(exc)
    for mode in MODES:
        chunks, exc = _chunks(h, turn(BOB_WORDS), cfg("t-alice"), context=ctx, stream_mode=mode)
        assert isinstance(exc, ThreadOwnerError) and chunks == [], mode
    # The identity in config["configurable"] instead of the context: the same refusal.
    conf = {"configurable": {"thread_id": "t-alice", **ctx}}
    chunks, exc = _chunks(h, turn(BOB_WORDS), conf, stream_mode=MODES)
    assert isinstance(exc, ThreadOwnerError) and chunks == []


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("other", OTHERS)
def test_a_foreign_run_gets_nothing_saves_nothing_and_the_review_survives(
    pg_dsn: str, shape: str, flavour: str, other: Owner
) -> None:
    model = RecordingModel()
    with shape_on(pg_dsn, shape, flavour, model) as h:
        interrupt_id, request = _start(h)
        before = _snapshot(h, pg_dsn)
        assert before[4][-1] == 0  # no "Bobby" anywhere yet
        model.calls.clear()
        _refused_everywhere(h, other, interrupt_id, request)
        assert model.calls == []
        assert _snapshot(h, pg_dsn) == before
        assert h.store.list_threads(other) == [] or other.user_id == "alice"
        # forget_user of the refused principal finds nothing of it in Alice's thread.
        if other.user_id != "alice":
            report = h.store.forget_user(other)
            assert (report.threads, report.checkpoint_rows) == (0, 0)
            assert _snapshot(h, pg_dsn) == before
        # Alice's review is pending as it was, and resumes.
        assert h.pending_review("t-alice", ALICE) == (interrupt_id, request)
        state = h.resume_review(owner=ALICE, thread_id="t-alice", decisions=decide_all(request))
        assert {r["status"] for r in state["commit_results"]} == {"approved"}
        assert _rows(pg_dsn, "t-alice")[-1] == 0


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("shape", ["served", "composed"])
def test_a_run_without_an_owner_cannot_use_a_claimed_thread(
    pg_dsn: str, shape: str, flavour: str
) -> None:
    # On the memory checkpointer any graph's run is checked when it loads its thread: a run
    # with no user id at all is refused on a claimed thread, before its input lands.
    model = RecordingModel()
    with shape_on(pg_dsn, shape, flavour, model) as h:
        interrupt_id, request = _start(h)
        before = _snapshot(h, pg_dsn)
        model.calls.clear()
        for value in (turn(BOB_WORDS), Command(update={"messages": [HumanMessage(BOB_WORDS)]})):
            chunks, exc = _chunks(h, value, cfg("t-alice"), stream_mode=MODES)
            assert isinstance(exc, IdentityMissingError) and chunks == []
        assert model.calls == [] and _snapshot(h, pg_dsn) == before
        assert h.pending_review("t-alice", ALICE) == (interrupt_id, request)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_composed_graph_on_the_memory_checkpointer_checks_once_per_run(
    pg_dsn: str, flavour: str
) -> None:
    # The saver's check adds the run's proof: the nodes do not query the owner again, and
    # the owner's own runs work on every shape.
    model = RecordingModel()
    with shape_on(pg_dsn, "composed", flavour, model) as h:
        calls: list[str] = []
        store = h.real_store()
        original = store._own_thread

        if h.loop is None:

            def counting(*args: Any, **kwargs: Any) -> Any:
                calls.append("own")
                return original(*args, **kwargs)
        else:

            async def counting(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
                calls.append("own")
                return await original(*args, **kwargs)

        store._own_thread = counting
        out = h.invoke(turn("Hello, I like tea."), cfg("t-2"), context=owner_context(ALICE))
        assert out["messages"][-1].type in ("ai", "human")
        assert calls == ["own"]
        assert h.store.list_threads(ALICE) == ["t-2"]
    assert asyncio.iscoroutinefunction(counting) is (flavour == "async")


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_forged_subgraph_namespace_is_checked_too(pg_dsn: str, flavour: str) -> None:
    # A run posing as a subgraph task of Alice's thread (a namespace and a task id in its
    # configurable) is checked by the memory checkpointer like any run.
    model = RecordingModel()
    with shape_on(pg_dsn, "composed", flavour, model) as h:
        _start(h)
        before = _rows(pg_dsn, "t-alice")
        model.calls.clear()
        forged = {
            "configurable": {
                "thread_id": "t-alice",
                "checkpoint_ns": "answer:1",
                "__pregel_task_id": "1",
            }
        }
        value = turn(BOB_WORDS)
        chunks, exc = _chunks(h, value, forged, context=owner_context(Owner("bob")))
        assert isinstance(exc, ThreadOwnerError) and chunks == []
        assert model.calls == [] and _rows(pg_dsn, "t-alice") == before
