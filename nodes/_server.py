"""The graph factory that ``langgraph.json`` exposes to ``langgraph dev`` / LangGraph Server.

The server supplies its own checkpointer, so the factory returns the *uncompiled*
``StateGraph`` (a graph compiled with its own checkpointer is refused). The memory store
opens on ``$MEMORY_GRAPH_DSN`` (or the embedded server) on first use, never at import.
Invoke it with ``context={"user_id": ...}``.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import StateGraph

from ._agent import build_memory_graph
from ._core import MemoryStore
from ._models import OfflineChatModel, chat_model_from_env

__all__ = ["make_graph"]

_STORE: MemoryStore | None = None


def make_graph(config: Any = None) -> StateGraph[Any, Any, Any, Any]:
    """Return the uncompiled memory agent graph on the environment's store and model."""
    global _STORE
    if _STORE is None:
        _STORE = MemoryStore.open()
        _STORE.setup()
    model = chat_model_from_env() or OfflineChatModel()
    return build_memory_graph(model, _STORE)
