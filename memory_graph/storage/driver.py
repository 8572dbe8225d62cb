"""One body of logic for the sync and async stores.

Each store operation is written once, as a generator that *yields* :class:`Query` objects and
receives their results. :func:`run_sync` and :func:`run_async` drive the same generator on a
psycopg ``Connection`` or ``AsyncConnection`` inside one transaction, so the twins cannot
drift. The generators themselves do no I/O.

Driver exceptions are mapped onto :mod:`memory_graph.errors` here, in one place, and so are
the connection pools (:class:`PoolOptions`, :func:`open_pool`): a pooled connection is
checked on checkout, so the first call after a server restart succeeds.
"""

from __future__ import annotations

import math
import select
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from time import monotonic
from typing import Any, Literal, TypeVar

import psycopg
from psycopg import errors as pgerrors
from psycopg.pq import ExecStatus, TransactionStatus
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from ..errors import ConfigurationError, ConflictError, StorageUnavailableError

__all__ = [
    "BEGIN",
    "AsyncCheckedPool",
    "CheckedPool",
    "Op",
    "PoolOptions",
    "Query",
    "map_errors",
    "map_unavailable",
    "open_async_pool",
    "open_pool",
    "run_async",
    "run_sync",
]

T = TypeVar("T")

TUPLES_OK = ExecStatus.TUPLES_OK
_OPEN = (TransactionStatus.INTRANS, TransactionStatus.INERROR)

Fetch = Literal["none", "one", "all", "rowcount"]


@dataclass(frozen=True)
class Query:
    """One SQL statement and how to read its result.

    ``fetch``: ``"all"`` sends back a list of dict rows, ``"one"`` a dict or ``None``,
    ``"rowcount"`` the affected row count, ``"none"`` sends ``None``.
    """

    sql: str
    params: Sequence[Any] | dict[str, Any] = ()
    fetch: Fetch = "all"


Op = Generator[Query, Any, T]
"""A store operation: yields queries, receives results, returns its value."""

BEGIN = Query("BEGIN", fetch="none")
"""Yielded by an op run with ``autocommit=True`` to open a transaction for the statements that
follow: the driver commits it when the op returns and rolls it back when the op raises (in
an op run in a transaction it is a no-op). An
optimistic write reads and writes in autocommit (each statement atomic on its own) and falls
back to a locked transaction only when it lost a race (see
``memory_graph.storage.ops.writes.set_preference``)."""


@contextmanager
def map_unavailable() -> Iterator[None]:
    """Map a lost or unreachable server (and a pool timeout) to ``StorageUnavailableError``."""
    try:
        yield
    except PoolTimeout as exc:
        raise StorageUnavailableError(
            f"no database connection available ({exc}): the server is down or overloaded"
        ) from exc
    except psycopg.OperationalError as exc:
        raise StorageUnavailableError(f"PostgreSQL is unavailable: {exc}") from exc
    except psycopg.InterfaceError as exc:
        raise StorageUnavailableError(f"PostgreSQL connection is closed or broken: {exc}") from exc


@contextmanager
def map_errors() -> Iterator[None]:
    """Map psycopg exceptions onto the memory-graph error tree."""
    try:
        yield
    except pgerrors.UndefinedTable as exc:
        raise ConfigurationError(
            "memory-graph tables are missing: call `store.setup()` first"
        ) from exc
    except (pgerrors.SerializationFailure, pgerrors.DeadlockDetected) as exc:
        raise ConflictError(f"concurrent update detected, retry the operation: {exc}") from exc
    except pgerrors.UniqueViolation as exc:
        raise ConflictError(
            f"a concurrent write created the same row, retry: {exc.diag.message_primary}"
        ) from exc
    except (PoolTimeout, psycopg.OperationalError, psycopg.InterfaceError):
        with map_unavailable():
            raise


# --- connection pools ---------------------------------------------------------------------


