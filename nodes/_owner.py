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

from ._context import resolve_owner
from ._core import AnyStore, Owner, ValidationError
from ._drive import Call, Op, drive_async, drive_sync, is_async_store

__all__ = [
    "STORE_ATTR",
    "acheck_run",
    "check_run",
    "check_thread_owner",
    "config_thread_id",
    "store_of",
]

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


def check_thread_owner(
    owner: Owner, config: Mapping[str, Any] | None, *, claim: bool = True
) -> Op[None]:
    """Claim the run's thread for ``owner``, or check that ``owner`` already owns it.

    Yield it first (``yield from check_thread_owner(owner, config)``) in any node that may
    be the first to run. Without a ``thread_id`` (no checkpointer) there is nothing to own.
    With ``claim=False`` (the review helpers, which only read) an unclaimed thread is not
    recorded.

    Raises:
        ThreadOwnerError: another principal (user, workspace or agent) started the thread.
        ValidationError: the thread id is not a valid id.
    """
    thread_id = config_thread_id(config)
    if thread_id is not None:
        yield Call("claim_thread" if claim else "check_thread", (owner, thread_id))


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


def _run_config(graph: Any, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's ``configurable``: the graph's bound config overlaid by the call's."""
    bound = (getattr(graph, "config", None) or {}).get("configurable") or {}
    given = (config or {}).get("configurable") or {}
    return {"configurable": {**bound, **given}}


def _run_check(graph: Any, config: Mapping[str, Any] | None, context: Any) -> Op[None]:
    merged = _run_config(graph, config)
    if config_thread_id(merged) is None:
        return
    owner = resolve_owner(context, merged)
    yield from check_thread_owner(owner, merged)


def check_run(graph: Any, config: Mapping[str, Any] | None, context: Any) -> None:
    """Check the thread's owner before a run of ``graph`` starts (sync ``invoke``/``stream``).

    LangGraph writes a run's input into the thread's checkpoint before the first node runs,
    so the compiled agent checks here too: another principal's input never lands in the
    thread. The nodes check again, so a graph compiled elsewhere is still protected.
    """
    store = store_of(graph)
    if store is None:
        return
    if is_async_store(store):
        return  # an async store: the sync entry points cannot use it; the nodes still check
    drive_sync(store, _run_check(graph, config, context))


async def acheck_run(graph: Any, config: Mapping[str, Any] | None, context: Any) -> None:
    """Async twin of :func:`check_run`."""
    store = store_of(graph)
    if store is None:
        return
    op = _run_check(graph, config, context)
    if is_async_store(store):
        await drive_async(store, op)
    else:
        drive_sync(store, op)
