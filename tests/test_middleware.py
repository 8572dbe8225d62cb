"""``MemoryMiddleware`` in LangChain v1's ``create_agent``, on the sync and async stacks.

Every test runs a real ``create_agent`` graph on the Postgres checkpointer
(``open_checkpointer`` / ``open_async_checkpointer``) with a scripted model that supports
structured output, so the agent's own model extracts: its script holds the answer, then
the extraction reply of a turn that ends.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from memory_graph import (
    AsyncMemoryStore,
    ConfigurationError,
    MemoryStore,
    Owner,
    ResumeError,
    ThreadOwnerError,
)
from memory_graph.testing import FakeToolCallingChatModel, extraction_reply, tool_call_message
from nodes import (
    GovernedStore,
    MemoryMiddleware,
    NoPendingReviewError,
    alist_inbox,
    apending_review,
    aresume_review,
    decide_all,
    list_inbox,
    open_async_checkpointer,
    open_checkpointer,
    pending_review,
    resume_review,
)

ALICE = Owner("alice")
CTX = {"user_id": "alice"}
FLAVOURS = pytest.mark.parametrize("flavour", ["sync", "async"])
SYSTEM = "You are a terse assistant."
ADA = {"kind": "fact", "key": "profile.call_them", "value": "Ada", "quote": "Call me Ada."}
ASTHMA = {"kind": "fact", "content": "Has asthma", "quote": "I have asthma."}


class ScriptedModel(FakeToolCallingChatModel):
    """A scripted model that stands for a real one: it extracts with itself."""

    extracts_with_patterns: ClassVar[bool] = False


def model(*replies: Any) -> ScriptedModel:
    return ScriptedModel(messages=iter(replies), received=[])


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def turn(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


class Stack:
    """A store and a checkpointer; runs agents with the flavour's entry points."""

    def __init__(self, flavour: str, loop: Any, store: Any, saver: Any) -> None:
        self.flavour, self.loop, self.store, self.saver = flavour, loop, store, saver

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def agent(self, chat: Any, **kwargs: Any) -> Any:
        middleware = kwargs.pop("middleware", None) or [MemoryMiddleware(self.store)]
        return create_agent(
            chat, system_prompt=SYSTEM, middleware=middleware, checkpointer=self.saver, **kwargs
        )

    def invoke(self, agent: Any, value: Any, config: Any, **kwargs: Any) -> Any:
        if self.loop is None:
            return agent.invoke(value, config, **kwargs)
        return self.run(agent.ainvoke(value, config, **kwargs))

    def stream(self, agent: Any, value: Any, config: Any, **kwargs: Any) -> list[Any]:
        if self.loop is None:
            return list(agent.stream(value, config, **kwargs))

        async def collect() -> list[Any]:
            return [chunk async for chunk in agent.astream(value, config, **kwargs)]

        return self.run(collect())

    def state(self, agent: Any, thread_id: str) -> Any:
        if self.loop is None:
            return agent.get_state(cfg(thread_id))
        return self.run(agent.aget_state(cfg(thread_id)))

    def pending_review(self, agent: Any, thread_id: str) -> tuple[str, Any]:
        if self.loop is None:
            return pending_review(agent, thread_id, owner=ALICE)
        return self.run(apending_review(agent, thread_id, owner=ALICE))  # type: ignore[no-any-return]

    def resume_review(self, agent: Any, thread_id: str, decisions: Any) -> dict[str, Any]:
        kwargs = {"owner": ALICE, "thread_id": thread_id, "decisions": decisions}
        if self.loop is None:
            return resume_review(agent, **kwargs)
        return self.run(aresume_review(agent, **kwargs))  # type: ignore[no-any-return]

    def inbox(self, owner: Owner) -> dict[str, Any]:
        if self.loop is None:
            return list_inbox(self.store, owner)
        return self.run(alist_inbox(self.store, owner))  # type: ignore[no-any-return]

    def records(self, owner: Owner) -> list[Any]:
        if self.loop is None:
            return self.store.list_records(owner)  # type: ignore[no-any-return]
        return self.run(self.store.list_records(owner))  # type: ignore[no-any-return]


@contextmanager
def stack_on(dsn: str, flavour: str) -> Iterator[Stack]:
    if flavour == "sync":
        with MemoryStore.from_dsn(dsn) as store:
            store.setup()
            with open_checkpointer(store) as saver:
                yield Stack("sync", None, store, saver)
        return
    loop = asyncio.new_event_loop()
    store = loop.run_until_complete(AsyncMemoryStore.open(dsn))
    try:
        loop.run_until_complete(store.setup())
        saver_cm = open_async_checkpointer(store)
        saver = loop.run_until_complete(saver_cm.__aenter__())
        try:
            yield Stack("async", loop, store, saver)
        finally:
            loop.run_until_complete(saver_cm.__aexit__(None, None, None))
    finally:
        loop.run_until_complete(store.close())
        loop.close()


def _interrupt(out: dict[str, Any]) -> Any:
    (item,) = out["__interrupt__"]
    return item