@dataclass(frozen=True)
class PoolOptions:
    """How a store (and its checkpointer) connects. Defaults are documented in the README.

    ``max_size``: connections at most (default 8). ``connect_timeout``: seconds one connection
    attempt may take (default 5). ``pool_timeout``: seconds a call waits for a connection
    before ``StorageUnavailableError`` (default 5), which bounds how long a call blocks
    while the server is down.
    """

    max_size: int = 8
    connect_timeout: float = 5.0
    pool_timeout: float = 5.0

    def __post_init__(self) -> None:
        if isinstance(self.max_size, bool) or not isinstance(self.max_size, int):
            raise ConfigurationError("max_size must be a positive integer")
        if self.max_size < 1:
            raise ConfigurationError("max_size must be a positive integer")
        for name in ("connect_timeout", "pool_timeout"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ConfigurationError(f"{name} must be a positive number of seconds")

    def connect_kwargs(self, **extra: Any) -> dict[str, Any]:
        """Connection keyword arguments: libpq's ``connect_timeout`` (whole seconds) + ``extra``."""
        return {"connect_timeout": max(1, math.ceil(self.connect_timeout)), **extra}


def _stale(conn: Any) -> bool:
    """Whether an idle pooled connection may be dead, without a round trip when it is not.

    A healthy idle connection has nothing to read; a server that restarted or crashed has
    sent its goodbye and closed the socket, which makes it readable.
    """
    if conn.closed or conn.broken:
        return True
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


_WAIT_SLICE = 0.25
_RECONNECT_TIMEOUT = 1.0


def _slice(deadline: float) -> float:
    """How long one wait for a pooled connection may take.

    A pool that failed to connect backs off (1 s, 2 s, ...) and gives up after
    ``reconnect_timeout`` (1 s here); only a new request makes it try again at once. Waiting
    in short slices makes those requests, so a call that waits while the server comes back
    gets a connection as soon as it is up, not after a back-off as long as the outage.
    """
    return max(min(deadline - monotonic(), _WAIT_SLICE), 0.001)


class CheckedPool(ConnectionPool[Any]):
    """A ``ConnectionPool`` that checks each connection on checkout.

    A connection whose socket says the server went away is verified with a round trip
    (``ConnectionPool.check_connection``); a dead one is discarded together with every other
    idle connection (``drain()``: they all died with the server), and a fresh one is taken,
    without the pool's back-off sleep. A healthy idle connection costs no extra round trip.
    A checkout that finds no connection within the timeout raises ``PoolTimeout`` (the
    store and the checkpointer map it to ``StorageUnavailableError``).
    """

    def getconn(self, timeout: float | None = None) -> Any:
        deadline = monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                conn = super().getconn(_slice(deadline))
            except PoolTimeout:
                if monotonic() < deadline:
                    continue  # a new wait asks the pool to connect again (see _slice)
                raise
            if not _stale(conn):
                return conn
            try:
                ConnectionPool.check_connection(conn)
                return conn  # it only had a notice or a notification to read
            except Exception:
                conn.close()
            self.putconn(conn)
            self.drain()


class AsyncCheckedPool(AsyncConnectionPool[Any]):
    """Async twin of :class:`CheckedPool`."""

    async def getconn(self, timeout: float | None = None) -> Any:
        deadline = monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                conn = await super().getconn(_slice(deadline))
            except PoolTimeout:
                if monotonic() < deadline:
                    continue
                raise
            if not _stale(conn):
                return conn
            try:
                await AsyncConnectionPool.check_connection(conn)
                return conn
            except Exception:
                await conn.close()
            await self.putconn(conn)
            await self.drain()


def _pool_settings(opts: PoolOptions, conn_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The settings both pool classes are built with (opened later, by the caller)."""
    return {
        "min_size": 1,
        "max_size": opts.max_size,
        "timeout": opts.pool_timeout,
        "reconnect_timeout": _RECONNECT_TIMEOUT,
        "open": False,
        "kwargs": conn_kwargs,
    }


def open_pool(dsn: str, opts: PoolOptions, **kwargs: Any) -> CheckedPool:
    """Open a :class:`CheckedPool` on ``dsn``; ``kwargs`` are the connections' settings.

    Raises:
        StorageUnavailableError: the server cannot be reached within the timeouts.
    """
    conn_kwargs = opts.connect_kwargs(**kwargs)
    with map_unavailable():  # fail fast with the server's own message, not a pool timeout
        psycopg.connect(dsn, **conn_kwargs).close()
    pool = CheckedPool(dsn, **_pool_settings(opts, conn_kwargs))
    try:
        with map_unavailable():
            pool.open(wait=True, timeout=opts.pool_timeout + opts.connect_timeout)
    except BaseException:
        pool.close()
        raise
    return pool


async def open_async_pool(dsn: str, opts: PoolOptions, **kwargs: Any) -> AsyncCheckedPool:
    """Async twin of :func:`open_pool`."""
    conn_kwargs = opts.connect_kwargs(**kwargs)
    with map_unavailable():
        await (await psycopg.AsyncConnection.connect(dsn, **conn_kwargs)).close()
    pool = AsyncCheckedPool(dsn, **_pool_settings(opts, conn_kwargs))
    try:
        with map_unavailable():
            await pool.open(wait=True, timeout=opts.pool_timeout + opts.connect_timeout)
    except BaseException:
        await pool.close()
        raise
    return pool


def _has_rows(cur: Any) -> bool:
    """Whether the statement returned rows (``cur.description`` would build column objects)."""
    res = cur.pgresult
    return res is not None and res.status == TUPLES_OK


def _in_transaction(conn: Any) -> bool:
    """Whether an autocommit connection is inside a transaction an op opened (:data:`BEGIN`)."""
    return not conn.closed and conn.info.transaction_status in _OPEN


def _read(cur: Any, q: Query, rows: list[dict[str, Any]] | None) -> Any:
    if q.fetch == "none":
        return None
    if q.fetch == "rowcount":
        return cur.rowcount
    if q.fetch == "one":
        return rows[0] if rows else None
    return rows or []


def run_sync(conn: psycopg.Connection[Any], op: Op[T], *, autocommit: bool = False) -> T:
    """Drive ``op`` on a sync connection, in one transaction.

    Statements run one at a time, each a round trip: ``BEGIN``, the op's statements, then
    ``COMMIT``; an error rolls the whole transaction back. An op keeps its statement count
    low instead (a commit is one statement with its proposal and audit rows). Pipeline mode
    was measured and dropped: on a server next door its client work cost more than the
    round trips it saved, and psycopg still spent a round trip per sync and one to leave the
    pipeline (ARCHITECTURE.md, "Commit path").

    With ``autocommit=True`` (reads, and writes made of one atomic statement) the statements
    run in autocommit mode instead: no ``BEGIN``/``COMMIT`` round trips, and each statement
    sees its own consistent snapshot. Such an op may yield :data:`BEGIN` to run the rest of
    its statements in one transaction.
    """
    if autocommit:
        conn.autocommit = True
        try:
            with map_errors():
                try:
                    result = _drive_sync(conn, op)
                except BaseException:
                    if _in_transaction(conn):
                        conn.rollback()
                    raise
                if _in_transaction(conn):
                    conn.commit()
                return result
        finally:
            if not conn.closed:  # a broken connection is discarded by the pool anyway
                conn.autocommit = False
    with map_errors(), conn.transaction():
        return _drive_sync(conn, op, in_transaction=True)


def _drive_sync(conn: psycopg.Connection[Any], op: Op[T], *, in_transaction: bool = False) -> T:
    with conn.cursor(row_factory=dict_row) as cur:
        try:
            q = next(op)
            while True:
                if q is BEGIN and in_transaction:
                    q = op.send(None)  # already in the driver's transaction
                    continue
                cur.execute(q.sql, q.params)  # type: ignore[arg-type]
                result = None
                if q.fetch != "none":
                    want = q.fetch in ("one", "all") and _has_rows(cur)
                    result = _read(cur, q, cur.fetchall() if want else None)
                q = op.send(result)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]


async def run_async(
    conn: psycopg.AsyncConnection[Any], op: Op[T], *, autocommit: bool = False
) -> T:
    """Async twin of :func:`run_sync`."""
    if autocommit:
        await conn.set_autocommit(True)
        try:
            with map_errors():
                try:
                    result = await _drive_async(conn, op)
                except BaseException:
                    if _in_transaction(conn):
                        await conn.rollback()
                    raise
                if _in_transaction(conn):
                    await conn.commit()
                return result
        finally:
            if not conn.closed:
                await conn.set_autocommit(False)
    with map_errors():
        async with conn.transaction():
            return await _drive_async(conn, op, in_transaction=True)


async def _drive_async(
    conn: psycopg.AsyncConnection[Any], op: Op[T], *, in_transaction: bool = False
) -> T:
    async with conn.cursor(row_factory=dict_row) as cur:
        try:
            q = next(op)
            while True:
                if q is BEGIN and in_transaction:
                    q = op.send(None)  # already in the driver's transaction
                    continue
                await cur.execute(q.sql, q.params)  # type: ignore[arg-type]
                result = None
                if q.fetch != "none":
                    want = q.fetch in ("one", "all") and _has_rows(cur)
                    result = _read(cur, q, await cur.fetchall() if want else None)
                q = op.send(result)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
