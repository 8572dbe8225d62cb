"""Per-step recall: a removal made during a turn is gone from the next model step."""

from __future__ import annotations

from typing import Any

from _graph_helpers import ALICE, CTX, FLAVOURS, cfg, harness_on, turn
from langchain_core.tools import BaseTool, StructuredTool

from memory_graph.testing import FakeToolCallingChatModel, tool_call_message


def _forget_tool(h: Any, record_id: str) -> BaseTool:
    """A trusted app tool that removes one memory directly (sync or async, like the store)."""
    store = h.real_store()

    def forget_bees() -> str:
        record = store.get_record(ALICE, record_id)
        store.remove(ALICE, record_id, base_version=record.version)
        return "removed"

    async def aforget_bees() -> str:
        record = await store.get_record(ALICE, record_id)
        await store.remove(ALICE, record_id, base_version=record.version)
        return "removed"

    if h.is_async:
        return StructuredTool.from_function(
            coroutine=aforget_bees, name="forget_bees", description="Remove the bees memory."
        )
    return StructuredTool.from_function(
        func=forget_bees, name="forget_bees", description="Remove the bees memory."
    )


@FLAVOURS
def test_recall_sees_a_removal_at_the_next_step(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as base:
        added = base.store.add(ALICE, "fact", "Alice keeps bees on her balcony")
        assert added.record_id is not None
        model = FakeToolCallingChatModel.from_tool_calls(
            [tool_call_message("forget_bees", {}), "Done."]
        )
        h = base.rebuild(model, tools=[_forget_tool(base, added.record_id)])
        out = h.invoke(turn("Tell me about my bees"), cfg("r1"), context=CTX)
        prompts = [
            "\n".join(str(m.content) for m in msgs if m.type == "system") for msgs in model.received
        ]
        assert len(prompts) == 2
        assert "keeps bees" in prompts[0]
        assert "keeps bees" not in prompts[1]
        assert "keeps bees" not in out["recalled"]
