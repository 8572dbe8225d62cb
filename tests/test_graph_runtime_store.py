"""The LangGraph way: ``compile(checkpointer=..., store=GovernedStore(...))``.

Node factories and the prebuilt agent built without a store use ``runtime.store``; LangMem's
memory tools written against ``BaseStore`` propose through it, and their writes surface in
the review interrupt.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _graph_helpers import ALICE, CTX, TURN_1, cfg, turn
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from memory_graph import AsyncMemoryStore, ConfigurationError, MemoryStore, Owner
from memory_graph.testing import FakeToolCallingChatModel, tool_call_message
from nodes import (
    GovernedStore,
    OfflineChatModel,
    build_memory_graph,
    create_memory_agent,
    decide_all,
    open_checkpointer,
    pending_review,
    resume_review,
)


def _approve_all(agent: Any, thread: str, owner: Owner = ALICE) -> dict[str, Any]:
    _, request = pending_review(agent, thread, owner=owner)
    return resume_review(agent, owner=owner, thread_id=thread, decisions=decide_all(request))


def test_prebuilt_agent_on_a_governed_store_compiles_with_it(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as memory, open_checkpointer(memory) as saver:
        memory.setup()
        governed = GovernedStore(memory)
        agent = create_memory_agent(OfflineChatModel(), governed, checkpointer=saver)
        assert agent.store is governed
        agent.invoke(turn(TURN_1), cfg("t1"), context=CTX)
        out = _approve_all(agent, "t1")
        assert {r["status"] for r in out["commit_results"]} == {"approved"}
        second = agent.invoke(turn("hello again"), cfg("t2"), context=CTX)
        assert "Ada" in second["user_context"]
        assert "Ada" in second["messages"][-1].content


def test_uncompiled_graph_compiled_the_langgraph_way_async(pg_dsn: str) -> None:
    async def main() -> tuple[str, str]:
        memory = await AsyncMemoryStore.open(pg_dsn)
        try:
            await memory.setup()
            governed = GovernedStore(memory)  # built inside the loop it runs on
            graph = build_memory_graph(OfflineChatModel()).compile(
                checkpointer=InMemorySaver(), store=governed
            )
            await graph.ainvoke(turn(TURN_1), cfg("a1"), context=CTX)
            state = await graph.aget_state(cfg("a1"))
            (pending,) = state.interrupts
            decisions = decide_all(pending.value)
            await graph.ainvoke(
                Command(resume={pending.id: {"decisions": decisions}}), cfg("a1"), context=CTX
            )
            out = await graph.ainvoke(turn("hi"), cfg("a2"), context=CTX)
            profile = await memory.get_profile(ALICE)
            return str(out["user_context"]), str(profile.fields.get("call_them"))
        finally:
            await memory.close()

    context, call_them = asyncio.run(main())
    assert call_them == "Ada"
    assert "Ada" in context


def test_storeless_nodes_refuse_a_plain_store(pg_dsn: str) -> None:
    graph = build_memory_graph(OfflineChatModel()).compile(
        checkpointer=InMemorySaver(), store=InMemoryStore()
    )
    with pytest.raises(ConfigurationError, match="GovernedStore"):
        graph.invoke(turn("hi"), cfg("x"), context=CTX)


def test_sync_use_of_an_async_governed_store_is_refused(pg_dsn: str) -> None:
    async def open_it() -> AsyncMemoryStore:
        return await AsyncMemoryStore.open(pg_dsn)

    loop = asyncio.new_event_loop()
    memory = loop.run_until_complete(open_it())
    try:
        governed = GovernedStore(memory)
        with pytest.raises(ConfigurationError, match="async"):
            governed.get(("memories", "alice"), "k")
    finally:
        loop.run_until_complete(memory.close())
        loop.close()


def test_a_run_cannot_read_or_write_another_users_namespace(pg_dsn: str) -> None:
    from langgraph.graph import START, StateGraph
    from typing_extensions import TypedDict

    class S(TypedDict, total=False):
        out: str

    seen: list[str] = []

    def peek(state: S, runtime: Any) -> S:
        store = runtime.store
        for action in (
            lambda: store.get(("memories", "bob"), "k"),
            lambda: store.put(("memories", "bob"), "k", {"content": "Bob owes Alice"}),
            lambda: store.search(("memories", "bob"), query="owes"),
            lambda: store.get(("memories", "alice", "agent", "other"), "k"),
        ):
            try:
                action()
            except Exception as exc:  # the test records which error each one raised
                seen.append(type(exc).__name__)
        store.put(("memories", "alice"), "k", {"content": "Alice likes tea"})
        return {"out": "ok"}

    with MemoryStore.from_dsn(pg_dsn) as memory:
        memory.setup()
        builder: StateGraph[Any, Any, Any, Any] = StateGraph(S)
        builder.add_node("peek", peek)
        builder.add_edge(START, "peek")
        graph = builder.compile(store=GovernedStore(memory))
        graph.invoke({}, {"configurable": {"thread_id": "p", "user_id": "alice"}})
        assert seen == ["ScopeError"] * 4
        assert memory.list_pending(Owner("bob")) == []
        (mine,) = memory.list_pending(ALICE)
        assert mine.thread_id == "p" and mine.operation == "add"


def test_langmem_tools_propose_through_the_review_interrupt(pg_dsn: str) -> None:
    import langmem

    namespace = ("memories", "{user_id}")
    manage = langmem.create_manage_memory_tool(namespace=namespace)
    search = langmem.create_search_memory_tool(namespace=namespace)
    model = FakeToolCallingChatModel.from_tool_calls(
        [
            tool_call_message("manage_memory", {"content": "Alice dislikes dull code reviews"}),
            "Noted.",
            tool_call_message("search_memory", {"query": "code reviews"}),
            "Found it.",
        ]
    )
    config = {"configurable": {"thread_id": "lm1", "user_id": "alice"}}
    with MemoryStore.from_dsn(pg_dsn) as memory, open_checkpointer(memory) as saver:
        memory.setup()
        agent = create_memory_agent(
            model, GovernedStore(memory), checkpointer=saver, tools=[manage, search]
        )
        agent.invoke(turn("Remember that I dislike dull code reviews."), config, context=CTX)
        _, request = pending_review(agent, "lm1", owner=ALICE)
        # The LangMem write (keyed by its memory id), next to what extraction proposed.
        (action,) = [a for a in request["action_requests"] if a["args"].get("key")]
        assert action["operation"] == "add"
        assert action["args"]["content"] == "Alice dislikes dull code reviews"
        assert memory.list_records(ALICE) == []  # nothing written before the decision
        resume_review(agent, owner=ALICE, thread_id="lm1", decisions=decide_all(request))
        (record,) = [r for r in memory.list_records(ALICE) if r.key == action["args"]["key"]]
        assert record.key is not None  # LangMem's memory id is the item key
        config2 = {"configurable": {"thread_id": "lm2", "user_id": "alice"}}
        out = agent.invoke(turn("What do you know about my reviews?"), config2, context=CTX)
        tool_outputs = [m.content for m in out["messages"] if m.type == "tool"]
        assert any(record.key in str(t) and "dull code reviews" in str(t) for t in tool_outputs)
        assert isinstance(out["messages"][-1], AIMessage)


def test_a_guard_refusal_in_a_langmem_tool_is_told_to_the_model(pg_dsn: str) -> None:
    import langmem

    manage = langmem.create_manage_memory_tool(namespace=("memories", "{user_id}"))
    model = FakeToolCallingChatModel.from_tool_calls(
        [
            tool_call_message("manage_memory", {"content": "Card 4111 1111 1111 1111"}),
            "I could not save that.",
        ]
    )
    config = {"configurable": {"thread_id": "g1", "user_id": "alice"}}
    with MemoryStore.from_dsn(pg_dsn) as memory, open_checkpointer(memory) as saver:
        memory.setup()
        agent = create_memory_agent(
            model, GovernedStore(memory), checkpointer=saver, tools=[manage], memory_tools=False
        )
        out = agent.invoke(turn("hello"), config, context=CTX)
        (tool_message,) = [m for m in out["messages"] if m.type == "tool"]
        assert "ValidationError" in str(tool_message.content)
        assert "4111" not in str(tool_message.content)
        assert out["messages"][-1].content == "I could not save that."
        assert memory.list_pending(ALICE) == [] and memory.list_records(ALICE) == []
