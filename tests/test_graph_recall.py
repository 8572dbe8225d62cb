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


@FLAVOURS
def test_a_plain_turn_is_one_superstep_like_a_bare_graph(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        chunks = h.stream(
            turn("What should I cook?"), cfg("p1"), context=CTX, stream_mode="updates"
        )
        names = [name for chunk in chunks for name in chunk]
        # The turn's entry (context, first recall, extraction) runs in the model node.
        assert names == ["agent"]
        # Checkpoints: input (-1), START (0), model (1): the bare agent-only graph's count.
        assert h.get_state(cfg("p1")).metadata["step"] == 1
        values = h.get_state(cfg("p1")).values
        assert values["extraction"]["messages"] == 1
        assert "user_context" in values and "recalled" in values


@FLAVOURS
def test_a_tool_turn_collects_the_tools_proposals_and_keeps_the_report(
    pg_dsn: str, flavour: str
) -> None:
    model = FakeToolCallingChatModel.from_tool_calls(
        [tool_call_message("save_user_preference", {"key": "units", "value": "metric"}), "ok"]
    )
    with harness_on(pg_dsn, flavour) as base:
        h = base.rebuild(model)
        chunks = h.stream(turn("Call me Ada."), cfg("p1"), context=CTX, stream_mode="updates")
        order = [name for chunk in chunks for name in sorted(chunk)]
        assert order.index("collect_proposals") > order.index("tools")
        assert order[-1] == "__interrupt__"
        values = h.get_state(cfg("p1")).values
        assert values["extraction"]["proposed"] == 1  # the extraction's report survives
        _, request = h.pending_review("p1")
        assert sorted(r["operation"] for r in request["action_requests"]) == [
            "patch_profile",
            "set_preference",
        ]


@FLAVOURS
def test_recall_draws_on_the_turns_before_a_last_turn_that_names_no_topic(
    pg_dsn: str, flavour: str
) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    with harness_on(pg_dsn, flavour) as base:
        base.store.add(ALICE, "fact", "Alice is training for a marathon in Lisbon")
        base.store.add(ALICE, "fact", "Alice's sister sings in a choir")
        model = FakeToolCallingChatModel.from_tool_calls(["Sure."])
        h = base.rebuild(model)
        messages = [
            HumanMessage("My cousin's wedding is in Lisbon the same weekend as the marathon."),
            AIMessage("Oh, a clash?"),
            HumanMessage("What should I do about it?"),  # names no topic on its own
        ]
        out = h.invoke({"messages": messages}, cfg("c1"), context=CTX)
        assert "training for a marathon" in out["recalled"]
        assert "choir" not in out["recalled"]
