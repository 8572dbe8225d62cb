"""Idempotency when a node re-runs (LangGraph re-runs a node from its first line)."""

from __future__ import annotations

import asyncio

from _graph_helpers import ALICE, CTX, FLAVOURS, TURN_1, cfg, harness_on, turn
from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from memory_graph import AsyncMemoryStore, MemoryStore
from nodes import create_extract_memories, decide_all


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


def test_repeat_mention_reinforces_once_per_message(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        stored = store.add(ALICE, "fact", "I deploy on Fridays", confidence=0.6)
        assert stored.record_id is not None
        node = create_extract_memories(store)
        config = {"configurable": {"thread_id": "t1"}}
        said = {"messages": [HumanMessage("Remember that I deploy on Fridays.", id="m1")]}
        node(said, Runtime(context=CTX), config)
        once = store.get_record(ALICE, stored.record_id).confidence
        assert once > 0.6
        node(said, Runtime(context=CTX), config)  # a re-run of the same turn
        assert store.get_record(ALICE, stored.record_id).confidence == once
        said_again = {"messages": [HumanMessage("Remember that I deploy on Fridays.", id="m2")]}
        node(said_again, Runtime(context=CTX), config)  # a new mention counts again
        assert store.get_record(ALICE, stored.record_id).confidence > once
        assert store.list_pending(ALICE) == []  # no proposal, no new row
        assert len(store.list_records(ALICE)) == 1


def test_async_extract_node_rerun_creates_no_second_proposal(pg_dsn: str) -> None:
    async def main() -> None:
        store = await AsyncMemoryStore.open(pg_dsn)
        try:
            await store.setup()
            node = create_extract_memories(store)
            assert asyncio.iscoroutinefunction(node)
            state = {"messages": [HumanMessage(TURN_1, id="m1")]}
            config = {"configurable": {"thread_id": "t1"}}
            first = await node(state, Runtime(context=CTX), config)
            second = await node(state, Runtime(context=CTX), config)
            assert [p["id"] for p in first["pending_proposals"]] == [
                p["id"] for p in second["pending_proposals"]
            ]
            assert len(await store.list_pending(ALICE)) == 2
        finally:
            await store.close()

    asyncio.run(main())


@FLAVOURS
def test_review_replay_returns_stored_results_without_writing(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = h.pending_review("s1")
        state = h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        audit = len(h.store.audit_log(ALICE))
        # Re-run the review node's commit: deciding the same proposals again replays.
        for result in state["commit_results"]:
            again = h.store.decide(ALICE, result["proposal_id"], "approve")
            assert again.status == "approved"
        assert len(h.store.audit_log(ALICE)) == audit
        # A repeated turn with the same words plans nothing new (values are stored).
        out = h.invoke(turn(TURN_1), cfg("s2"), context=CTX)
        assert "__interrupt__" not in out
        assert out["extraction"]["proposed"] == 0
