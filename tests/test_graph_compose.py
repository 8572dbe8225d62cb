"""The node factories composed into a user's own graph, on the sync and async stacks.

A custom ``StateGraph`` (``load_user_context -> recall -> answer -> extract_memories ->
review_memories``) with a plain model node of its own: the factories return async nodes
for an ``AsyncMemoryStore`` and the graph runs with ``ainvoke`` on ``AsyncPostgresSaver``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _graph_helpers import ALICE, CTX, FLAVOURS, TURN_1, Harness, cfg, harness_on, turn
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph

from nodes import (
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
