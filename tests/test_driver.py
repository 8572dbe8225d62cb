"""The driver: one generator body, one transaction; reads skip BEGIN/COMMIT but stay reads."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from _wire import proxied  # the benchmarks' counting proxy (on the path: conftest.py)

from memory_graph.storage._driver import Op, Query, run_sync


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
        assert run_sync(conn, _count(), readonly=True) == 0
        assert conn.autocommit is False  # the read restored transactional mode
        with pytest.raises(ValueError):
            run_sync(conn, _insert_then_fail())
        assert run_sync(conn, _count(), readonly=True) == 0


def _two_clocks() -> Op[tuple[Any, Any]]:
    first = yield Query("SELECT now() AS t, pg_sleep(0.01)", fetch="one")
    second = yield Query("SELECT now() AS t", fetch="one")
    return first["t"], second["t"]


def test_readonly_runs_outside_a_transaction(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        # now() is fixed within a transaction, and moves between autocommit statements.
        a, b = run_sync(conn, _two_clocks())
        assert a == b
        a, b = run_sync(conn, _two_clocks(), readonly=True)
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
        assert run_sync(conn, _count(), readonly=True) == 0
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
        assert run_sync(conn, _count(), readonly=True) == 5
        assert sum(trips.take().values()) == 1
