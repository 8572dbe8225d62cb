"""The driver: one generator body, one transaction; reads skip BEGIN/COMMIT but stay reads."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

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
