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

    import memory_graph.extraction as extract

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
    assert {"agent", "review_memories"} <= set(graph.nodes)  # the memory agent


class _FakeOpenAI:
    """A loopback OpenAI-compatible chat endpoint: extraction calls get a scripted
    ``ExtractedMemories`` tool call, answers get text; every request is recorded."""

    def __init__(self) -> None:
        import http.server
        import json
        import threading

        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                names = [t["function"]["name"] for t in body.get("tools") or []]
                if "ExtractedMemories" in names:
                    said = next(m["content"] for m in body["messages"] if m["role"] == "user")
                    quote = "I brew espresso every morning"
                    assert quote in str(said)
                    args = {
                        "candidates": [
                            {"kind": "fact", "content": quote, "quote": quote, "message_index": 0}
                        ]
                    }
                    message: dict[str, Any] = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "ExtractedMemories",
                                    "arguments": json.dumps(args),
                                },
                            }
                        ],
                    }
                else:
                    message = {"role": "assistant", "content": "Served by the configured model."}
                reply = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_served_graph_answers_and_extracts_with_the_configured_model(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _FakeOpenAI()
    monkeypatch.setenv("MEMORY_GRAPH_DSN", pg_dsn)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    monkeypatch.setenv("MEMORY_GRAPH_STRUCTURED_METHOD", "function_calling")

    async def main() -> Any:
        graph = await server.make_graph({})
        async with server.governed_store() as store, server.checkpointer() as saver:
            app = graph.compile(checkpointer=saver, store=store)
            return await app.ainvoke(
                {"messages": [HumanMessage("I brew espresso every morning.")]},
                {"configurable": {"thread_id": "srv-model"}},
                context={"user_id": "server-user"},
            )

    try:
        out = asyncio.run(main())
    finally:
        fake.close()
    assert out["messages"][-1].content == "Served by the configured model."

    def kind(request: dict[str, Any]) -> str:
        names = [t["function"]["name"] for t in request.get("tools") or []]
        return "extract" if "ExtractedMemories" in names else "answer"

    kinds = [kind(r) for r in fake.requests]
    assert "extract" in kinds and "answer" in kinds, fake.requests
    (proposal,) = out["pending_proposals"]
    assert proposal["args"]["content"] == "I brew espresso every morning"
