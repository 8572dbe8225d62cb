"""One body of logic for the sync and async stores.

Each store operation is written once, as a generator that *yields* :class:`Query` objects and
receives their results. :func:`run_sync` and :func:`run_async` drive the same generator on a
psycopg ``Connection`` or ``AsyncConnection`` inside one transaction, so the twins cannot
drift. The generators themselves do no I/O.

Driver exceptions are mapped onto :mod:`memory_graph.errors` here, in one place, and so are
the connection pools (:class:`PoolOptions`, :func:`open_pool`): a pooled connection is
checked on checkout, so the first call after a server restart succeeds, and it is held under a
client-side deadline (``call_timeout``), so a call ends in ``StorageUnavailableError`` when the
server stops answering (paused, overloaded, a network that drops packets) instead of waiting.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import select
import socket
import threading
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
    "CALL_TIMEOUT_ENV",
    "AsyncCheckedPool",
    "call_timeout_of",
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
    "without_deadline",
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
def map_errors(conn: Any = None) -> Iterator[None]:
    """Map psycopg exceptions onto the memory-graph error tree.

    ``conn``: the connection the statements ran on; when its deadline cut it (see
    :class:`CheckedPool`), the ``StorageUnavailableError`` says so.
    """
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
    except (PoolTimeout, psycopg.OperationalError, psycopg.InterfaceError) as exc:
        cut = getattr(conn, _CUT, None)
        if cut is not None:
            raise StorageUnavailableError(
                f"PostgreSQL did not answer within the call timeout ({cut:g} s; call_timeout= "
                f"or ${CALL_TIMEOUT_ENV}): the server is paused, overloaded or unreachable"
            ) from exc
        with map_unavailable():
            raise


# --- deadlines ----------------------------------------------------------------------------

CALL_TIMEOUT_ENV = "MEMORY_GRAPH_CALL_TIMEOUT"
"""The environment variable that sets the default ``call_timeout`` (seconds)."""

DEFAULT_CALL_TIMEOUT = 30.0
_TOKEN = "_mg_deadline"  # the attribute a checked-out connection keeps its deadline token in
_CUT = "_mg_cut"  # set on a connection the watchdog cut: the timeout it exceeded


def _cut(conn: Any, seconds: float) -> None:
    """End every wait on ``conn``: shut its socket down (libpq then reads end-of-file)."""
    setattr(conn, _CUT, seconds)
    try:
        sock = socket.socket(fileno=os.dup(conn.pgconn.socket))
    except Exception:  # already closed: nothing is waiting on it
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()


class _Watchdog:
    """One daemon thread per process that cuts connections held past their deadline.

    A statement waits on its socket, and a paused server (SIGSTOP) or a network that drops
    packets never answers, while the kernel keeps the connection alive, so neither libpq's
    ``connect_timeout`` nor TCP keepalives end the wait. Shutting the socket down does, in
    the sync and the async driver alike: the wait wakes up, libpq reads end-of-file and
    psycopg raises ``OperationalError`` (mapped to ``StorageUnavailableError``). Arming and
    disarming cost a lock and a heap push; the connection is discarded by its pool.
    """

    def __init__(self) -> None:
        self._reset()
        # A forked child has no watchdog thread (and may hold a copy of a taken lock).
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, tuple[Any, float]] = {}
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, conn: Any, seconds: float) -> int:
        deadline = monotonic() + seconds
        token = next(self._tokens)
        with self._cond:
            self._armed[token] = (conn, seconds)
            first = not self._heap or deadline < self._heap[0][0]
            heapq.heappush(self._heap, (deadline, token))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="memory-graph-deadlines", daemon=True
                )
                self._thread.start()
            elif first:
                self._cond.notify()
        return token

    def disarm(self, token: int) -> None:
        with self._cond:
            self._armed.pop(token, None)
            if len(self._heap) > 2 * len(self._armed) + 1024:  # drop the disarmed entries
                self._heap = [e for e in self._heap if e[1] in self._armed]
                heapq.heapify(self._heap)

    def _run(self) -> None:
        with self._cond:
            while True:
                if not self._heap:
                    self._cond.wait()
                    continue
                deadline, token = self._heap[0]
                if token not in self._armed:
                    heapq.heappop(self._heap)
                    continue
                delay = deadline - monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
                conn, seconds = self._armed.pop(token)
                _cut(conn, seconds)  # under the lock: its holder cannot close it meanwhile


_WATCHDOG = _Watchdog()


def _arm(conn: Any, seconds: float | None) -> None:
    if seconds is not None:
        setattr(conn, _TOKEN, _WATCHDOG.arm(conn, seconds))


def _disarm(conn: Any) -> None:
    token = conn.__dict__.pop(_TOKEN, None)
    if token is not None:
        _WATCHDOG.disarm(token)


def without_deadline(conn: Any) -> None:
    """Lift the deadline of a checked-out connection (``setup()``: migrations may take long)."""
    _disarm(conn)


def call_timeout_of(value: float | None) -> float | None:
    """The deadline a store option asks for: ``None`` takes ``$MEMORY_GRAPH_CALL_TIMEOUT``
    (seconds; ``none`` for no deadline), else 30 s; ``math.inf`` means no deadline.

    Raises:
        ConfigurationError: the option or the variable is not a positive number of seconds.
    """
    if value is not None:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == math.inf:
            return None
        return value  # PoolOptions checks it
    raw = os.environ.get(CALL_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_CALL_TIMEOUT
    if raw.lower() in ("none", "inf"):
        return None
    try:
        seconds = float(raw)
    except ValueError:
        raise ConfigurationError(
            f"{CALL_TIMEOUT_ENV} must be a number of seconds or 'none', not {raw[:40]!r}"
        ) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigurationError(f"{CALL_TIMEOUT_ENV} must be a positive number of seconds")
    return seconds


# --- connection pools ---------------------------------------------------------------------


@dataclass(frozen=True)
class PoolOptions:
    """How a store (and its checkpointer) connects. Defaults are documented in the README.

    ``max_size``: connections at most (default 8). ``connect_timeout``: seconds one connection
    attempt may take (default 5). ``pool_timeout``: seconds a call waits for a connection
    before ``StorageUnavailableError`` (default 5), which bounds how long a call blocks
    while the server is down. ``call_timeout``: seconds a call may hold its connection
    (its statements, commit included) before the connection is cut and the call raises
    ``StorageUnavailableError`` (default ``$MEMORY_GRAPH_CALL_TIMEOUT``, else 30; ``None``:
    no deadline), which bounds how long a call blocks while the server is paused or does
    not answer. A call therefore ends within ``pool_timeout + call_timeout``.
    """

    max_size: int = 8
    connect_timeout: float = 5.0
    pool_timeout: float = 5.0
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT

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
        value = self.call_timeout
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value <= 0
        ):
            raise ConfigurationError("call_timeout must be a positive number of seconds or None")

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

    A checked-out connection is held under ``call_timeout`` (seconds, ``None`` for none): a
    process-wide watchdog thread shuts its socket down when it is not returned in time, so
    a statement waiting on a paused server fails instead of waiting (:class:`_Watchdog`).
    """

    call_timeout: float | None = None

    def getconn(self, timeout: float | None = None) -> Any:
        deadline = monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                conn = super().getconn(_slice(deadline))
            except PoolTimeout:
                if monotonic() < deadline:
                    continue  # a new wait asks the pool to connect again (see _slice)
                raise
            _arm(conn, self.call_timeout)
            if not _stale(conn):
                return conn
            try:
                ConnectionPool.check_connection(conn)
                return conn  # it only had a notice or a notification to read
            except Exception:
                conn.close()
            self.putconn(conn)
            self.drain()

    def putconn(self, conn: Any) -> None:
        _disarm(conn)
        super().putconn(conn)


class AsyncCheckedPool(AsyncConnectionPool[Any]):
    """Async twin of :class:`CheckedPool`."""

    call_timeout: float | None = None

    async def getconn(self, timeout: float | None = None) -> Any:
        deadline = monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                conn = await super().getconn(_slice(deadline))
            except PoolTimeout:
                if monotonic() < deadline:
                    continue
                raise
            _arm(conn, self.call_timeout)
            if not _stale(conn):
                return conn
            try:
                await AsyncConnectionPool.check_connection(conn)
                return conn
            except Exception:
                await conn.close()
            await self.putconn(conn)
            await self.drain()

    async def putconn(self, conn: Any) -> None:
        _disarm(conn)
        await super().putconn(conn)


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
    pool.call_timeout = opts.call_timeout
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
    pool.call_timeout = opts.call_timeout
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
            with map_errors(conn):
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
    with map_errors(conn), conn.transaction():
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
            with map_errors(conn):
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
    with map_errors(conn):
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
