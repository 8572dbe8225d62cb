"""The sync and async twins expose the same API: same names, same signatures.

Both run the same generator ops (``memory_graph.storage.driver``); this test keeps their thin
shells from drifting apart.
"""

from __future__ import annotations

import inspect

from memory_graph import AsyncMemoryStore, MemoryStore

_LIFECYCLE = {"from_dsn", "open"}


def _public(cls: type) -> dict[str, object]:
    return {
        name: member
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (inspect.isfunction(member) or inspect.ismethod(member))
    }


def test_same_public_methods() -> None:
    assert set(_public(MemoryStore)) == set(_public(AsyncMemoryStore))


def test_same_signatures_and_async_twins_are_coroutines() -> None:
    sync, asyn = _public(MemoryStore), _public(AsyncMemoryStore)
    for name, fn in sync.items():
        twin = asyn[name]
        # Return annotations differ by design (T vs Awaitable / AsyncIterator); parameters don't.
        params = inspect.signature(fn).parameters  # type: ignore[arg-type]
        assert params == inspect.signature(twin).parameters, name  # type: ignore[arg-type]
        if name not in _LIFECYCLE:
            assert inspect.iscoroutinefunction(twin), f"AsyncMemoryStore.{name} must be async"
            assert not inspect.iscoroutinefunction(fn), f"MemoryStore.{name} must be sync"
