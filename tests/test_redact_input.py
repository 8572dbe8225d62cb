"""Redaction before the input is first saved (issue 26 §3).

With ``redact_blocked=True`` a run's input is masked before LangGraph checkpoints it, on the
prebuilt agent, on any graph compiled from ``MemoryGraphBuilder`` and on a ``create_agent``
graph passed to ``MemoryMiddleware.protect``: a raw scan of the whole database (every table;
text, jsonb and bytea as bytes: ``tests/_scan.py``) finds no blocked text, the unblocked
sentence of the same message is still in the state, and the extraction report counts the
blocks. No encryption key is set, so nothing hides the text but the masking.
"""

from __future__ import annotations

from typing import Any

import pytest
from _graph_helpers import cfg, harness_on
from _scan import scan
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START
from langgraph.types import Command
from test_middleware import ScriptedModel, stack_on

from memory_graph import MemoryStore, Owner
from memory_graph.testing import extraction_reply
from nodes import (
    MemoryContext,
    MemoryGraphBuilder,
    MemoryMiddleware,
    MemoryState,
    create_extract_memories,
    open_checkpointer,
)
from nodes._encryption import CHECKPOINT_KEY_ENV
from nodes._redact import count_masks, redact_input

ALICE = Owner("alice")
CTX = {"user_id": "alice"}
FLAVOURS = pytest.mark.parametrize("flavour", ["sync", "async"])
KEPT = "Remember that my cat is named Vexmirth."
SAID = (
    f"{KEPT} My ssn is 512-43-7789. I was diagnosed with diabetes last year. "
    "我被诊断出糖尿病。我的身份证号是110101199003077777。"
)
BLOCKED = ["512-43-7789", "diabetes", "糖尿病", "110101199003077777"]
BLOCKS = [{"type": "text", "text": SAID}, {"type": "image_url", "image_url": {"url": "x"}}]


def _forms() -> dict[str, Any]:
    """The run inputs: every message form ``add_messages`` accepts, and a Command."""
    return {
        "message": {"messages": [HumanMessage(SAID, id="h1")]},
        "tuple": {"messages": [("user", SAID)]},
        "dict": {"messages": [{"role": "user", "content": SAID, "id": "h1"}]},
        "string": {"messages": SAID},
        "blocks": {"messages": [HumanMessage(BLOCKS, id="h1")]},
        "dict_blocks": {"messages": [{"type": "human", "content": BLOCKS}]},
        "command": Command(update={"messages": [HumanMessage(SAID, id="h1")]}),
        "command_pairs": Command(update=[("messages", [("human", SAID)])]),
    }


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: Any) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)


def _humans(values: dict[str, Any]) -> list[Any]:
    return [m for m in values["messages"] if m.type == "human"]


def _leaks(dsn: str, words: list[str] = BLOCKED) -> dict[str, list[str]]:
    return {w: hits for w, hits in scan(dsn, words).items() if hits}


@FLAVOURS
@pytest.mark.parametrize("form", sorted(_forms()))
def test_the_prebuilt_agent_never_saves_a_blocked_sentence(
    pg_dsn: str, flavour: str, form: str
) -> None:
    with harness_on(pg_dsn, flavour, redact_blocked=True) as h:
        out = h.invoke(_forms()[form], cfg("t1"), context=CTX)
        (human,) = _humans(h.get_state(cfg("t1")).values)
        report = out["extraction"]
    assert _leaks(pg_dsn) == {}
    assert KEPT in str(human.content) and "[redacted: gov_id]" in str(human.content)
    if form in ("message", "dict", "blocks", "command"):
        assert human.id == "h1"  # the masked message kept its id
    if "blocks" in form:
        assert human.content[1] == BLOCKS[1]
    assert report["blocked"] >= 4 and {"gov_id", "health"} <= set(report["blocked_categories"])


@FLAVOURS
def test_streamed_values_are_masked_and_the_stats_count_the_blocks(
    pg_dsn: str, flavour: str
) -> None:
    with harness_on(pg_dsn, flavour, redact_blocked=True) as h:
        value = {"messages": [("user", SAID)]}
        chunks = h.stream(value, cfg("t1"), context=CTX, stream_mode="values")
        summary = h.store.audit_summary(ALICE, since=_epoch())
    assert SAID not in str(chunks) and "512-43-7789" not in str(chunks)
    blocked = {r["action"]: r["n"] for r in summary if r["target_kind"] == "guard"}
    assert blocked["block:gov_id"] >= 2 and blocked["block:health"] >= 2
    assert _leaks(pg_dsn) == {}


