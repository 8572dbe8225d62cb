"""Helpers shared by the graph tests: a store plus a Postgres checkpointer on one database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.messages import HumanMessage

from memory_graph import MemoryStore, Owner
from nodes import OfflineChatModel, create_memory_agent, open_checkpointer

ALICE = Owner("alice")
CTX = {"user_id": "alice"}
TURN_1 = "Call me Ada. I prefer short replies."


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def turn(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


@contextmanager
def agent_on(dsn: str, model: Any = None, **kwargs: Any) -> Iterator[tuple[Any, MemoryStore]]:
    """A set-up store and the prebuilt agent compiled on a PostgresSaver, same database."""
    with MemoryStore.from_dsn(dsn) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            agent = create_memory_agent(
                model or OfflineChatModel(), store, checkpointer=saver, **kwargs
            )
            yield agent, store
