"""Thread ownership (issue 8 §2): a thread belongs to the principal that started it.

:func:`check_thread_owner` is the one check. Every node that can run first in a run (the
context load, recall, extraction, the model node, which runs the prebuilt agent's turn
entry, and the review node on resume) yields it before any other work, so it holds whatever
the graph's shape is: the first turn records the principal (user scope, workspace, agent of
the trusted runtime context) in the store's thread index (one autocommit statement, the
store's ``_own_thread``), and a later run of that ``thread_id`` by another principal raises
``ThreadOwnerError`` before a node reads, writes or calls the model. The out-of-band helpers
(``pending_review``, ``resume_review``) run the same check through :func:`store_of`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

from ._context import resolve_owner
from ._core import AnyStore, Owner, ValidationError
from ._drive import Call, Op, drive_async, drive_sync, is_async_store

__all__ = [
    "CHECKED_KEY",
    "STORE_ATTR",
    "acheck_run",
    "check_run",
    "check_thread_owner",
    "config_thread_id",
    "store_of",
    "with_proof",
]

STORE_ATTR = "__memory_graph_store__"
"""Attribute a node function carries so the helpers can find the graph's store."""

CHECKED_KEY = "__memory_graph_thread_checked"
"""Private configurable key: the compiled agent's proof that it checked this run's owner.

Its value is an HMAC of (owner, thread) under a key that lives only in this process, so it
cannot be forged or replayed for another owner or thread, and LangGraph never saves
``__``-prefixed configurable keys. With it the nodes skip their own query; without it (a
graph compiled elsewhere, another process) they check the store."""

_KEY = secrets.token_bytes(32)


def _proof(owner: Owner, thread_id: str) -> str:
    parts = (owner.scope_id, str(owner.workspace_key), str(owner.agent_key), thread_id)
    return hmac.new(
        _KEY, "\x1f".join(parts).encode("utf-8", "surrogatepass"), hashlib.sha256
    ).hexdigest()


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
    if thread_id is None:
        return
    proof = ((config or {}).get("configurable") or {}).get(CHECKED_KEY)
    if isinstance(proof, str) and hmac.compare_digest(proof, _proof(owner, thread_id)):
        return  # the compiled agent checked this owner and thread before the run started
    yield Call("_own_thread" if claim else "check_thread", (owner, thread_id))


def store_of(graph: Any) -> AnyStore | None:
    """The memory store bound into a graph built from this package's nodes, if any."""
    builder = getattr(graph, "builder", None)
    for spec in (getattr(builder, "nodes", None) or {}).values():
        runnable = getattr(spec, "runnable", None)
        for fn in (getattr(runnable, "func", None), getattr(runnable, "afunc", None), runnable):
            store = getattr(fn, STORE_ATTR, None)
            if store is not None:
                return store  # type: ignore[no-any-return]
    # Nodes built without a store read runtime.store: a GovernedStore compiled in.
    inner = getattr(getattr(graph, "store", None), "memory_store", None)
    return inner  # type: ignore[no-any-return]


def _run_config(graph: Any, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's ``configurable``: the graph's bound config overlaid by the call's."""
    bound = (getattr(graph, "config", None) or {}).get("configurable") or {}
    given = (config or {}).get("configurable") or {}
    return {"configurable": {**bound, **given}}


def _run_check(graph: Any, config: Mapping[str, Any] | None, context: Any) -> Op[str | None]:
    merged = _run_config(graph, config)
    thread_id = config_thread_id(merged)
    if thread_id is None:
        return None
    owner = resolve_owner(context, merged)
    merged["configurable"].pop(CHECKED_KEY, None)  # the run's own check, never a caller's
    yield from check_thread_owner(owner, merged)
    return _proof(owner, thread_id)


def with_proof(config: Mapping[str, Any] | None, proof: str | None) -> Any:
    """``config`` with the run's owner proof added (unchanged without one)."""
    if proof is None:
        return config
    base = dict(config or {})
    base["configurable"] = {**(base.get("configurable") or {}), CHECKED_KEY: proof}
    return base


def check_run(graph: Any, config: Mapping[str, Any] | None, context: Any) -> str | None:
    """Check the thread's owner before a run of ``graph`` starts (sync ``invoke``/``stream``).

    LangGraph writes a run's input into the thread's checkpoint before the first node runs,
    so the compiled agent checks here too: another principal's input never lands in the
    thread. The nodes check again unless the returned proof (:data:`CHECKED_KEY`) is in
    their config, so a graph compiled elsewhere is still protected.

    Returns:
        The proof for the run's config, or ``None`` when there was nothing to check.
    """
    store = store_of(graph)
    if store is None or is_async_store(store):
        return None  # an async store cannot serve the sync entry points; the nodes check
    return drive_sync(store, _run_check(graph, config, context))


async def acheck_run(graph: Any, config: Mapping[str, Any] | None, context: Any) -> str | None:
    """Async twin of :func:`check_run`."""
    store = store_of(graph)
    if store is None:
        return None
    op = _run_check(graph, config, context)
    if is_async_store(store):
        return await drive_async(store, op)
    return drive_sync(store, op)
