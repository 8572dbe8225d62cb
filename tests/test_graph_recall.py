"""Per-step recall: a removal made during a turn is gone from the next model step."""

from __future__ import annotations

from _graph_helpers import ALICE, CTX, agent_on, cfg, turn
from langchain_core.tools import tool

from memory_graph import MemoryStore
from memory_graph.testing import FakeToolCallingChatModel, tool_call_message


def test_recall_sees_a_removal_at_the_next_step(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as setup_store:
        setup_store.setup()
        added = setup_store.add(ALICE, "fact", "Alice keeps bees on her balcony")
    assert added.record_id is not None
    record_id = added.record_id

    with agent_on(pg_dsn, model=FakeToolCallingChatModel(messages=iter([]))) as (_a, store):

        @tool
        def forget_bees() -> str:
            """Remove the bees memory (a trusted app tool, for the test)."""
            record = store.get_record(ALICE, record_id)
            store.remove(ALICE, record_id, base_version=record.version)
            return "removed"

        model = FakeToolCallingChatModel.from_tool_calls(
            [tool_call_message("forget_bees", {}), "Done."]
        )
        from nodes import create_memory_agent

        agent = create_memory_agent(model, store, checkpointer=_a.checkpointer, tools=[forget_bees])
        out = agent.invoke(turn("Tell me about my bees"), cfg("r1"), context=CTX)
        prompts = [
            "\n".join(str(m.content) for m in msgs if m.type == "system") for msgs in model.received
        ]
        assert len(prompts) == 2
        assert "keeps bees" in prompts[0]
        assert "keeps bees" not in prompts[1]
        assert "keeps bees" not in out["recalled"]
