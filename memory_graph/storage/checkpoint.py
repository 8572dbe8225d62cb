"""LangGraph's Postgres checkpointers on a checked pool, with the store's error mapping.

``PostgresSaver.from_conn_string`` opens one connection: concurrent threads serialise on it
and it never recovers after a server restart. :func:`open_saver` gives the saver a
:class:`~.driver.CheckedPool` sized and configured like the store's
(:class:`~.driver.PoolOptions`), drops the saver's per-instance lock (each cursor gets its
own pooled connection, so threads run in parallel), and maps a lost or unreachable server to
``StorageUnavailableError`` (never a raw driver error).

LangGraph's own ``setup()`` takes no lock: processes setting up a brand-new database at once
race into duplicate-key errors and deadlocks, and a ``CREATE INDEX CONCURRENTLY IF NOT EXISTS``
that failed leaves an invalid index that no later setup rebuilds. Here setup runs on one
connection holding an advisory lock (:data:`CHECKPOINT_SETUP_LOCK`), then rebuilds any
invalid index of the checkpoint tables (:data:`INVALID_INDEXES`).

A run reads its thread's latest checkpoint (``get_tuple`` / ``aget_tuple``) before LangGraph
applies the run's input or emits a chunk. ``check`` / ``acheck`` (the memory agent's thread
owner check, ``nodes._owner``) is called there with the run's config, so a refused run on any
graph compiled with this saver reads, writes and streams nothing of the thread.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from psycopg.rows import dict_row

from ..errors import StorageUnavailableError
from .driver import PoolOptions, map_unavailable, open_async_pool, open_pool

__all__ = ["CHECKPOINT_SETUP_LOCK", "INVALID_INDEXES", "open_async_saver", "open_saver"]

CHECKPOINT_SETUP_LOCK = 0x6D675F636B7074  # "mg_ckpt"; the store's setup uses its own key
"""The advisory lock key the checkpointer's setup holds (session level, on one connection)."""

INVALID_INDEXES = """
    SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
    FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE NOT i.indisvalid AND n.nspname = current_schema()
      AND t.relname IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes')
"""
"""The checkpoint tables' invalid indexes (left by a failed concurrent build)."""

SETUP_WAIT = 120.0
"""Seconds a setup waits for another process's setup before ``StorageUnavailableError``."""

# A waiter polls with pg_try_advisory_lock between statements: blocked inside a statement it
# would hold a snapshot, which the lock holder's CREATE INDEX CONCURRENTLY waits for (a deadlock).
_TRY_LOCK = "SELECT pg_try_advisory_lock(%s) AS ok"
_POLL = 0.05


def _waited(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise StorageUnavailableError(
            f"another process has held the checkpointer's setup lock for {SETUP_WAIT:.0f} s: "
            "let it finish, or open with setup=False once the tables exist"
        )


def _setup_locked(pool: Any, saver_cls: Any) -> None:
    """LangGraph's setup on one connection holding the lock, then the index repair."""
    with map_unavailable(), pool.connection() as conn:
        deadline = time.monotonic() + SETUP_WAIT
        while not conn.execute(_TRY_LOCK, (CHECKPOINT_SETUP_LOCK,)).fetchone()["ok"]:
            _waited(deadline)
            time.sleep(_POLL)
        try:
            saver_cls(conn).setup()
            for row in conn.execute(INVALID_INDEXES).fetchall():
                conn.execute(f"REINDEX INDEX {row['name']}")
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (CHECKPOINT_SETUP_LOCK,))


async def _asetup_locked(pool: Any, saver_cls: Any) -> None:
    """The async twin of :func:`_setup_locked`."""
    with map_unavailable():
        async with pool.connection() as conn:
            deadline = time.monotonic() + SETUP_WAIT
            while True:
                cur = await conn.execute(_TRY_LOCK, (CHECKPOINT_SETUP_LOCK,))
                if (await cur.fetchone())["ok"]:
                    break
                _waited(deadline)
                await asyncio.sleep(_POLL)
            try:
                await saver_cls(conn).setup()
                cur = await conn.execute(INVALID_INDEXES)
                for row in await cur.fetchall():
                    await conn.execute(f"REINDEX INDEX {row['name']}")
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (CHECKPOINT_SETUP_LOCK,))


_SAVER_KWARGS: dict[str, Any] = {
    "autocommit": True,
    "prepare_threshold": 0,
    "row_factory": dict_row,
}
"""The connection settings LangGraph's savers need (those of ``from_conn_string``)."""


class _NoLock:
    """Stands in for the saver's lock when it runs on a pool (sync and async)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


@contextmanager
def open_saver(
    dsn: str,
    opts: PoolOptions,
    *,
    setup: bool = True,
    check: Callable[[Any], None] | None = None,
) -> Iterator[Any]:
    """A ``PostgresSaver`` on a checked pool of ``dsn``; the pool closes on exit.

    ``check(config)`` runs before every ``get_tuple`` (see the module docstring).
    """
    from langgraph.checkpoint.postgres import PostgresSaver

    class PooledPostgresSaver(PostgresSaver):
        def get_tuple(self, config: Any) -> Any:
            if check is not None:
                check(config)
            return super().get_tuple(config)

        @contextmanager
        def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
            with map_unavailable(), super()._cursor(pipeline=pipeline) as cur:
                yield cur

    pool = open_pool(dsn, opts, **_SAVER_KWARGS)
    try:
        saver = PooledPostgresSaver(pool)
        saver.lock = _NoLock()  # type: ignore[assignment]
        if setup:
            _setup_locked(pool, PostgresSaver)
        yield saver
    finally:
        pool.close()


@asynccontextmanager
async def open_async_saver(
    dsn: str,
    opts: PoolOptions,
    *,
    setup: bool = True,
    acheck: Callable[[Any], Awaitable[None]] | None = None,
) -> AsyncIterator[Any]:
    """An ``AsyncPostgresSaver`` on a checked async pool of ``dsn``.

    ``await acheck(config)`` runs before every ``aget_tuple`` (the sync ``get_tuple`` of the
    async saver goes through it too).
    """
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    class PooledAsyncPostgresSaver(AsyncPostgresSaver):
        async def aget_tuple(self, config: Any) -> Any:
            if acheck is not None:
                await acheck(config)
            return await super().aget_tuple(config)

        @asynccontextmanager
        async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[Any]:
            with map_unavailable():
                async with super()._cursor(pipeline=pipeline) as cur:
                    yield cur

    pool = await open_async_pool(dsn, opts, **_SAVER_KWARGS)
    try:
        saver = PooledAsyncPostgresSaver(pool)
        saver.lock = _NoLock()  # type: ignore[assignment]
        if setup:
            await _asetup_locked(pool, AsyncPostgresSaver)
        yield saver
    finally:
        await pool.close()
