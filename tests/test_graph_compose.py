"""The node factories composed into a user's own graph, on the sync and async stacks.

A custom ``StateGraph`` (``load_user_context -> recall -> answer -> extract_memories ->
review_memories``) with a plain model node of its own: the factories return async nodes
for an ``AsyncMemoryStore`` and the graph runs with ``ainvoke`` on ``AsyncPostgresSaver``.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from _graph_helpers import ALICE, CTX, FLAVOURS, TURN_1, Harness, cfg, harness_on, turn
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from memory_graph import MemoryStore, ValidationError
from memory_graph.testing import FakeToolCallingChatModel, tool_call_message
from nodes import (
    GovernedStore,
    MemoryContext,
    MemoryState,
    build_system_prompt,
    create_extract_memories,
    create_load_user_context,
    create_recall,
    create_review_memories,
    decide_all,
)


def _composed(h: Harness, prompts: list[str]) -> Harness:
    store = h.real_store()

    def answer(state: MemoryState) -> dict[str, Any]:
        prompts.append(build_system_prompt(state, instructions=None))
        return {"messages": [AIMessage("noted")]}

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(MemoryState, context_schema=MemoryContext)
    nodes = {
        "load_user_context": create_load_user_context(store),
        "recall": create_recall(store, limit=5),
        "extract_memories": create_extract_memories(store),
        "review_memories": create_review_memories(store),
    }
    for name, node in nodes.items():
        assert asyncio.iscoroutinefunction(node) is h.is_async, name
        builder.add_node(name, node)
    builder.add_node("answer", answer)
    builder.add_edge(START, "load_user_context")
    builder.add_edge("load_user_context", "recall")
    builder.add_edge("recall", "answer")
    builder.add_edge("answer", "extract_memories")
    builder.add_edge("extract_memories", "review_memories")
    builder.add_edge("review_memories", END)
    graph = builder.compile(checkpointer=h.saver)
    return Harness(h.flavour, h.loop, graph, h.store, h.saver)


@FLAVOURS
def test_composed_nodes_interrupt_resume_and_commit(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as base:
        base.store.add(ALICE, "fact", "Alice grows tomatoes on her balcony")
        prompts: list[str] = []
        h = _composed(base, prompts)
        out = h.invoke(turn(TURN_1 + " Any tips for my tomatoes?"), cfg("c1"), context=CTX)
        assert "__interrupt__" in out
        assert "grows tomatoes" in prompts[0]
        assert out["extraction"]["proposed"] == 2
        assert h.list_inbox(ALICE).keys() == {"c1"}
        _, request = h.pending_review("c1")
        state = h.resume_review(owner=ALICE, thread_id="c1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]
        # The next turn of the composed graph sees the approved memory.
        h.invoke(turn("Hello"), cfg("c2"), context=CTX)
        assert "call_them: Ada" in prompts[-1]
        # Nothing to review: the review node passes through without an interrupt.
        assert h.get_state(cfg("c2")).next == ()


@FLAVOURS
def test_the_nodes_work_in_a_messages_state_graph(pg_dsn: str, flavour: str) -> None:
    """Each node declares ``MemoryState`` as its input: LangGraph adds the memory keys to a
    ``StateGraph(MessagesState)``, so the review interrupts and a node that declares
    ``MemoryState`` sees the context (before, the keys were dropped: no context, no
    interrupt, and proposals left in the inbox)."""
    with harness_on(pg_dsn, flavour) as base:
        base.store.add(ALICE, "fact", "Alice grows tomatoes on her balcony")
        store = base.real_store()
        prompts: list[str] = []
        seen_by_plain: list[list[str]] = []

        def answer(state: MemoryState) -> dict[str, Any]:
            prompts.append(build_system_prompt(state, instructions=None))
            return {"messages": [AIMessage("noted")]}

        def plain(state: MessagesState) -> dict[str, Any]:
            seen_by_plain.append(sorted(state))
            return {}

        builder: StateGraph[Any, Any, Any, Any] = StateGraph(
            MessagesState, context_schema=MemoryContext
        )
        builder.add_node("load_user_context", create_load_user_context(store))
        builder.add_node("recall", create_recall(store))
        builder.add_node("answer", answer)
        builder.add_node("plain", plain)
        builder.add_node("extract_memories", create_extract_memories(store))
        builder.add_node("review_memories", create_review_memories(store))
        order = [
            START,
            "load_user_context",
            "recall",
            "answer",
            "plain",
            "extract_memories",
            "review_memories",
            END,
        ]
        for source, target in itertools.pairwise(order):
            builder.add_edge(source, target)
        h = Harness(
            flavour, base.loop, builder.compile(checkpointer=base.saver), base.store, base.saver
        )
        out = h.invoke(turn(TURN_1 + " Any tips for my tomatoes?"), cfg("m1"), context=CTX)
        assert "__interrupt__" in out
        assert "<user_context>" in prompts[0] and "grows tomatoes" in prompts[0]
        assert seen_by_plain == [["messages"]]  # a MessagesState node sees its own keys
        _, request = h.pending_review("m1")
        assert len(request["action_requests"]) == 2
        h.resume_review(owner=ALICE, thread_id="m1", decisions=decide_all(request))
        # The output schema is MessagesState; the memory keys are in the thread's state.
        state = h.get_state(cfg("m1")).values
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]
        assert h.list_inbox(ALICE) == {}
        h.invoke(turn("Hello"), cfg("m2"), context=CTX)
        assert "call_them: Ada" in prompts[-1]


def test_a_guard_block_through_langmem_in_a_plain_tool_node_is_a_tool_error(
    pg_dsn: str,
) -> None:
    """LangMem's tool writes through ``GovernedStore``; the guard's refusal comes back to the
    model as an error ``ToolMessage`` from a default ``ToolNode`` instead of ending the run."""
    import langmem

    manage = langmem.create_manage_memory_tool(namespace=("memories", "{user_id}"))
    model = FakeToolCallingChatModel.from_tool_calls(
        [
            tool_call_message("manage_memory", {"content": "Card 4111 1111 1111 1111"}),
            "I could not save that.",
        ]
    )
    bound = model.bind_tools([manage])

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([manage]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    with MemoryStore.from_dsn(pg_dsn) as memory:
        memory.setup()
        graph = builder.compile(store=GovernedStore(memory))
        out = graph.invoke(turn("hello"), {"configurable": {"user_id": "alice"}})
        (tool_message,) = [m for m in out["messages"] if m.type == "tool"]
        assert tool_message.status == "error"
        assert "ValidationError" in str(tool_message.content)
        assert "4111" not in str(tool_message.content)
        assert out["messages"][-1].content == "I could not save that."
        assert memory.list_pending(ALICE) == [] and memory.list_records(ALICE) == []
        # Application code still gets a ValidationError.
        with pytest.raises(ValidationError):
            GovernedStore(memory).put(
                ("memories", "alice"), "k", {"content": "Card 4111 1111 1111 1111"}
            )
