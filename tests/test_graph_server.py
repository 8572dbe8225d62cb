"""``nodes._server``: the factory, store and checkpointer that ``langgraph.json`` names."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import StateGraph

from nodes import GovernedStore, OfflineChatModel
from nodes import _server as server


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "_model", None)


def test_factory_returns_an_uncompiled_graph_that_runs_on_the_served_store(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_GRAPH_DSN", pg_dsn)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def main() -> Any:
        graph = await server.make_graph({})
        assert isinstance(graph, StateGraph)  # the server supplies checkpointer and store
        async with server.governed_store() as store, server.checkpointer() as saver:
            assert isinstance(store, GovernedStore)
            assert server._users == 2  # one memory store shared by both
            app = graph.compile(checkpointer=saver, store=store)
            out = await app.ainvoke(
                {"messages": [HumanMessage("hello")]},
                {"configurable": {"thread_id": "srv-1"}},
                context={"user_id": "server-user"},
            )
            tuple_ = await saver.aget_tuple({"configurable": {"thread_id": "srv-1"}})
        return out, tuple_

    out, saved = asyncio.run(main())
    assert out["messages"][-1].type == "ai"
    assert saved is not None  # checkpoints went to PostgreSQL on the same DSN
    assert server._memory is None and server._users == 0  # released on exit


def test_offline_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model, extractor = server._model_and_extractor()
    assert isinstance(model, OfflineChatModel) and extractor is None


def test_configured_model_answers_and_extracts(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_openai import ChatOpenAI

    import memory_graph.extract as extract

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMORY_GRAPH_STRUCTURED_METHOD", "json_mode")
    seen: list[tuple[Any, str]] = []
    real = extract.create_extractor

    def spy(model: Any, **kwargs: Any) -> Any:
        seen.append((model, kwargs.get("method")))
        return real(model, **kwargs)

    monkeypatch.setattr(extract, "create_extractor", spy)
    graph = asyncio.run(server.make_graph({}))
    model, extractor = server._model_and_extractor()
    assert isinstance(model, ChatOpenAI)
    assert seen == [(model, "json_mode")]  # the same model extracts, with the set method
    assert extractor is not None
    assert "extract_memories" in graph.nodes