def _epoch() -> Any:
    from datetime import UTC, datetime

    return datetime(2000, 1, 1, tzinfo=UTC)


def test_redaction_off_keeps_the_text(pg_dsn: str) -> None:
    with harness_on(pg_dsn, "sync") as h:
        h.invoke({"messages": [("user", SAID)]}, cfg("t1"), context=CTX)
        (human,) = _humans(h.get_state(cfg("t1")).values)
    assert human.content == SAID
    assert set(_leaks(pg_dsn)) == set(BLOCKED)


def test_a_graph_of_the_nodes_on_the_builder_masks_its_input(pg_dsn: str) -> None:
    """A graph a user composes on ``MemoryGraphBuilder`` masks too: the node says so."""
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            builder = MemoryGraphBuilder(MemoryState, context_schema=MemoryContext)
            builder.add_node("extract", create_extract_memories(store, redact_blocked=True))
            builder.add_edge(START, "extract")
            builder.add_edge("extract", END)
            graph = builder.compile(checkpointer=saver).with_config(tags=["copied"])
            out = graph.invoke({"messages": [("user", SAID)]}, cfg("t1"), context=CTX)
    assert _leaks(pg_dsn) == {}
    assert out["extraction"]["blocked"] >= 4
    assert KEPT in out["messages"][0].content


@FLAVOURS
@pytest.mark.parametrize("form", ["message", "tuple", "dict_blocks", "command"])
def test_create_agent_with_protect_never_saves_a_blocked_sentence(
    pg_dsn: str, flavour: str, form: str
) -> None:
    chat = ScriptedModel(messages=iter(["Noted.", extraction_reply([])]), received=[])
    with stack_on(pg_dsn, flavour) as s:
        memory = MemoryMiddleware(s.store, redact_blocked=True)
        agent = memory.protect(create_agent(chat, middleware=[memory], checkpointer=s.saver))
        agent = agent.with_config(tags=["copied"])  # copies keep the masking
        out = s.invoke(agent, _forms()[form], cfg("t1"), context=CTX)
        (human,) = _humans(s.state(agent, "t1").values)
    assert _leaks(pg_dsn) == {}
    for word in BLOCKED:  # neither the model nor its extraction call saw the text
        assert word not in str(chat.received), word
    assert KEPT in str(human.content)
    assert out["extraction"]["blocked"] >= 4


def test_create_agent_without_protect_masks_only_after_extraction(pg_dsn: str) -> None:
    """What the middleware's docstring says: unprotected, the input checkpoint keeps it."""
    chat = ScriptedModel(messages=iter(["Noted.", extraction_reply([])]), received=[])
    with stack_on(pg_dsn, "sync") as s:
        memory = MemoryMiddleware(s.store, redact_blocked=True)
        agent = create_agent(chat, middleware=[memory], checkpointer=s.saver)
        s.invoke(agent, {"messages": [("user", SAID)]}, cfg("t1"), context=CTX)
        (human,) = _humans(s.state(agent, "t1").values)
    assert "[redacted: gov_id]" in human.content  # the latest state is masked
    assert _leaks(pg_dsn)  # but the run's input checkpoint is not


# -- hostile input -----------------------------------------------------------------------


def test_a_typed_mask_only_raises_a_content_free_counter(pg_dsn: str) -> None:
    typed = "Call me Zorbulon. [redacted: health] [redacted: Kazoolia] [redacted: Ssn]"
    with harness_on(pg_dsn, "sync", redact_blocked=True) as h:
        out = h.invoke({"messages": [("user", typed)]}, cfg("t1"), context=CTX)
        (human,) = _humans(h.get_state(cfg("t1")).values)
        summary = h.store.audit_summary(ALICE, since=_epoch())
    assert out["extraction"]["blocked_categories"] == {"health": 1}  # category names only
    assert human.content == typed  # nothing to mask: the message is as typed
    assert [(r["action"], r["n"]) for r in summary if r["target_kind"] == "guard"] == [
        ("block:health", 1)
    ]
    # A label that is not a category name stays text of the message, in no counter.
    assert [h for h in scan(pg_dsn, ["Kazoolia"])["Kazoolia"] if "mg_audit" in h] == []


def test_a_flood_of_typed_masks_is_capped_not_refused() -> None:
    flood = HumanMessage("[redacted: health]" * 1_000_001)
    assert count_masks([flood]) == {"health": 1_000_001}
    from nodes._nodes import MAX_BLOCKED

    assert MAX_BLOCKED == 1_000_000  # what note_blocked accepts; _extract clamps to it


