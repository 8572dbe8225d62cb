"""The base of the async store shell: the pool and running an op on it.

Every mixin of :class:`~memory_graph.AsyncMemoryStore` (``storage/shell/*_async.py``) derives from
:class:`AsyncStoreShell`, so a method only builds a generator op (``ops/*``) and runs it with
:meth:`~AsyncStoreShell._run` (a transaction) or :meth:`~AsyncStoreShell._read` (autocommit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from psycopg_pool import AsyncConnectionPool

from ...time import Clock
from ...types import Limits
from ..driver import Op, PoolOptions, map_unavailable, run_async, without_deadline
from .common import StoreBase

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["AsyncStoreShell"]

T = TypeVar("T")


class AsyncStoreShell(StoreBase):
    """The pool of an async store and the two ways it runs an op."""

    def __init__(
        self,
        pool: AsyncConnectionPool[Any],
        *,
        limits: Limits | None = None,
        clock: Clock | None = None,
        dsn: str | None = None,
        embeddings: Embeddings | str | None = None,
    ) -> None:
        super().__init__(limits=limits, clock=clock, dsn=dsn, embeddings=embeddings)
        self._pool = pool
        self._pool_options = PoolOptions(
            max_size=pool.max_size,
            pool_timeout=pool.timeout,
            call_timeout=getattr(pool, "call_timeout", None),
        )

    async def _run(self, op: Op[T], *, autocommit: bool = False, deadline: bool = True) -> T:
        with map_unavailable():
            async with self._pool.connection() as conn:
                if not deadline:
                    without_deadline(conn)
                return await run_async(conn, op, autocommit=autocommit)

    async def _read(self, op: Op[T]) -> T:
        return await self._run(op, autocommit=True)