@FLAVOURS
def test_first_turn_proposes_and_interrupts_resume_approves_next_prompt_holds_it(
    pg_dsn: str, flavour: str
) -> None:
    chat = model(
        "Hello!",
        extraction_reply([{**ADA, "message_index": 0}, {**ASTHMA, "message_index": 0}]),
        "Hi Ada.",
        extraction_reply([]),
    )
    with stack_on(pg_dsn, flavour) as s:
        agent = s.agent(chat)
        out = s.invoke(agent, turn("Call me Ada. I have asthma."), cfg("t1"), context=CTX)
        request = _interrupt(out).value
        # HumanInTheLoopMiddleware's request shape, one action per proposal.
        assert set(request) >= {"action_requests", "review_configs"}
        (action,) = request["action_requests"]
        assert action["args"] == {"patch": {"call_them": "Ada"}}
        assert action["quote"] == "Call me Ada."
        # The guard blocked the health fact: counted, never proposed, never in the state.
        assert out["extraction"]["blocked_categories"] == {"health": 1}
        assert "asthma" not in str(out["pending_proposals"]).casefold()
        assert s.records(ALICE) == []  # nothing written before the decision
        # The model's request: the user's system prompt, then memory, in one system message.
        answer_prompt = chat.received[0]
        assert [m.type for m in answer_prompt] == ["system", "human"]
        assert answer_prompt[0].content.startswith(SYSTEM)
        assert "<user_context>" in answer_prompt[0].content
        # The extraction call came after the answer, with the extractor's own prompt.
        assert "You extract long-term memories" in str(chat.received[1][0].content)

        _, pending = s.pending_review(agent, "t1")
        assert pending == request
        state = s.resume_review(agent, "t1", decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved"]
        assert s.inbox(ALICE) == {}

        # A new thread: the approved memory is in the system prompt, no message was added.
        out2 = s.invoke(agent, turn("hello"), cfg("t2"), context=CTX)
        assert "__interrupt__" not in out2
        prompt = chat.received[2]
        assert [type(m) for m in prompt] == [SystemMessage, HumanMessage]
        assert "call_them: Ada" in str(prompt[0].content)
        assert [m.type for m in out2["messages"]] == ["human", "ai"]


@FLAVOURS
def test_a_foreign_principal_is_refused(pg_dsn: str, flavour: str) -> None:
    chat = model("Hello!", extraction_reply([]))
    with stack_on(pg_dsn, flavour) as s:
        memory = MemoryMiddleware(s.store)
        agent = s.agent(chat, middleware=[memory])
        s.invoke(agent, turn("hi"), cfg("t1"), context=CTX)
        calls = len(chat.received)
        with pytest.raises(ThreadOwnerError):
            s.invoke(agent, turn("I am Bob. Call me Bob."), cfg("t1"), context={"user_id": "bob"})
        assert len(chat.received) == calls  # the model never saw alice's thread for bob
        assert s.inbox(Owner("bob")) == {} and s.inbox(ALICE) == {}
        # No identity at all: refused before any work.
        with pytest.raises(Exception, match="user_id"):
            s.invoke(agent, turn("hi"), cfg("t9"))
        # Protected, the refused input never lands in the thread.
        memory.protect(agent)
        before = s.state(agent, "t1").values["messages"]
        with pytest.raises(ThreadOwnerError):
            s.invoke(agent, turn("Bob again."), cfg("t1"), context={"user_id": "bob"})
        assert s.state(agent, "t1").values["messages"] == before
        assert len(chat.received) == calls


@FLAVOURS
def test_a_garbage_resume_is_refused_and_the_review_stays_pending(
    pg_dsn: str, flavour: str
) -> None:
    chat = model("Hello!", extraction_reply([{**ADA, "message_index": 0}]))
    with stack_on(pg_dsn, flavour) as s:
        agent = s.agent(chat)
        out = s.invoke(agent, turn("Call me Ada."), cfg("t1"), context=CTX)
        pending = _interrupt(out)
        garbage: list[Any] = [
            "approve",
            {"decisions": "all"},
            {"decisions": [{"type": "approve"}]},  # not bound to a proposal id
            {"decisions": [{"type": "approve", "proposal_id": "f" * 32}]},
            {"decisions": [{"type": "approve", "proposal_id": "x\x00"}]},
        ]
        for value in garbage:
            with pytest.raises(ResumeError):
                s.invoke(agent, Command(resume={pending.id: value}), cfg("t1"), context=CTX)
            interrupt_id, request = s.pending_review(agent, "t1")
            assert interrupt_id == pending.id and request == pending.value
        with pytest.raises(ResumeError):
            s.resume_review(agent, "t1", [{"type": "maybe", "proposal_id": "p"}])
        assert list(s.inbox(ALICE)) == ["t1"]
        assert s.records(ALICE) == [] and len(chat.received) == 2


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


@FLAVOURS
def test_beside_human_in_the_loop_on_a_tool(pg_dsn: str, flavour: str) -> None:
    chat = model(
        tool_call_message("send_email", {"to": "bob", "body": "hi"}),
        "Sent.",
        extraction_reply([{**ADA, "message_index": 0}]),
    )
    with stack_on(pg_dsn, flavour) as s:
        hitl = HumanInTheLoopMiddleware(interrupt_on={"send_email": True})
        agent = s.agent(chat, tools=[send_email], middleware=[MemoryMiddleware(s.store), hitl])
        out = s.invoke(agent, turn("Call me Ada. Email Bob hi."), cfg("t1"), context=CTX)
        tool_review = _interrupt(out)
        assert [a["name"] for a in tool_review.value["action_requests"]] == ["send_email"]
        assert out.get("pending_proposals") in (None, [])  # the turn has not ended
        with pytest.raises(NoPendingReviewError):
            s.pending_review(agent, "t1")  # the tool review is not the memory review
        # The tool approval in HumanInTheLoopMiddleware's own response shape.
        out = s.invoke(
            agent,
            Command(resume={tool_review.id: {"decisions": [{"type": "approve"}]}}),
            cfg("t1"),
            context=CTX,
        )
        memory_review = _interrupt(out)
        assert memory_review.id != tool_review.id
        tools_ran = [m.content for m in out["messages"] if m.type == "tool"]
        assert tools_ran == ["sent to bob"]
        (action,) = memory_review.value["action_requests"]
        assert action["args"] == {"patch": {"call_them": "Ada"}}
        assert [c["allowed_decisions"] for c in memory_review.value["review_configs"]] == [
            ["approve", "edit", "reject"]
        ]
        state = s.resume_review(agent, "t1", decide_all(memory_review.value, "reject"))
        assert [r["status"] for r in state["commit_results"]] == ["rejected"]
        assert isinstance(state["messages"][-1], AIMessage)
        assert state["messages"][-1].content == "Sent."


@FLAVOURS
def test_the_extractors_output_does_not_stream(pg_dsn: str, flavour: str) -> None:
    chat = model(
        "Hello Ada.",
        extraction_reply([{**ADA, "message_index": 0}, {**ASTHMA, "message_index": 0}]),
    )
    with stack_on(pg_dsn, flavour) as s:
        agent = s.agent(chat)
        chunks = s.stream(
            agent,
            turn("Call me Ada. I have asthma."),
            cfg("t1"),
            context=CTX,
            stream_mode="messages",
        )
        streamed = [message for message, _meta in chunks]
        assert "".join(str(m.content) for m in streamed if m.type == "AIMessageChunk") == (
            "Hello Ada."
        )
        assert not any(getattr(m, "tool_call_chunks", None) for m in streamed)
        assert "asthma" not in str([m.model_dump() for m in streamed]).casefold()
        assert len(chat.received) == 2  # the extraction did run
        assert len(s.inbox(ALICE)["t1"]) == 1


def test_an_async_store_needs_the_async_entry_points(pg_dsn: str) -> None:
    with stack_on(pg_dsn, "async") as s:
        # (An in-memory saver: AsyncPostgresSaver itself refuses sync calls on its loop.)
        agent = create_agent(
            model("Hello!"), middleware=[MemoryMiddleware(s.store)], checkpointer=InMemorySaver()
        )
        with pytest.raises(ConfigurationError, match="ainvoke"):
            agent.invoke(turn("hi"), cfg("t1"), context=CTX)


def test_nodes_import_without_langchain() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'langchain' or name.startswith('langchain.'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import nodes\n"
        "assert 'MemoryMiddleware' in nodes.__all__\n"
        "nodes.create_memory_agent\n"
        "assert not any(m == 'langchain' or m.startswith('langchain.') for m in sys.modules)\n"
        "try:\n"
        "    nodes.MemoryMiddleware\n"
        "except ImportError as exc:\n"
        "    assert 'middleware' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('MemoryMiddleware without langchain')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_on_the_agents_governed_store(pg_dsn: str) -> None:
    """Without a store of its own the middleware uses ``runtime.store``: a GovernedStore."""
    chat = model("Hello!", extraction_reply([{**ADA, "message_index": 0}]), "Hi.")
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            memory = MemoryMiddleware()
            agent = memory.protect(
                create_agent(
                    chat, middleware=[memory], checkpointer=saver, store=GovernedStore(store)
                )
            )
            out = agent.invoke(turn("Call me Ada."), cfg("g1"), context=CTX)
            assert "__interrupt__" in out
            _, request = pending_review(agent, "g1", owner=ALICE)
            state = resume_review(agent, owner=ALICE, thread_id="g1", decisions=decide_all(request))
            assert [r["status"] for r in state["commit_results"]] == ["approved"]
            with pytest.raises(ThreadOwnerError):
                agent.invoke(turn("Bob here."), cfg("g1"), context={"user_id": "bob"})
            assert [m.content for m in agent.get_state(cfg("g1")).values["messages"]] == [
                "Call me Ada.",
                "Hello!",
            ]
            with pytest.raises(ConfigurationError):
                MemoryMiddleware(store).protect(agent)  # not this agent's middleware
