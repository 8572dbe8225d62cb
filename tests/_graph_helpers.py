"""Helpers shared by the graph tests: a store plus a Postgres checkpointer on one database.

:func:`harness_on` gives the same test body a sync (``MemoryStore`` + ``PostgresSaver``) or
an async (``AsyncMemoryStore`` + ``AsyncPostgresSaver``) stack.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from _stores import AsyncAdapter
from langchain_core.messages import HumanMessage

from memory_graph import AsyncMemoryStore, MemoryStore, Owner
from nodes import (
    OfflineChatModel,
    alist_inbox,
    apending_review,
    aresume_review,
    create_memory_agent,
    list_inbox,
    open_checkpointer,
    pending_review,
    resume_review,
)

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


class Harness:
    """One prebuilt agent on a sync or an async store, driven through one sync surface.

    The ``async`` flavour runs ``AsyncMemoryStore`` + ``AsyncPostgresSaver`` and calls
    ``ainvoke`` / ``astream`` / ``aresume_review`` / ``apending_review`` / ``alist_inbox``
    on a private event loop, so one test body covers both flavours.
    """

    def __init__(self, flavour: str, loop: Any, agent: Any, store: Any, saver: Any) -> None:
        self.flavour = flavour
        self.loop = loop
        self.agent = agent
        self.store = store
        """The store with the sync call shape (an ``AsyncAdapter`` for the async flavour)."""
        self.saver = saver

    @property
    def is_async(self) -> bool:
        return self.loop is not None

    def run(self, coro: Any) -> Any:
        """Run a coroutine to completion on the harness loop."""
        return self.loop.run_until_complete(coro)

    def invoke(self, value: Any, config: Any, **kwargs: Any) -> Any:
        if self.loop is None:
            return self.agent.invoke(value, config, **kwargs)
        return self.run(self.agent.ainvoke(value, config, **kwargs))

    def stream(self, value: Any, config: Any, **kwargs: Any) -> list[Any]:
        if self.loop is None:
            return list(self.agent.stream(value, config, **kwargs))

        async def collect() -> list[Any]:
            return [chunk async for chunk in self.agent.astream(value, config, **kwargs)]

        return self.run(collect())

    def get_state(self, config: Any) -> Any:
        if self.loop is None:
            return self.agent.get_state(config)
        return self.run(self.agent.aget_state(config))

    def pending_review(self, thread_id: str, owner: Owner = ALICE) -> tuple[str, Any]:
        if self.loop is None:
            return pending_review(self.agent, thread_id, owner=owner)
        return self.run(  # type: ignore[no-any-return]
            apending_review(self.agent, thread_id, owner=owner)
        )

    def resume_review(self, **kwargs: Any) -> dict[str, Any]:
        if self.loop is None:
            return resume_review(self.agent, **kwargs)
        return self.run(aresume_review(self.agent, **kwargs))  # type: ignore[no-any-return]

    def list_inbox(self, owner: Owner) -> dict[str, Any]:
        if self.loop is None:
            return list_inbox(self.store, owner)
        return self.run(alist_inbox(self.store._inner, owner))  # type: ignore[no-any-return]

    def real_store(self) -> Any:
        """The underlying store (``AsyncMemoryStore`` for the async flavour)."""
        return self.store if self.loop is None else self.store._inner

    def rebuild(self, model: Any = None, **kwargs: Any) -> Harness:
        """Another agent (other model/options) on the same store and checkpointer."""
        agent = create_memory_agent(
            model or OfflineChatModel(), self.real_store(), checkpointer=self.saver, **kwargs
        )
        return Harness(self.flavour, self.loop, agent, self.store, self.saver)


@contextmanager
def harness_on(
    dsn: str, flavour: str, model: Any = None, *, clock: Any = None, **kwargs: Any
) -> Iterator[Harness]:
    """A :class:`Harness` of ``flavour`` (``sync`` | ``async``) on a fresh, set-up store.

    Args:
        dsn: the test database.
        flavour: ``sync`` or ``async``.
        model: the chat model (default :class:`~nodes.OfflineChatModel`).
        clock: the store's clock (default: the system clock).
        **kwargs: ``create_memory_agent`` options.
    """
    model = model or OfflineChatModel()
    if flavour == "sync":
        with MemoryStore.from_dsn(dsn, clock=clock) as store:
            store.setup()
            with open_checkpointer(store) as saver:
                agent = create_memory_agent(model, store, checkpointer=saver, **kwargs)
                yield Harness("sync", None, agent, store, saver)
        return
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    loop = asyncio.new_event_loop()
    inner = loop.run_until_complete(AsyncMemoryStore.open(dsn, clock=clock))
    try:
        loop.run_until_complete(inner.setup())
        saver_cm = AsyncPostgresSaver.from_conn_string(dsn)
        saver = loop.run_until_complete(saver_cm.__aenter__())
        try:
            loop.run_until_complete(saver.setup())
            agent = create_memory_agent(model, inner, checkpointer=saver, **kwargs)
            yield Harness("async", loop, agent, AsyncAdapter(loop, inner), saver)
        finally:
            loop.run_until_complete(saver_cm.__aexit__(None, None, None))
    finally:
        loop.run_until_complete(inner.close())
        loop.close()


FLAVOURS = pytest.mark.parametrize("flavour", ["sync", "async"])
"""Parametrise a test over the sync and async stacks (use with :func:`harness_on`)."""
