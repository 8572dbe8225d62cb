"""Thread ownership (issue 8 §2, issue 25 §2): a thread belongs to the principal that started it.

:func:`check_thread_owner` is the one check: the first run of a thread records the
principal (user scope, workspace, agent of the trusted runtime context) in the store's thread
index (one autocommit statement, the store's ``_own_thread``), and a later run of that
``thread_id`` by another principal raises ``ThreadOwnerError``. LangGraph applies a run's
input and emits its first ``values``/``checkpoints``/``debug``/``tasks`` chunks before the
first node runs, so the check must run before the run loads its thread. It does, on every
shape of graph:

* the compiled memory agent (:func:`~nodes.create_memory_agent`, and ``build_memory_graph``
  compiled by anyone, the Agent Server included: its builder compiles to the same
  ``MemoryAgentGraph``) checks in ``stream``/``astream`` (:func:`check_run`), before
  LangGraph starts;
* any graph compiled with a checkpointer of :func:`~nodes.open_checkpointer` /
  :func:`~nodes.open_async_checkpointer` (the server's too): the saver checks when the run
  reads its thread's latest checkpoint (:func:`saver_check`), the first thing a run does;
* every node that can run first (the context load, recall, extraction, the model node, the
  review node on resume) checks again unless the run carries the proof (:data:`CHECKED_KEY`)
  of an earlier check, so a hand-built graph on another checkpointer never gets another
  principal's memory or model call (its input is in the thread by then: use one of the
  two above).

A claim lives in the space of the checkpointer holding the thread (:func:`saver_space`, see
``memory_graph.storage.ops.threads``). The out-of-band helpers (``pending_review``,
``resume_review``) run the same check through :func:`store_of`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ._context import resolve_owner
from ._core import AnyStore, ConfigurationError, IdentityMissingError, Owner, ValidationError
from ._drive import Call, Op, drive_async, drive_sync, is_async_store

__all__ = [
    "CHECKED_KEY",
    "STORE_ATTR",
    "acheck_run",
    "check_run",
    "check_thread_owner",
    "config_thread_id",
    "saver_check",
    "saver_space",
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
_SAVER = "__pregel_checkpointer"  # LangGraph's configurable key for a task's checkpointer
_RUNTIME = "__pregel_runtime"  # ... and for the run's Runtime (its context)
_MEM_SPACES: dict[int, str] = {}


def saver_space(saver: Any) -> str:
    """The claim space of a checkpointer (``memory_graph.storage.ops.threads``).

    ``""`` for every persistent saver (they may share checkpoint tables, so a thread id is
    claimed database-wide); a space of its own for each ``InMemorySaver`` (keyed by its
    storage, which copies of the saver share), whose threads no other saver can load. A saver
    with a ``memory_graph_space`` string attribute claims in that space.
    """
    if saver is None or isinstance(saver, bool):
        return ""
    named = getattr(saver, "memory_graph_space", None)
    if isinstance(named, str):
        return named
    from langgraph.checkpoint.memory import InMemorySaver

    if isinstance(saver, InMemorySaver):
        key = id(saver.storage)
        return _MEM_SPACES.setdefault(key, "mem:" + secrets.token_hex(16))
    return ""


def _proof(owner: Owner, thread_id: str, space: str = "") -> str:
    parts = (owner.scope_id, str(owner.workspace_key), str(owner.agent_key), space, thread_id)
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
    owner: Owner, config: Mapping[str, Any] | None, *, claim: bool = True, space: str | None = None
) -> Op[None]:
    """Claim the run's thread for ``owner``, or check that ``owner`` already owns it.

    Yield it first (``yield from check_thread_owner(owner, config)``) in any node that may
    be the first to run. Without a ``thread_id`` (no checkpointer) there is nothing to own.
    With ``claim=False`` (the review helpers, which only read) an unclaimed thread is not
    recorded. ``space``: the claim space (:func:`saver_space`); ``None`` takes it from the
    task's checkpointer in ``config``.

    Raises:
        ThreadOwnerError: another principal (user, workspace or agent) started the thread.
        ValidationError: the thread id is not a valid id.
    """
    thread_id = config_thread_id(config)
    if thread_id is None:
        return
    conf = (config or {}).get("configurable") or {}
    where = saver_space(conf.get(_SAVER)) if space is None else space
    proof = conf.get(CHECKED_KEY)
    if isinstance(proof, str) and hmac.compare_digest(proof, _proof(owner, thread_id, where)):
        return  # this run's owner and thread were checked before the run started
    yield Call("_own_thread" if claim else "check_thread", (owner, thread_id), {"space": where})


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
    saver = merged["configurable"].get(_SAVER, getattr(graph, "checkpointer", None))
    space = saver_space(saver)
    owner = resolve_owner(context, merged)
    merged["configurable"].pop(CHECKED_KEY, None)  # the run's own check, never a caller's
    yield from check_thread_owner(owner, merged, space=space)
    return _proof(owner, thread_id, space)


def _saver_op(config: Any) -> Op[None]:
    """The saver's check of a run (see :func:`saver_check`); adds the proof to the run."""
    conf = config.get("configurable")
    thread_id = config_thread_id(config)
    if thread_id is None:  # checked by _saver_run
        return
    try:
        owner = resolve_owner(getattr(conf[_RUNTIME], "context", None), config)
    except IdentityMissingError:
        # A run without an owner may use a thread nobody owns (its memory nodes refuse it);
        # a claimed thread is refused before the run loads it.
        if (yield Call("_thread_claimed", (thread_id,), {"space": ""})):
            raise
        return
    yield from check_thread_owner(owner, config, space="")
    conf[CHECKED_KEY] = _proof(owner, thread_id, "")  # the run's nodes need not check again


