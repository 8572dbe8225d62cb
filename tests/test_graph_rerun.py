"""Idempotency when a node re-runs (LangGraph re-runs a node from its first line)."""

from __future__ import annotations

from _graph_helpers import ALICE, CTX, TURN_1, agent_on, cfg, turn
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from memory_graph import MemoryStore
from nodes import create_extract_memories, decide_all, pending_review, resume_review


def test_extract_node_rerun_creates_no_second_proposal(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        node = create_extract_memories(store)
        state = {"messages": [HumanMessage(TURN_1, id="m1")]}
        config = {"configurable": {"thread_id": "t1"}}
        first = node(state, Runtime(context=CTX), config)
        second = node(state, Runtime(context=CTX), config)
        assert [p["id"] for p in first["pending_proposals"]] == [
            p["id"] for p in second["pending_proposals"]
        ]
        assert len(store.list_pending(ALICE)) == 2


def test_review_replay_returns_stored_results_without_writing(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = pending_review(agent, "s1")
        state = resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(request))
        audit = len(store.audit_log(ALICE))
        # Re-run the review node's commit: deciding the same proposals again replays.
        for result in state["commit_results"]:
            again = store.decide(ALICE, result["proposal_id"], "approve")
            assert again.status == "approved"
        assert len(store.audit_log(ALICE)) == audit
        # A repeated turn with the same words plans nothing new (values are stored).
        out = agent.invoke(turn(TURN_1), cfg("s2"), context=CTX)
        assert "__interrupt__" not in out
        assert out["extraction"]["proposed"] == 0
