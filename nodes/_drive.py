"""One body of node logic for the sync and async stores.

A node's logic is a generator that yields :class:`Call` objects (a store method or an
extraction function, with its arguments) and receives their results. :func:`drive_sync`
and :func:`drive_async` execute the calls on a ``MemoryStore`` or an ``AsyncMemoryStore``.
Exceptions raised by a call are thrown back into the generator, so its ``try`` blocks see
them exactly as straight-line code would.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

__all__ = ["Call", "Op", "drive_async", "drive_sync", "is_async_store"]

R = TypeVar("R")

Op = Generator["Call", Any, R]
"""A node body: yields calls, receives results, returns the state update."""


@dataclass(frozen=True)
class Call:
    """One I/O step of a node body."""

    name: str
    """A store method name, or a function name in ``memory_graph.extraction``."""
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    target: Literal["store", "extract", "attr"] = "store"
    """``attr`` reads a store attribute (``limits``) instead of calling a method."""


def is_async_store(store: Any) -> bool:
    """Whether ``store`` is an async store (its methods are coroutine functions)."""
    return inspect.iscoroutinefunction(getattr(store, "context_block", None))


def _sync_fn(store: Any, call: Call) -> Callable[..., Any]:
    if call.target == "extract":
        from memory_graph import extraction as extract

        return cast(Callable[..., Any], getattr(extract, call.name))
    return cast(Callable[..., Any], getattr(store, call.name))


def _async_fn(store: Any, call: Call) -> Callable[..., Awaitable[Any]]:
    if call.target == "extract":
        from memory_graph import extraction as extract

        return cast(Callable[..., Awaitable[Any]], getattr(extract, "a" + call.name))
    return cast(Callable[..., Awaitable[Any]], getattr(store, call.name))


def drive_sync(store: Any, op: Op[R]) -> R:
    """Run ``op`` against a sync store."""
    try:
        call = next(op)
        while True:
            try:
                if call.target == "attr":
                    result = getattr(store, call.name)
                else:
                    result = _sync_fn(store, call)(*call.args, **call.kwargs)
            except Exception as exc:  # handed to the body, which re-raises what it does not handle
                call = op.throw(exc)
            else:
                call = op.send(result)
    except StopIteration as stop:
        return cast(R, stop.value)


async def drive_async(store: Any, op: Op[R]) -> R:
    """Run ``op`` against an async store."""
    try:
        call = next(op)
        while True:
            try:
                if call.target == "attr":
                    result = getattr(store, call.name)
                else:
                    result = await _async_fn(store, call)(*call.args, **call.kwargs)
            except Exception as exc:  # handed to the body, which re-raises what it does not handle
                call = op.throw(exc)
            else:
                call = op.send(result)
    except StopIteration as stop:
        return cast(R, stop.value)