def _saver_run(config: Any) -> bool:
    """Whether a ``get_tuple`` is a run's (it carries the run's ``Runtime``) with a thread.

    A subgraph's run is checked too: its config carries the proof of its parent's check
    when there was one (then no query), so a forged subgraph namespace gains nothing.
    """
    conf = (config or {}).get("configurable") if isinstance(config, Mapping) else None
    return (
        isinstance(conf, dict)
        and conf.get(_RUNTIME) is not None
        and config_thread_id(config) is not None
    )


def saver_check(
    store: AnyStore,
) -> tuple[Callable[[Any], None], Callable[[Any], Awaitable[None]]]:
    """The owner check a checkpointer of ``store``'s database runs when a run starts.

    LangGraph reads a run's latest checkpoint (``get_tuple``) before it applies the input or
    emits a chunk, with the run's ``Runtime`` (its context) in the config; state reads
    (``get_state``, history) carry no runtime and are not checked here (the review helpers
    and a server's auth guard them). A run of another principal raises ``ThreadOwnerError``
    there, so it reads, writes and streams nothing of the thread; a run without an owner is
    refused on a claimed thread (``IdentityMissingError``).

    Returns:
        ``(check, acheck)``: for ``PostgresSaver.get_tuple`` and
        ``AsyncPostgresSaver.aget_tuple``.
    """

    def check(config: Any) -> None:
        if not _saver_run(config):
            return
        if is_async_store(store):
            raise ConfigurationError(
                "a sync checkpointer on an AsyncMemoryStore cannot check a thread's owner: "
                "open it with open_async_checkpointer and run the graph with ainvoke/astream"
            )
        drive_sync(store, _saver_op(config))

    async def acheck(config: Any) -> None:
        if not _saver_run(config):
            return
        if is_async_store(store):
            await drive_async(store, _saver_op(config))
        else:  # a sync store from the event loop: in a worker thread (the server's case)
            await asyncio.to_thread(drive_sync, store, _saver_op(config))

    return check, acheck


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
    return await asyncio.to_thread(drive_sync, store, op)  # a sync store: off the event loop