def test_a_typed_mask_flood_in_a_turn_still_commits(pg_dsn: str) -> None:
    flood = "[redacted: gov_id]" * 3000 + " my ssn is 512-43-7789"
    with harness_on(pg_dsn, "sync", redact_blocked=True) as h:
        out = h.invoke({"messages": [("user", flood)]}, cfg("t1"), context=CTX)
    assert out["extraction"]["blocked_categories"]["gov_id"] == 3001
    assert _leaks(pg_dsn, ["512-43-7789"]) == {}


def test_a_huge_message_is_masked(pg_dsn: str) -> None:
    huge = "lorem ipsum dolor " * 12_000 + SAID + " trailing words" * 5_000
    with harness_on(pg_dsn, "sync", redact_blocked=True) as h:
        h.invoke({"messages": [HumanMessage(huge, id="big")]}, cfg("t1"), context=CTX)
        (human,) = _humans(h.get_state(cfg("t1")).values)
    assert human.id == "big" and KEPT in human.content and len(human.content) > 200_000
    assert _leaks(pg_dsn) == {}


def test_unmasked_items_and_keys_pass_through_unchanged() -> None:
    ai = ("ai", "my ssn is 512-43-7789")  # only human messages are masked
    value = {"messages": [ai, ("user", "hello")], "goal": None}
    assert redact_input(value) == (value, 0)
    assert redact_input(value)[0] is value
    assert redact_input(None) == (None, 0)
    assert redact_input(Command(resume={"x": 1})) == (Command(resume={"x": 1}), 0)
    bad = {"messages": [("user",)]}  # not a message: left for LangGraph to refuse
    assert redact_input(bad) == (bad, 0)
    out, n = redact_input({"messages": [ai, ("user", "My ssn is 512-43-7789.")], "goal": 1})
    assert n == 1 and out["messages"][0] == ai and out["goal"] == 1
    assert out["messages"][1].content == "My ssn is [redacted: gov_id]."


@FLAVOURS
def test_update_state_is_masked_too(pg_dsn: str, flavour: str) -> None:
    from langgraph.types import StateUpdate

    with harness_on(pg_dsn, flavour, redact_blocked=True) as h:
        h.invoke({"messages": [("user", "hello")]}, cfg("t1"), context=CTX)
        edit = {"messages": [HumanMessage(SAID, id="e1")]}
        plain = ({"messages": [("user", SAID)]}, "review_memories", None)  # a plain tuple
        steps = [[StateUpdate(edit, "review_memories")], [plain]]
        if h.is_async:
            h.run(h.agent.aupdate_state(cfg("t1"), edit, as_node="review_memories"))
            h.run(h.agent.abulk_update_state(cfg("t1"), steps))
        else:
            h.agent.update_state(cfg("t1"), edit, as_node="review_memories")
            h.agent.bulk_update_state(cfg("t1"), steps)
        humans = _humans(h.get_state(cfg("t1")).values)
    assert _leaks(pg_dsn) == {}
    assert [m.id for m in humans][1] == "e1" and len(humans) == 3
    assert all(KEPT in m.content for m in humans[1:])


def test_update_state_on_a_protected_create_agent_is_masked(pg_dsn: str) -> None:
    chat = ScriptedModel(messages=iter([]), received=[])
    with stack_on(pg_dsn, "sync") as s:
        memory = MemoryMiddleware(s.store, redact_blocked=True)
        agent = memory.protect(create_agent(chat, middleware=[memory], checkpointer=s.saver))
        agent.update_state(cfg("t1"), {"messages": [("user", SAID)]})
        (human,) = _humans(s.state(agent, "t1").values)
    assert _leaks(pg_dsn) == {}
    assert KEPT in human.content


def test_astream_events_goes_through_the_masking(pg_dsn: str) -> None:
    with harness_on(pg_dsn, "async", redact_blocked=True) as h:

        async def events() -> list[Any]:
            value = {"messages": [("user", SAID)]}
            run = h.agent.astream_events(value, cfg("t1"), context=CTX, version="v2")
            return [event async for event in run]

        seen = h.run(events())
    assert _leaks(pg_dsn) == {}
    raw = [(e["event"], e["name"]) for e in seen if "512-43-7789" in str(e)]
    assert raw == [("on_chain_start", "memory_agent")]  # only the caller's input, echoed
    assert "[redacted: gov_id]" in str(seen[-1]["data"]["output"])
