"""Store fixtures shared by the store suites: one test body covers the sync and async twins.

The fixtures are registered for every test module in ``conftest.py`` (``pytest_plugins``).

The ``store`` fixture is parametrised over ``sync`` and ``async``. The async variant wraps an
:class:`AsyncMemoryStore` in :class:`AsyncAdapter`, which runs each coroutine to completion
on one private event loop, so the same test body calls both twins.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest

from memory_graph import AsyncMemoryStore, Limits, MemoryStore
from memory_graph.recall.tokenize import TOKENIZER_VERSION
from memory_graph.storage.schema import MIGRATIONS

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


class FakeClock:
    """A settable clock: ``clock()`` returns ``clock.now``."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> datetime:
        self.now = self.now + timedelta(**kwargs)
        return self.now


class AsyncAdapter:
    """Presents an AsyncMemoryStore with the sync store's call shape (for shared test bodies)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, inner: AsyncMemoryStore) -> None:
        self._loop = loop
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not inspect.iscoroutinefunction(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._loop.run_until_complete(attr(*args, **kwargs))

        return call


@pytest.fixture
def clock() -> FakeClock:
    """A fake clock starting at 2026-01-01T12:00Z."""
    return FakeClock()


@pytest.fixture(params=["sync", "async"])
def make_store(
    request: pytest.FixtureRequest, pg_dsn: str, clock: FakeClock
) -> Iterator[Callable[..., Any]]:
    """Factory ``make_store(limits=None)`` for a set-up store of the parametrised flavour."""
    opened: list[Callable[[], None]] = []
    loop = asyncio.new_event_loop() if request.param == "async" else None

    def make(limits: Limits | None = None) -> Any:
        if loop is None:
            s = MemoryStore.open(pg_dsn, limits=limits, clock=clock, max_size=10)
            opened.append(s.close)
            s.setup()
            return s
        inner = loop.run_until_complete(
            AsyncMemoryStore.open(pg_dsn, limits=limits, clock=clock, max_size=10)
        )
        opened.append(lambda: loop.run_until_complete(inner.close()))
        a = AsyncAdapter(loop, inner)
        a.setup()
        return a

    make.flavour = request.param  # type: ignore[attr-defined]
    try:
        yield make
    finally:
        for close in reversed(opened):
            close()
        if loop is not None:
            loop.close()


@pytest.fixture
def store(make_store: Callable[..., Any]) -> Any:
    """A set-up store (sync or async flavour) with default limits and the fake clock."""
    return make_store()


TABLES = {
    "mg_records": "scope_id, id",
    "mg_pool_stats": "scope_id, agent_key, workspace_key, sensitivity",
    "mg_profiles": "scope_id",
    "mg_personas": "scope_id, agent_key",
    "mg_proposals": "scope_id, id",
    "mg_grants": "scope_id, id",
    "mg_audit": "scope_id, seq",
    "mg_rejections": "scope_id, fingerprint",
}


def db_state(dsn: str) -> dict[str, list[str]]:
    """Every memory table's rows as text, in key order: equal states mean nothing changed."""
    out: dict[str, list[str]] = {}
    with psycopg.connect(dsn) as conn:
        for table, order in TABLES.items():
            rows = conn.execute(f"SELECT t::text FROM {table} t ORDER BY {order}").fetchall()
            out[table] = [r[0] for r in rows]
    return out


def schema_at(dsn: str, version: int) -> None:
    """Bring an empty database to schema ``version`` (migrations 0..version), as the code of
    that version left it, with the running tokenizer recorded (an upgrade test's start)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        for v, sql in enumerate(MIGRATIONS[: version + 1]):
            c.execute(sql)
            c.execute("INSERT INTO mg_migrations (v) VALUES (%s)", (v,))
        c.execute(
            "INSERT INTO mg_meta (key, value) VALUES ('tokenizer_version', %s)",
            (str(TOKENIZER_VERSION),),
        )
