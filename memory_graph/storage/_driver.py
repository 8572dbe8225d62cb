"""One body of logic for the sync and async stores.

Each store operation is written once, as a generator that *yields* :class:`Query` objects and
receives their results. :func:`run_sync` and :func:`run_async` drive the same generator on a
psycopg ``Connection`` or ``AsyncConnection`` inside one transaction, so the twins cannot
drift. The generators themselves do no I/O.

Driver exceptions are mapped onto :mod:`memory_graph.errors` here, in one place.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import psycopg
from psycopg import errors as pgerrors
from psycopg.rows import dict_row

from ..errors import ConfigurationError, ConflictError, StorageUnavailableError

__all__ = ["Op", "Query", "map_errors", "run_async", "run_sync"]

T = TypeVar("T")

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


@contextmanager
def map_errors() -> Any:
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
    except psycopg.OperationalError as exc:
        raise StorageUnavailableError(f"PostgreSQL is unavailable: {exc}") from exc
    except psycopg.InterfaceError as exc:
        raise StorageUnavailableError(f"PostgreSQL connection is closed or broken: {exc}") from exc


def _read(cur: Any, q: Query, rows: list[dict[str, Any]] | None) -> Any:
    if q.fetch == "none":
        return None
    if q.fetch == "rowcount":
        return cur.rowcount
    if q.fetch == "one":
        return rows[0] if rows else None
    return rows or []


def run_sync(conn: psycopg.Connection[Any], op: Op[T], *, readonly: bool = False) -> T:
    """Drive ``op`` on a sync connection, in one transaction.

    With ``readonly=True`` (reads only) the statements run in autocommit mode instead: no
    ``BEGIN``/``COMMIT`` round trips, and each statement sees its own consistent snapshot.
    """
    if readonly:
        conn.autocommit = True
        try:
            with map_errors():
                return _drive_sync(conn, op)
        finally:
            if not conn.closed:  # a broken connection is discarded by the pool anyway
                conn.autocommit = False
    with map_errors(), conn.transaction():
        return _drive_sync(conn, op)


def _drive_sync(conn: psycopg.Connection[Any], op: Op[T]) -> T:
    try:
        q = next(op)
        while True:
            with conn.cursor(row_factory=dict_row) as cur:
                cur.execute(q.sql, q.params)  # type: ignore[arg-type]
                rows = cur.fetchall() if q.fetch in ("one", "all") and cur.description else None
                result = _read(cur, q, rows)
            q = op.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


async def run_async(
    conn: psycopg.AsyncConnection[Any], op: Op[T], *, readonly: bool = False
) -> T:
    """Async twin of :func:`run_sync`."""
    if readonly:
        await conn.set_autocommit(True)
        try:
            with map_errors():
                return await _drive_async(conn, op)
        finally:
            if not conn.closed:
                await conn.set_autocommit(False)
    with map_errors():
        async with conn.transaction():
            return await _drive_async(conn, op)


async def _drive_async(conn: psycopg.AsyncConnection[Any], op: Op[T]) -> T:
    try:
        q = next(op)
        while True:
            async with conn.cursor(row_factory=dict_row) as cur:
                await cur.execute(q.sql, q.params)  # type: ignore[arg-type]
                rows = (
                    await cur.fetchall() if q.fetch in ("one", "all") and cur.description else None
                )
                result = _read(cur, q, rows)
            q = op.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
