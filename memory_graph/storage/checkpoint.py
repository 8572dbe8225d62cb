"""LangGraph's Postgres checkpointers on a checked pool, with the store's error mapping.

``PostgresSaver.from_conn_string`` opens one connection: concurrent threads serialise on it
and it never recovers after a server restart. :func:`open_saver` gives the saver a
:class:`~.driver.CheckedPool` sized and configured like the store's
(:class:`~.driver.PoolOptions`), drops the saver's per-instance lock (each cursor gets its
own pooled connection, so threads run in parallel), and maps a lost or unreachable server to
``StorageUnavailableError`` (never a raw driver error).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from psycopg.rows import dict_row

from .driver import PoolOptions, map_unavailable, open_async_pool, open_pool

__all__ = ["open_async_saver", "open_saver"]

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
def open_saver(dsn: str, opts: PoolOptions, *, setup: bool = True) -> Iterator[Any]:
    """A ``PostgresSaver`` on a checked pool of ``dsn``; the pool closes on exit."""
    from langgraph.checkpoint.postgres import PostgresSaver

    class PooledPostgresSaver(PostgresSaver):
        @contextmanager
        def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
            with map_unavailable(), super()._cursor(pipeline=pipeline) as cur:
                yield cur

    pool = open_pool(dsn, opts, **_SAVER_KWARGS)
    try:
        saver = PooledPostgresSaver(pool)
        saver.lock = _NoLock()  # type: ignore[assignment]
        if setup:
            saver.setup()
        yield saver
    finally:
        pool.close()


@asynccontextmanager
async def open_async_saver(
    dsn: str, opts: PoolOptions, *, setup: bool = True
) -> AsyncIterator[Any]:
    """An ``AsyncPostgresSaver`` on a checked async pool of ``dsn``."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    class PooledAsyncPostgresSaver(AsyncPostgresSaver):
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
            await saver.setup()
        yield saver
    finally:
        await pool.close()
