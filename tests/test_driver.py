"""The driver: one generator body, one transaction; reads skip BEGIN/COMMIT but stay reads."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from _wire import proxied  # the benchmarks' counting proxy (on the path: conftest.py)
from psycopg.pq import TransactionStatus

from memory_graph.storage.driver import BEGIN, Op, Query, run_async, run_sync


def _count() -> Op[int]:
    row = yield Query("SELECT count(*) AS n FROM t", fetch="one")
    return int(row["n"])


def _insert_then_fail() -> Op[None]:
    yield Query("INSERT INTO t VALUES (1)", fetch="none")
    raise ValueError("boom")


def test_a_failing_op_writes_nothing_even_after_a_read(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.commit()
        assert run_sync(conn, _count(), autocommit=True) == 0
        assert conn.autocommit is False  # the read restored transactional mode
        with pytest.raises(ValueError):
            run_sync(conn, _insert_then_fail())
        assert run_sync(conn, _count(), autocommit=True) == 0


def _two_clocks() -> Op[tuple[Any, Any]]:
    first = yield Query("SELECT now() AS t, pg_sleep(0.01)", fetch="one")
    second = yield Query("SELECT now() AS t", fetch="one")
    return first["t"], second["t"]


def test_autocommit_runs_outside_a_transaction(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        # now() is fixed within a transaction, and moves between autocommit statements.
        a, b = run_sync(conn, _two_clocks())
        assert a == b
        a, b = run_sync(conn, _two_clocks(), autocommit=True)
        assert a < b


def _failure_then_read() -> Op[int]:
    # The failing statement raises; nothing of the transaction stays (not even the insert
    # before the failure), and the statements after it never run.
    yield Query("INSERT INTO t VALUES (1)", fetch="none")
    yield Query("INSERT INTO t VALUES (1 / 0)", fetch="none")
    yield Query("INSERT INTO t VALUES (2)", fetch="none")
    return (yield from _count())


def _script() -> Op[int]:
    yield Query(
        "INSERT INTO t VALUES (1); -- a comment; with a semicolon\n"
        "INSERT INTO t SELECT length('a;b'); INSERT INTO t SELECT length($q$x;y$q$);",
        fetch="none",
    )
    return (yield from _count())


def _round_trips() -> Op[int]:
    for i in range(5):
        yield Query("INSERT INTO t VALUES (%s)", (i,), fetch="none")
    return (yield from _count())


def test_a_failing_statement_rolls_back_the_transaction(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.commit()
        with pytest.raises(psycopg.errors.DivisionByZero):
            run_sync(conn, _failure_then_read())
        assert run_sync(conn, _count(), autocommit=True) == 0
        assert run_sync(conn, _count()) == 0  # the connection is usable again


def test_a_parameterless_script_runs_whole(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.commit()
        assert run_sync(conn, _script()) == 3
        assert sorted(r[0] for r in conn.execute("SELECT x FROM t")) == [1, 3, 3]


def test_a_write_costs_one_round_trip_per_statement_plus_begin_and_commit(pg_dsn: str) -> None:
    # Counted on the wire: BEGIN, five inserts, the count, COMMIT. No pipeline syncs and no
    # round trip to leave a pipeline (psycopg spends one per sync and one on exit).
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.commit()
    with proxied(pg_dsn) as (dsn, trips), psycopg.connect(dsn) as conn:
        trips.take()
        assert run_sync(conn, _round_trips()) == 5
        assert sum(trips.take().values()) == 8
        assert run_sync(conn, _count(), autocommit=True) == 5
        assert sum(trips.take().values()) == 1


def _begin_midway(fail: bool) -> Op[int]:
    # An autocommit op: the first insert commits on its own; BEGIN opens a transaction for
    # the rest, which the driver commits when the op returns and rolls back when it raises.
    yield Query("INSERT INTO t VALUES (1)", fetch="none")
    yield BEGIN
    yield Query("INSERT INTO t VALUES (2)", fetch="none")
    yield Query("INSERT INTO t VALUES (3)", fetch="none")
    if fail:
        raise ValueError("boom")
    return (yield from _count())


def _drive_both(pg_dsn: str, op: Any) -> list[Any]:
    """Run ``op()`` with run_sync and with run_async (autocommit), each on a fresh table."""
    import asyncio

    out: list[Any] = []
    with psycopg.connect(pg_dsn, autocommit=True) as setup:
        setup.execute("DROP TABLE IF EXISTS t")
        setup.execute("CREATE TABLE t (x int)")
    with psycopg.connect(pg_dsn) as conn:
        try:
            out.append(run_sync(conn, op(), autocommit=True))
        except ValueError as exc:
            out.append(exc)
        out.append((conn.info.transaction_status, conn.autocommit))
        out.append(sorted(r[0] for r in conn.execute("SELECT x FROM t")))
        conn.rollback()
    with psycopg.connect(pg_dsn, autocommit=True) as setup:
        setup.execute("TRUNCATE t")

    async def run() -> None:
        aconn = await psycopg.AsyncConnection.connect(pg_dsn)
        try:
            try:
                out.append(await run_async(aconn, op(), autocommit=True))
            except ValueError as exc:
                out.append(exc)
            out.append((aconn.info.transaction_status, aconn.autocommit))
            cur = await aconn.execute("SELECT x FROM t")
            out.append(sorted(r[0] for r in await cur.fetchall()))
        finally:
            await aconn.close()

    asyncio.run(run())
    return out


def test_an_autocommit_op_may_open_a_transaction_that_commits_on_return(pg_dsn: str) -> None:
    idle = (TransactionStatus.IDLE, False)  # the connection is handed back as it came
    got = _drive_both(pg_dsn, lambda: _begin_midway(False))
    assert got == [3, idle, [1, 2, 3]] * 2


def test_an_autocommit_op_that_raises_after_begin_rolls_back_only_the_transaction(
    pg_dsn: str,
) -> None:
    got = _drive_both(pg_dsn, lambda: _begin_midway(True))
    assert isinstance(got[0], ValueError) and isinstance(got[3], ValueError)
    idle = (TransactionStatus.IDLE, False)
    assert [got[1], got[2], got[4], got[5]] == [idle, [1], idle, [1]]


def test_begin_is_a_no_op_in_a_transaction(pg_dsn: str) -> None:
    # The same op run the usual way: one transaction from the start, BEGIN sends nothing (a
    # second BEGIN would only warn, but the whole op, the first insert included, is atomic).
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("CREATE TABLE t (x int)")
        conn.commit()
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        with pytest.raises(ValueError):
            run_sync(conn, _begin_midway(True))
        assert sorted(r[0] for r in conn.execute("SELECT x FROM t")) == []
        assert run_sync(conn, _begin_midway(False)) == 3
        assert notices == []
