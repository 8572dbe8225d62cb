"""``langgraph.json`` names an uncompiled graph factory that the server can compile and run."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph

ROOT = Path(__file__).resolve().parents[1]


def test_langgraph_json_factory_returns_an_uncompiled_graph(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_GRAPH_DSN", pg_dsn)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = json.loads((ROOT / "langgraph.json").read_text())
    path, attr = spec["graphs"]["memory_agent"].split(":")
    module = importlib.import_module("nodes._server")
    assert Path(module.__file__ or "").resolve() == (ROOT / path).resolve()
    monkeypatch.setattr(module, "_STORE", None)
    graph = getattr(module, attr)()
    assert isinstance(graph, StateGraph)  # the server supplies the checkpointer
    app = graph.compile(checkpointer=InMemorySaver())
    out = app.invoke(
        {"messages": [HumanMessage("hello")]},
        {"configurable": {"thread_id": "srv-1"}},
        context={"user_id": "server-user"},
    )
    assert out["messages"][-1].type == "ai"
    module._STORE.close()
