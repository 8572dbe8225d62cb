"""Thread ownership (issue 8 §2): a thread belongs to the principal that started it.

:func:`check_thread_owner` is the one check. Every node that can run first in a run (the
context load, recall, extraction, the model node, and the review node on resume) yields it
before any other work, so it holds whatever the graph's shape is: the first turn records
the principal (user scope, workspace, agent of the trusted runtime context) in the store's
thread index, and a later run of that ``thread_id`` by another principal raises
``ThreadOwnerError`` before a node reads, writes or calls the model. The out-of-band helpers
(``pending_review``, ``resume_review``) run the same check through :func:`store_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._core import AnyStore, Owner, ValidationError
from ._drive import Call, Op

__all__ = ["STORE_ATTR", "check_thread_owner", "config_thread_id", "store_of"]

STORE_ATTR = "__memory_graph_store__"
"""Attribute a node function carries so the helpers can find the graph's store."""


def config_thread_id(config: Mapping[str, Any] | None) -> str | None:
    """``config["configurable"]["thread_id"]`` as a string, or ``None`` without one.

    Only ``str`` and ``int`` ids are accepted (LangGraph stringifies ids); anything else is
    a ``ValidationError`` before a node does work.
    """
    value = ((config or {}).get("configurable") or {}).get("thread_id")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValidationError(f"thread_id must be a string, got {type(value).__name__}")
    return str(value)


def check_thread_owner(owner: Owner, config: Mapping[str, Any] | None) -> Op[None]:
    """Claim the run's thread for ``owner``, or check that ``owner`` already owns it.

    Yield it first (``yield from check_thread_owner(owner, config)``) in any node that may
    be the first to run. Without a ``thread_id`` (no checkpointer) there is nothing to own.

    Raises:
        ThreadOwnerError: another principal (user, workspace or agent) started the thread.
        ValidationError: the thread id is not a valid id.
    """
    thread_id = config_thread_id(config)
    if thread_id is not None:
        yield Call("claim_thread", (owner, thread_id))


def store_of(graph: Any) -> AnyStore | None:
    """The memory store bound into a graph built from this package's nodes, if any."""
    builder = getattr(graph, "builder", None)
    for spec in (getattr(builder, "nodes", None) or {}).values():
        runnable = getattr(spec, "runnable", None)
        for fn in (getattr(runnable, "func", None), getattr(runnable, "afunc", None), runnable):
            store = getattr(fn, STORE_ATTR, None)
            if store is not None:
                return store  # type: ignore[no-any-return]
    return None
