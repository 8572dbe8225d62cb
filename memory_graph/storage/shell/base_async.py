"""The base of the async store shell: the pool and running an op on it.

Every mixin of :class:`~memory_graph.AsyncMemoryStore` (``storage/shell/*_async.py``) derives from
:class:`AsyncStoreShell`, so a method only builds a generator op (``ops/*``) and runs it with
:meth:`~AsyncStoreShell._run` (a transaction) or :meth:`~AsyncStoreShell._read` (autocommit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from psycopg_pool import AsyncConnectionPool

from ...identity import Owner
from ...time import Clock
from ...types import CommitResult, Limits
from ..driver import Op, PoolOptions, map_unavailable, run_async, without_deadline
from ..ops.hybrid import forget_absent
from ..ops.vector import embeddings_ready_op, pending_embeddings_op, write_embeddings_op
from .common import StoreBase, embedding_catch_up_failed

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["AsyncStoreShell"]

T = TypeVar("T")
_CATCH_UP = 64
"""Records embedded after one commit at most (a backlog is left to ``index_embeddings``)."""


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

    async def _embed_committed(self, owner: Owner, result: CommitResult | None) -> None:
        """After a commit (outside its transaction): embed the owner's records that lack a
        vector, when hybrid recall is configured and enabled in the database, so an approved
        memory is found by meaning at the next recall. A failure is logged, never raised: the
        commit stands, and the next commit or ``index_embeddings`` catches up."""
        if self._embeddings is None or self._vectors_ready is False:
            return
        if result is None or result.status != "approved" or result.record_id is None:
            return
        try:
            if await self._ready():
                await self._embed_pending(owner, self._embeddings, _CATCH_UP, limit=_CATCH_UP)
        except Exception as exc:  # the commit stands; index_embeddings catches up
            embedding_catch_up_failed(exc)

    async def _ready(self) -> bool:
        """Whether vectors are enabled in the database (checked once per store)."""
        if self._vectors_ready is None:
            return self._vectors_found(await self._read(embeddings_ready_op()))
        return self._vectors_ready

    async def _embed_pending(
        self, owner: Owner, model: Embeddings, batch_size: int, *, limit: int | None = None
    ) -> int:
        """Embed the owner's records lacking a current vector (the first ``limit``), the model
        called outside any transaction ``batch_size`` texts at a time; write the vectors."""
        pending = await self._run(pending_embeddings_op(owner, self._model, now=self._clock()))
        pending = pending[:limit]
        vectors: list[list[float]] = []
        for start in range(0, len(pending), batch_size):
            texts = [p.text for p in pending[start : start + batch_size]]
            vectors.extend(await model.aembed_documents(texts))
        written = await self._run(
            write_embeddings_op(owner, self._model, pending, vectors, kind=self._vector_kind)
        )
        forget_absent(self._recall, owner)  # the next search reads what was just written
        return written
